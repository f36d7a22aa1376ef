//! Tokens named in Lark grammars (`<tool_call>` by text, `<[151657]>` by
//! id): matched as that token id only, never as their spelled-out bytes,
//! with real tokenizers (Qwen3, whose `<tool_call>` is one added token that
//! is not flagged special; Llama-3, whose `<|python_tag|>` is special).
//! Masks are checked against `commit_token` for every token of the
//! vocabulary at the interesting positions, lazy stores against full
//! streamlined ones and their blobs.
#![cfg(feature = "cli")]

use crate::common::{bit, check_mask_vs_commit, root};
use grammask::constraint::{compile, Constraint, ConstraintOptions};
use grammask::matcher::Matcher;
use grammask::store::MaskStore;
use grammask::vocab::PreparedVocab;
use grammask::ErrorKind;
use std::rc::Rc;

struct Tok {
    pv: Rc<PreparedVocab>,
    tok: tokenizers::Tokenizer,
}

fn tok(name: &str) -> Tok {
    let p = root().join(format!("models/{name}/tokenizer.json"));
    let vocab = grammask::vocab::load::load_tokenizer_file(&p, None).expect("models/ (run scripts/setup/setup.sh)");
    Tok { pv: Rc::new(PreparedVocab::new(vocab)), tok: tokenizers::Tokenizer::from_file(&p).expect("tokenizer") }
}

impl Tok {
    fn lark(&self, g: &str) -> grammask::Result<Rc<MaskStore>> {
        let c = Constraint::Lark { grammar: g.into(), file: "<g>".into(), start: None };
        compile(&self.pv, &c, &ConstraintOptions::default()).map(|(s, _)| Rc::new(s))
    }
    fn ids(&self, text: &str) -> Vec<u32> {
        self.tok.encode(text, false).expect("encode").get_ids().to_vec()
    }
    /// The ids of `text`'s bytes as single-byte tokens (the spelled-out form).
    fn byte_ids(&self, text: &str) -> Vec<u32> {
        let v = self.pv.vocab();
        text.bytes()
            .map(|b| (0..v.len() as u32).find(|&t| v.token_bytes(grammask::ids::TokenId(t)) == [b]).expect("byte token"))
            .collect()
    }
}

/// Commit `ids` one by one (each in the mask); the index of the first refused one.
fn walk(m: &mut Matcher, ids: &[u32]) -> Result<(), usize> {
    for (i, &id) in ids.iter().enumerate() {
        let mask = m.compute_mask();
        let ok = m.commit_token(id).is_ok();
        assert_eq!(bit(&mask, id), ok, "mask and commit disagree on token {id} (#{i})");
        if !ok {
            return Err(i);
        }
    }
    Ok(())
}

const CALLS: &str = r#"
start: TEXT? call+
call: <tool_call> "\n{" NAME "}\n" </tool_call>
TEXT: /[^\n]+/
NAME: /[a-z]+/
"#;

const TOOL_CALL: u32 = 151657;
const END_TOOL_CALL: u32 = 151658;

#[test]
fn qwen3_tool_call_token_is_matched_by_id_only() {
    let q = tok("qwen3");
    assert_eq!(q.ids("<tool_call>"), [TOOL_CALL], "Qwen3's <tool_call> is one token");
    assert!(!q.pv.vocab().is_special(grammask::ids::TokenId(TOOL_CALL)), "an added token not flagged special");
    let store = q.lark(CALLS).unwrap();
    assert_eq!(store.specials().iter().map(|s| s.token).collect::<Vec<_>>(), [TOOL_CALL, END_TOOL_CALL]);
    let text = "Let me look.<tool_call>\n{abc}\n</tool_call><tool_call>\n{x}\n</tool_call>";
    let ids = q.ids(text);
    assert!(ids.contains(&TOOL_CALL) && ids.contains(&END_TOOL_CALL));
    let mut m = Matcher::new(store.clone());
    let mask = m.compute_mask();
    assert!(bit(&mask, TOOL_CALL) && !bit(&mask, END_TOOL_CALL));
    check_mask_vs_commit(&m, &mask);
    walk(&mut m, &ids).unwrap();
    assert!(m.is_accepting());
    // Inside a call: the opener is refused, the closer only after the body.
    let mut m = Matcher::new(store.clone());
    let open = ids.iter().position(|&t| t == TOOL_CALL).unwrap();
    walk(&mut m, &ids[..open + 1]).unwrap();
    let mask = m.compute_mask();
    assert!(!bit(&mask, TOOL_CALL) && !bit(&mask, END_TOOL_CALL));
    check_mask_vs_commit(&m, &mask);
    // After free text that can end: the opener is allowed, and the mask is exact there.
    let mut m = Matcher::new(store.clone());
    walk(&mut m, &ids[..open]).unwrap();
    let mask = m.compute_mask();
    assert!(bit(&mask, TOOL_CALL));
    check_mask_vs_commit(&m, &mask);
    assert!(!m.is_accepting(), "a call is required");
}

