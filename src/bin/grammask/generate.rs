//! `grammask generate`: random texts drawn through the masks (experiment 2).

use crate::common::{load_store, tokenizer_for, Rng};
use grammask::matcher::Matcher;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Sample random texts through the masks (experiment 2). With --json-schema,
/// --regex or --grammar (and --tokenizer) instead of --store, the store is
/// compiled per request first (positions computed on first visit). By default
/// the draws steer toward the end after a quarter of --max-tokens (see
/// --finish-after), so realistic schemas, regexes and grammars complete.
#[derive(clap::Args)]
pub struct Args {
    /// A compiled mask store (from `compile -o`).
    #[arg(long, required_unless_present_any = ["json_schema", "grammar", "regex"])]
    store: Option<PathBuf>,
    /// A grammar file (Lark, or GBNF / EBNF: see --format), compiled per request (lazy store) instead of --store.
    #[arg(long, conflicts_with_all = ["store", "json_schema", "regex"])]
    grammar: Option<PathBuf>,
    /// The start rule of --grammar (default: `start` for Lark, `root` for GBNF / EBNF).
    #[arg(long, requires = "grammar")]
    start: Option<String>,
    #[command(flatten)]
    format: crate::common::FormatArg,
    #[command(flatten)]
    schema: crate::constraint_args::SchemaArgs,
    /// Constrain the whole output to this Python regex (re.fullmatch), compiled per request.
    #[arg(long, conflicts_with_all = ["store", "json_schema"])]
    regex: Option<String>,
    /// The tokenizer.json (needed to compile a constraint; with --store, checked against the store's).
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// How many completed samples to write (up to 5 attempts each).
    #[arg(long, default_value_t = 10)]
    count: usize,
    /// Random seed (splitmix64): the same seed gives the same samples.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Give up on a sample after this many tokens (it is not written).
    #[arg(long, default_value_t = 400)]
    max_tokens: usize,
    /// Probability of choosing EOS whenever it is allowed.
    #[arg(long, default_value_t = 0.05)]
    eos_bias: f64,
    /// Probability of drawing the next token among the allowed single-byte
    /// tokens only (when there are any) instead of among all allowed tokens.
    /// Single bytes include the closing brackets, quotes and newlines, so a
    /// positive value lets long samples return to an accepting state.
    #[arg(long, default_value_t = 0.0)]
    short_bias: f64,
    /// After this many tokens, steer toward the end: EOS as soon as it is
    /// allowed, else an allowed ASCII single-byte token after which EOS is
    /// allowed, else the one after which the fewest tokens are allowed (the
    /// most constrained next state: a closing quote or bracket rather than
    /// more content). `auto` (default): a quarter of --max-tokens; `never`:
    /// uniform draws to the end (samples that do not finish are retried).
    #[arg(long, default_value = "auto", value_name = "N|auto|never")]
    finish_after: String,
    /// How --finish-after steers: `fewest` (default: as said there) or
    /// `eos-lookahead` (a random allowed ASCII single-byte token, preferring one
    /// after which EOS is allowed; the experiments' documented settings).
    #[arg(long, default_value = "fewest", value_parser = ["fewest", "eos-lookahead"])]
    finish_by: String,
    /// Probability of drawing the next token adversarially (before --finish-after):
    /// among the allowed tokens of one class picked at random: control bytes,
    /// non-ASCII bytes (partial UTF-8 included), whitespace only, ASCII
    /// punctuation (comment and string delimiters), or the previous token again
    /// (long runs). The Lark corpus harness uses it (scripts/lark/lark_corpus.py adversarial).
    #[arg(long, default_value_t = 0.0)]
    adversarial: f64,
    /// Write the samples here (sample_NNNN.txt).
    #[arg(long)]
    out_dir: PathBuf,
    /// One JSON object per sample, then a summary object.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<bool> {
    let finish_after = match a.finish_after.as_str() {
        "auto" => a.max_tokens / 4,
        "never" => usize::MAX,
        n => n.parse().map_err(|_| Error::new(ErrorKind::Io, format!("--finish-after {n}: expected a number, auto or never")))?,
    };
    let sampler = Sampler {
        max_tokens: a.max_tokens,
        eos_bias: a.eos_bias,
        short_bias: a.short_bias,
        finish_after,
        fewest: a.finish_by == "fewest",
        adversarial: a.adversarial,
    };
    let c = a.schema.constraint(a.regex.as_deref())?;
    if let Some(g) = &a.grammar {
        let Some(t) = &a.tokenizer else { return Err(Error::new(ErrorKind::Io, "--grammar needs --tokenizer")) };
        let (pv, _) = crate::constraint_args::prepared(t, None)?;
        let store = crate::constraint_args::lazy_grammar_store(g, a.start.as_deref(), a.format.of(g), &pv)?;
        return cmd_generate(store, a.count, a.seed, &sampler, &a.out_dir, a.json);
    }
    let store = match (&a.store, c) {
        (Some(s), None) => {
            let store = Rc::new(load_store(s)?);
            if let Some(t) = &a.tokenizer {
                tokenizer_for(&store, t)?;
            }
            store
        }
        (None, Some(c)) => {
            let Some(t) = &a.tokenizer else { return Err(Error::new(ErrorKind::Io, "--json-schema and --regex need --tokenizer")) };
            let (pv, _) = crate::constraint_args::prepared(t, None)?;
            crate::constraint_args::compile_store(&pv, &c, &a.schema.options()?)?
        }
        _ => return Err(Error::new(ErrorKind::Io, "give one of --store, --json-schema, --regex and --grammar")),
    };
    cmd_generate(store, a.count, a.seed, &sampler, &a.out_dir, a.json)
}

