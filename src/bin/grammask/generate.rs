//! `grammask generate`: random texts drawn through the masks (experiment 2).

use crate::common::{load_store, tokenizer_for, Rng};
use grammask::matcher::Matcher;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Sample random texts from the grammar through the masks (experiment 2).
/// With --json-schema or --grammar (and --tokenizer) instead of --store, the
/// store is compiled per request first (positions computed on first visit).
#[derive(clap::Args)]
pub struct Args {
    #[arg(long, required_unless_present_any = ["json_schema", "grammar"])]
    store: Option<PathBuf>,
    /// A Lark grammar file, compiled per request (lazy store) instead of --store.
    #[arg(long, conflicts_with_all = ["store", "json_schema"])]
    grammar: Option<PathBuf>,
    /// The start rule of --grammar (default: `start`).
    #[arg(long, requires = "grammar")]
    start: Option<String>,
    #[command(flatten)]
    schema: crate::constraint_args::SchemaArgs,
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    #[arg(long, default_value_t = 10)]
    count: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
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
    /// allowed, otherwise an allowed ASCII single-byte token, preferring one
    /// after which EOS is allowed (one-token lookahead).
    #[arg(long)]
    finish_after: Option<usize>,
    #[arg(long)]
    out_dir: PathBuf,
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<bool> {
    let sampler = Sampler { max_tokens: a.max_tokens, eos_bias: a.eos_bias, short_bias: a.short_bias, finish_after: a.finish_after.unwrap_or(usize::MAX) };
    if let Some(g) = &a.grammar {
        let Some(t) = &a.tokenizer else { return Err(Error::new(ErrorKind::Io, "--grammar needs --tokenizer")) };
        let (pv, _) = crate::constraint_args::prepared(t, None)?;
        let store = crate::constraint_args::lazy_lark_store(g, a.start.as_deref(), &pv)?;
        return cmd_generate(store, a.count, a.seed, &sampler, &a.out_dir, a.json);
    }
    let store = match (&a.store, &a.schema.json_schema) {
        (Some(s), None) => {
            let store = Rc::new(load_store(s)?);
            if let Some(t) = &a.tokenizer {
                tokenizer_for(&store, t)?;
            }
            store
        }
        (None, Some(schema)) => {
            let Some(t) = &a.tokenizer else { return Err(Error::new(ErrorKind::Io, "--json-schema needs --tokenizer")) };
            let (pv, _) = crate::constraint_args::prepared(t, None)?;
            let c = grammask::constraint::Constraint::JsonSchema(crate::constraint_args::read_schema(schema)?);
            crate::constraint_args::compile_store(&pv, &c, &a.schema.options()?)?
        }
        _ => return Err(Error::new(ErrorKind::Io, "give one of --store, --json-schema and --grammar")),
    };
    cmd_generate(store, a.count, a.seed, &sampler, &a.out_dir, a.json)
}

/// How `generate` draws tokens (see the `Generate` options).
struct Sampler {
    max_tokens: usize,
    eos_bias: f64,
    short_bias: f64,
    finish_after: usize,
}

fn cmd_generate(
    store: Rc<grammask::store::MaskStore>,
    count: usize,
    seed: u64,
    sampler: &Sampler,
    out_dir: &Path,
    json: bool,
) -> Result<bool> {
    let Sampler { max_tokens, eos_bias, short_bias, finish_after } = *sampler;
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
        while n < max_tokens {
            m.fill_mask(&mut mask)?;
            crate::common::allowed_ids(&mask, &mut allowed);
            let eos_ok = m.is_accepting();
            let finishing = n >= finish_after;
            let pick = if eos_ok && (finishing || rng.unit() < eos_bias || allowed.iter().all(|t| eos.contains(t))) {
                eos[0]
            } else if finishing {
                let bytes = |t: u32| store.vocab().token_bytes(grammask::ids::TokenId(t));
                let mut cands: Vec<u32> =
                    allowed.iter().copied().filter(|&t| !eos.contains(&t) && bytes(t).len() == 1 && bytes(t)[0] < 0x80).collect();
                if cands.is_empty() {
                    cands = allowed.iter().copied().filter(|t| !eos.contains(t)).collect();
                }
                if cands.is_empty() {
                    break;
                }
                let start = rng.below(cands.len() as u64) as usize;
                let mut pick = cands[start];
                for i in 0..cands.len() {
                    let t = cands[(start + i) % cands.len()];
                    m.commit_token(t)?;
                    let ends = m.is_accepting();
                    m.rollback(1)?;
                    if ends {
                        pick = t;
                        break;
                    }
                }
                pick
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
