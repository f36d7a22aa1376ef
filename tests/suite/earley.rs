//! The general parser (Earley, src/parser/earley.rs) for grammars that are
//! not LALR(1):
//! 1. `parser_agrees_with_reference`: on random terminal walks, the engine's
//!    viable-prefix and end-of-input answers (through `IncParser`, its
//!    cursors and commits) equal the textbook Earley recognizer's
//!    (src/reference/earley.rs), for every terminal at every step: the
//!    llama.cpp grammars that need it and grammars/general/pairs.json.
//! 2. `masks_equal_lalr_twin`: each general grammar of
//!    grammars/general/pairs.json has an LALR(1) twin with the same
//!    language; their masks (Llama-3 tokenizer, stores compiled per request)
//!    are equal token by token on random walks, with rollbacks.
//! 3. `generations_accepted`: random generations through the masks from
//!    arithmetic.gbnf and c.gbnf are accepted by the reference recognizer,
//!    and every allowed token commits.
#![cfg(feature = "cli")]

use crate::common::{bit, root};
use grammask::grammar::{Cfg, ConflictPolicy};
use grammask::matcher::Matcher;
use grammask::parser::incremental::{IncParser, IncTables};
use grammask::reference::earley::RefEarley;
use grammask::vocab::PreparedVocab;
use std::rc::Rc;

