//! `grammask stats`: a store's figures.

use crate::common::read;
use grammask::matcher::Matcher;
use grammask::store::MaskStore;
use grammask::Result;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// Print the store's figures.
#[derive(clap::Args)]
pub struct Args {
    /// The compiled mask store (from `compile -o`).
    #[arg(long)]
    store: PathBuf,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also list the checked entries of the position with the most entries
    /// for this target terminal (name).
    #[arg(long)]
    dump_target: Option<String>,
}

pub fn run(a: Args) -> Result<bool> {
    cmd_stats(&a.store, a.json, a.dump_target.as_deref())
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
    let t = s.tables();
    // Entries per lexer position (the paper's Figure 6, as a table).
    let mut per_q: Vec<usize> = (0..s.n_positions() as u32).map(|q| t.entries(q).len()).collect();
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
        e.1 += t.entries(q).len();
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
        "entries": t.n_entries(),
        "stored_entries": t.n_stored_entries(),
        "always_sets": t.n_always(),
        "token_sets": t.sets().len(),
        "set_pool_words": t.sets().data.len(),
        "steps": s.info().step_counts,
        "context_classes": t.context_table().n_classes(),
        "contexts": t.context_table().n_contexts(),
        "entries_per_position": dist,
        "sections": grammask::store::wire::section_sizes(&bytes)?,
        "load_ms": load_ms,
        "first_mask_ms": first_ms,
    });
    if json {
        println!("{v}");
    } else {
        let eos: Vec<String> = s.vocab().eos_ids().iter().map(|t| t.0.to_string()).collect();
        println!("blob: {} bytes; vocabulary {} tokens, EOS {}", bytes.len(), s.vocab().len(), eos.join(", "));
        println!("grammar: {} terminals, {} LR states; lexer: {} states", v["terminals"], v["lr_states"], v["lexer_states"]);
        println!("positions {}, checked entries {} ({} stored), always-allowed sets {}, distinct token sets {}", s.n_positions(), t.n_entries(), t.n_stored_entries(), t.n_always(), t.sets().len());
        let c = t.context_table();
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
                .max_by_key(|&q| t.entries(q).len());
            if let Some(q) = best {
                println!("position {q} {:?}: {} entries", s.q_parts(q), t.entries(q).len());
                for e in t.entries(q) {
                    let seq: Vec<String> = t.entry_seq(e).iter().map(|&y| s.sym_name(y)).collect();
                    println!("  {:>6} tokens  {}", t.sets().count(t.entry_set(e)), seq.join(" "));
                }
            }
        }
    }
    Ok(true)
}