#[test]
fn spelled_out_token_text_is_text_not_the_token() {
    let q = tok("qwen3");
    let store = q.lark(CALLS).unwrap();
    // The bytes of "<tool_call>" are allowed where TEXT allows them, and stay text.
    let mut m = Matcher::new(store.clone());
    let spelled = q.byte_ids("<tool_call>");
    walk(&mut m, &spelled).unwrap();
    let nl = q.byte_ids("\n")[0];
    assert!(m.commit_token(nl).is_err(), "the spelled-out opener opened a call");
    // The token itself is never text: in a grammar that names it, after free
    // text it opens a call (the next byte must be the call's newline).
    let mut m = Matcher::new(store.clone());
    walk(&mut m, &q.ids("Hi")).unwrap();
    m.commit_token(TOOL_CALL).unwrap();
    assert!(m.commit_token(q.byte_ids("x")[0]).is_err());
    // A grammar that does not name it keeps it as text, as before.
    let text_only = q.lark("start: /[^\\n]+/").unwrap();
    let mut m = Matcher::new(text_only);
    m.commit_token(TOOL_CALL).expect("an unnamed added token is text");
    // `%reject <tool_call>`: the token is named, so never text, and no rule takes it.
    let none = q.lark("start: TEXT\nTEXT: /(?s:.+)/\n%reject <tool_call>").unwrap();
    let mut m = Matcher::new(none.clone());
    let mask = m.compute_mask();
    assert!(!bit(&mask, TOOL_CALL) && bit(&mask, END_TOOL_CALL));
    check_mask_vs_commit(&m, &mask);
    walk(&mut m, &spelled).unwrap();
    assert!(m.commit_token(TOOL_CALL).is_err() && m.is_accepting());
    assert!(q.lark("start: <tool_call>\n%reject <tool_call>").is_err());
    // A grammar where the text cannot hold '<' refuses the spelled-out form.
    let strict = q.lark("start: <tool_call> NAME\nNAME: /[a-z]+/").unwrap();
    let mut m = Matcher::new(strict);
    assert!(walk(&mut m, &spelled).is_err());
    assert_eq!(walk(&mut m, &[TOOL_CALL]), Ok(()));
}

#[test]
fn token_by_id_equals_token_by_text() {
    let q = tok("qwen3");
    let by_text = q.lark(CALLS).unwrap();
    let by_id = q.lark(&CALLS.replace("<tool_call>", "<[151657]>").replace("</tool_call>", "<[151658]>")).unwrap();
    let ids = q.ids("ok<tool_call>\n{ab}\n</tool_call>");
    let (mut a, mut b) = (Matcher::new(by_text), Matcher::new(by_id));
    for &id in &ids {
        assert_eq!(a.compute_mask(), b.compute_mask());
        a.commit_token(id).unwrap();
        b.commit_token(id).unwrap();
    }
    assert!(a.is_accepting() && b.is_accepting());
}

/// The full, streamlined store (and its blob) gives the lazy store's masks,
/// in every lexer mode.
#[test]
fn full_store_and_blob_agree_with_lazy() {
    let q = tok("qwen3");
    let ids = q.ids("Let me see.<tool_call>\n{abc}\n</tool_call><tool_call>\n{d}\n</tool_call>");
    // Free text starts with a capital, names do not (so every lexer mode tells them apart).
    let calls = CALLS.replace("/[^\\n]+/", "/[A-Z][^\\n]*/");
    assert_ne!(calls, CALLS);
    for mode in ["", "%lexer longest\n", "%lexer basic\n"] {
        let g = format!("{mode}{calls}");
        let lazy = q.lark(&g).unwrap();
        let cfg = grammask::constraint::parse_lark(&g, "<g>", None, &|_| None).unwrap();
        let opts = grammask::store::build::CompileOptions::default();
        let (full, _) = grammask::store::build::compile(&cfg, q.pv.vocab().clone(), &opts, &mut |_| {}).unwrap();
        let blob = MaskStore::from_bytes(&full.to_bytes()).unwrap();
        assert_eq!(blob.specials(), full.specials());
        let stores = [lazy, Rc::new(full), Rc::new(blob)];
        let mut ms: Vec<Matcher> = stores.iter().map(|s| Matcher::new(s.clone())).collect();
        for &id in &ids {
            let m0 = ms[0].compute_mask();
            for m in &ms[1..] {
                assert_eq!(m.compute_mask(), m0, "{mode:?}: masks differ before {id}");
            }
            for m in &mut ms {
                m.commit_token(id).unwrap();
            }
        }
        assert!(ms.iter().all(|m| m.is_accepting()), "{mode:?}");
    }
}