/// How `generate` draws tokens (see the `Generate` options).
struct Sampler {
    max_tokens: usize,
    eos_bias: f64,
    short_bias: f64,
    finish_after: usize,
    /// Steer by the fewest next tokens (else: EOS lookahead over random ASCII bytes).
    fewest: bool,
    /// Probability of an adversarial draw (see `adversarial_pick`).
    adversarial: f64,
}

fn cmd_generate(
    store: Rc<grammask::store::MaskStore>,
    count: usize,
    seed: u64,
    sampler: &Sampler,
    out_dir: &Path,
    json: bool,
) -> Result<bool> {
    let Sampler { max_tokens, eos_bias, short_bias, finish_after, fewest, adversarial } = *sampler;
    std::fs::create_dir_all(out_dir).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", out_dir.display())))?;
    let eos: Vec<u32> = store.vocab().eos_ids().iter().map(|t| t.0).collect();
    let mut rng = Rng(seed);
    let mut mask = vec![0u32; store.mask_words()];
    let (mut completed, mut total_tokens, mut attempts) = (0usize, 0usize, 0usize);
    let mut allowed: Vec<u32> = Vec::new();
    while completed < count && attempts < count * 5 {
        attempts += 1;
        let mut m = Matcher::new(store.clone());
        let mut text = Vec::new();
        let mut n = 0;
        let mut done = false;
        let mut prev: Option<u32> = None;
        while n < max_tokens {
            m.fill_mask(&mut mask)?;
            crate::common::allowed_ids(&mask, &mut allowed);
            let eos_ok = m.is_accepting();
            let finishing = n >= finish_after;
            let pick = if eos_ok && (finishing || rng.unit() < eos_bias || allowed.iter().all(|t| eos.contains(t))) {
                eos[0]
            } else if finishing {
                let step = if fewest { steer(&mut m, &allowed, &eos, &mut rng, &mut mask)? } else { steer_eos_lookahead(&mut m, &allowed, &eos, &mut rng)? };
                match step {
                    Some(t) => t,
                    None => break,
                }
            } else if let Some(t) = (adversarial > 0.0 && rng.unit() < adversarial).then(|| adversarial_pick(&store, &allowed, &eos, prev, &mut rng)).flatten() {
                t
            } else {
                let mut cands: Vec<u32> = allowed.iter().copied().filter(|t| !eos.contains(t)).collect();
                if short_bias > 0.0 && rng.unit() < short_bias {
                    let short: Vec<u32> = cands.iter().copied().filter(|&t| store.vocab().token_bytes(grammask::ids::TokenId(t)).len() == 1).collect();
                    if !short.is_empty() {
                        cands = short;
                    }
                }
                if cands.is_empty() {
                    break;
                }
                cands[rng.below(cands.len() as u64) as usize]
            };
            m.commit_token(pick)?;
            n += 1;
            prev = Some(pick);
            if eos.contains(&pick) {
                done = true;
                break;
            }
            text.extend_from_slice(store.vocab().token_bytes(grammask::ids::TokenId(pick)));
        }
        if done {
            let path = out_dir.join(format!("sample_{completed:04}.txt"));
            std::fs::write(&path, &text).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
            completed += 1;
            total_tokens += n;
            if json {
                println!("{}", serde_json::json!({"file": path, "tokens": n}));
            }
        }
    }
    let mean = total_tokens as f64 / completed.max(1) as f64;
    if json {
        println!("{}", serde_json::json!({"summary": {"completed": completed, "attempts": attempts, "mean_tokens": mean}}));
    } else {
        println!("{completed} completed samples of {attempts} attempts, mean {mean:.1} tokens, written to {}", out_dir.display());
    }
    Ok(completed == count)
}

