//! `grammask parse`: lex and parse files with a grammar (the reference recognizer).

use crate::common::{expand, load_grammar, read, with_list, FormatArg, GrammarArgs};
use grammask::reference::recognizer::Recognizer;
use grammask::Result;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Lex and parse files with a grammar; print `ok` or the first error per file.
#[derive(clap::Args)]
pub struct Args {
    /// The grammar file (Lark, or GBNF / EBNF: see --format).
    #[arg(long)]
    grammar: PathBuf,
    /// The start rule (default: `start` for Lark, `root` for GBNF / EBNF).
    #[arg(long)]
    start: Option<String>,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    grammar_args: GrammarArgs,
    /// One JSON object per file.
    #[arg(long)]
    json: bool,
    /// Only print failures and the summary.
    #[arg(long, short)]
    quiet: bool,
    /// Read more file paths from this file (one per line).
    #[arg(long)]
    files_from: Option<PathBuf>,
    /// Files (or directories) to parse.
    files: Vec<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    let files = with_list(a.files, a.files_from)?;
    cmd_parse(&a.grammar, a.start.as_deref(), &a.grammar_args, &a.format, a.json, a.quiet, &files)
}

fn cmd_parse(grammar: &Path, start: Option<&str>, g: &GrammarArgs, f: &FormatArg, json: bool, quiet: bool, files: &[PathBuf]) -> Result<bool> {
    let cfg = load_grammar(grammar, start, g, f, false)?;
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
