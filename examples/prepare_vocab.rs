//! Time the one-time preparation of a tokenizer's vocabulary (issue 12: the
//! Llama-3 budget is 300 ms natively): `tokenizer.json` text → [`Vocab`]
//! (serde-only loader) → [`PreparedVocab`] (token trie, fingerprint). The file
//! is read before the clock starts. Prints the median of `RUNS` runs.
//!
//! ```sh
//! cargo run --release --example prepare_vocab -- models/llama3/tokenizer.json [RUNS]
//! ```

use grammask::vocab::{vocab_from_json, PreparedVocab};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "models/llama3/tokenizer.json".into());
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let dir = std::path::Path::new(&path).parent().unwrap();
    let tc = std::fs::read_to_string(dir.join("tokenizer_config.json")).ok();
    let gc = std::fs::read_to_string(dir.join("generation_config.json")).ok();
    let (mut load, mut prep, mut total) = (Vec::new(), Vec::new(), Vec::new());
    let mut fp = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let v = vocab_from_json(&json, tc.as_deref(), gc.as_deref(), None).unwrap_or_else(|e| panic!("{e}"));
        let t1 = Instant::now();
        let pv = PreparedVocab::new(v);
        let t2 = Instant::now();
        fp = pv.fingerprint();
        load.push((t1 - t0).as_secs_f64() * 1e3);
        prep.push((t2 - t1).as_secs_f64() * 1e3);
        total.push((t2 - t0).as_secs_f64() * 1e3);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "{path}: tokenizer.json {} bytes; median of {runs}: load {:.1} ms + trie/fingerprint {:.1} ms = {:.1} ms; fingerprint {fp:016x}",
        json.len(),
        med(&mut load),
        med(&mut prep),
        med(&mut total)
    );
}
