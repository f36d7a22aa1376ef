//! `grammask`: compile grammars into mask stores and exercise them.

use clap::{Parser, Subcommand};
use grammask::matcher::Matcher;
use grammask::parser::driver::Recognizer;
use grammask::store::MaskStore;
use grammask::{Error, ErrorKind, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "grammask", version, about = "Grammar-constrained decoding: compile grammars into token mask stores")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Lex and parse files with a grammar; print `ok` or the first error per file.
    Parse {
        #[arg(long)]
        grammar: PathBuf,
        #[arg(long)]
        start: Option<String>,
        /// One JSON object per file.
        #[arg(long)]
        json: bool,
        /// Only print failures and the summary.
        #[arg(long, short)]
        quiet: bool,
        /// Read more file paths from this file (one per line).
        #[arg(long)]
        files_from: Option<PathBuf>,
        files: Vec<PathBuf>,
    },
    /// Build a mask store blob for a grammar and a tokenizer.
    Compile {
        #[arg(long)]
        grammar: PathBuf,
        #[arg(long)]
        tokenizer: PathBuf,
        #[arg(short, long)]
        out: PathBuf,
        /// EOS token ids, comma-separated (default: from tokenizer_config.json / generation_config.json).
        #[arg(long, value_delimiter = ',')]
        eos: Option<Vec<u32>>,
        #[arg(long)]
        start: Option<String>,
        /// Keep the raw store (no streamlining).
        #[arg(long)]
        no_streamline: bool,
        #[arg(long)]
        json: bool,
    },
    /// Replay files token by token and verify every token is allowed (experiment 1).
    Check {
        #[arg(long)]
        store: PathBuf,
        #[arg(long)]
        tokenizer: PathBuf,
        /// A second store whose masks must be bit-identical at every position (experiment 3).
        #[arg(long)]
        compare_store: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        #[arg(long, short)]
        quiet: bool,
        /// Read more file paths from this file (one per line).
        #[arg(long)]
        files_from: Option<PathBuf>,
        files: Vec<PathBuf>,
    },
    /// Sample random texts from the grammar through the masks (experiment 2).
    Generate {
        #[arg(long)]
        store: PathBuf,
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
    },
    /// Time every mask computation while replaying token streams (files
    /// tokenized with --tokenizer, or id streams given with --token-ids).
    Bench {
        #[arg(long)]
        store: PathBuf,
        /// Tokenizer for FILES (and --dump-ids); not needed with --token-ids alone.
        #[arg(long)]
        tokenizer: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        /// Measured replays of all streams; reported figures are medians over runs.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Unmeasured replays before the measured runs.
        #[arg(long, default_value_t = 0)]
        warmup: usize,
        /// Replay these id streams (JSON files written by --dump-ids: `{"ids": [...]}`
        /// or a bare array; a directory means its files in name order).
        #[arg(long)]
        token_ids: Vec<PathBuf>,
        /// Write each stream's token ids to DIR/NNNN-<name>.json (same order as replayed).
        #[arg(long)]
        dump_ids: Option<PathBuf>,
        /// Read more file paths from this file (one per line).
        #[arg(long)]
        files_from: Option<PathBuf>,
        files: Vec<PathBuf>,
    },
    /// Replay files token by token and print, per file, one JSON line with the
    /// token ids and a hash of the mask at every position (before each token,
    /// and at the end): the reference that pkg-tests compares the wasm build
    /// against. Hash: two 32-bit lanes over the mask words,
    /// `a = (a ^ w) * 0x01000193`, `b = ((b ^ w) * 0x27d4eb2d) + i` (wrapping),
    /// printed as 16 hex digits `a` then `b`.
    Masks {
        #[arg(long)]
        store: PathBuf,
        #[arg(long)]
        tokenizer: PathBuf,
        /// Read more file paths from this file (one per line).
        #[arg(long)]
        files_from: Option<PathBuf>,
        files: Vec<PathBuf>,
    },
    /// Print the store's figures.
    Stats {
        #[arg(long)]
        store: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also list the checked entries of the position with the most entries
        /// for this target terminal (name).
        #[arg(long)]
        dump_target: Option<String>,
    },
}

