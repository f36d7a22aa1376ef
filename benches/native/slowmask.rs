//! Per-mask compute time on a busy machine: replay the id streams R times
//! (fresh store and matchers each time) and keep each mask's fastest time.
//! `cargo run --release --example slowmask -- STORE.gmask IDS_DIR [R]`
use grammask::matcher::Matcher;
use grammask::store::MaskStore;
use std::rc::Rc;
use std::time::Instant;
fn main() {
    let mut a = std::env::args().skip(1);
    let path = a.next().expect("STORE.gmask IDS_DIR [R]");
    let dir = a.next().expect("STORE.gmask IDS_DIR [R]");
    let runs: usize = a.next().map_or(5, |s| s.parse().unwrap());
    let bytes = std::fs::read(&path).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let streams: Vec<Vec<u32>> = files
        .iter()
        .map(|f| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
            v["ids"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
        })
        .collect();
    let mut best: Vec<f64> = Vec::new();
    let (mut calls, mut hits, mut misses) = (0, 0, 0);
    for r in 0..runs {
        let s = Rc::new(MaskStore::from_bytes(&bytes).unwrap());
        let mut i = 0;
        for ids in &streams {
            let mut m = Matcher::new(s.clone());
            let mut mask = vec![0u32; m.mask_words()];
            for k in 0..=ids.len() {
                let t = Instant::now();
                m.fill_mask(&mut mask).unwrap();
                let us = t.elapsed().as_secs_f64() * 1e6;
                if r == 0 {
                    best.push(us);
                } else {
                    best[i] = best[i].min(us);
                }
                i += 1;
                if k < ids.len() {
                    m.commit_token(ids[k]).unwrap();
                }
            }
            if r == 0 {
                calls += m.parser_calls();
                let (h, mi) = m.mask_cache_stats();
                hits += h;
                misses += mi;
            }
        }
    }
    let mut s = best.clone();
    s.sort_by(f64::total_cmp);
    let p = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
    println!(
        "{path}: {} masks, each mask's fastest of {runs} runs: p50 {:.1} us, p90 {:.1}, p99 {:.1}, p99.9 {:.1}, max {:.1}; parser calls {calls}, mask cache hits {hits} misses {misses}",
        s.len(), p(0.5), p(0.9), p(0.99), p(0.999), p(1.0)
    );
}
