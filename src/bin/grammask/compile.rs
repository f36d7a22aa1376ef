//! `grammask compile`: build a mask store blob for a grammar and a tokenizer.

use crate::common::{load_grammar, peak_rss_mb, FormatArg, GrammarArgs};
use grammask::store::MaskStore;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Build a mask store blob for a grammar and a tokenizer; or compile a JSON
/// Schema / regex constraint (its grammar figures; with --tokenizer, the
/// per-request store and its timings; with -o, the blob).
///
/// A JSON Schema or a regex needs no blob: `check` and `generate` take
/// --json-schema / --regex directly, and the JS API compiles per request
/// (positions computed on first visit, in milliseconds). A blob holds every
/// position, so `-o` computes them all (tens of seconds for a 128k-token
/// vocabulary) and reports progress on stderr.
#[derive(clap::Args)]
pub struct Args {
    /// The grammar file to compile (Lark, or GBNF / EBNF: see --format).
    #[arg(long, required_unless_present_any = ["json_schema", "regex"])]
    grammar: Option<PathBuf>,
    #[command(flatten)]
    schema: crate::constraint_args::SchemaArgs,
    /// Constrain the whole output to this Python regex (re.fullmatch).
    #[arg(long)]
    regex: Option<String>,
    /// The tokenizer.json whose vocabulary the masks cover (a constraint without it: grammar figures only).
    #[arg(long, required_unless_present_any = ["json_schema", "regex"])]
    tokenizer: Option<PathBuf>,
    /// Write the blob here (for a constraint: computes every position first, with progress on stderr).
    #[arg(short, long, required_unless_present_any = ["json_schema", "regex"])]
    out: Option<PathBuf>,
    /// EOS token ids, comma-separated (default: from tokenizer_config.json / generation_config.json).
    #[arg(long, value_delimiter = ',')]
    eos: Option<Vec<u32>>,
    /// The start rule of --grammar (default: `start` for Lark, `root` for GBNF / EBNF).
    #[arg(long)]
    start: Option<String>,
    #[command(flatten)]
    format: FormatArg,
    #[command(flatten)]
    grammar_args: GrammarArgs,
    /// Keep the raw store (no streamlining).
    #[arg(long)]
    no_streamline: bool,
    /// Print the figures as one JSON object (and no progress lines).
    #[arg(long)]
    json: bool,
    /// Progress on stderr while `-o` computes a constraint's positions: `auto`
    /// (default: when stderr is a terminal, or the work takes over a second),
    /// `always` or `never`.
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
    progress: String,
}

pub fn run(a: Args) -> Result<bool> {
    if a.schema.json_schema.is_some() || a.regex.is_some() {
        return cmd_constraint(&a);
    }
    let (Some(g), Some(t), Some(o)) = (&a.grammar, &a.tokenizer, &a.out) else {
        return Err(Error::new(ErrorKind::Io, "--grammar, --tokenizer and -o are required"));
    };
    cmd_compile(g, t, o, a.eos.as_deref(), a.start.as_deref(), &a.grammar_args, &a.format, !a.no_streamline, a.json)
}

