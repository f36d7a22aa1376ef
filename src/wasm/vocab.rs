//! `RawVocab`: a tokenizer's vocabulary (wrapped by the JS class `PreparedVocab`).

use super::{hex64, js_error, MAX_TOKENIZER_BYTES};
use crate::vocab::Vocab;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// How JS messages name the EOS option.
const JS_EOS_OPTION: &str = "the eosTokenIds option";

/// A tokenizer's vocabulary: plain (token bytes, flags, EOS) or prepared for
/// compiles (with its token trie, feature `compiler`).
pub(super) enum VocabInner {
    Plain(Rc<Vocab>),
    #[cfg(feature = "compiler")]
    Prepared(Rc<crate::vocab::PreparedVocab>),
}

/// A vocabulary read from `tokenizer.json` (wrapped by the JS class
/// `PreparedVocab`). Built once per tokenizer; every compile for that
/// tokenizer reuses it.
#[wasm_bindgen(js_name = RawVocab)]
pub struct RawVocab {
    pub(super) inner: VocabInner,
}

impl RawVocab {
    pub(super) fn vocab(&self) -> &Vocab {
        match &self.inner {
            VocabInner::Plain(v) => v,
            #[cfg(feature = "compiler")]
            VocabInner::Prepared(p) => p.vocab(),
        }
    }

    #[cfg(feature = "compiler")]
    pub(super) fn prepared(&mut self) -> Rc<crate::vocab::PreparedVocab> {
        if let VocabInner::Plain(v) = &self.inner {
            let v = Rc::try_unwrap(v.clone()).unwrap_or_else(|rc| (*rc).clone());
            self.inner = VocabInner::Prepared(Rc::new(crate::vocab::PreparedVocab::new(v)));
        }
        match &self.inner {
            VocabInner::Prepared(p) => p.clone(),
            VocabInner::Plain(_) => unreachable!("just prepared"),
        }
    }
}

fn vocab_from_js(
    tokenizer_json: &str,
    tokenizer_config: Option<String>,
    generation_config: Option<String>,
    eos: Option<Vec<u32>>,
) -> crate::Result<Vocab> {
    if tokenizer_json.len() > MAX_TOKENIZER_BYTES {
        return Err(crate::err!(Limit, "tokenizer.json has {} bytes; the limit is {MAX_TOKENIZER_BYTES}", tokenizer_json.len()));
    }
    let opts = crate::vocab::LoadOptions {
        tokenizer_config: tokenizer_config.as_deref(),
        generation_config: generation_config.as_deref(),
        eos: eos.as_deref(),
        eos_option: JS_EOS_OPTION,
    };
    crate::vocab::vocab_from_json_with(tokenizer_json, &opts)
}

#[wasm_bindgen(js_class = RawVocab)]
impl RawVocab {
    /// Read the vocabulary from `tokenizer.json` text (see `vocab::load`);
    /// `prepare`: also build the token trie now (compiler builds; otherwise
    /// it is built by the first compile).
    #[wasm_bindgen(js_name = fromJson)]
    pub fn from_json(
        tokenizer_json: &str,
        tokenizer_config: Option<String>,
        generation_config: Option<String>,
        eos: Option<Vec<u32>>,
        prepare: Option<bool>,
    ) -> Result<RawVocab, JsValue> {
        let v = vocab_from_js(tokenizer_json, tokenizer_config, generation_config, eos).map_err(js_error)?;
        #[allow(unused_mut)]
        let mut r = RawVocab { inner: VocabInner::Plain(Rc::new(v)) };
        #[cfg(feature = "compiler")]
        if prepare == Some(true) {
            r.prepared();
        }
        #[cfg(not(feature = "compiler"))]
        let _ = prepare;
        Ok(r)
    }

    /// Build the token trie now (a no-op when built; the runtime build has no compiler: false).
    pub fn prepare(&mut self) -> bool {
        #[cfg(feature = "compiler")]
        {
            self.prepared();
            true
        }
        #[cfg(not(feature = "compiler"))]
        {
            false
        }
    }

