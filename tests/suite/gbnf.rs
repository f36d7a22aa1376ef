//! The GBNF front end on real grammars: llama.cpp's example grammars
//! (grammars/gbnf/MANIFEST.tsv, fetched by `scripts/gbnf/fetch.sh`, which
//! scripts/setup/setup.sh runs).
//!
//! 1. `llama_cpp_grammars_as_expected`: every grammar compiles or is refused
//!    exactly as grammars/gbnf/expectations.tsv says (kind and message), and
//!    the table lists exactly the manifest's grammars.
//! 2. `samples_agree`: the texts of grammars/gbnf/samples.json (labelled by
//!    the judge, xgrammar: pkg-tests/gbnf.test.mjs checks the labels) are
//!    accepted / refused by the compiled grammar's reference recognizer.
//!
//! Generations through the masks, judged by xgrammar: pkg-tests/gbnf.test.mjs.

use crate::common::root;
use grammask::reference::recognizer::Recognizer;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn tsv(path: &str) -> Vec<BTreeMap<String, String>> {
    let p = root().join(path);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut lines = text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let head: Vec<&str> = lines.next().expect("a header line").split('\t').collect();
    lines.map(|l| head.iter().map(|h| h.to_string()).zip(l.split('\t').map(str::to_string)).collect()).collect()
}

fn grammar_path(file: &str) -> PathBuf {
    let p = root().join("grammars/gbnf").join(file);
    assert!(p.exists(), "{} is missing: run `bash scripts/gbnf/fetch.sh` (scripts/setup/setup.sh runs it)", p.display());
    p
}

#[test]
fn llama_cpp_grammars_as_expected() {
    let manifest: Vec<String> = tsv("grammars/gbnf/MANIFEST.tsv").into_iter().map(|r| r["file"].clone()).collect();
    let expect = tsv("grammars/gbnf/expectations.tsv");
    let listed: Vec<String> = expect.iter().map(|r| r["file"].clone()).collect();
    assert_eq!(listed, manifest, "grammars/gbnf/expectations.tsv must list the manifest's grammars, in order");
    let (mut ok, mut refused) = (0, 0);
    for row in &expect {
        let path = grammar_path(&row["file"]);
        let got = grammask::constraint::load_grammar_file(&path, None, None);
        match (row["verdict"].as_str(), got) {
            ("ok", Ok(cfg)) => {
                assert!(!cfg.rules.is_empty());
                ok += 1;
            }
            ("refused", Err(e)) => {
                assert_eq!(e.kind().as_str(), row["kind"], "{}: {e:?}", row["file"]);
                assert!(e.message().contains(&row["message"]), "{}: {e:?}\nshould contain {:?}", row["file"], row["message"]);
                refused += 1;
            }
            (v, got) => panic!("{}: expected {v}, got {:?}", row["file"], got.map(|_| "a grammar")),
        }
    }
    eprintln!("[gbnf] llama.cpp grammars: {ok} compile, {refused} refused (as expected)");
}

#[test]
fn samples_agree() {
    let p = root().join("grammars/gbnf/samples.json");
    let samples: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut n = 0;
    for (file, s) in samples.iter().filter(|(k, _)| !k.starts_with('_')) {
        let cfg = grammask::constraint::load_grammar_file(&grammar_path(file), None, None).unwrap_or_else(|e| panic!("{file}: {e}"));
        let r = Recognizer::new(cfg).unwrap();
        for (label, want) in [("accept", true), ("reject", false)] {
            for t in s[label].as_array().unwrap() {
                let t = t.as_str().unwrap();
                assert_eq!(r.check(t.as_bytes()).is_ok(), want, "{file}: {t:?} should be {label}ed");
                n += 1;
            }
        }
    }
    assert!(n > 40, "{n} samples");
}