fn main() -> ExitCode {
    // Output piped into `head` and the like: end quietly when the reader
    // goes away (Rust ignores SIGPIPE, so `println!` would panic instead).
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Parse { grammar, start, json, quiet, files_from, files } => with_list(files, files_from)
            .and_then(|files| cmd_parse(&grammar, start.as_deref(), json, quiet, &files)),
        Cmd::Compile { grammar, tokenizer, out, eos, start, no_streamline, json } => {
            cmd_compile(&grammar, &tokenizer, &out, eos.as_deref(), start.as_deref(), !no_streamline, json)
        }
        Cmd::Check { store, tokenizer, compare_store, json, quiet, files_from, files } => with_list(files, files_from)
            .and_then(|files| cmd_check(&store, &tokenizer, compare_store.as_deref(), json, quiet, &files)),
        Cmd::Generate { store, tokenizer, count, seed, max_tokens, eos_bias, short_bias, finish_after, out_dir, json } => {
            let sampler = Sampler { max_tokens, eos_bias, short_bias, finish_after: finish_after.unwrap_or(usize::MAX) };
            cmd_generate(&store, tokenizer.as_deref(), count, seed, &sampler, &out_dir, json)
        }
        Cmd::Masks { store, tokenizer, files_from, files } => {
            with_list(files, files_from).and_then(|files| cmd_masks(&store, &tokenizer, &files))
        }
        Cmd::Stats { store, json, dump_target } => cmd_stats(&store, json, dump_target.as_deref()),
        Cmd::Bench { store, tokenizer, json, runs, warmup, token_ids, dump_ids, files_from, files } => {
            with_list(files, files_from).and_then(|files| {
                let opts = BenchOptions { runs, warmup, json, dump_ids };
                cmd_bench(&store, tokenizer.as_deref(), &files, &token_ids, &opts)
            })
        }
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("grammask: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn with_list(mut files: Vec<PathBuf>, list: Option<PathBuf>) -> Result<Vec<PathBuf>> {
    if let Some(l) = list {
        let text = String::from_utf8_lossy(&read(&l)?).into_owned();
        files.extend(text.lines().filter(|s| !s.trim().is_empty()).map(PathBuf::from));
    }
    Ok(files)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))
}

/// Expand directories into their files (recursively, sorted).
fn expand(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in files {
        if f.is_dir() {
            let mut stack = vec![f.clone()];
            while let Some(d) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else { continue };
                let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                entries.sort();
                for p in entries {
                    if p.is_dir() {
                        stack.push(p);
                    } else {
                        out.push(p);
                    }
                }
            }
        } else {
            out.push(f.clone());
        }
    }
    out
}

fn cmd_parse(grammar: &Path, start: Option<&str>, json: bool, quiet: bool, files: &[PathBuf]) -> Result<bool> {
    let cfg = grammask::grammar::lark::load_grammar_file(grammar, start)?;
    let rec = Recognizer::new(cfg)?;
    let files = expand(files);
    let (mut ok, mut bytes, mut secs) = (0usize, 0usize, 0f64);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for f in &files {
        let text = read(f)?;
        let t = Instant::now();
        let r = rec.check(&text);
        secs += t.elapsed().as_secs_f64();
        bytes += text.len();
        let _ = match (&r, json) {
            (Ok(()), true) => writeln!(out, "{}", serde_json::json!({"file": f, "ok": true})),
            (Err(e), true) => writeln!(out, "{}", serde_json::json!({"file": f, "ok": false, "error": e})),
            (Ok(()), false) if !quiet => writeln!(out, "{}: ok", f.display()),
            (Ok(()), false) => Ok(()),
            (Err(e), false) => writeln!(out, "{}:{e}", f.display()),
        };
        ok += r.is_ok() as usize;
    }
    let mbs = bytes as f64 / 1e6 / secs.max(1e-9);
    if json {
        let _ = writeln!(out, "{}", serde_json::json!({"summary": {"files": files.len(), "accepted": ok, "bytes": bytes, "seconds": secs, "mb_per_s": mbs}}));
    } else {
        let _ = writeln!(out, "{ok}/{} files accepted, {:.1} MB in {:.2} s ({mbs:.1} MB/s)", files.len(), bytes as f64 / 1e6, secs);
    }
    Ok(ok == files.len())
}

