//! `grammask check`: replay files token by token through the masks (experiments 1 and 3).

use crate::common::{expand, load_store, read, tokenizer_for, with_list};
use crate::explain::Explainer;
use grammask::matcher::{Matcher, MatcherOptions};
use grammask::store::MaskStore;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Replay files token by token and verify every token is allowed (experiment 1).
/// With --json-schema or --regex instead of --store, the store is compiled per
/// request first (the files are instances, replayed as written; JSON whitespace
/// `flexible:256` by default here, so pretty-printed files pass); with --grammar,
/// from a Lark grammar file (lazy store). One trailing newline at the end of a
/// file is ignored when the constraint does not allow it. A refusal says where
/// (line:col), what was allowed there and, for a JSON Schema, the keyword and
/// pointer that refused it.
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
    /// Constrain each whole file to this Python regex (re.fullmatch), compiled per request.
    #[arg(long, conflicts_with_all = ["store", "json_schema"])]
    regex: Option<String>,
    /// The tokenizer.json that splits the files into tokens (the store's, with --store).
    #[arg(long)]
    tokenizer: PathBuf,
    /// A second store whose masks must be bit-identical at every position (experiment 3).
    #[arg(long)]
    compare_store: Option<PathBuf>,
    /// One JSON object per file, then a summary object.
    #[arg(long)]
    json: bool,
    /// Only print refused files and the summary.
    #[arg(long, short)]
    quiet: bool,
    /// Read more file paths from this file (one per line).
    #[arg(long)]
    files_from: Option<PathBuf>,
    /// Files (or directories, read recursively) to replay.
    files: Vec<PathBuf>,
}

/// Whitespace policy of `check` for JSON Schemas unless --whitespace is given:
/// any JSON whitespace, runs of up to 256 characters (pretty-printed files up
/// to 63 levels deep at four spaces per level).
pub const CHECK_WHITESPACE: &str = "flexible:256";

pub fn run(a: Args) -> Result<bool> {
    let files = with_list(a.files, a.files_from)?;
    let ws = a.schema.whitespace.clone().unwrap_or_else(|| CHECK_WHITESPACE.to_string());
    let (store, tok, why) = match (&a.store, a.schema.constraint(a.regex.as_deref())?) {
        _ if a.grammar.is_some() => {
            let (pv, tok) = crate::constraint_args::prepared(&a.tokenizer, None)?;
            let g = a.grammar.as_ref().unwrap();
            let format = a.format.of(g);
            let store = crate::constraint_args::lazy_grammar_store(g, a.start.as_deref(), format, &pv)?;
            let cfg = grammask::constraint::load_grammar_file(g, a.start.as_deref(), Some(format)).ok();
            (store, tok, Explainer::new(cfg, None, &ws))
        }
        (Some(s), None) => {
            let store = Rc::new(load_store(s)?);
            let tok = tokenizer_for(&store, &a.tokenizer)?;
            (store, tok, Explainer::default())
        }
        (None, Some(c)) => {
            let (pv, tok) = crate::constraint_args::prepared(&a.tokenizer, None)?;
            let o = a.schema.options_or(CHECK_WHITESPACE)?;
            let store = crate::constraint_args::compile_store(&pv, &c, &o)?;
            let cfg = grammask::constraint::to_cfg(&c, &o).ok().map(|x| x.0);
            let schema = match &c {
                grammask::constraint::Constraint::JsonSchema(v) => Some(v.clone()),
                _ => None,
            };
            (store, tok, Explainer::new(cfg, schema, &ws))
        }
        _ => return Err(Error::new(ErrorKind::Io, "give one of --store, --json-schema, --regex and --grammar")),
    };
    cmd_check(store, tok, &why, a.compare_store.as_deref(), a.json, a.quiet, &files)
}

/// One file's replay: tokens, the refusal (if any), mask differences, parser calls.
struct Replay {
    tokens: usize,
    viol: Option<String>,
    diffs: u64,
    calls: (u64, u64),
}