#[test]
fn llama3_special_tokens_and_eos() {
    let l = tok("llama3");
    // Header tokens are flagged special (models/llama3 is Llama 3.0: no
    // <|python_tag|>).
    let store = l.lark("start: <|start_header_id|> ROLE <|end_header_id|>\nROLE: /[a-z]+/").unwrap();
    let ids = l.ids("<|start_header_id|>assistant<|end_header_id|>");
    assert_eq!(ids.first(), Some(&128006));
    let mut m = Matcher::new(store.clone());
    let mask = m.compute_mask();
    assert_eq!(mask.iter().map(|w| w.count_ones()).sum::<u32>(), 1, "only <|start_header_id|> at the start");
    walk(&mut m, &ids).unwrap();
    assert!(m.is_accepting());
    let mask = m.compute_mask();
    check_mask_vs_commit(&m, &mask);
    // An EOS id the grammar names is the grammar's token where it takes it,
    // and EOS where the text can end.
    let eot = 128009;
    let store = l.lark("start: WORD (<|eot_id|> WORD)?\nWORD: /[a-z]+/").unwrap();
    let mut m = Matcher::new(store.clone());
    walk(&mut m, &l.ids("abc")).unwrap();
    m.commit_token(eot).unwrap();
    assert!(!m.is_stopped() && !m.is_accepting());
    walk(&mut m, &l.ids("de")).unwrap();
    assert!(m.is_accepting());
}

#[test]
fn unknown_or_misplaced_tokens_are_named_errors() {
    let q = tok("qwen3");
    let err = |g: &str| q.lark(g).map(|_| ()).unwrap_err();
    let e = err("start: \"a\"\n    | <no_such_token>");
    assert_eq!(e.kind(), ErrorKind::Grammar);
    assert!(e.message().contains("<g>:2:7") && e.message().contains("<no_such_token>"), "{e}");
    let e = err("start: <[999999]>");
    assert!(e.message().contains("out of range") && e.message().contains("<g>:1:8"), "{e}");
    let e = err("start: <tool_call> <[151657]>");
    assert!(e.message().contains("same") || e.message().contains("again"), "{e}");
    let e = err("start: A\nA: \"x\" <tool_call>");
    assert!(e.message().contains("only in rules"), "{e}");
    let e = err("start: <tool_call");
    assert_eq!(e.kind(), ErrorKind::GrammarSyntax, "{e}");
    let e = err("start: <[12a]>");
    assert_eq!(e.kind(), ErrorKind::GrammarSyntax, "{e}");
}

/// A tools grammar as grammask/transformers writes it for Qwen3 (hermes:
/// the opener and closer by id, the call as an `%json` `anyOf` of one object
/// per tool): valid calls to the end, an unknown tool and an enum violation
/// refused, masks equal to commits at the boundaries of the call.
#[test]
fn hermes_tools_grammar_with_embedded_schemas() {
    let q = tok("qwen3");
    let call = |name: &str, params: &str| {
        format!(r#"{{"type": "object", "properties": {{"name": {{"const": "{name}"}}, "arguments": {params}}}, "required": ["name", "arguments"], "additionalProperties": false}}"#)
    };
    let weather = call("get_weather", r#"{"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}, "required": ["city"], "additionalProperties": false}"#);
    let search = call("search", r#"{"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false}"#);
    let g = format!(
        "start: calls \"\\n\"?\ncalls: call | calls \"\\n\"? call\ncall: <[151657]> \"\\n\" %json {{\"anyOf\": [{weather}, {search}]}} \"\\n\" <[151658]>\n"
    );
    let store = q.lark(&g).unwrap();
    let good = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>";
    let ids = q.ids(good);
    let mut m = Matcher::new(store.clone());
    for (i, &id) in ids.iter().enumerate() {
        if i == 0 || id == TOOL_CALL || id == END_TOOL_CALL || ids[i - 1] == END_TOOL_CALL {
            check_mask_vs_commit(&m, &m.compute_mask());
        }
        m.commit_token(id).unwrap_or_else(|e| panic!("#{i}: {e}"));
    }
    assert!(m.is_accepting());
    let mask = m.compute_mask();
    assert!(bit(&mask, TOOL_CALL) && !bit(&mask, END_TOOL_CALL), "a further call may follow, no closer");
    check_mask_vs_commit(&m, &mask);
    for bad in [
        "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"P\", \"unit\": \"k\"}}\n</tool_call>",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"c\"}}\n</tool_call>",
        "Sure.<tool_call>",
    ] {
        let mut m = Matcher::new(store.clone());
        assert!(walk(&mut m, &q.ids(bad)).is_err(), "{bad:?} accepted");
    }
}
