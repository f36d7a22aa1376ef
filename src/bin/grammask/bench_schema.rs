//! `grammask bench --json-schema-dir DIR --tokenizer T`: per-request compile
//! over a schema corpus. For every schema: text → parsed → compiled store →
//! first mask (timed; the prepared vocabulary is built once, not timed), then
//! one random constrained generation with every mask timed. Reports compile
//! failures by keyword, first-mask and mask-time percentiles; `--out-dir`
//! keeps each generated instance (`<schema>.json`) for a validator.
//!
//! Compile time is split into the front end (schema → grammar) and the
//! tables (LALR(1) + lexer automaton); a schema whose generation runs past
//! `--schema-time-cap-ms` is cut short and reported (`capped`), so one
//! pathological schema cannot stall the run. The slowest schemas are listed.

use crate::common::{read, Rng};
use crate::constraint_args::{prepared, SchemaArgs};
use grammask::constraint::{to_cfg, Constraint};
use grammask::matcher::Matcher;
use grammask::{Error, ErrorKind, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

pub struct Opts<'a> {
    pub dir: &'a Path,
    pub tokenizer: &'a Path,
    pub schema: &'a SchemaArgs,
    pub json: bool,
    pub max_tokens: usize,
    pub seed: u64,
    pub out_dir: Option<&'a Path>,
    /// Stop a schema's generation once its wall time passes this (ms).
    pub cap_ms: u64,
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

/// The keyword an error names, else its kind.
pub fn failure_class(e: &Error) -> String {
    let m = e.message();
    if let Some(i) = m.find("unsupported keyword `") {
        return m[i + 21..].split('`').next().unwrap_or("?").to_string();
    }
    if m.contains("unsupported `pattern`") || m.contains("patternProperties") && e.kind() == ErrorKind::Regex {
        return "pattern".into();
    }
    if m.contains("unsatisfiable") {
        return "unsatisfiable".into();
    }
    format!("{:?}", e.kind())
}

pub fn run(o: &Opts) -> Result<bool> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(o.dir)
        .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", o.dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let t = Instant::now();
    let (pv, _) = prepared(o.tokenizer, None)?;
    let prep_ms = t.elapsed().as_secs_f64() * 1e3;
    let copts = o.schema.options()?;
    if let Some(d) = o.out_dir {
        std::fs::create_dir_all(d).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", d.display())))?;
    }
    let eos: Vec<u32> = pv.vocab().eos_ids().iter().map(|t| t.0).collect();
    let mut is_eos = vec![false; pv.vocab().len()];
    for &t in &eos {
        is_eos[t as usize] = true;
    }
    let single_byte: Vec<bool> = (0..pv.vocab().len() as u32).map(|t| pv.vocab().token_bytes(grammask::ids::TokenId(t)).len() == 1).collect();
    let (mut ttfm, mut masks, mut compile_us) = (Vec::new(), Vec::new(), Vec::new());
    let (mut front_us, mut tables_us) = (Vec::new(), Vec::new());
    let (mut lalr_ms, mut lexer_ms) = (0u64, 0u64);
    let mut failures: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed_files = Vec::new();
    let mut capped = Vec::new();
    // (wall ms of the schema, file, front µs, tables µs, first mask µs, worst mask µs)
    let mut slowest: Vec<(f64, String, f64, f64, f64, f64)> = Vec::new();
    let (mut ok, mut completed, mut invalid_json) = (0usize, 0usize, 0usize);
    for (fi, f) in files.iter().enumerate() {
        let text = read(f)?;
        let t0 = Instant::now();
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text) else {
            invalid_json += 1;
            continue;
        };
        let staged = to_cfg(&Constraint::JsonSchema(v), &copts).and_then(|(cfg, _)| {
            let f_us = t0.elapsed().as_secs_f64() * 1e6;
            grammask::store::build::compile_lazy(&cfg, pv.clone()).map(|(s, rep)| (s, f_us, rep))
        });
        let (store, f_us) = match staged {
            Ok((s, f_us, rep)) => {
                lalr_ms += rep.ms_lalr;
                lexer_ms += rep.ms_lexer;
                (Rc::new(s), f_us)
            }
            Err(e) => {
                *failures.entry(failure_class(&e)).or_default() += 1;
                failed_files.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        let c_us = t0.elapsed().as_secs_f64() * 1e6;
        let mut m = Matcher::new(store.clone());
        let mut mask = vec![0u32; store.mask_words()];
        m.fill_mask(&mut mask)?;
        let first = t0.elapsed().as_secs_f64() * 1e6;
        ttfm.push(first);
        compile_us.push(c_us);
        front_us.push(f_us);
        tables_us.push(c_us - f_us);
        ok += 1;
        // One random generation, every mask timed.
        let mut rng = Rng(o.seed ^ (fi as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut out = Vec::new();
        let mut allowed = Vec::new();
        let mut done = false;
        let mut worst = 0f64;
        for n in 0..o.max_tokens {
            if n > 0 {
                if t0.elapsed().as_millis() as u64 > o.cap_ms {
                    capped.push(format!("{} (after {n} tokens)", f.display()));
                    break;
                }
                let t1 = Instant::now();
                m.fill_mask(&mut mask)?;
                let us = t1.elapsed().as_secs_f64() * 1e6;
                worst = worst.max(us);
                masks.push(us);
            }
            crate::common::allowed_ids(&mask, &mut allowed);
            let finishing = n * 2 > o.max_tokens;
            if m.is_accepting() && (finishing || rng.unit() < 0.2) {
                done = true;
                break;
            }
            let cands: Vec<u32> = allowed.iter().copied().filter(|&t| !is_eos[t as usize]).collect();
            if cands.is_empty() {
                done = m.is_accepting();
                break;
            }
            // Toward the end prefer short tokens (closing brackets and quotes are single bytes).
            let short: Vec<u32> = cands.iter().copied().filter(|&t| single_byte[t as usize]).collect();
            let pool = if (finishing || rng.unit() < 0.5) && !short.is_empty() { &short } else { &cands };
            let pick = pool[rng.below(pool.len() as u64) as usize];
            m.commit_token(pick)?;
            out.extend_from_slice(pv.vocab().token_bytes(grammask::ids::TokenId(pick)));
        }
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        if wall_ms > 1000.0 {
            eprintln!(
                "grammask bench: slow schema {} ({wall_ms:.0} ms: front end {:.1} ms, tables {:.1} ms, first mask {:.1} ms, worst mask {:.1} ms)",
                f.display(), f_us / 1e3, (c_us - f_us) / 1e3, first / 1e3, worst / 1e3
            );
        }
        slowest.push((wall_ms, f.display().to_string(), f_us, c_us - f_us, first, worst));
        if done {
            completed += 1;
            if let Some(d) = o.out_dir {
                let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                std::fs::write(d.join(name), &out).map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?;
            }
        }
    }
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    slowest.truncate(10);
    let slowest: Vec<serde_json::Value> = slowest
        .iter()
        .map(|(ms, f, fu, tu, first, worst)| {
            serde_json::json!({"file": f, "wall_ms": ms, "front_end_us": fu, "tables_us": tu, "first_mask_us": first, "worst_mask_us": worst})
        })
        .collect();
    let n = files.len() - invalid_json;
    let fails = n - ok;
    let v = serde_json::json!({
        "dir": o.dir, "schemas": n, "invalid_json": invalid_json, "compiled": ok, "failed": fails,
        "failure_rate": fails as f64 / n.max(1) as f64, "failures_by_keyword": failures,
        "prepare_vocab_ms": prep_ms,
        "first_mask_us": {"p50": pct(&mut ttfm, 0.5), "p90": pct(&mut ttfm, 0.9), "p99": pct(&mut ttfm, 0.99), "max": pct(&mut ttfm, 1.0)},
        "compile_us": {"p50": pct(&mut compile_us, 0.5), "p90": pct(&mut compile_us, 0.9), "p99": pct(&mut compile_us, 0.99), "max": pct(&mut compile_us, 1.0)},
        "front_end_us": {"p50": pct(&mut front_us, 0.5), "p90": pct(&mut front_us, 0.9), "p99": pct(&mut front_us, 0.99), "max": pct(&mut front_us, 1.0)},
        "tables_total_ms": {"lalr": lalr_ms, "lexer": lexer_ms},
        "tables_us": {"p50": pct(&mut tables_us, 0.5), "p90": pct(&mut tables_us, 0.9), "p99": pct(&mut tables_us, 0.99), "max": pct(&mut tables_us, 1.0)},
        "mask_us": {"count": masks.len(), "p50": pct(&mut masks, 0.5), "p90": pct(&mut masks, 0.9), "p99": pct(&mut masks, 0.99), "max": pct(&mut masks, 1.0)},
        "generations_completed": completed,
        "schema_time_cap_ms": o.cap_ms, "capped": capped, "slowest": slowest,
    });
    if o.json {
        println!("{v}");
    } else {
        for f in &failed_files {
            println!("failed: {f}");
        }
        println!("{v:#}");
    }
    Ok(true)
}
