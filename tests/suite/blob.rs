//! The blob format: golden bytes, round trips, and that damaged blobs
//! (truncated, bit-flipped, wrong version, wrong tokenizer, or mutated behind
//! valid checksums) are refused with a distinct error and never panic.

use crate::common;

use common::*;
use grammask::matcher::Matcher;
use grammask::store::wire::{read_header, reseal, FORMAT_VERSION};
use grammask::store::MaskStore;
use grammask::vocab::Vocab;
use grammask::ErrorKind;
use std::rc::Rc;

const GOLDEN: &str = "tests/golden/small.gmask";

const SMALL_GRAMMAR: &str = r#"
start: list
list: "[" [item ("," item)*] "]"
item: NUMBER | NAME | list
NUMBER: /[0-9]+/
NAME: /[a-z]+/
%ignore " "
"#;

/// A tiny vocabulary: a few bytes, some merged tokens, one special EOS.
fn small_vocab() -> Vocab {
    let toks: Vec<(&[u8], bool)> = vec![
        (b"[", false),
        (b"]", false),
        (b",", false),
        (b" ", false),
        (b"1", false),
        (b"2", false),
        (b"a", false),
        (b"b", false),
        (b"12", false),
        (b"ab", false),
        (b"[1", false),
        (b"],", false),
        (b", ", false),
        (b"1]", false),
        (b"x", false),
        (b"<eos>", true),
    ];
    Vocab::from_tokens(toks, &[grammask::ids::TokenId(15)]).unwrap()
}

fn small_store() -> MaskStore {
    let cfg = grammask::constraint::parse_lark(SMALL_GRAMMAR, "small", None, &|_| None).unwrap();
    let (s, _) = grammask::store::build::compile(&cfg, small_vocab(), &Default::default(), &mut |_| {}).unwrap();
    s
}

fn set(mask: &[u32]) -> Vec<u32> {
    (0..mask.len() as u32 * 32).filter(|&t| bit(mask, t)).collect()
}

/// The blob with the grammask version field zeroed (it changes with every
/// release without a format change).
fn normalized(mut b: Vec<u8>) -> Vec<u8> {
    b[20..24].fill(0);
    reseal(&mut b);
    b
}

