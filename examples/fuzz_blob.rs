//! Stable-Rust fuzz driver for [`MaskStore::from_bytes`] (the cargo-fuzz
//! target in `fuzz/` needs nightly). Compiles a few small seed blobs, then
//! mutates them with a xorshift PRNG: bit flips, byte sets, truncations,
//! splices between seeds, interesting u32 values, and section-aware word
//! edits, inserts and deletes that fix the section table; most mutants are
//! resealed (checksums recomputed) so the validators behind the checksums are
//! exercised. Every blob that loads is used: masks are computed and tokens
//! committed. A panic saves the input to `fuzz-crash-<n>.gmask` and exits 1.
//!
//! ```sh
//! cargo run --release --example fuzz_blob -- 10000000 [seed]
//! ```

use grammask::matcher::Matcher;
use grammask::store::wire::{read_header, reseal, HEADER_FIXED, SECTION_ENTRY};
use grammask::store::MaskStore;
use grammask::vocab::Vocab;
use std::rc::Rc;
use std::time::Instant;

const GRAMMARS: &[&str] = &[
    "start: list\nlist: \"[\" [item (\",\" item)*] \"]\"\nitem: NUMBER | NAME | list\nNUMBER: /[0-9]+/\nNAME: /[a-z]+/\n%ignore \" \"\n",
    "start: expr\nexpr: expr \"+\" term | term\nterm: \"(\" expr \")\" | /[0-9]+/\n",
    "start: stmt+\nstmt: NAME \"=\" NAME _NL | \"if\" NAME \":\" _NL _INDENT stmt+ _DEDENT\nNAME: /[a-z]+/\n_NL: /(\\r?\\n[\\t ]*)+/\n%ignore \" \"\n%declare _INDENT _DEDENT\n%indent _NL _INDENT _DEDENT\n",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn vocab() -> Vocab {
    let toks: Vec<&[u8]> = vec![
        b"[", b"]", b",", b" ", b"1", b"2", b"a", b"b", b"12", b"ab", b"[1", b"],", b"+", b"(", b")", b"=", b"if", b":",
        b"\n", b"\n  ", b"x = y", b"<eos>",
    ];
    let n = toks.len();
    Vocab::from_tokens(toks.into_iter().enumerate().map(|(i, t)| (t, i + 1 == n)), &[grammask::ids::TokenId(n as u32 - 1)])
        .unwrap()
}

fn exercise(s: MaskStore, mut x: u64) {
    let mut m = Matcher::new(Rc::new(s));
    let n = m.store().vocab().len() as u32;
    for _ in 0..3 {
        let mask = m.compute_mask();
        let allowed: Vec<u32> = (0..n).filter(|&t| mask[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if let Some(&t) = allowed.get((x % allowed.len().max(1) as u64) as usize) {
            let _ = m.commit_token(t);
        }
        let _ = m.commit_token((x >> 40) as u32 % (n + 2));
        let _ = m.forced_tokens(4);
    }
}

/// Section bounds `(entry offset in the header, start, len)`.
fn sections(b: &[u8]) -> Vec<(usize, usize, usize)> {
    let w = |i: usize| b.get(i..i + 4).map_or(0, |x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]) as usize);
    let n = w(44).min(16);
    (0..n)
        .map(|i| HEADER_FIXED + i * SECTION_ENTRY)
        .take_while(|&e| e + SECTION_ENTRY <= b.len())
        .map(|e| (e, w(e + 4), w(e + 8)))
        .collect()
}

fn mutate(r: &mut Rng, seeds: &[Vec<u8>], out: &mut Vec<u8>) {
    let base = &seeds[r.below(seeds.len())];
    out.clear();
    out.extend_from_slice(base);
    let rounds = 1 + r.below(3);
    let mut seal = r.below(10) < 8;
    for _ in 0..rounds {
        if out.is_empty() {
            return;
        }
        let secs = sections(out);
        match r.below(9) {
            0 => {
                let i = r.below(out.len());
                out[i] ^= 1 << r.below(8);
            }
            1 => {
                let i = r.below(out.len());
                out[i] = r.next() as u8;
            }
            2 => {
                let n = r.below(out.len());
                out.truncate(n);
                seal = false;
            }
            3 => {
                let other = &seeds[r.below(seeds.len())];
                let (i, j) = (r.below(out.len()), r.below(other.len()));
                let n = r.below(64).min(out.len() - i).min(other.len() - j);
                out[i..i + n].copy_from_slice(&other[j..j + n]);
            }
            // Section-aware edits of one u32 word.
            4..=6 if !secs.is_empty() => {
                let (_, off, len) = secs[r.below(secs.len())];
                if len < 4 || off.saturating_add(len) > out.len() {
                    continue;
                }
                let i = off + 4 * r.below(len / 4);
                let old = u32::from_le_bytes(out[i..i + 4].try_into().unwrap());
                let v = match r.below(8) {
                    0 => 0,
                    1 => 1,
                    2 => 0xff,
                    3 => 0xffff,
                    4 => u32::MAX,
                    5 => old.wrapping_add(1),
                    6 => old.wrapping_sub(1),
                    _ => r.next() as u32 & 0x1ff,
                };
                out[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            // Insert or delete 4 bytes inside a section, fixing the table.
            7 | 8 if !secs.is_empty() => {
                let k = r.below(secs.len());
                let (e, off, len) = secs[k];
                if off.saturating_add(len) > out.len() || secs[k + 1..].iter().any(|s| s.1 < 4) {
                    continue;
                }
                let i = off + 4 * r.below(len / 4 + 1);
                let grow = r.below(2) == 0 || len < 4;
                if grow {
                    let v = (r.next() as u32 & 0x3ff).to_le_bytes();
                    out.splice(i..i, v);
                } else {
                    let i = i.min(off + len - 4);
                    out.drain(i..i + 4);
                }
                let delta = |x: usize| if grow { x + 4 } else { x - 4 };
                out[e + 8..e + 12].copy_from_slice(&(delta(len) as u32).to_le_bytes());
                for &(e2, off2, _) in &secs[k + 1..] {
                    out[e2 + 4..e2 + 8].copy_from_slice(&(delta(off2) as u32).to_le_bytes());
                }
                seal = true;
            }
            _ => {
                let i = r.below(out.len());
                out[i] = out[i].wrapping_add(1);
            }
        }
    }
    if seal {
        reseal(out);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let iters: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0x9e37_79b9_7f4a_7c15);
    let seeds: Vec<Vec<u8>> = GRAMMARS
        .iter()
        .map(|g| {
            let cfg = grammask::constraint::parse_lark(g, "seed", None, &|_| None).expect("seed grammar");
            let (s, _) = grammask::store::build::compile(&cfg, vocab(), &Default::default(), &mut |_| {}).expect("seed");
            s.to_bytes()
        })
        .collect();
    for s in &seeds {
        read_header(s).expect("seed loads");
    }
    eprintln!("seed blobs: {:?} bytes", seeds.iter().map(Vec::len).collect::<Vec<_>>());
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| if std::env::var_os("FUZZ_VERBOSE").is_some() { default_hook(info) }));
    let mut r = Rng(seed | 1);
    let mut input = Vec::new();
    let (mut loaded, mut by_kind) = (0u64, std::collections::BTreeMap::<String, u64>::new());
    let t = Instant::now();
    for n in 0..iters {
        mutate(&mut r, &seeds, &mut input);
        let x = r.next();
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match MaskStore::from_bytes(&input) {
            Ok(s) => {
                exercise(s, x);
                None
            }
            Err(e) => Some(format!("{:?}", e.kind())),
        }));
        match res {
            Ok(None) => loaded += 1,
            Ok(Some(k)) => *by_kind.entry(k).or_default() += 1,
            Err(_) => {
                let path = format!("fuzz-crash-{n}.gmask");
                std::fs::write(&path, &input).unwrap();
                eprintln!("PANIC at execution {n}; input saved to {path}");
                std::process::exit(1);
            }
        }
        if (n + 1) % 1_000_000 == 0 {
            eprintln!("{} execs, {:.0} execs/s", n + 1, (n + 1) as f64 / t.elapsed().as_secs_f64());
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{iters} executions in {secs:.1} s ({:.0} execs/s), no panics; {loaded} loaded and exercised; errors {by_kind:?}",
        iters as f64 / secs
    );
}
