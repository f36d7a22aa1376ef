//! Time `MaskStore::from_bytes` (and the first mask): min and median of N loads.
//! `cargo run --release --example load_bench -- STORE.gmask [N]`
use grammask::matcher::Matcher;
use grammask::store::MaskStore;
use std::rc::Rc;
use std::time::Instant;
fn main() {
    let mut a = std::env::args().skip(1);
    let path = a.next().expect("STORE.gmask [N]");
    let n: usize = a.next().map_or(20, |s| s.parse().unwrap());
    let bytes = std::fs::read(&path).unwrap();
    let (mut load, mut first) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        let s = Rc::new(MaskStore::from_bytes(&bytes).unwrap());
        load.push(t.elapsed().as_secs_f64() * 1e3);
        let m = Matcher::new(s);
        let mut mask = vec![0u32; m.mask_words()];
        m.fill_mask(&mut mask).unwrap();
        first.push(t.elapsed().as_secs_f64() * 1e3);
    }
    load.sort_by(f64::total_cmp);
    first.sort_by(f64::total_cmp);
    println!("{path}: {} bytes; load min {:.3} ms median {:.3} ms; load + first mask min {:.3} ms median {:.3} ms", bytes.len(), load[0], load[n / 2], first[0], first[n / 2]);
}