    #[wasm_bindgen(getter, js_name = isPrepared)]
    pub fn is_prepared(&self) -> bool {
        !matches!(self.inner, VocabInner::Plain(_))
    }

    #[wasm_bindgen(getter, js_name = vocabSize)]
    pub fn vocab_size(&self) -> u32 {
        self.vocab().len() as u32
    }

    #[wasm_bindgen(getter, js_name = eosTokenIds)]
    pub fn eos_token_ids(&self) -> Vec<u32> {
        self.vocab().eos_ids().iter().map(|t| t.0).collect()
    }

    #[wasm_bindgen(getter)]
    pub fn fingerprint(&self) -> String {
        match &self.inner {
            VocabInner::Plain(v) => hex64(v.fingerprint()),
            #[cfg(feature = "compiler")]
            VocabInner::Prepared(p) => hex64(p.fingerprint()),
        }
    }

    /// The fingerprint of the same tokens with other EOS ids: what a store
    /// built for this tokenizer with those EOS ids carries.
    #[wasm_bindgen(js_name = fingerprintWithEos)]
    pub fn fingerprint_with_eos(&self, eos: Vec<u32>) -> Result<String, JsValue> {
        let v = self.vocab();
        let eos: Vec<crate::ids::TokenId> = eos.into_iter().map(crate::ids::TokenId).collect();
        Vocab::from_parts(v.bytes().to_vec(), v.offsets().to_vec(), v.special_bits().to_vec(), eos)
            .map(|w| hex64(w.fingerprint()))
            .map_err(js_error)
    }

    /// The bytes of token `id` (empty for an id out of range).
    #[wasm_bindgen(js_name = tokenBytes)]
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        let v = self.vocab();
        if (id as usize) < v.len() {
            v.token_bytes(crate::ids::TokenId(id)).to_vec()
        } else {
            Vec::new()
        }
    }

    /// Every token's bytes, concatenated in id order (see `tokenOffsets`).
    #[wasm_bindgen(js_name = allTokenBytes)]
    pub fn all_token_bytes(&self) -> Vec<u8> {
        self.vocab().bytes().to_vec()
    }

    /// `vocabSize + 1` offsets: token `t` is `allTokenBytes()[off[t] .. off[t + 1]]`.
    #[wasm_bindgen(js_name = tokenOffsets)]
    pub fn token_offsets(&self) -> Vec<u32> {
        self.vocab().offsets().to_vec()
    }

    /// Special flags as a mask (bit `id & 31` of word `id >> 5`).
    #[wasm_bindgen(js_name = specialMask)]
    pub fn special_mask(&self) -> Vec<u32> {
        token_mask(self.vocab(), |v, t| v.is_special(t))
    }

    /// Tokens made of ASCII whitespace only (space, tab, CR, LF, FF, VT), as a mask.
    #[wasm_bindgen(js_name = whitespaceMask)]
    pub fn whitespace_mask(&self) -> Vec<u32> {
        token_mask(self.vocab(), |v, t| {
            let b = v.token_bytes(t);
            !v.is_special(t) && !b.is_empty() && b.iter().all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c))
        })
    }

    /// Per byte value, the lowest non-special token id whose bytes are exactly
    /// that byte, or -1.
    #[wasm_bindgen(js_name = byteTokens)]
    pub fn byte_tokens(&self) -> Vec<i32> {
        let v = self.vocab();
        let mut out = vec![-1i32; 256];
        for t in (0..v.len()).rev() {
            let id = crate::ids::TokenId::new(t);
            if let [b] = v.token_bytes(id) {
                if !v.is_special(id) {
                    out[*b as usize] = t as i32;
                }
            }
        }
        out
    }
}

fn token_mask(v: &Vocab, pred: impl Fn(&Vocab, crate::ids::TokenId) -> bool) -> Vec<u32> {
    let mut m = vec![0u32; v.len().div_ceil(32)];
    for t in 0..v.len() {
        if pred(v, crate::ids::TokenId::new(t)) {
            m[t >> 5] |= 1 << (t & 31);
        }
    }
    m
}