fn cmd_compile(
    grammar: &Path,
    tokenizer: &Path,
    out: &Path,
    eos: Option<&[u32]>,
    start: Option<&str>,
    streamline: bool,
    json: bool,
) -> Result<bool> {
    let t0 = Instant::now();
    let cfg = grammask::grammar::lark::load_grammar_file(grammar, start)?;
    let vocab = grammask::vocab::load::load_tokenizer_file(tokenizer, eos)?;
    let quiet = json;
    let mut progress = |m: &str| {
        if !quiet {
            eprintln!("[{:7.2}s] {m}", t0.elapsed().as_secs_f64());
        }
    };
    progress(&format!("grammar: {} terminals, {} rules; vocabulary: {} tokens", cfg.terminals.len(), cfg.rules.len(), vocab.len()));
    let opts = grammask::store::build::CompileOptions { streamline };
    let (store, rep) = grammask::store::build::compile(&cfg, vocab, &opts, &mut progress)?;
    let blob = store.to_bytes();
    std::fs::write(out, &blob).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", out.display())))?;
    // Read it back through the runtime loader, as the wasm build will.
    let back = MaskStore::from_bytes(&blob)?;
    if back.to_bytes() != blob {
        return Err(Error::new(ErrorKind::BlobCorrupt, "internal error: blob does not round-trip"));
    }
    let secs = t0.elapsed().as_secs_f64();
    let peak = peak_rss_mb();
    if json {
        println!("{}", serde_json::json!({"report": rep, "bytes": blob.len(), "seconds": secs, "peak_rss_mb": peak, "out": out}));
    } else {
        println!(
            "terminals {}, rules {}, lexer states {}, LR states {}, positions {}, token transitions {}, store entries {} (raw {}), always sets {}, token sets {}, {} bytes, {:.1} s, peak RSS {} MB -> {}",
            rep.terminals, rep.rules, rep.lexer_states, rep.lr_states, rep.positions, rep.token_transitions, rep.entries,
            rep.raw_entries, rep.always_sets, rep.token_sets, blob.len(), secs, peak.map_or("?".into(), |m| m.to_string()), out.display()
        );
    }
    Ok(true)
}

fn peak_rss_mb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

fn load_store(path: &Path) -> Result<MaskStore> {
    let bytes = read(path)?;
    MaskStore::from_bytes(&bytes).map_err(|e| Error::new(e.kind(), format!("{}: {}", path.display(), e.message())))
}

/// Load the tokenizer and make sure the store was built for it.
fn tokenizer_for(store: &MaskStore, path: &Path) -> Result<tokenizers::Tokenizer> {
    let eos: Vec<u32> = store.vocab().eos_ids().iter().map(|t| t.0).collect();
    let vocab = grammask::vocab::load::load_tokenizer_file(path, Some(&eos))?;
    if vocab.fingerprint() != store.vocab().fingerprint() {
        return Err(Error::new(
            ErrorKind::BlobTokenizer,
            format!("the store was built for another tokenizer than {}", path.display()),
        ));
    }
    tokenizers::Tokenizer::from_file(path).map_err(|e| Error::new(ErrorKind::Tokenizer, format!("{}: {e}", path.display())))
}