fn gbnf(text: &str) -> Cfg {
    grammask::constraint::gbnf_cfg(text, "g.gbnf", grammask::frontend::gbnf::Dialect::Gbnf, None).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn pairs() -> serde_json::Value {
    let p = root().join("grammars/general/pairs.json");
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn llama_cpp(file: &str) -> Cfg {
    let p = root().join("grammars/gbnf/llama.cpp").join(file);
    assert!(p.exists(), "{} is missing: run `bash scripts/gbnf/fetch.sh`", p.display());
    grammask::constraint::load_grammar_file(&p, None, None).unwrap()
}

/// splitmix64
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn general_grammars() -> Vec<(String, Cfg)> {
    let mut out = vec![("arithmetic.gbnf".to_string(), llama_cpp("arithmetic.gbnf")), ("c.gbnf".to_string(), llama_cpp("c.gbnf"))];
    let d = pairs();
    for p in d["pairs"].as_array().unwrap().iter().chain(d["only"].as_array().unwrap()) {
        out.push((p["name"].as_str().unwrap().to_string(), gbnf(p["general"].as_str().unwrap())));
    }
    for (name, cfg) in &out {
        assert_eq!(cfg.conflicts, ConflictPolicy::General, "{name} should need the general parser");
    }
    out
}

#[test]
fn parser_agrees_with_reference() {
    let mut steps = 0;
    for (name, cfg) in general_grammars() {
        let g = IncTables::general(grammask::parser::earley::EarleyTables::new(&cfg).unwrap());
        let r = RefEarley::new(&cfg);
        let n = cfg.terminals.len() as u32;
        for seed in 0..6u64 {
            let mut next = rng(seed * 7919 + name.len() as u64);
            let (mut p, mut rp) = (IncParser::new(&g), r.start());
            for _ in 0..40 {
                assert_eq!(p.accepts_eof(&g, &[]), r.accepts_eof(&rp), "{name}: end of input");
                let mut ok = Vec::new();
                for t in 0..n {
                    let mut q = rp.clone();
                    let want = r.feed(&mut q, t);
                    assert_eq!(p.accepts(&g, &[t]), want, "{name}: terminal {t}");
                    if want {
                        ok.push((t, q));
                    }
                }
                if ok.is_empty() {
                    break;
                }
                let (t, q) = ok.swap_remove((next() % ok.len() as u64) as usize);
                // Two symbols through one cursor chain agree with the reference too.
                let u = (next() % n as u64) as u32;
                assert_eq!(p.accepts2(&g, &[t], &[u]), r.feed(&mut q.clone(), u), "{name}: {t} then {u}");
                let before = p.clone();
                p.consume(&g, &[t]).unwrap();
                assert!(before.accepts(&g, &[t]), "a commit leaves its source unchanged");
                rp = q;
                steps += 1;
            }
        }
    }
    assert!(steps > 200, "{steps} steps");
}

fn llama3() -> Rc<PreparedVocab> {
    let path = root().join("models/llama3/tokenizer.json");
    let vocab = grammask::vocab::load::load_tokenizer_file(&path, None).unwrap_or_else(|e| panic!("{e} (run scripts/setup/setup.sh)"));
    Rc::new(PreparedVocab::new(vocab))
}

fn allowed(mask: &[u32], n: usize) -> Vec<u32> {
    (0..n as u32).filter(|&i| bit(mask, i)).collect()
}

#[test]
fn masks_equal_lalr_twin() {
    let pv = llama3();
    let n = pv.vocab().len();
    let eos = pv.vocab().eos_ids()[0].0;
    let mut compared = 0;
    for p in pairs()["pairs"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        let (cg, cl) = (gbnf(p["general"].as_str().unwrap()), gbnf(p["lalr"].as_str().unwrap()));
        assert_eq!(cg.conflicts, ConflictPolicy::General, "{name}: general");
        assert_ne!(cl.conflicts, ConflictPolicy::General, "{name}: the twin must be LALR(1)");
        let sg = Rc::new(grammask::store::build::compile_lazy(&cg, pv.clone()).unwrap().0);
        let sl = Rc::new(grammask::store::build::compile_lazy(&cl, pv.clone()).unwrap().0);
        for seed in 0..4u64 {
            let mut next = rng(seed + 1000);
            let (mut a, mut b) = (Matcher::new(sg.clone()), Matcher::new(sl.clone()));
            let mut history: Vec<Vec<u32>> = Vec::new();
            for step in 0..24 {
                let (ma, mb) = (a.compute_mask(), b.compute_mask());
                assert!(ma == mb, "{name} seed {seed} step {step}: masks differ ({} vs {} tokens)", allowed(&ma, n).len(), allowed(&mb, n).len());
                compared += 1;
                if step == 12 && history.len() >= 3 {
                    // Roll three tokens back: the masks are those seen then.
                    a.rollback(3).unwrap();
                    b.rollback(3).unwrap();
                    let back = &history[history.len() - 3];
                    assert!(&a.compute_mask() == back && &b.compute_mask() == back, "{name}: rollback");
                    history.truncate(history.len() - 3);
                    continue;
                }
                history.push(ma.clone());
                let ids: Vec<u32> = allowed(&ma, n).into_iter().filter(|&i| i != eos).collect();
                if ids.is_empty() {
                    break;
                }
                // Prefer short tokens: longer walks through the grammar.
                let short: Vec<u32> = ids.iter().copied().filter(|&i| pv.vocab().token_bytes(grammask::ids::TokenId(i)).len() <= 2).collect();
                let pool = if !short.is_empty() && next() % 4 != 0 { &short } else { &ids };
                let id = pool[(next() % pool.len() as u64) as usize];
                a.commit_token(id).unwrap();
                b.commit_token(id).unwrap();
            }
        }
    }
    assert!(compared > 300, "{compared} masks compared");
}

#[test]
fn generations_accepted() {
    let pv = llama3();
    let n = pv.vocab().len();
    let eos = pv.vocab().eos_ids()[0].0;
    for file in ["arithmetic.gbnf", "c.gbnf"] {
        let cfg = llama_cpp(file);
        let rec = grammask::reference::recognizer::Recognizer::new(cfg.clone()).unwrap();
        let store = Rc::new(grammask::store::build::compile_lazy(&cfg, pv.clone()).unwrap().0);
        let mut done = 0;
        for seed in 0..3u64 {
            let mut next = rng(seed + 77);
            let mut m = Matcher::new(store.clone());
            let mut text = Vec::new();
            for step in 0..60 {
                let mask = m.compute_mask();
                let ids = allowed(&mask, n);
                // Every allowed token commits; a sample of refused ones does not.
                for k in 0..8 {
                    let id = (next() % n as u64) as u32;
                    assert_eq!(m.is_allowed(id), bit(&mask, id), "{file}: token {id} (probe {k})");
                }
                if bit(&mask, eos) && (step > 30 || next() % 10 == 0) {
                    assert!(m.is_accepting());
                    break;
                }
                // After a while, single bytes only (ASCII), toward an end.
                let pool: Vec<u32> = if step > 20 {
                    ids.iter().copied().filter(|&i| i != eos && pv.vocab().token_bytes(grammask::ids::TokenId(i)).len() == 1).collect()
                } else {
                    ids.iter().copied().filter(|&i| i != eos).collect()
                };
                if pool.is_empty() {
                    break;
                }
                let id = pool[(next() % pool.len() as u64) as usize];
                m.commit_token(id).unwrap();
                text.extend_from_slice(pv.vocab().token_bytes(grammask::ids::TokenId(id)));
            }
            if m.is_accepting() {
                assert!(rec.check(&text).is_ok(), "{file}: {:?} refused by the reference", String::from_utf8_lossy(&text));
                done += 1;
            } else {
                // Not finished: still a prefix the reference can extend? At least
                // every committed token was in its mask (checked above).
            }
        }
        eprintln!("[earley] {file}: {done} of 3 generations finished and accepted");
    }
}

/// Lark `%parser earley`: the case grammars (grammars/cases/lark_earley_*.json,
/// labels judged by Lark's Earley parser: scripts/lark/earley_judge.py) run
/// on the general parser; an LALR(1) grammar keeps its tables; Lark's
/// default dynamic Earley lexer is refused by name.
#[test]
fn lark_earley_directive() {
    let parse = |t: &str| grammask::constraint::parse_lark(t, "g.lark", None, &|_| None);
    for f in ["lark_earley_lr2.json", "lark_earley_ambiguous.json"] {
        let c: serde_json::Value = serde_json::from_slice(&std::fs::read(root().join("grammars/cases").join(f)).unwrap()).unwrap();
        let cfg = parse(c["grammar_text"].as_str().unwrap()).unwrap();
        assert_eq!(cfg.conflicts, ConflictPolicy::General, "{f}");
    }
    let lalr = parse("%parser earley\n%lexer basic\nstart: \"a\" start | \"b\"\n").unwrap();
    assert_eq!(lalr.conflicts, ConflictPolicy::Strict);
    let e = parse("%parser earley\nstart: a | b\na: \"x\"\nb: \"x\"\n").unwrap_err();
    assert_eq!(e.kind(), grammask::ErrorKind::Grammar);
    assert!(e.message().contains("%parser earley needs `%lexer basic`"), "{e:?}");
    let e = parse("%parser cyk\nstart: \"a\"\n").unwrap_err();
    assert!(e.message().contains("expected lalr or earley"), "{e:?}");
}
