//! Teacher-force the schema corpus' test instances natively (issue 20): the
//! same work as benches/schemas/grammask.mjs (lazy compile per schema, one
//! prepared vocabulary, every mask of every test instance timed), to profile
//! the mask path without wasm.
//!
//! ```text
//! cargo run --release --example tf_schemas -- out/schemas-corpus [models/llama3/tokenizer.json] [NAME_FILTER]
//! ```
//!
//! `TF_FLEXIBLE=16` compiles with `--whitespace flexible:16` (the
//! transformers.js processor's default) instead of the default policy;
//! `TF_SLOW_US=N` prints each mask over N µs with its schema and step.

use grammask::constraint::{to_cfg, Constraint, ConstraintOptions};
use grammask::matcher::Matcher;
use grammask::vocab::PreparedVocab;
use std::rc::Rc;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let corpus = args.next().unwrap_or_else(|| "out/schemas-corpus".into());
    let tk = args.next().unwrap_or_else(|| "models/llama3/tokenizer.json".into());
    let filter = args.next().unwrap_or_default();
    let mut opts = ConstraintOptions::default();
    if let Some(n) = std::env::var("TF_FLEXIBLE").ok().and_then(|v| v.parse().ok()) {
        opts.whitespace = grammask::frontend::schema::Whitespace::Flexible { max_run: n };
    }
    let slow_us: f64 = std::env::var("TF_SLOW_US").ok().and_then(|v| v.parse().ok()).unwrap_or(f64::INFINITY);
    let vocab = grammask::vocab::load::load_tokenizer_file(std::path::Path::new(&tk), None).expect("tokenizer");
    let pv = Rc::new(PreparedVocab::new(vocab));
    let mut names: Vec<_> = std::fs::read_dir(format!("{corpus}/ids")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| !n.starts_with('_') && n.contains(&filter)).collect();
    names.sort();
    let (mut first, mut masks) = (Vec::new(), Vec::new());
    let mut worst: Vec<(f64, String, usize)> = Vec::new();
    for name in &names {
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{corpus}/{name}")).unwrap()).unwrap();
        let ids: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{corpus}/ids/{name}")).unwrap()).unwrap();
        let t0 = Instant::now();
        let Ok((cfg, _)) = to_cfg(&Constraint::JsonSchema(doc["schema"].clone()), &opts) else { continue };
        let Ok((store, _)) = grammask::store::build::compile_lazy(&cfg, pv.clone()) else { continue };
        let store = Rc::new(store);
        let mut mask = vec![0u32; store.mask_words()];
        Matcher::new(store.clone()).fill_mask(&mut mask).unwrap();
        first.push(t0.elapsed().as_secs_f64() * 1e6);
        let mut k = 0;
        for t in ids["tests"].as_array().unwrap() {
            let mut m = Matcher::new(store.clone());
            let toks: Vec<u32> = t["ids"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
            for i in 0..=toks.len() {
                let a = Instant::now();
                m.fill_mask(&mut mask).unwrap();
                let us = a.elapsed().as_secs_f64() * 1e6;
                masks.push(us);
                if us > slow_us {
                    println!("slow {us:.0} us  {name} step {i}");
                }
                worst.push((us, name.clone(), k));
                k += 1;
                if i == toks.len() || mask[toks[i] as usize >> 5] >> (toks[i] & 31) & 1 == 0 {
                    break;
                }
                m.commit_token(toks[i]).unwrap();
            }
        }
    }
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[((v.len() - 1) as f64 * p).round() as usize]
    };
    println!("schemas {} masks {}", first.len(), masks.len());
    println!("first mask us p50 {:.0} p90 {:.0} p99 {:.0} max {:.0}", pct(&mut first, 0.5), pct(&mut first, 0.9), pct(&mut first, 0.99), pct(&mut first, 1.0));
    println!("mask us p50 {:.1} p99 {:.0} p99.9 {:.0} max {:.0}", pct(&mut masks, 0.5), pct(&mut masks, 0.99), pct(&mut masks, 0.999), pct(&mut masks, 1.0));
    worst.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    let mut by: std::collections::BTreeMap<&str, usize> = Default::default();
    for w in worst.iter().take(masks.len() / 100) {
        *by.entry(&w.1).or_default() += 1;
    }
    let mut by: Vec<_> = by.into_iter().collect();
    by.sort_by_key(|x| std::cmp::Reverse(x.1));
    println!("slowest 1% by schema: {:?}", &by[..by.len().min(10)]);
}
