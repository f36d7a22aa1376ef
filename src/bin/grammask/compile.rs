//! `grammask compile`: build a mask store blob for a grammar and a tokenizer.

use crate::common::{load_grammar, peak_rss_mb, GrammarArgs};
use grammask::store::MaskStore;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Build a mask store blob for a grammar and a tokenizer.
#[derive(clap::Args)]
pub struct Args {
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
    #[command(flatten)]
    grammar_args: GrammarArgs,
    /// Keep the raw store (no streamlining).
    #[arg(long)]
    no_streamline: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<bool> {
    cmd_compile(&a.grammar, &a.tokenizer, &a.out, a.eos.as_deref(), a.start.as_deref(), &a.grammar_args, !a.no_streamline, a.json)
}

fn cmd_compile(
    grammar: &Path,
    tokenizer: &Path,
    out: &Path,
    eos: Option<&[u32]>,
    start: Option<&str>,
    g: &GrammarArgs,
    streamline: bool,
    json: bool,
) -> Result<bool> {
    let t0 = Instant::now();
    let cfg = load_grammar(grammar, start, g, false)?;
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