fn cmd_check(store: &Path, tokenizer: &Path, compare: Option<&Path>, json: bool, quiet: bool, files: &[PathBuf]) -> Result<bool> {
    let store = Rc::new(load_store(store)?);
    let tok = tokenizer_for(&store, tokenizer)?;
    let other = match compare {
        Some(p) => {
            let o = Rc::new(load_store(p)?);
            if o.vocab().fingerprint() != store.vocab().fingerprint() {
                return Err(Error::new(ErrorKind::BlobTokenizer, "the two stores were built for different tokenizers"));
            }
            Some(o)
        }
        None => None,
    };
    let files = expand(files);
    let (mut tokens, mut violations, mut accepted, mut diffs) = (0u64, 0u64, 0usize, 0u64);
    let (mut calls, mut calls_other) = (0u64, 0u64);
    let words = store.mask_words();
    let (mut m1, mut m2) = (vec![0u32; words], vec![0u32; words]);
    for f in &files {
        let text = read(f)?;
        let Ok(s) = String::from_utf8(text) else {
            println!("{}: skipped (not UTF-8)", f.display());
            continue;
        };
        let enc = tok.encode(s.as_str(), false).map_err(|e| Error::new(ErrorKind::Tokenizer, e.to_string()))?;
        let ids = enc.get_ids();
        let mut m = Matcher::new(store.clone());
        let mut mo = other.as_ref().map(|o| Matcher::new(o.clone()));
        let mut file_viol = None;
        let mut file_diff = 0u64;
        for (i, &id) in ids.iter().enumerate() {
            m.fill_mask(&mut m1)?;
            if let Some(mo) = &mut mo {
                mo.fill_mask(&mut m2)?;
                if m1 != m2 {
                    file_diff += 1;
                }
            }
            tokens += 1;
            if m1[(id >> 5) as usize] >> (id & 31) & 1 == 0 {
                file_viol = Some(format!("token #{i} (id {id}, {:?}) not in mask", String::from_utf8_lossy(store.vocab().token_bytes(grammask::ids::TokenId(id)))));
                violations += 1;
                break;
            }
            if let Err(e) = m.commit_token(id) {
                file_viol = Some(format!("token #{i} (id {id}) in mask but refused: {e}"));
                violations += 1;
                break;
            }
            if let Some(mo) = &mut mo {
                mo.commit_token(id)?;
            }
        }
        let mut eos_ok = false;
        if file_viol.is_none() {
            m.fill_mask(&mut m1)?;
            if let Some(mo) = &mut mo {
                mo.fill_mask(&mut m2)?;
                if m1 != m2 {
                    file_diff += 1;
                }
            }
            eos_ok = store.vocab().eos_ids().iter().all(|t| m1[t.index() >> 5] >> (t.0 & 31) & 1 == 1) && m.is_accepting();
            if !eos_ok {
                file_viol = Some("EOS not allowed at the end".into());
                violations += 1;
            }
        }
        calls += m.parser_calls();
        calls_other += mo.as_ref().map_or(0, |m| m.parser_calls());
        diffs += file_diff;
        accepted += (eos_ok && file_viol.is_none()) as usize;
        if json {
            println!("{}", serde_json::json!({"file": f, "tokens": ids.len(), "ok": file_viol.is_none(), "error": file_viol, "mask_diffs": file_diff}));
        } else if file_viol.is_some() || file_diff > 0 || !quiet {
            println!("{}: {} tokens, {}{}", f.display(), ids.len(), file_viol.as_deref().unwrap_or("ok"),
                if other.is_some() { format!(", {file_diff} mask differences") } else { String::new() });
        }
    }
    let per_tok = calls as f64 / tokens.max(1) as f64;
    if json {
        println!("{}", serde_json::json!({"summary": {"tokens": tokens, "violations": violations, "accepted": accepted, "files": files.len(), "mask_diffs": diffs, "parser_calls_per_token": per_tok, "compare_parser_calls_per_token": calls_other as f64 / tokens.max(1) as f64}}));
    } else {
        if other.is_some() {
            println!("masks compared at {} positions: {diffs} differences; parser calls/token {:.2} vs {:.2}", tokens + files.len() as u64, per_tok, calls_other as f64 / tokens.max(1) as f64);
        } else {
            println!("parser calls/token {per_tok:.2}");
        }
        println!("{tokens} tokens, {violations} violations, {accepted}/{} files accepted", files.len());
    }
    Ok(violations == 0 && diffs == 0)
}

/// The mask hash of `grammask masks` (see its help).
fn mask_hash(words: &[u32]) -> String {
    let (mut a, mut b) = (0x811c_9dc5u32, 0x9747_b28cu32);
    for (i, &w) in words.iter().enumerate() {
        a = (a ^ w).wrapping_mul(0x0100_0193);
        b = (b ^ w).wrapping_mul(0x27d4_eb2d).wrapping_add(i as u32);
    }
    format!("{a:08x}{b:08x}")
}

