//! `grammask check`: replay files token by token through the masks (experiments 1 and 3).

use crate::common::{expand, load_store, read, tokenizer_for, with_list};
use grammask::matcher::{Matcher, MatcherOptions};
use grammask::store::MaskStore;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Replay files token by token and verify every token is allowed (experiment 1).
/// With --json-schema instead of --store, the store is compiled from the
/// schema first (the files are JSON instances, replayed as written); with
/// --grammar, from a Lark grammar file (lazy store).
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
}

pub fn run(a: Args) -> Result<bool> {
    let files = with_list(a.files, a.files_from)?;
    let (store, tok) = match (&a.store, &a.schema.json_schema) {
        _ if a.grammar.is_some() => {
            let (pv, tok) = crate::constraint_args::prepared(&a.tokenizer, None)?;
            (crate::constraint_args::lazy_lark_store(a.grammar.as_ref().unwrap(), a.start.as_deref(), &pv)?, tok)
        }
        (Some(s), None) => {
            let store = Rc::new(load_store(s)?);
            let tok = tokenizer_for(&store, &a.tokenizer)?;
            (store, tok)
        }
        (None, Some(schema)) => {
            let (pv, tok) = crate::constraint_args::prepared(&a.tokenizer, None)?;
            let c = grammask::constraint::Constraint::JsonSchema(crate::constraint_args::read_schema(schema)?);
            (crate::constraint_args::compile_store(&pv, &c, &a.schema.options()?)?, tok)
        }
        _ => return Err(Error::new(ErrorKind::Io, "give one of --store, --json-schema and --grammar")),
    };
    cmd_check(store, tok, a.compare_store.as_deref(), a.json, a.quiet, &files)
}

fn cmd_check(store: Rc<MaskStore>, tok: tokenizers::Tokenizer, compare: Option<&Path>, json: bool, quiet: bool, files: &[PathBuf]) -> Result<bool> {
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
        // The store under test masks as users get it (mask cache on); the
        // compared store computes every mask (no cache), so cached masks are
        // checked against fresh ones too.
        let no_cache = MatcherOptions { mask_cache: 0, ..MatcherOptions::default() };
        let mut mo = other.as_ref().map(|o| Matcher::with_options(o.clone(), no_cache.clone()));
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
