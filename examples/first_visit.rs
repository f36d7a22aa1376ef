//! Where a per-request schema's first visits go, natively (issue 20): per
//! schema file, the front end, the compile and the first mask (wall time;
//! the first schema of the process shows what is paid once per prepared
//! vocabulary), then a greedy walk of 60 steps (the longest allowed token of
//! under 6 bytes) printing every mask over 300 µs of thread CPU time with the
//! text before it (CPU time, so that a loaded machine's preemption does not
//! show as a slow mask).
//!
//! ```text
//! cargo run --profile ci --example first_visit -- SCHEMA.json [SCHEMA.json ...]
//! ```
//!
//! Llama-3's tokenizer (models/llama3; `FV_TOKENIZER=PATH` for another);
//! `FV_REPS=N` repeats the list (the last repetition's compile and first mask
//! are printed too).
//!
//! `FV_REPLAY=FILE`: instead of schema files, replay texts: FILE is a JSON
//! list of `{name, schema, text}` (e.g. the real-model test's outputs, see
//! benches/wasm/replay-steps.mjs), each text spelled by the longest allowed
//! token that continues it, with the transformers.js processor's whitespace
//! policy (flexible, runs of 16); prints every step over 300 µs CPU.
use grammask::constraint::{to_cfg, Constraint, ConstraintOptions};
use grammask::matcher::Matcher;
use grammask::vocab::PreparedVocab;
use std::rc::Rc;
use std::time::Instant;

fn cpu_us() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 * 1e6 + t.tv_nsec as f64 / 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tk = std::env::var("FV_TOKENIZER").unwrap_or_else(|_| "models/llama3/tokenizer.json".into());
    let tk = tk.as_str();
    let t = Instant::now();
    let vocab = grammask::vocab::load::load_tokenizer_file(std::path::Path::new(tk), None).expect("tokenizer");
    let pv = Rc::new(PreparedVocab::new(vocab));
    eprintln!("vocab {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    let opts = ConstraintOptions::default();
    if let Ok(f) = std::env::var("FV_REPLAY") {
        return replay(&pv, &f);
    }
    let reps: usize = std::env::var("FV_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    for rep in 0..reps {
        for f in &args {
            let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            let t0 = Instant::now();
            let (cfg, _) = to_cfg(&Constraint::JsonSchema(doc), &opts).unwrap();
            let t1 = Instant::now();
            let (store, _) = grammask::store::build::compile_lazy(&cfg, pv.clone()).unwrap();
            let store = Rc::new(store);
            let t2 = Instant::now();
            let mut mask = vec![0u32; store.mask_words()];
            Matcher::new(store.clone()).fill_mask(&mut mask).unwrap();
            let t3 = Instant::now();
            let mut m = Matcher::new(store.clone());
            let mut text = Vec::new();
            let mut slow = String::new();
            for _ in 0..60 {
                let a = cpu_us();
                m.fill_mask(&mut mask).unwrap();
                let us = cpu_us() - a;
                if us > 300.0 { slow += &format!(" {us:.0}us@{:?}", String::from_utf8_lossy(&text)); }
                let mut pick = None; let mut best = 0;
                for id in 0..pv.vocab().len() as u32 {
                    if mask[id as usize >> 5] >> (id & 31) & 1 == 1 && !pv.vocab().is_eos(grammask::ids::TokenId(id)) {
                        let l = pv.vocab().token_bytes(grammask::ids::TokenId(id)).len();
                        if l > best && l < 6 { best = l; pick = Some(id); }
                    }
                }
                let Some(id) = pick else { break };
                text.extend_from_slice(pv.vocab().token_bytes(grammask::ids::TokenId(id)));
                m.commit_token(id).unwrap();
            }
            if rep == 0 { eprintln!("  slow steps:{slow}"); }
            if rep == 0 || rep == reps - 1 {
                eprintln!("{f} rep {rep}: front {:.2} ms, compile {:.2} ms, first mask {:.2} ms", (t1 - t0).as_secs_f64() * 1e3, (t2 - t1).as_secs_f64() * 1e3, (t3 - t2).as_secs_f64() * 1e3);
            }
        }
    }
}

/// `FV_REPLAY`: each `{name, schema, text}` spelled through the masks.
fn replay(pv: &Rc<PreparedVocab>, file: &str) {
    let items: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let opts = ConstraintOptions { whitespace: grammask::frontend::schema::Whitespace::Flexible { max_run: 16 }, ..Default::default() };
    let v = pv.vocab();
    for it in &items {
        let t0 = Instant::now();
        let (cfg, _) = to_cfg(&Constraint::JsonSchema(it["schema"].clone()), &opts).unwrap();
        let (store, _) = grammask::store::build::compile_lazy(&cfg, pv.clone()).unwrap();
        let store = Rc::new(store);
        let compile = t0.elapsed().as_secs_f64() * 1e3;
        let want = it["text"].as_str().unwrap().as_bytes();
        let mut m = Matcher::new(store.clone());
        let mut mask = vec![0u32; store.mask_words()];
        let (mut at, mut slow, mut total, mut steps) = (0, String::new(), 0.0, 0);
        while at < want.len() {
            let a = cpu_us();
            m.fill_mask(&mut mask).unwrap();
            let us = cpu_us() - a;
            total += us;
            steps += 1;
            if us > 300.0 {
                slow += &format!("\n    {us:.0} us after {:?}", String::from_utf8_lossy(&want[at.saturating_sub(30)..at]));
            }
            let mut pick = None;
            let mut best = 0;
            for id in 0..v.len() as u32 {
                if mask[id as usize >> 5] >> (id & 31) & 1 == 1 {
                    let b = v.token_bytes(grammask::ids::TokenId(id));
                    if b.len() > best && want[at..].starts_with(b) {
                        best = b.len();
                        pick = Some(id);
                    }
                }
            }
            let Some(id) = pick else {
                eprintln!("  {}: no allowed token continues the text at byte {at}", it["name"]);
                break;
            };
            m.commit_token(id).unwrap();
            at += best;
        }
        eprintln!("{}: compile {compile:.2} ms, {steps} steps, {:.0} us CPU in masks{slow}", it["name"], total);
    }
}