/// Use a loaded store: masks and commits along a token walk derived from `seed`.
fn exercise(s: MaskStore, seed: u64) {
    let mut m = Matcher::new(Rc::new(s));
    let mut x = seed | 1;
    for _ in 0..4 {
        let mask = m.compute_mask();
        let allowed = set(&mask);
        if allowed.is_empty() {
            break;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = allowed[(x % allowed.len() as u64) as usize];
        let _ = m.commit_token(t);
        let _ = m.commit_token((x >> 32) as u32 % (m.store().vocab().len() as u32 + 2));
    }
}

#[test]
fn golden_blob_is_unchanged() {
    let path = root().join(GOLDEN);
    let fresh = small_store().to_bytes();
    if std::env::var("GRAMMASK_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, normalized(fresh)).unwrap();
        return;
    }
    let golden = std::fs::read(&path).expect("tests/golden/small.gmask missing (GRAMMASK_BLESS=1 cargo test --test suite blob::)");
    assert!(
        normalized(fresh) == golden,
        "the blob format changed: the small store no longer serializes to {GOLDEN}. \
         Bump FORMAT_VERSION (now {FORMAT_VERSION}) in src/store/wire.rs, document the change in README \
         \"Blob format\", and regenerate with GRAMMASK_BLESS=1 cargo test --test suite blob::"
    );
    assert!(golden.len() < 8192, "golden blob should stay small ({} bytes)", golden.len());
}

#[test]
fn golden_blob_loads_and_gives_expected_masks() {
    let golden = std::fs::read(root().join(GOLDEN)).unwrap();
    let h = read_header(&golden).unwrap();
    assert_eq!(h.format_version, FORMAT_VERSION);
    let v = small_vocab();
    assert_eq!(h.tokenizer_fingerprint, v.fingerprint());
    let g = Rc::new(MaskStore::from_bytes_for(&golden, v.fingerprint()).unwrap());
    let id = |s: &str| (0..v.len() as u32).find(|&t| v.token_bytes(grammask::ids::TokenId(t)) == s.as_bytes()).unwrap();
    let names = |ids: &[u32]| -> Vec<String> {
        ids.iter().map(|&t| String::from_utf8_lossy(v.token_bytes(grammask::ids::TokenId(t))).into_owned()).collect()
    };
    let mut m = Matcher::new(g.clone());
    // A list must open with "[" (spaces are ignored).
    assert_eq!(names(&set(&m.compute_mask())), ["[", " ", "[1"]);
    m.commit_token(id("[1")).unwrap();
    // After "[1": more digits, a separator, the close, or an ignored space
    // ("]," is not allowed: nothing may follow the outermost list).
    assert_eq!(names(&set(&m.compute_mask())), ["]", ",", " ", "1", "2", "12", ", ", "1]"]);
    m.commit_token(id("]")).unwrap();
    // The list is complete: only EOS (and ignored spaces) may follow.
    assert_eq!(names(&set(&m.compute_mask())), [" ", "<eos>"]);
    // Same masks as a freshly compiled store along a longer walk.
    let fresh = Rc::new(small_store());
    let walk = ["[", "a", ",", " ", "[1", "2", "],", "ab", "]"];
    let (mut a, mut b) = (Matcher::new(g), Matcher::new(fresh));
    for t in walk {
        assert_eq!(a.compute_mask(), b.compute_mask(), "before {t:?}");
        a.commit_token(id(t)).unwrap();
        b.commit_token(id(t)).unwrap();
    }
    assert!(a.is_accepting() && b.is_accepting());
}

#[test]
fn small_blob_round_trips_byte_identical() {
    let b = small_store().to_bytes();
    assert_eq!(MaskStore::from_bytes(&b).unwrap().to_bytes(), b);
}

#[test]
fn every_truncation_is_reported_as_truncation() {
    let b = small_store().to_bytes();
    for n in 0..b.len() {
        let e = MaskStore::from_bytes(&b[..n]).expect_err("truncated blob loaded");
        assert_eq!(e.kind(), ErrorKind::BlobTruncated, "at length {n}: {e}");
    }
    let mut longer = b.clone();
    longer.extend_from_slice(&[0; 4]);
    assert_eq!(MaskStore::from_bytes(&longer).unwrap_err().kind(), ErrorKind::BlobCorrupt);
}

#[test]
fn every_bit_flip_is_detected() {
    let b = small_store().to_bytes();
    let mut d = b.clone();
    for i in 0..b.len() {
        for bitno in 0..8 {
            d[i] ^= 1 << bitno;
            let e = MaskStore::from_bytes(&d).expect_err("flipped blob loaded");
            let want = if (12..16).contains(&i) { ErrorKind::BlobVersion } else { ErrorKind::BlobCorrupt };
            assert_eq!(e.kind(), want, "flip of bit {bitno} of byte {i}: {e}");
            d[i] ^= 1 << bitno;
        }
    }
}

#[test]
fn mutations_behind_valid_checksums_never_panic() {
    let b = small_store().to_bytes();
    let hl = read_header(&b).unwrap().len();
    let mut loaded = 0;
    for i in hl..b.len() {
        for v in [0x00u8, 0x01, 0x7f, 0xff, b[i] ^ 0x01, b[i] ^ 0x80, b[i].wrapping_add(1), b[i].wrapping_sub(1)] {
            let mut d = b.clone();
            d[i] = v;
            reseal(&mut d);
            if let Ok(s) = MaskStore::from_bytes(&d) {
                loaded += 1;
                exercise(s, i as u64 * 31 + v as u64);
            }
        }
    }
    assert!(loaded > 0, "some mutations (e.g. of token bytes) should load");
}

#[test]
fn wrong_version_and_tokenizer_are_named() {
    let b = small_store().to_bytes();
    let mut old = b.clone();
    old[12..16].copy_from_slice(&1u32.to_le_bytes());
    reseal(&mut old);
    let e = MaskStore::from_bytes(&old).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BlobVersion);
    assert!(e.message().contains("version 1") && e.message().contains("grammask compile"), "{e}");
    let other = synthetic_vocab(&[]);
    let e = MaskStore::from_bytes_for(&b, other.fingerprint()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BlobTokenizer);
    assert!(e.message().contains("another tokenizer"), "{e}");
    assert!(MaskStore::from_bytes_for(&b, small_vocab().fingerprint()).is_ok());
    let mut swapped = b.clone();
    swapped[8..12].copy_from_slice(&0x0102_0304u32.swap_bytes().to_le_bytes());
    assert!(MaskStore::from_bytes(&swapped).unwrap_err().message().contains("byte order"));
    assert_eq!(MaskStore::from_bytes(b"not a blob at all").unwrap_err().kind(), ErrorKind::BlobCorrupt);
}