fn cmd_masks(store: &Path, tokenizer: &Path, files: &[PathBuf]) -> Result<bool> {
    let store = Rc::new(load_store(store)?);
    let tok = tokenizer_for(&store, tokenizer)?;
    let mut mask = vec![0u32; store.mask_words()];
    let mut all_ok = true;
    for f in expand(files) {
        let Ok(text) = String::from_utf8(read(&f)?) else { continue };
        let enc = tok.encode(text.as_str(), false).map_err(|e| Error::new(ErrorKind::Tokenizer, e.to_string()))?;
        let ids = enc.get_ids();
        let mut m = Matcher::new(store.clone());
        let mut hashes = Vec::with_capacity(ids.len() + 1);
        let mut violation = None;
        for (i, &id) in ids.iter().enumerate() {
            m.fill_mask(&mut mask)?;
            hashes.push(mask_hash(&mask));
            if mask[(id >> 5) as usize] >> (id & 31) & 1 == 0 || m.commit_token(id).is_err() {
                violation = Some(i);
                break;
            }
        }
        let mut eos_ok = false;
        if violation.is_none() {
            m.fill_mask(&mut mask)?;
            hashes.push(mask_hash(&mask));
            eos_ok = m.is_accepting() && store.vocab().eos_ids().iter().all(|t| mask[t.index() >> 5] >> (t.0 & 31) & 1 == 1);
        }
        all_ok &= violation.is_none() && eos_ok;
        println!("{}", serde_json::json!({"file": f, "ids": ids, "hashes": hashes, "violation": violation, "eos_ok": eos_ok}));
    }
    Ok(all_ok)
}

/// splitmix64: a small, well-known PRNG (reproducible across platforms).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How `generate` draws tokens (see the `Generate` options).
struct Sampler {
    max_tokens: usize,
    eos_bias: f64,
    short_bias: f64,
    finish_after: usize,
}

