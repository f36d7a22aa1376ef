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

/// Set `obj[key] = value` (a fresh plain object: cannot fail).
fn set(obj: &js_sys::Object, key: &str, value: JsValue) {
    let _ = js_sys::Reflect::set(obj, &key.into(), &value);
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

    /// `MaskStore.stats()`: a plain object (built by hand: serde's
    /// serializer would cost the wasm builds several KB).
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let s = &*self.inner;
        let t = s.tables();
        let o = js_sys::Object::new();
        let n = |v: usize| JsValue::from(v as u32);
        set(&o, "vocabSize", n(s.vocab().len()));
        set(&o, "maskWords", n(s.mask_words()));
        set(&o, "eosTokenIds", self.eos_token_ids().into_iter().map(JsValue::from).collect::<js_sys::Array>().into());
        set(&o, "specialTokens", n(s.vocab().special_count()));
        set(&o, "terminals", JsValue::from(s.grammar().n_terminals));
        set(&o, "lexerStates", n(s.lexer().n_states()));
        set(&o, "lrStates", JsValue::from(s.grammar().tables.n_states()));
        set(&o, "positions", n(s.n_positions()));
        set(&o, "entries", n(t.n_entries()));
        set(&o, "storedEntries", n(t.n_stored_entries()));
        set(&o, "alwaysSets", n(t.n_always()));
        set(&o, "tokenSets", n(t.sets().len()));
        set(&o, "setPoolWords", n(t.sets().data.len()));
        let steps = js_sys::Array::new();
        for (name, c) in &s.info().step_counts {
            let e = js_sys::Object::new();
            set(&e, "step", JsValue::from_str(name));
            set(&e, "entries", JsValue::from(*c as f64));
            steps.push(&e);
        }
        set(&o, "streamlineSteps", steps.into());
        set(&o, "tokenizerFingerprint", JsValue::from_str(&self.tokenizer_fingerprint()));
        set(&o, "grammarFingerprint", JsValue::from_str(&self.grammar_fingerprint()));
        Ok(o.into())
    }

    /// The blob (e.g. to cache a store compiled in the browser).
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Result<Vec<u8>, JsValue> {
        self.inner.blob_ok().map_err(js_error)?;
        Ok(self.inner.to_bytes())
    }
}
