//! Shared helpers for the integration tests.

use grammask::grammar::Cfg;
use grammask::ids::TokenId;
use grammask::matcher::Matcher;
use grammask::store::build::{compile, CompileOptions};
use grammask::store::MaskStore;
use grammask::vocab::Vocab;
use std::path::{Path, PathBuf};
use std::rc::Rc;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A grammar case file (`grammars/cases/*.json`).
#[derive(serde::Deserialize, Debug)]
pub struct Case {
    #[serde(default)]
    pub grammar: Option<String>,
    #[serde(default)]
    pub grammar_text: Option<String>,
    #[serde(default)]
    pub start: Option<String>,
    #[serde(default)]
    pub accept: Vec<String>,
    #[serde(default)]
    pub reject: Vec<String>,
}

pub fn load_case_grammar(case: &Case, case_path: &Path) -> Cfg {
    match (&case.grammar, &case.grammar_text) {
        (Some(g), _) => grammask::constraint::load_lark_file(&root().join("grammars").join(g), case.start.as_deref())
            .unwrap_or_else(|e| panic!("{}: grammar {g}: {e}", case_path.display())),
        (None, Some(t)) => grammask::constraint::parse_lark(t, &case_path.display().to_string(), case.start.as_deref(), &|_| None)
            .unwrap_or_else(|e| panic!("{}: {e}", case_path.display())),
        _ => panic!("{}: case needs `grammar` or `grammar_text`", case_path.display()),
    }
}

/// A small synthetic vocabulary: every single byte, the given extra tokens
/// (e.g. literal terminals, runs of spaces), and one special EOS token (last id).
pub fn synthetic_vocab(extra: &[Vec<u8>]) -> Vocab {
    let mut toks: Vec<(Vec<u8>, bool)> = (0u8..=255).map(|b| (vec![b], false)).collect();
    let mut seen: std::collections::HashSet<Vec<u8>> = toks.iter().map(|t| t.0.clone()).collect();
    for e in extra {
        if !e.is_empty() && seen.insert(e.clone()) {
            toks.push((e.clone(), false));
        }
    }
    toks.push((b"<eos>".to_vec(), true));
    let eos = TokenId((toks.len() - 1) as u32);
    Vocab::from_tokens(toks, &[eos]).expect("synthetic vocab")
}

/// Extra tokens derived from a grammar: every literal terminal's text, plus
/// whitespace runs and a few mixed chunks (so that tokens cross lexeme borders).
pub fn grammar_tokens(cfg: &Cfg) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for t in &cfg.terminals {
        if let Some(s) = t.literal_text() {
            out.push(s.as_bytes().to_vec());
            out.push(format!(" {s}").into_bytes());
            out.push(format!("{s} ").into_bytes());
        }
    }
    for s in ["  ", "    ", "\n", "\n    ", "\n        ", "):", "()", "\":", "\",", "],", "},", "\n\n", "1.", "e+", "ab", "x_"] {
        out.push(s.as_bytes().to_vec());
    }
    out
}

pub fn compile_store(cfg: &Cfg, vocab: Vocab, streamline: bool) -> Rc<MaskStore> {
    let (s, _) = compile(cfg, vocab, &CompileOptions { streamline }, &mut |_| {}).expect("compile");
    Rc::new(s)
}

/// A store compiled per request: positions computed on first visit.
pub fn compile_lazy_store(cfg: &Cfg, vocab: Vocab) -> Rc<MaskStore> {
    let pv = Rc::new(grammask::vocab::PreparedVocab::new(vocab));
    let (s, _) = grammask::store::build::compile_lazy(cfg, pv).expect("compile_lazy");
    Rc::new(s)
}

/// Greedy longest-match tokenization over a vocabulary (token ids).
pub fn greedy_tokenize(vocab: &Vocab, text: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let mut best = None;
        for id in 0..vocab.len() as u32 {
            let b = vocab.token_bytes(TokenId(id));
            if !b.is_empty() && !vocab.is_special(TokenId(id)) && text[i..].starts_with(b) && best.is_none_or(|(l, _)| b.len() > l) {
                best = Some((b.len(), id));
            }
        }
        let (l, id) = best.expect("byte tokens cover everything");
        out.push(id);
        i += l;
    }
    out
}

pub fn bit(mask: &[u32], id: u32) -> bool {
    mask[(id >> 5) as usize] >> (id & 31) & 1 == 1
}

/// Replay `ids`; at every position the mask must equal the set of tokens that
/// `commit_token` would accept (checked for every token of the vocabulary).
/// Returns Ok(accepting at end) or Err(index of the first refused token).
pub fn replay(store: &Rc<MaskStore>, ids: &[u32], cross_check: bool) -> Result<bool, usize> {
    let mut m = Matcher::new(store.clone());
    for (i, &id) in ids.iter().enumerate() {
        let mask = m.compute_mask();
        if cross_check {
            check_mask_vs_commit(&m, &mask);
        }
        if !bit(&mask, id) {
            assert!(m.commit_token(id).is_err(), "token {id} not in mask but commit accepted it");
            return Err(i);
        }
        m.commit_token(id).expect("token in mask must commit");
    }
    let mask = m.compute_mask();
    if cross_check {
        check_mask_vs_commit(&m, &mask);
    }
    let eos = store.vocab().eos_ids()[0].0;
    assert_eq!(bit(&mask, eos), m.is_accepting());
    Ok(m.is_accepting())
}

pub fn check_mask_vs_commit(m: &Matcher, mask: &[u32]) {
    for id in 0..m.store().vocab().len() as u32 {
        let allowed = m.is_allowed(id);
        assert_eq!(bit(mask, id), allowed, "mask and commit disagree on token {id} ({:?})",
            String::from_utf8_lossy(m.store().vocab().token_bytes(TokenId(id))));
    }
}