fn cmd_generate(
    store: &Path,
    tokenizer: Option<&Path>,
    count: usize,
    seed: u64,
    sampler: &Sampler,
    out_dir: &Path,
    json: bool,
) -> Result<bool> {
    let Sampler { max_tokens, eos_bias, short_bias, finish_after } = *sampler;
    let store = Rc::new(load_store(store)?);
    if let Some(t) = tokenizer {
        tokenizer_for(&store, t)?;
    }
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
            allowed.clear();
            for (w, &bits) in mask.iter().enumerate() {
                let mut b = bits;
                while b != 0 {
                    allowed.push(w as u32 * 32 + b.trailing_zeros());
                    b &= b - 1;
                }
            }
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

fn cmd_stats(store: &Path, json: bool, dump_target: Option<&str>) -> Result<bool> {
    let bytes = read(store)?;
    let t = Instant::now();
    let s = MaskStore::from_bytes(&bytes)?;
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let m = Matcher::new(Rc::new(s));
    let _ = m.compute_mask();
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    let s = m.store();
    // Entries per lexer position (the paper's Figure 6, as a table).
    let mut per_q: Vec<usize> = (0..s.n_positions() as u32).map(|q| s.entries(q).len()).collect();
    per_q.sort_unstable();
    let pct = |p: f64| per_q.get(((per_q.len() as f64 - 1.0) * p) as usize).copied().unwrap_or(0);
    let dist: Vec<(String, usize)> =
        [0.5, 0.75, 0.9, 0.99, 1.0].iter().map(|&p| (format!("p{}", (p * 100.0) as u32), pct(p))).collect();
    // Checked entries by target terminal (where the parser time goes).
    let mut by_target: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for q in 0..s.n_positions() as u32 {
        let (_, x) = s.q_parts(q);
        let name = if x == u32::MAX { "<start>".to_string() } else { s.sym_name(x) };
        let e = by_target.entry(name).or_default();
        e.0 += 1;
        e.1 += s.entries(q).len();
    }
    let mut by_target: Vec<(String, (usize, usize))> = by_target.into_iter().collect();
    by_target.sort_by(|a, b| b.1 .1.cmp(&a.1 .1));
    by_target.truncate(12);
    let v = serde_json::json!({
        "entries_by_target": by_target.iter().map(|(n, (p, e))| serde_json::json!({"target": n, "positions": p, "entries": e})).collect::<Vec<_>>(),
        "bytes": bytes.len(),
        "vocab_size": s.vocab().len(),
        "eos": s.vocab().eos_ids().iter().map(|t| t.0).collect::<Vec<_>>(),
        "terminals": s.grammar().n_terminals,
        "lexer_states": s.lexer().n_states(),
        "lr_states": s.grammar().tables.n_states(),
        "positions": s.n_positions(),
        "entries": s.n_entries(),
        "stored_entries": s.n_stored_entries(),
        "always_sets": s.n_always(),
        "token_sets": s.sets().len(),
        "set_pool_words": s.sets().data.len(),
        "steps": s.info().step_counts,
        "context_classes": s.context_table().n_classes(),
        "contexts": s.context_table().n_contexts(),
        "entries_per_position": dist,
        "sections": grammask::store::wire::section_sizes(&bytes)?,
        "load_ms": load_ms,
        "first_mask_ms": first_ms,
    });
    if json {
        println!("{v}");
    } else {
        println!("blob: {} bytes; vocabulary {} tokens, EOS {:?}", bytes.len(), s.vocab().len(), v["eos"]);
        println!("grammar: {} terminals, {} LR states; lexer: {} states", v["terminals"], v["lr_states"], v["lexer_states"]);
        println!("positions {}, checked entries {} ({} stored), always-allowed sets {}, distinct token sets {}", s.n_positions(), s.n_entries(), s.n_stored_entries(), s.n_always(), s.sets().len());
        let c = s.context_table();
        if !c.is_empty() {
            println!(
                "parser contexts: {} contexts in {} classes, {} verdict codes ({} bytes)",
                c.n_contexts(),
                c.n_classes(),
                c.n_codes(),
                c.n_codes().div_ceil(4)
            );
        }
        println!("entries by step:");
        for (name, n) in &s.info().step_counts {
            println!("  {name:<24} {n}");
        }
        println!("checked entries per lexer position:");
        for (p, n) in &dist {
            println!("  {p:<5} {n}");
        }
        println!("checked entries by target terminal (top 12):");
        for (n, (p, e)) in &by_target {
            println!("  {n:<16} {p:>6} positions {e:>9} entries");
        }
        println!("blob sections (bytes):");
        for (tag, n) in grammask::store::wire::section_sizes(&bytes)? {
            println!("  {tag:<8} {n:>10}");
        }
        println!("load {load_ms:.2} ms, first mask {first_ms:.2} ms");
        if let Some(name) = dump_target {
            let best = (0..s.n_positions() as u32)
                .filter(|&q| s.q_parts(q).1 != u32::MAX && s.sym_name(s.q_parts(q).1) == name)
                .max_by_key(|&q| s.entries(q).len());
            if let Some(q) = best {
                println!("position {q} {:?}: {} entries", s.q_parts(q), s.entries(q).len());
                for e in s.entries(q) {
                    let seq: Vec<String> = s.entry_seq(e).iter().map(|&y| s.sym_name(y)).collect();
                    println!("  {:>6} tokens  {}", s.sets().count(s.entry_set(e)), seq.join(" "));
                }
            }
        }
    }
    Ok(true)
}

struct BenchOptions {
    runs: usize,
    warmup: usize,
    json: bool,
    dump_ids: Option<PathBuf>,
}

/// One token stream to replay: its name (source file) and ids.
struct Stream {
    name: String,
    ids: Vec<u32>,
}

/// Nearest-rank percentile of sorted values (0 for none).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Read an id stream: a JSON array of ids or an object with an `ids` array.
fn read_ids(path: &Path) -> Result<Vec<u32>> {
    let bad = |m: &str| Error::new(ErrorKind::Io, format!("{}: {m}", path.display()));
    let v: serde_json::Value = serde_json::from_slice(&read(path)?).map_err(|e| bad(&e.to_string()))?;
    let arr = match &v {
        serde_json::Value::Array(a) => a,
        serde_json::Value::Object(o) => o.get("ids").and_then(|x| x.as_array()).ok_or_else(|| bad("no \"ids\" array"))?,
        _ => return Err(bad("expected an array of token ids or {\"ids\": [...]}")),
    };
    arr.iter()
        .map(|x| x.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| bad(&format!("not a token id: {x}"))))
        .collect()
}