fn cmd_check(store: Rc<MaskStore>, tok: tokenizers::Tokenizer, why: &Explainer, compare: Option<&Path>, json: bool, quiet: bool, files: &[PathBuf]) -> Result<bool> {
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
    for f in &files {
        let text = read(f)?;
        let Ok(s) = String::from_utf8(text) else {
            println!("{}: skipped (not UTF-8)", f.display());
            continue;
        };
        let mut r = replay(&store, other.as_ref(), &tok, why, &s)?;
        // One trailing newline (`\n` or `\r\n`) that the constraint does not allow is ignored.
        let mut note = "";
        if r.viol.is_some() {
            if let Some(t) = s.strip_suffix("\r\n").or_else(|| s.strip_suffix('\n')) {
                let r2 = replay(&store, other.as_ref(), &tok, why, t)?;
                if r2.viol.is_none() && r2.diffs == 0 {
                    calls += r.calls.0;
                    calls_other += r.calls.1;
                    r = r2;
                    note = " (trailing newline ignored)";
                }
            }
        }
        tokens += r.tokens as u64;
        calls += r.calls.0;
        calls_other += r.calls.1;
        diffs += r.diffs;
        violations += r.viol.is_some() as u64;
        accepted += r.viol.is_none() as usize;
        if json {
            println!("{}", serde_json::json!({"file": f, "tokens": r.tokens, "ok": r.viol.is_none(), "error": r.viol, "mask_diffs": r.diffs, "trailing_newline_ignored": !note.is_empty()}));
        } else if r.viol.is_some() || r.diffs > 0 || !quiet {
            println!("{}: {} tokens, {}{note}{}", f.display(), r.tokens, r.viol.as_deref().unwrap_or("ok"),
                if other.is_some() { format!(", {} mask differences", r.diffs) } else { String::new() });
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

/// Replays one text through the masks (and the compared store's).
fn replay(store: &Rc<MaskStore>, other: Option<&Rc<MaskStore>>, tok: &tokenizers::Tokenizer, why: &Explainer, s: &str) -> Result<Replay> {
    let words = store.mask_words();
    let (mut m1, mut m2) = (vec![0u32; words], vec![0u32; words]);
    let enc = tok.encode(s, false).map_err(|e| Error::new(ErrorKind::Tokenizer, e.to_string()))?;
    let ids = enc.get_ids();
    let mut m = Matcher::new(store.clone());
    // The store under test masks as users get it (mask cache on); the
    // compared store computes every mask (no cache), so cached masks are
    // checked against fresh ones too.
    let no_cache = MatcherOptions { mask_cache: 0, ..MatcherOptions::default() };
    let mut mo = other.map(|o| Matcher::with_options(o.clone(), no_cache.clone()));
    let mut viol = None;
    let mut diffs = 0u64;
    let mut done: Vec<u8> = Vec::new();
    for (i, &id) in ids.iter().enumerate() {
        m.fill_mask(&mut m1)?;
        if let Some(mo) = &mut mo {
            mo.fill_mask(&mut m2)?;
            if m1 != m2 {
                diffs += 1;
            }
        }
        let bytes = store.vocab().token_bytes(grammask::ids::TokenId(id));
        if m1[(id >> 5) as usize] >> (id & 31) & 1 == 0 {
            let w = why.explain(store, &mut m, &done, id, s.as_bytes());
            viol = Some(format!("token #{i} (id {id}, {:?}) not in mask: {}", String::from_utf8_lossy(bytes), w.text));
            break;
        }
        if let Err(e) = m.commit_token(id) {
            viol = Some(format!("token #{i} (id {id}) in mask but refused: {e}"));
            break;
        }
        done.extend_from_slice(bytes);
        if let Some(mo) = &mut mo {
            mo.commit_token(id)?;
        }
    }
    if viol.is_none() {
        m.fill_mask(&mut m1)?;
        if let Some(mo) = &mut mo {
            mo.fill_mask(&mut m2)?;
            if m1 != m2 {
                diffs += 1;
            }
        }
        let eos_ok = store.vocab().eos_ids().iter().all(|t| m1[t.index() >> 5] >> (t.0 & 31) & 1 == 1) && m.is_accepting();
        if !eos_ok {
            let w = why.explain(store, &mut m, &done, u32::MAX, s.as_bytes());
            viol = Some(format!("EOS not allowed at the end: {}", w.text));
        }
    }
    Ok(Replay { tokens: ids.len(), viol, diffs, calls: (m.parser_calls(), mo.as_ref().map_or(0, |m| m.parser_calls())) })
}