/// `compile --json-schema FILE | --regex R`: the grammar, and with a
/// tokenizer the store (timed: prepared vocabulary excluded).
fn cmd_constraint(a: &Args) -> Result<bool> {
    use grammask::constraint::to_cfg;
    let Some(c) = a.schema.constraint(a.regex.as_deref())? else {
        return Err(Error::new(ErrorKind::Io, "give one of --json-schema and --regex"));
    };
    let o = a.schema.options()?;
    let t0 = Instant::now();
    let (cfg, warnings) = to_cfg(&c, &o)?;
    let us_front = t0.elapsed().as_secs_f64() * 1e6;
    let tables = grammask::parser::lalr::build_tables(&cfg)?;
    for w in &warnings {
        eprintln!("grammask: warning: {w}");
    }
    let mut v = serde_json::json!({
        "terminals": cfg.terminals.len(), "nonterminals": cfg.nonterminals.len(), "rules": cfg.rules.len(),
        "lr_states": tables.n_states(), "front_end_us": us_front, "warnings": warnings,
    });
    if let Some(t) = &a.tokenizer {
        let (pv, _) = crate::constraint_args::prepared(t, a.eos.as_deref())?;
        let t1 = Instant::now();
        let (store, _) = grammask::constraint::compile(&pv, &c, &o)?;
        let us_compile = t1.elapsed().as_secs_f64() * 1e6;
        let t2 = Instant::now();
        let mut mask = vec![0u32; store.mask_words()];
        let store = std::rc::Rc::new(store);
        grammask::matcher::Matcher::new(store.clone()).fill_mask(&mut mask)?;
        v["compile_us"] = serde_json::json!(us_compile);
        v["first_mask_us"] = serde_json::json!(t2.elapsed().as_secs_f64() * 1e6);
        v["allowed_first"] = serde_json::json!(mask.iter().map(|w| w.count_ones()).sum::<u32>());
        v["lexer_states"] = serde_json::json!(store.lexer().n_states());
        if let Some(out) = &a.out {
            let t3 = Instant::now();
            store.blob_ok()?;
            compute_all(&store, &a.progress, a.json);
            v["all_positions_us"] = serde_json::json!(t3.elapsed().as_secs_f64() * 1e6);
            let blob = store.to_bytes();
            std::fs::write(out, &blob).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", out.display())))?;
            v["bytes"] = serde_json::json!(blob.len());
        }
    }
    if a.json {
        println!("{v}");
    } else {
        let mut line = format!(
            "terminals {}, nonterminals {}, rules {}, LR states {}, front end {:.0} us",
            v["terminals"], v["nonterminals"], v["rules"], v["lr_states"], us_front
        );
        if v.get("compile_us").is_some() {
            line.push_str(&format!(", compile {:.0} us, first mask {:.0} us ({} tokens allowed)", v["compile_us"].as_f64().unwrap_or(0.0), v["first_mask_us"].as_f64().unwrap_or(0.0), v["allowed_first"]));
        }
        if let (Some(b), Some(out)) = (v.get("bytes"), &a.out) {
            line.push_str(&format!(", all positions {:.1} s, {b} bytes -> {}", v["all_positions_us"].as_f64().unwrap_or(0.0) / 1e6, out.display()));
        }
        println!("{line}");
    }
    Ok(true)
}

/// Computes every position of a store compiled per request (what a blob
/// holds), with a progress line on stderr (`auto`: on a terminal from the
/// start, elsewhere once a second has passed; a line per 10% off a terminal).
fn compute_all(store: &MaskStore, progress: &str, json: bool) {
    use std::io::{IsTerminal, Write};
    let n = store.n_positions();
    let tty = std::io::stderr().is_terminal();
    let on = |elapsed: f64| match progress {
        "always" => true,
        "never" => false,
        _ => !json && (tty || elapsed >= 1.0),
    };
    let t0 = Instant::now();
    let mut shown = false;
    let mut last_tenth = 0;
    let mut last_draw = 0.0f64;
    for q in 0..n {
        store.ensure([q as u32]);
        let el = t0.elapsed().as_secs_f64();
        if !on(el) {
            continue;
        }
        let done = q + 1;
        let tenth = done * 10 / n.max(1);
        if tty && (el - last_draw >= 0.1 || done == n) {
            let w = 30 * done / n.max(1);
            eprint!("\rcomputing every position for the blob: [{}{}] {done}/{n} positions, {el:.1} s", "#".repeat(w), " ".repeat(30 - w));
            let _ = std::io::stderr().flush();
            last_draw = el;
            shown = true;
        } else if !tty && (!shown || tenth > last_tenth) {
            eprintln!("computing every position for the blob: {done}/{n} positions, {el:.1} s");
            shown = true;
            last_tenth = tenth;
        }
    }
    if shown && tty {
        eprintln!();
    }
}

fn cmd_compile(
    grammar: &Path,
    tokenizer: &Path,
    out: &Path,
    eos: Option<&[u32]>,
    start: Option<&str>,
    g: &GrammarArgs,
    f: &FormatArg,
    streamline: bool,
    json: bool,
) -> Result<bool> {
    let t0 = Instant::now();
    let cfg = load_grammar(grammar, start, g, f, false)?;
    if cfg.conflicts == grammask::grammar::ConflictPolicy::General {
        return Err(Error::new(ErrorKind::InvalidState, format!("{}: not LALR(1): it runs on the general parser, which blobs do not hold; compile it per request (generate/check/masks --grammar, or compile() in JS)", grammar.display())));
    }
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
    store.blob_ok()?;
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