/// Figures of one measured replay of all streams (µs).
struct RunFigures {
    load_us: f64,
    ttfm_us: f64,
    first_mask_us: f64,
    mask: Vec<f64>,
    commit: Vec<f64>,
    calls: u64,
    /// First-symbol feeds and rejected ones (see `Matcher::first_symbol_feeds`).
    first: u64,
    first_rej: u64,
}

/// Replay every stream once from the blob bytes, timing each mask and commit.
fn bench_run(bytes: &[u8], streams: &[Stream], rejected: &mut Vec<String>) -> Result<RunFigures> {
    // Time to first mask: blob bytes -> loaded store -> matcher -> first mask.
    let t = Instant::now();
    let store = Rc::new(MaskStore::from_bytes(bytes)?);
    let load_us = t.elapsed().as_secs_f64() * 1e6;
    let mut mask = vec![0u32; store.mask_words()];
    let t1 = Instant::now();
    Matcher::new(store.clone()).fill_mask(&mut mask)?;
    let first_mask_us = t1.elapsed().as_secs_f64() * 1e6;
    let ttfm_us = t.elapsed().as_secs_f64() * 1e6;
    let total: usize = streams.iter().map(|s| s.ids.len() + 1).sum();
    let (mut mask_us, mut commit_us) = (Vec::with_capacity(total), Vec::with_capacity(total));
    let mut calls = 0u64;
    let (mut first, mut first_rej) = (0u64, 0u64);
    for s in streams {
        let mut m = Matcher::new(store.clone());
        for (i, &id) in s.ids.iter().enumerate() {
            let t = Instant::now();
            m.fill_mask(&mut mask)?;
            mask_us.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let r = m.commit_token(id);
            commit_us.push(t.elapsed().as_secs_f64() * 1e6);
            if let Err(e) = r {
                rejected.push(format!("{}: token #{i} (id {id}): {}", s.name, e.message()));
                break;
            }
        }
        let t = Instant::now();
        m.fill_mask(&mut mask)?;
        mask_us.push(t.elapsed().as_secs_f64() * 1e6);
        calls += m.parser_calls();
        let (a, b) = m.first_symbol_feeds();
        first += a;
        first_rej += b;
    }
    Ok(RunFigures { load_us, ttfm_us, first_mask_us, mask: mask_us, commit: commit_us, calls, first, first_rej })
}

