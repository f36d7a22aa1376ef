//! Per-request mask times for a grammar file (Lark, GBNF or EBNF, by
//! extension): compile (lazy store) + first mask, then every mask while
//! replaying TEXT files tokenized with the tokenizer (fresh store per run;
//! figures are the fastest of R runs, per mask). Wall time.
//! `cargo run --release --example grammar_masks -- TOKENIZER.json GRAMMAR R TEXT...`
use grammask::matcher::Matcher;
use grammask::vocab::PreparedVocab;
use std::rc::Rc;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    assert!(a.len() >= 4, "TOKENIZER.json GRAMMAR R TEXT...");
    let tok = tokenizers::Tokenizer::from_file(&a[0]).unwrap();
    let vocab = grammask::vocab::load::load_tokenizer_file(std::path::Path::new(&a[0]), None).unwrap();
    let pv = Rc::new(PreparedVocab::new(vocab));
    let cfg = grammask::constraint::load_grammar_file(std::path::Path::new(&a[1]), None, None).unwrap();
    let runs: usize = a[2].parse().unwrap();
    let streams: Vec<Vec<u32>> = a[3..].iter().map(|f| tok.encode(std::fs::read_to_string(f).unwrap().as_str(), false).unwrap().get_ids().to_vec()).collect();
    let (mut first, mut best): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for r in 0..runs {
        let mut i = 0;
        for (k, ids) in streams.iter().enumerate() {
            let t = Instant::now();
            let store = Rc::new(grammask::store::build::compile_lazy(&cfg, pv.clone()).unwrap().0);
            let mut m = Matcher::new(store);
            let mut mask = vec![0u32; m.mask_words()];
            m.fill_mask(&mut mask).unwrap();
            let f = t.elapsed().as_secs_f64() * 1e3;
            if r == 0 { first.push(f) } else { first[k] = first[k].min(f) }
            for &id in ids {
                m.commit_token(id).unwrap_or_else(|e| panic!("stream {k}: token {id}: {e}"));
                let t = Instant::now();
                m.fill_mask(&mut mask).unwrap();
                let ms = t.elapsed().as_secs_f64() * 1e3;
                if r == 0 { best.push(ms) } else { best[i] = best[i].min(ms) }
                i += 1;
            }
        }
    }
    let mut s = best.clone();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let q = |p: f64| s[((s.len() - 1) as f64 * p) as usize];
    let fmax = first.iter().cloned().fold(0.0, f64::max);
    println!("{}: {} streams, {} masks; first mask (compile + mask) max {:.1} ms; masks p50 {:.3} ms, p99 {:.2} ms, max {:.2} ms", a[1], streams.len(), s.len(), fmax, q(0.5), q(0.99), s[s.len() - 1]);
}