/// An adversarial draw (--adversarial): one class of the allowed tokens (EOS
/// left out) picked at random among the non-empty ones, then a token of it at
/// random. Classes: some control byte (< 0x20 or 0x7f), some byte >= 0x80,
/// whitespace only, one ASCII punctuation byte, and the previous token (a run).
/// `None` when every class is empty.
fn adversarial_pick(store: &grammask::store::MaskStore, allowed: &[u32], eos: &[u32], prev: Option<u32>, rng: &mut Rng) -> Option<u32> {
    let bytes = |t: u32| store.vocab().token_bytes(grammask::ids::TokenId(t));
    let mut classes: [Vec<u32>; 5] = Default::default();
    for &t in allowed.iter().filter(|t| !eos.contains(t)) {
        let b = bytes(t);
        if b.is_empty() {
            continue;
        }
        if b.iter().any(|&c| c < 0x20 || c == 0x7f) {
            classes[0].push(t);
        }
        if b.iter().any(|&c| c >= 0x80) {
            classes[1].push(t);
        }
        if b.iter().all(|c| b" \t\n\r\x0b\x0c".contains(c)) {
            classes[2].push(t);
        }
        if let [c] = b {
            if c.is_ascii_punctuation() {
                classes[3].push(t);
            }
        }
        if Some(t) == prev {
            classes[4].push(t);
        }
    }
    let full: Vec<&Vec<u32>> = classes.iter().filter(|c| !c.is_empty()).collect();
    if full.is_empty() {
        return None;
    }
    let c = full[rng.below(full.len() as u64) as usize];
    Some(c[rng.below(c.len() as u64) as usize])
}

/// One step toward the end (see --finish-after). Candidates: the allowed
/// ASCII single-byte tokens (a backslash only when nothing else is allowed: an
/// escape never closes anything), at most 16 of them (the closers `"` `'` `)`
/// `]` `}` and newline kept, the rest drawn at random); else up to 16 allowed
/// tokens drawn at random. Pick one after which EOS is allowed; else, on one
/// step in four, a random candidate (so a cycle of constrained states cannot
/// last); else the one after which the fewest tokens are allowed (the most
/// constrained next state: a closing quote or bracket rather than more
/// content). `None`: nothing but EOS is allowed and the text is not accepting.
fn steer(m: &mut Matcher, allowed: &[u32], eos: &[u32], rng: &mut Rng, mask: &mut [u32]) -> Result<Option<u32>> {
    const MAX_CANDS: usize = 16;
    let store = m.store().clone();
    let byte = |t: u32| match store.vocab().token_bytes(grammask::ids::TokenId(t)) {
        [b] if *b < 0x80 => Some(*b),
        _ => None,
    };
    let mut cands: Vec<u32> = allowed.iter().copied().filter(|&t| !eos.contains(&t) && byte(t).is_some()).collect();
    if cands.len() > 1 {
        cands.retain(|&t| byte(t) != Some(b'\\'));
    }
    let ascii = !cands.is_empty();
    if !ascii {
        cands = allowed.iter().copied().filter(|t| !eos.contains(t)).collect();
    }
    if cands.is_empty() {
        return Ok(None);
    }
    if cands.len() > MAX_CANDS {
        let closer = |t: u32| ascii && byte(t).is_some_and(|b| b"\"')]}\n".contains(&b));
        let (mut keep, mut rest): (Vec<u32>, Vec<u32>) = cands.iter().partition(|&&t| closer(t));
        while keep.len() < MAX_CANDS && !rest.is_empty() {
            let i = rng.below(rest.len() as u64) as usize;
            keep.push(rest.swap_remove(i));
        }
        cands = keep;
    }
    let start = rng.below(cands.len() as u64) as usize;
    let random = rng.below(4) == 0;
    let mut best = (usize::MAX, cands[start]);
    for i in 0..cands.len() {
        let t = cands[(start + i) % cands.len()];
        m.commit_token(t)?;
        if m.is_accepting() {
            m.rollback(1)?;
            return Ok(Some(t));
        }
        if random {
            m.rollback(1)?;
            continue;
        }
        m.fill_mask(mask)?;
        let n = mask.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        m.rollback(1)?;
        if n > 0 && n < best.0 {
            best = (n, t);
        }
    }
    Ok(Some(best.1))
}

/// `--finish-by eos-lookahead`: a random allowed ASCII single-byte token (else
/// any allowed token), preferring one after which EOS is allowed.
fn steer_eos_lookahead(m: &mut Matcher, allowed: &[u32], eos: &[u32], rng: &mut Rng) -> Result<Option<u32>> {
    let store = m.store().clone();
    let bytes = |t: u32| store.vocab().token_bytes(grammask::ids::TokenId(t));
    let mut cands: Vec<u32> = allowed.iter().copied().filter(|&t| !eos.contains(&t) && bytes(t).len() == 1 && bytes(t)[0] < 0x80).collect();
    if cands.is_empty() {
        cands = allowed.iter().copied().filter(|t| !eos.contains(t)).collect();
    }
    if cands.is_empty() {
        return Ok(None);
    }
    let start = rng.below(cands.len() as u64) as usize;
    for i in 0..cands.len() {
        let t = cands[(start + i) % cands.len()];
        m.commit_token(t)?;
        let ends = m.is_accepting();
        m.rollback(1)?;
        if ends {
            return Ok(Some(t));
        }
    }
    Ok(Some(cands[start]))
}
