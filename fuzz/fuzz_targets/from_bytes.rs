//! `cargo +nightly fuzz run from_bytes` (from the repository root): loads
//! arbitrary bytes as a blob; a store that loads is used (masks computed,
//! tokens committed, chosen from the input's last bytes). Seed the corpus
//! with `tests/golden/*.gmask` and `tests/fuzz_regressions/*`.
#![no_main]

use grammask::matcher::Matcher;
use grammask::store::MaskStore;
use libfuzzer_sys::fuzz_target;
use std::rc::Rc;

fuzz_target!(|data: &[u8]| {
    let Ok(store) = MaskStore::from_bytes(data) else { return };
    let n = store.vocab().len() as u32;
    let mut m = Matcher::new(Rc::new(store));
    for (i, &b) in data.iter().rev().take(4).enumerate() {
        let mask = m.compute_mask();
        let allowed: Vec<u32> = (0..n).filter(|&t| mask[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
        if let Some(&t) = allowed.get(b as usize % allowed.len().max(1)) {
            let _ = m.commit_token(t);
        }
        let _ = m.commit_token((b as u32).wrapping_mul(i as u32 + 7) % (n + 2));
    }
});