fn llama3() -> std::path::PathBuf {
    let p = root().join("models/llama3/tokenizer.json");
    assert!(p.exists(), "{} missing: run scripts/setup/setup.sh", p.display());
    p
}

#[test]
fn json_llama3_round_trip_is_byte_identical() {
    let cfg = grammask::constraint::load_lark_file(&root().join("grammars/json.lark"), None).unwrap();
    let vocab = grammask::vocab::load_tokenizer_file(&llama3(), None).unwrap();
    let fp = vocab.fingerprint();
    let (s, _) = grammask::store::build::compile(&cfg, vocab, &Default::default(), &mut |_| {}).unwrap();
    let b = s.to_bytes();
    let back = MaskStore::from_bytes_for(&b, fp).unwrap();
    assert_eq!(back.to_bytes(), b);
    let (mut m1, mut m2) = (Matcher::new(Rc::new(s)), Matcher::new(Rc::new(back)));
    let text = br#"{"a": [1, 2.5e3, true, null, "x"]}"#;
    for t in greedy_tokenize(m1.store().vocab(), text) {
        assert_eq!(m1.compute_mask(), m2.compute_mask());
        m1.commit_token(t).unwrap();
        m2.commit_token(t).unwrap();
    }
}

#[test]
fn cli_reports_tokenizer_mismatch_and_truncation() {
    let exe = env!("CARGO_BIN_EXE_grammask");
    let dir = std::env::temp_dir().join(format!("grammask-blob-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("json.gmask");
    let run = |args: &[&std::ffi::OsStr]| std::process::Command::new(exe).args(args).output().unwrap();
    let os = |s: &str| std::ffi::OsString::from(s);
    let out = run(&[&os("compile"), &os("--grammar"), root().join("grammars/json.lark").as_os_str(), &os("--tokenizer"), llama3().as_os_str(), &os("-o"), store.as_os_str()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sample = dir.join("a.json");
    std::fs::write(&sample, "[1, 2]").unwrap();
    let qwen = root().join("models/qwen3/tokenizer.json");
    let out = run(&[&os("check"), &os("--store"), store.as_os_str(), &os("--tokenizer"), qwen.as_os_str(), sample.as_os_str()]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success() && err.contains("another tokenizer"), "{err}");
    let out = run(&[&os("stats"), &os("--store"), store.as_os_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("VOCB") && text.contains("SETS"), "{text}");
    let bytes = std::fs::read(&store).unwrap();
    let cut = dir.join("cut.gmask");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = run(&[&os("stats"), &os("--store"), cut.as_os_str()]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success() && err.contains("truncated"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Inputs that once panicked (found by `examples/fuzz_blob.rs`): each must
/// load or fail cleanly, and a loaded store must be usable.
#[test]
fn fuzz_regressions_do_not_panic() {
    let dir = root().join("tests/fuzz_regressions");
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let b = std::fs::read(&path).unwrap();
        if let Ok(s) = MaskStore::from_bytes(&b) {
            exercise(s, 1);
            exercise(MaskStore::from_bytes(&b).unwrap(), 2);
        }
    }
}
