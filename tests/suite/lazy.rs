//! Stores compiled per request (positions computed on first visit, see
//! `MaskStore::ensure`) give the same masks as the same grammar's fully
//! precomputed, unstreamlined store: real JSON files tokenized with the real
//! Llama-3 tokenizer, replayed through both, masks compared at every
//! position; and a lazy store written as a blob and loaded back still agrees.
#![cfg(feature = "cli")]

use crate::common;
use common::root;
use grammask::grammar::{Cfg, LexerMode};
use grammask::matcher::Matcher;
use grammask::store::build::{compile, compile_lazy, CompileOptions};
use grammask::store::MaskStore;
use grammask::vocab::PreparedVocab;
use std::rc::Rc;

fn llama3() -> Rc<PreparedVocab> {
    let path = root().join("models/llama3/tokenizer.json");
    let vocab = grammask::vocab::load::load_tokenizer_file(&path, None)
        .unwrap_or_else(|e| panic!("{e} (run scripts/setup/setup.sh to fetch the tokenizers)"));
    Rc::new(PreparedVocab::new(vocab))
}

fn json_files() -> Vec<(String, String)> {
    let dir = root().join("benches/workloads/json");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.into_iter().map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// Replay every file through both stores; returns (tokens, differences).
fn compare(a: &Rc<MaskStore>, b: &Rc<MaskStore>, files: &[(String, String)]) -> (usize, usize) {
    let tok = tokenizers::Tokenizer::from_file(root().join("models/llama3/tokenizer.json")).unwrap();
    let (mut tokens, mut diffs) = (0, 0);
    let words = a.mask_words();
    let (mut ma, mut mb) = (vec![0u32; words], vec![0u32; words]);
    for (name, text) in files {
        let ids = tok.encode(text.as_str(), false).unwrap().get_ids().to_vec();
        let (mut x, mut y) = (Matcher::new(a.clone()), Matcher::new(b.clone()));
        for (i, &id) in ids.iter().enumerate() {
            x.fill_mask(&mut ma).unwrap();
            y.fill_mask(&mut mb).unwrap();
            if ma != mb {
                diffs += 1;
                eprintln!("{name}: masks differ before token #{i}");
            }
            x.commit_token(id).unwrap_or_else(|e| panic!("{name}: token #{i}: {e}"));
            y.commit_token(id).unwrap_or_else(|e| panic!("{name}: token #{i}: {e}"));
            tokens += 1;
        }
        x.fill_mask(&mut ma).unwrap();
        y.fill_mask(&mut mb).unwrap();
        diffs += (ma != mb) as usize;
        assert!(x.is_accepting() && y.is_accepting(), "{name}: not accepted at the end");
    }
    (tokens, diffs)
}

/// The next token of a random walk: a random allowed non-EOS token of
/// `mask`, alternating with short ones (at most 2 bytes) so that string
/// bodies, their ends and the structure after them are all reached; `None`
/// when only EOS is left.
fn pick_token(pv: &PreparedVocab, mask: &[u32], eos: &[u32], step: usize, seed: &mut u64) -> Option<u32> {
    let allowed: Vec<u32> = (0..mask.len() as u32 * 32).filter(|&t| mask[(t >> 5) as usize] >> (t & 31) & 1 == 1 && !eos.contains(&t)).collect();
    if allowed.is_empty() {
        return None;
    }
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    let short: Vec<u32> = if step % 2 == 0 {
        Vec::new()
    } else {
        allowed.iter().copied().filter(|&t| pv.vocab().token_bytes(grammask::ids::TokenId(t)).len() <= 2).collect()
    };
    let pool = if short.is_empty() { &allowed } else { &short };
    Some(pool[(*seed % pool.len() as u64) as usize])
}

fn json_cfg(mode: LexerMode) -> Cfg {
    let mut cfg = grammask::constraint::load_lark_file(&root().join("grammars/json.lark"), None).unwrap();
    cfg.lexer = mode;
    cfg
}

#[test]
fn lazy_equals_full_store_on_real_json() {
    let pv = llama3();
    let files = json_files();
    for mode in [LexerMode::Longest, LexerMode::Contextual] {
        let cfg = json_cfg(mode);
        let (full, _) = compile(&cfg, pv.vocab().clone(), &CompileOptions { streamline: false }, &mut |_| {}).unwrap();
        let (lazy, _) = compile_lazy(&cfg, pv.clone()).unwrap();
        let (full, lazy) = (Rc::new(full), Rc::new(lazy));
        assert!(lazy.is_lazy() && lazy.n_computed() == 0);
        let (tokens, diffs) = compare(&full, &lazy, &files);
        eprintln!(
            "json.lark ({}) x Llama-3: {tokens} tokens, {diffs} mask differences; lazy store computed {}/{} positions",
            mode.name(),
            lazy.n_computed(),
            lazy.n_positions()
        );
        assert_eq!(diffs, 0);
        assert!(lazy.n_computed() < lazy.n_positions(), "a replay visits only some positions");
        // A lazy store written as a blob holds every position.
        let back = Rc::new(MaskStore::from_bytes(&lazy.to_bytes()).unwrap());
        assert_eq!(back.n_computed(), back.n_positions());
        assert_eq!(compare(&full, &back, &files[..3]).1, 0);
    }
}

/// Schema grammars (free strings, patterns, keys, enums, numbers): random
/// walks driven by the full store's masks, the lazy store compared at every
/// step. Lazy positions inside a lexeme loop (a string body) take the
/// vocabulary's loop cache (`store::build::lexeme_loop`); the full compile
/// walks every position through the general trie walk, so this checks the
/// two agree, also when a second compile reuses the cached loop walks.
#[test]
fn lazy_equals_full_store_on_schema_walks() {
    let pv = llama3();
    let eos: Vec<u32> = pv.vocab().eos_ids().iter().map(|t| t.0).collect();
    let opts = grammask::constraint::ConstraintOptions::default();
    let mut total = (0usize, 0usize);
    for name in ["tool_call", "patterns", "person", "tree"] {
        let text = std::fs::read_to_string(root().join(format!("tests/data/schemas/{name}.json"))).unwrap();
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (cfg, _) = grammask::constraint::to_cfg(&grammask::constraint::Constraint::JsonSchema(schema), &opts).unwrap();
        let (full, _) = compile(&cfg, pv.vocab().clone(), &CompileOptions { streamline: false }, &mut |_| {}).unwrap();
        let full = Rc::new(full);
        let words = full.mask_words();
        let (mut ma, mut mb) = (vec![0u32; words], vec![0u32; words]);
        for walk in 0..4u64 {
            // A fresh lazy store per walk: later ones hit the loop cache.
            let (lazy, _) = compile_lazy(&cfg, pv.clone()).unwrap();
            let lazy = Rc::new(lazy);
            let (mut x, mut y) = (Matcher::new(full.clone()), Matcher::new(lazy));
            let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ (walk + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
            for step in 0..120 {
                x.fill_mask(&mut ma).unwrap();
                y.fill_mask(&mut mb).unwrap();
                total.0 += 1;
                if ma != mb {
                    total.1 += 1;
                    eprintln!("{name}: walk {walk}: masks differ at step {step}");
                }
                let Some(pick) = pick_token(&pv, &ma, &eos, step, &mut seed) else { break };
                x.commit_token(pick).unwrap();
                y.commit_token(pick).unwrap();
            }
        }
    }
    eprintln!("schema walks x Llama-3: {} masks compared, {} differences", total.0, total.1);
    assert!(total.0 > 1000);
    assert_eq!(total.1, 0);
}

/// The direct mask path (`store::direct`: the parser in the loop over the
/// token trie, taken by a first visit over budget) against the stored path
/// (every position's entries computed): two per-request stores of the same
/// constraint, one with a first-visit budget of 0 (every mask direct, never
/// prefetched), one unbounded (every mask from the store). Random walks over
/// every schema of tests/data/schemas (global `LongestAll` lexing) and the
/// two Lark grammars (JSON under both lexers; Python, contextual lexing and
/// `%indent`), masks compared at every step. Then the deferred positions are
/// prefetched (those over the prefetch budget stay direct) and the masks
/// must still agree.
#[test]
fn direct_equals_stored_masks_on_random_walks() {
    let pv = llama3();
    let eos: Vec<u32> = pv.vocab().eos_ids().iter().map(|t| t.0).collect();
    let opts = grammask::constraint::ConstraintOptions::default();
    let mut cases: Vec<(String, Cfg)> = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(root().join("tests/data/schemas")).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for p in names {
        let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let (cfg, _) = grammask::constraint::to_cfg(&grammask::constraint::Constraint::JsonSchema(schema), &opts).unwrap();
        cases.push((p.file_name().unwrap().to_string_lossy().into_owned(), cfg));
    }
    cases.push(("json.lark (longest)".into(), json_cfg(LexerMode::Longest)));
    cases.push(("json.lark (contextual)".into(), json_cfg(LexerMode::Contextual)));
    cases.push(("python.lark".into(), grammask::constraint::load_lark_file(&root().join("grammars/python.lark"), None).unwrap()));
    let (mut masks, mut diffs, mut direct) = (0usize, 0usize, 0u64);
    for (name, cfg) in &cases {
        let (stored, _) = compile_lazy(cfg, pv.clone()).unwrap();
        let (lazy, _) = compile_lazy(cfg, pv.clone()).unwrap();
        stored.set_first_visit_budget(u64::MAX);
        lazy.set_first_visit_budget(0);
        let (stored, lazy) = (Rc::new(stored), Rc::new(lazy));
        let words = stored.mask_words();
        let (mut ma, mut mb) = (vec![0u32; words], vec![0u32; words]);
        for walk in 0..3u64 {
            let (mut x, mut y) = (Matcher::new(stored.clone()), Matcher::new(lazy.clone()));
            let mut seed = 0x2545_f491_4f6c_dd1du64 ^ (walk + 7).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            for step in 0..60 {
                x.fill_mask(&mut ma).unwrap();
                y.fill_mask(&mut mb).unwrap();
                masks += 1;
                if ma != mb {
                    diffs += 1;
                    let only = |a: &[u32], b: &[u32]| (0..words as u32 * 32).filter(|&t| a[(t >> 5) as usize] >> (t & 31) & 1 == 1 && b[(t >> 5) as usize] >> (t & 31) & 1 == 0).take(5).map(|t| format!("{t}:{:?}", String::from_utf8_lossy(pv.vocab().token_bytes(grammask::ids::TokenId(t))))).collect::<Vec<_>>();
                    eprintln!("{name}: walk {walk}: masks differ at step {step}: stored only {:?}, direct only {:?}", only(&ma, &mb), only(&mb, &ma));
                }
                let Some(pick) = pick_token(&pv, &ma, &eos, step, &mut seed) else { break };
                x.commit_token(pick).unwrap();
                y.commit_token(pick).unwrap();
            }
            direct += y.direct_masks();
        }
        // Idle time computes the deferred positions; masks still agree.
        assert!(lazy.n_deferred() > 0, "{name}: every first visit was deferred");
        while lazy.prefetch(|| true) {}
        let (x, y) = (Matcher::new(stored.clone()), Matcher::new(lazy.clone()));
        x.fill_mask(&mut ma).unwrap();
        y.fill_mask(&mut mb).unwrap();
        assert_eq!(ma, mb, "{name}: after prefetch");
    }
    eprintln!("direct vs stored x Llama-3: {} constraints, {masks} masks compared ({direct} direct), {diffs} differences", cases.len());
    // Masks of positions whose walk needs no trie step (a loop with no exit)
    // and repeated states (the matcher's mask cache) are not direct.
    assert!(direct as usize * 5 > masks, "a fifth of the masks or more took the direct path");
    assert_eq!(diffs, 0);
}