fn cmd_bench(store_path: &Path, tokenizer: Option<&Path>, files: &[PathBuf], id_files: &[PathBuf], o: &BenchOptions) -> Result<bool> {
    let bytes = read(store_path)?;
    let store = MaskStore::from_bytes(&bytes)?;
    let mut streams = Vec::new();
    let files = expand(files);
    if !files.is_empty() {
        let Some(tp) = tokenizer else {
            return Err(Error::new(ErrorKind::Tokenizer, "--tokenizer is needed to replay text files"));
        };
        let tok = tokenizer_for(&store, tp)?;
        for f in files {
            let Ok(text) = String::from_utf8(read(&f)?) else { continue };
            let enc = tok.encode(text.as_str(), false).map_err(|e| Error::new(ErrorKind::Tokenizer, e.to_string()))?;
            streams.push(Stream { name: f.display().to_string(), ids: enc.get_ids().to_vec() });
        }
    }
    for f in expand(id_files) {
        streams.push(Stream { name: f.display().to_string(), ids: read_ids(&f)? });
    }
    if let Some(dir) = &o.dump_ids {
        std::fs::create_dir_all(dir).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", dir.display())))?;
        for (i, s) in streams.iter().enumerate() {
            let base = Path::new(&s.name).file_name().map_or("stream".into(), |n| n.to_string_lossy().into_owned());
            let path = dir.join(format!("{i:04}-{base}.json"));
            let v = serde_json::json!({"file": s.name, "ids": s.ids});
            std::fs::write(&path, v.to_string()).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
        }
    }
    let n_vocab = store.vocab().len() as u64;
    if let Some((s, id)) = streams.iter().find_map(|s| s.ids.iter().find(|&&id| id as u64 >= n_vocab).map(|id| (s, id))) {
        return Err(Error::new(ErrorKind::InvalidToken, format!("{}: token id {id} is outside the vocabulary ({n_vocab})", s.name)));
    }
    drop(store);
    let mut rejected = Vec::new();
    for _ in 0..o.warmup {
        bench_run(&bytes, &streams, &mut rejected)?;
        rejected.clear();
    }
    let mut runs = Vec::new();
    for _ in 0..o.runs.max(1) {
        rejected.clear();
        runs.push(bench_run(&bytes, &streams, &mut rejected)?);
    }
    // Per-run statistics, then the median of each over runs.
    let stat = |f: &dyn Fn(&RunFigures) -> f64| median(runs.iter().map(f).collect());
    let pct = |v: &[f64], p: f64| {
        let mut s = v.to_vec();
        s.sort_by(|a, b| a.total_cmp(b));
        percentile(&s, p)
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let masks = runs[0].mask.len();
    let tokens: usize = streams.iter().map(|s| s.ids.len()).sum();
    let mask_stats: Vec<[f64; 6]> = runs
        .iter()
        .map(|r| [mean(&r.mask), pct(&r.mask, 0.5), pct(&r.mask, 0.9), pct(&r.mask, 0.99), pct(&r.mask, 1.0), r.mask.iter().sum::<f64>()])
        .collect();
    let m = |k: usize| median(mask_stats.iter().map(|s| s[k]).collect());
    let (c_mean, c50, c99) = (stat(&|r| mean(&r.commit)), stat(&|r| pct(&r.commit, 0.5)), stat(&|r| pct(&r.commit, 0.99)));
    let calls_per_mask = runs[0].calls as f64 / masks.max(1) as f64;
    let (first_per_mask, first_rej_per_mask) =
        (runs[0].first as f64 / masks.max(1) as f64, runs[0].first_rej as f64 / masks.max(1) as f64);
    let v = serde_json::json!({
        "store": store_path, "blob_bytes": bytes.len(), "streams": streams.len(), "tokens": tokens, "masks": masks,
        "runs": runs.len(), "warmup": o.warmup,
        "load_us": stat(&|r| r.load_us), "first_mask_us": stat(&|r| r.first_mask_us), "ttfm_us": stat(&|r| r.ttfm_us),
        "mask_us": {"mean": m(0), "p50": m(1), "p90": m(2), "p99": m(3), "max": m(4), "total": m(5)},
        "commit_us": {"mean": c_mean, "p50": c50, "p99": c99},
        "parser_calls_per_token": calls_per_mask,
        "first_symbol_feeds_per_token": first_per_mask,
        "rejected_first_symbol_feeds_per_token": first_rej_per_mask,
        "per_run": runs.iter().zip(&mask_stats).map(|(r, s)| serde_json::json!({
            "load_us": r.load_us, "ttfm_us": r.ttfm_us, "mask_p50": s[1], "mask_p99": s[3], "mask_max": s[4]})).collect::<Vec<_>>(),
        "rejected": rejected,
    });
    if o.json {
        println!("{v}");
    } else {
        println!(
            "{} streams, {tokens} tokens, {masks} masks, median of {} runs: mask mean {:.1} us, p50 {:.1}, p90 {:.1}, p99 {:.1}, max {:.1}; \
             commit mean {c_mean:.1} us, p50 {c50:.1}, p99 {c99:.1}; parser calls/token {calls_per_mask:.1} \
             (first symbols {first_per_mask:.1}, rejected {first_rej_per_mask:.1}); \
             load {:.0} us; first mask {:.0} us; blob->first mask {:.0} us; blob {} bytes",
            streams.len(), runs.len(), m(0), m(1), m(2), m(3), m(4),
            stat(&|r| r.load_us), stat(&|r| r.first_mask_us), stat(&|r| r.ttfm_us), bytes.len()
        );
        for r in &rejected {
            println!("rejected: {r}");
        }
    }
    Ok(rejected.is_empty())
}
