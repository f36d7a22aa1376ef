//! `RawMaskStore`: a loaded mask store (wrapped by the JS class `MaskStore`).

use super::vocab::{RawVocab, VocabInner};
use super::{hex64, js_error};
use crate::error::ErrorKind;
use crate::store::MaskStore;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// A loaded mask store (wrapped by the JS class `MaskStore`).
#[wasm_bindgen(js_name = RawMaskStore)]
pub struct RawMaskStore {
    pub(super) inner: Rc<MaskStore>,
    /// What the compile ignored (lenient schemas); empty for blobs.
    warnings: Vec<String>,
}

impl RawMaskStore {
    pub(super) fn new(store: MaskStore, warnings: Vec<String>) -> Self {
        RawMaskStore { inner: Rc::new(store), warnings }
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct StepCount {
    step: String,
    entries: f64,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Stats {
    vocab_size: u32,
    mask_words: u32,
    eos_token_ids: Vec<u32>,
    special_tokens: u32,
    terminals: u32,
    lexer_states: u32,
    lr_states: u32,
    positions: u32,
    entries: u32,
    stored_entries: u32,
    always_sets: u32,
    token_sets: u32,
    set_pool_words: u32,
    streamline_steps: Vec<StepCount>,
    tokenizer_fingerprint: String,
    grammar_fingerprint: String,
}

#[wasm_bindgen(js_class = RawMaskStore)]
impl RawMaskStore {
    /// Load a blob; with `expect_tokenizer_fingerprint` (16 hex digits), refuse
    /// a blob built for another tokenizer.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(bytes: &[u8], expect_tokenizer_fingerprint: Option<String>) -> Result<RawMaskStore, JsValue> {
        let store = match expect_tokenizer_fingerprint {
            None => MaskStore::from_bytes(bytes),
            Some(fp) => {
                let want = u64::from_str_radix(fp.trim(), 16).ok().filter(|_| fp.trim().len() == 16).ok_or_else(|| {
                    js_error(crate::err!(BlobTokenizer, "expectTokenizerFingerprint must be 16 hex digits, got {fp:?}"))
                })?;
                // The loader's hint names the CLI; in JS, name the JS way too.
                MaskStore::from_bytes_for(bytes, want).map_err(|e| match e.message().split_once("; rebuild it with") {
                    Some((head, _)) if e.kind() == ErrorKind::BlobTokenizer => crate::Error::new(
                        e.kind(),
                        format!("{head}; compile a store for this tokenizer (compile() or compileStore(), or `grammask compile --tokenizer ...`)"),
                    ),
                    _ => e,
                })
            }
        };
        store.map(|s| RawMaskStore::new(s, Vec::new())).map_err(js_error)
    }

    /// Warnings of the compile that made this store (what a lenient schema
    /// compile ignored); empty for blobs.
    #[wasm_bindgen(getter)]
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The store's vocabulary, as a `RawVocab` (fingerprints, token bytes, byte tokens).
    pub fn vocab(&self) -> RawVocab {
        RawVocab { inner: VocabInner::Plain(Rc::new(self.inner.vocab().clone())) }
    }

    #[wasm_bindgen(getter, js_name = vocabSize)]
    pub fn vocab_size(&self) -> u32 {
        self.inner.vocab().len() as u32
    }

    #[wasm_bindgen(getter, js_name = maskWords)]
    pub fn mask_words(&self) -> u32 {
        self.inner.mask_words() as u32
    }

    #[wasm_bindgen(getter, js_name = eosTokenIds)]
    pub fn eos_token_ids(&self) -> Vec<u32> {
        self.inner.vocab().eos_ids().iter().map(|t| t.0).collect()
    }

    #[wasm_bindgen(getter, js_name = tokenizerFingerprint)]
    pub fn tokenizer_fingerprint(&self) -> String {
        hex64(self.inner.vocab().fingerprint())
    }

    #[wasm_bindgen(getter, js_name = grammarFingerprint)]
    pub fn grammar_fingerprint(&self) -> String {
        hex64(self.inner.info().grammar_fingerprint)
    }

    /// The bytes of token `id` (empty for an id out of range).
    #[wasm_bindgen(js_name = tokenBytes)]
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        let v = self.inner.vocab();
        if (id as usize) < v.len() {
            v.token_bytes(crate::ids::TokenId(id)).to_vec()
        } else {
            Vec::new()
        }
    }

    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let s = &*self.inner;
        let t = s.tables();
        let st = Stats {
            vocab_size: s.vocab().len() as u32,
            mask_words: s.mask_words() as u32,
            eos_token_ids: self.eos_token_ids(),
            special_tokens: s.vocab().special_count() as u32,
            terminals: s.grammar().n_terminals,
            lexer_states: s.lexer().n_states() as u32,
            lr_states: s.grammar().tables.n_states(),
            positions: s.n_positions() as u32,
            entries: t.n_entries() as u32,
            stored_entries: t.n_stored_entries() as u32,
            always_sets: t.n_always() as u32,
            token_sets: t.sets().len() as u32,
            set_pool_words: t.sets().data.len() as u32,
            streamline_steps: s.info().step_counts.iter().map(|(n, c)| StepCount { step: n.clone(), entries: *c as f64 }).collect(),
            tokenizer_fingerprint: self.tokenizer_fingerprint(),
            grammar_fingerprint: self.grammar_fingerprint(),
        };
        serde_wasm_bindgen::to_value(&st).map_err(|e| js_error(crate::err!(InvalidState, "stats: {e}")))
    }

    /// The blob (e.g. to cache a store compiled in the browser).
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.blob_ok().map_err(js_error)?;
        Ok(self.inner.to_bytes())
    }
}
