//! The wasm facade (feature `wasm`): a thin wasm-bindgen layer over
//! [`MaskStore`] and [`Matcher`]. It is the only place where [`Error`]s become
//! JS exceptions: every fallible call returns `Result<_, JsValue>` whose error
//! is a JS `Error` with the Rust message, `name = "GrammaskError"` and
//! `kind` = the [`ErrorKind`] name (e.g. `"InvalidToken"`).
//!
//! The classes here (`RawMaskStore`, `RawMatcher`, `RawVocab`) are not the
//! public JS API:
//! the hand-written wrapper in `js/core.js` checks arguments and use after
//! `free()`, turns a trap into a clear error, and adds `fromUrl`. Nothing here
//! panics on user input; a panic would abort the module (wasm traps), so a
//! panic hook records its message for the wrapper to report ([`last_panic`]).
//!
//! Builds: with feature `wasm` alone, the lean runtime (blobs, matchers, and
//! vocabularies read from `tokenizer.json` for fingerprints and store checks);
//! with `compiler` too, [`compile_raw`] compiles a response format (JSON
//! Schema, any JSON, regex, Lark) for a prepared vocabulary, and
//! [`compile_store`] builds a full, streamlined blob from Lark text.
//!
//! Masks: token `id` is bit `id & 31` of word `id >> 5`. A matcher's mask is
//! `ceil(mask_width / 32)` words, where `mask_width` (default: the vocabulary
//! size) may exceed the vocabulary to match a model's logits width; tokens at
//! or past the vocabulary size are always 0.

use crate::error::{Error, ErrorKind};
use crate::matcher::{Matcher, MatcherOptions};
use crate::store::MaskStore;
use crate::vocab::Vocab;
use js_sys::Uint32Array;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

#[wasm_bindgen(start)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        // try_with/try_borrow_mut: never panic inside the hook.
        let _ = LAST_PANIC.try_with(|p| p.try_borrow_mut().map(|mut p| *p = Some(msg)));
    }));
}

/// The message of the last Rust panic (an internal error), if any.
#[wasm_bindgen(js_name = lastPanic)]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow().clone())
}

/// The module's `WebAssembly.Memory` (for views of matcher mask buffers,
/// see `RawMatcher.maskPtr`).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// Current size of the module's linear memory in bytes (diagnostics: it grows
/// on demand and never shrinks).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        (core::arch::wasm32::memory_size(0) * 65536) as f64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0.0
    }
}


/// The one conversion from [`Error`] to a JS exception.
fn js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.message());
    err.set_name("GrammaskError");
    let _ = js_sys::Reflect::set(&err, &"kind".into(), &e.kind().as_str().into());
    err.into()
}

fn hex64(x: u64) -> String {
    format!("{x:016x}")
}

/// A loaded mask store (wrapped by the JS class `MaskStore`).
#[wasm_bindgen(js_name = RawMaskStore)]
pub struct RawMaskStore {
    inner: Rc<MaskStore>,
    /// What the compile ignored (lenient schemas); empty for blobs.
    warnings: Vec<String>,
}

impl RawMaskStore {
    fn new(store: MaskStore, warnings: Vec<String>) -> Self {
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
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes()
    }
}

/// A matcher (wrapped by the JS class `Matcher`).
#[wasm_bindgen(js_name = RawMatcher)]
pub struct RawMatcher {
    m: Matcher,
    /// The mask buffer: `ceil(mask_width / 32)` words, reused by every call.
    buf: Vec<u32>,
    mask_width: u32,
}

#[wasm_bindgen(js_class = RawMatcher)]
impl RawMatcher {
    #[wasm_bindgen(constructor)]
    pub fn new(store: &RawMaskStore, max_rollback: Option<u32>, mask_width: Option<u32>) -> Result<RawMatcher, JsValue> {
        let vocab = store.inner.vocab().len() as u32;
        let width = mask_width.unwrap_or(vocab);
        if width < vocab {
            return Err(js_error(crate::err!(
                InvalidState,
                "maskWidth {width} is smaller than the vocabulary size {vocab}: every token of the store needs a bit"
            )));
        }
        let words = (width as usize).div_ceil(32).max(store.inner.mask_words());
        let mut opts = MatcherOptions::default();
        if let Some(n) = max_rollback {
            opts.max_rollback = n as usize;
        }
        Ok(RawMatcher { m: Matcher::with_options(store.inner.clone(), opts), buf: vec![0; words], mask_width: width })
    }

    #[wasm_bindgen(getter, js_name = maskWords)]
    pub fn mask_words(&self) -> u32 {
        self.buf.len() as u32
    }

    #[wasm_bindgen(getter, js_name = maskWidth)]
    pub fn mask_width(&self) -> u32 {
        self.mask_width
    }

    fn fill(&mut self) -> Result<(), JsValue> {
        self.m.fill_mask(&mut self.buf).map_err(js_error)
    }

    /// The mask as a new `Uint32Array` of `maskWords` words.
    #[wasm_bindgen(js_name = computeMask)]
    pub fn compute_mask(&mut self) -> Result<Vec<u32>, JsValue> {
        self.fill()?;
        Ok(self.buf.clone())
    }

    /// Write the mask into `out[offset .. offset + maskWords]`.
    #[wasm_bindgen(js_name = fillMask)]
    pub fn fill_mask(&mut self, out: &Uint32Array, offset: u32) -> Result<(), JsValue> {
        let need = offset as u64 + self.buf.len() as u64;
        if need > out.length() as u64 {
            return Err(js_error(crate::err!(
                InvalidState,
                "fillMask: the output has {} words; offset {offset} + maskWords {} needs {need}",
                out.length(),
                self.buf.len()
            )));
        }
        self.fill()?;
        // SAFETY: the view is used at once, before anything can allocate (and
        // so grow the memory and detach the view).
        let view = unsafe { Uint32Array::view(&self.buf) };
        out.set(&view, offset);
        Ok(())
    }

    /// Compute the mask into this matcher's own buffer in wasm memory (no
    /// copy out): `maskWords` words at byte offset [`RawMatcher::mask_ptr`]
    /// of `wasmMemory().buffer`. The JS layer copies it with one
    /// `TypedArray.set` from a cached view (two fewer calls out of wasm and no
    /// view object per mask than [`RawMatcher::fill_mask`]).
    #[wasm_bindgen(js_name = fillMaskBuffer)]
    pub fn fill_mask_buffer(&mut self) -> Result<(), JsValue> {
        self.fill()
    }

    /// Byte offset of the mask buffer in wasm memory (fixed for the matcher's
    /// life: the buffer is never reallocated).
    #[wasm_bindgen(getter, js_name = maskPtr)]
    pub fn mask_ptr(&self) -> u32 {
        self.buf.as_ptr() as usize as u32
    }

    #[wasm_bindgen(js_name = isAllowed)]
    pub fn is_allowed(&self, id: u32) -> bool {
        self.m.is_allowed(id)
    }

    #[wasm_bindgen(js_name = commitToken)]
    pub fn commit_token(&mut self, id: u32) -> Result<(), JsValue> {
        self.m.commit_token(id).map_err(js_error)
    }

    #[wasm_bindgen(js_name = commitTokens)]
    pub fn commit_tokens(&mut self, ids: &[u32]) -> Result<(), JsValue> {
        self.m.commit_tokens(ids).map_err(js_error)
    }

    pub fn rollback(&mut self, n: u32) -> Result<(), JsValue> {
        self.m.rollback(n as usize).map_err(js_error)
    }

    #[wasm_bindgen(js_name = forcedTokens)]
    pub fn forced_tokens(&self, limit: u32) -> Vec<u32> {
        self.m.forced_tokens(limit as usize)
    }

    #[wasm_bindgen(js_name = isAccepting)]
    pub fn is_accepting(&self) -> bool {
        self.m.is_accepting()
    }

    #[wasm_bindgen(js_name = isStopped)]
    pub fn is_stopped(&self) -> bool {
        self.m.is_stopped()
    }

    pub fn reset(&mut self) {
        self.m.reset()
    }

    /// The entries of `set` whose bytes the matcher accepts from its current
    /// state (committed one by one as the single-byte tokens of
    /// `byte_tokens`, -1: none, the entry fails), and, for entries that ask,
    /// after which the text is complete. Entries whose id is set in `skip`
    /// (a mask) are not tried. Shared prefixes are committed once (the set is
    /// sorted); a refused byte skips every entry that shares it. The matcher
    /// is rolled back to where it was. Returns the ids of the hits, then the
    /// number of commits made (last element).
    #[wasm_bindgen(js_name = acceptedPrefixes)]
    pub fn accepted_prefixes(&mut self, set: &RawPrefixSet, byte_tokens: &[i32], skip: &[u32]) -> Result<Vec<u32>, JsValue> {
        let mut hits = Vec::new();
        let mut path: Vec<u8> = Vec::new();
        let mut failed: Option<Vec<u8>> = None;
        let mut commits = 0u32;
        let is_set = |m: &[u32], id: u32| m.get(id as usize >> 5).is_some_and(|w| w >> (id & 31) & 1 == 1);
        for e in 0..set.ids.len() {
            let id = set.ids[e];
            if is_set(skip, id) {
                continue;
            }
            let pre = &set.bytes[set.offsets[e] as usize..set.offsets[e + 1] as usize];
            if let Some(f) = &failed {
                if pre.starts_with(f) {
                    continue;
                }
            }
            let l = path.iter().zip(pre).take_while(|(a, b)| a == b).count();
            if path.len() > l {
                self.m.rollback(path.len() - l).map_err(js_error)?;
                path.truncate(l);
            }
            let mut ok = true;
            for (i, &b) in pre.iter().enumerate().skip(l) {
                let t = byte_tokens.get(b as usize).copied().unwrap_or(-1);
                commits += 1;
                if t < 0 || self.m.commit_token(t as u32).is_err() {
                    failed = Some(pre[..=i].to_vec());
                    ok = false;
                    break;
                }
                path.push(b);
            }
            if ok && (set.accepting[e] == 0 || self.m.is_accepting()) {
                hits.push(id);
            }
        }
        if !path.is_empty() {
            self.m.rollback(path.len()).map_err(js_error)?;
        }
        hits.push(commits);
        Ok(hits)
    }
}

/// Byte strings with a token id each and an "and then complete" flag, sorted
/// by bytes: the candidates of `RawMatcher::acceptedPrefixes`.
#[wasm_bindgen(js_name = RawPrefixSet)]
pub struct RawPrefixSet {
    bytes: Vec<u8>,
    offsets: Vec<u32>,
    ids: Vec<u32>,
    accepting: Vec<u8>,
}

#[wasm_bindgen(js_class = RawPrefixSet)]
impl RawPrefixSet {
    /// `offsets` has one more element than `ids` and `accepting`; entry `e` is
    /// `bytes[offsets[e] .. offsets[e + 1]]` and must sort after entry `e - 1`.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: Vec<u8>, offsets: Vec<u32>, ids: Vec<u32>, accepting: Vec<u8>) -> Result<RawPrefixSet, JsValue> {
        let n = ids.len();
        let bad = |m: &str| js_error(crate::err!(InvalidState, "prefix set: {m}"));
        if offsets.len() != n + 1 || accepting.len() != n || offsets.first() != Some(&0) || offsets[n] as usize != bytes.len() {
            return Err(bad("offsets must have ids.length + 1 entries from 0 to bytes.length, accepting ids.length"));
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("offsets must not decrease"));
        }
        let entry = |e: usize| &bytes[offsets[e] as usize..offsets[e + 1] as usize];
        if (1..n).any(|e| entry(e - 1) > entry(e)) {
            return Err(bad("entries must be sorted by their bytes"));
        }
        Ok(RawPrefixSet { bytes, offsets, ids, accepting })
    }

    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.ids.len() as u32
    }
}

/// Largest grammar, schema or regex text the compile functions accept.
pub const MAX_GRAMMAR_BYTES: usize = crate::limits::Limits::DEFAULT.max_grammar_bytes;
/// Largest `tokenizer.json` accepted.
pub const MAX_TOKENIZER_BYTES: usize = crate::limits::Limits::DEFAULT.max_tokenizer_bytes;
/// How JS messages name the EOS option.
const JS_EOS_OPTION: &str = "the eosTokenIds option";

/// A tokenizer's vocabulary: plain (token bytes, flags, EOS) or prepared for
/// compiles (with its token trie, feature `compiler`).
enum VocabInner {
    Plain(Rc<Vocab>),
    #[cfg(feature = "compiler")]
    Prepared(Rc<crate::vocab::PreparedVocab>),
}

/// A vocabulary read from `tokenizer.json` (wrapped by the JS class
/// `PreparedVocab`). Built once per tokenizer; every compile for that
/// tokenizer reuses it.
#[wasm_bindgen(js_name = RawVocab)]
pub struct RawVocab {
    inner: VocabInner,
}

impl RawVocab {
    fn vocab(&self) -> &Vocab {
        match &self.inner {
            VocabInner::Plain(v) => v,
            #[cfg(feature = "compiler")]
            VocabInner::Prepared(p) => p.vocab(),
        }
    }

    #[cfg(feature = "compiler")]
    fn prepared(&mut self) -> Rc<crate::vocab::PreparedVocab> {
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

/// Compile a response format (JSON text of `{type: 'json_schema', json_schema}`,
/// `{type: 'json_object'}`, `{type: 'json'}`, `{type: 'regex', regex}` or
/// `{type: 'lark', grammar, start?}`) for a vocabulary (feature `compiler`).
/// `whitespace`: `default`, `compact`, `spaced` or `flexible` (with at most
/// `max_whitespace` consecutive whitespace characters, default 4). Lark
/// grammars: `strict` refuses shift/reduce conflicts (Lark's `strict=True`),
/// `lexer` overrides the grammar's `%lexer` (`contextual`, `basic`, `longest`).
#[cfg(feature = "compiler")]
#[wasm_bindgen(js_name = compileRaw)]
pub fn compile_raw(
    vocab: &mut RawVocab,
    response_format: &str,
    whitespace: Option<String>,
    max_whitespace: Option<u32>,
    lenient: Option<bool>,
    strict: Option<bool>,
    lexer: Option<String>,
) -> Result<RawMaskStore, JsValue> {
    use crate::constraint::{Constraint, ConstraintOptions};
    use crate::schema::Whitespace;
    if response_format.len() > MAX_GRAMMAR_BYTES {
        return Err(js_error(crate::err!(
            Limit,
            "responseFormat has {} bytes as JSON; the limit is {MAX_GRAMMAR_BYTES}",
            response_format.len()
        )));
    }
    let rf: serde_json::Value = serde_json::from_str(response_format)
        .map_err(|e| js_error(crate::err!(ResponseFormat, "responseFormat is not JSON-serializable data: {e}")))?;
    let constraint = Constraint::from_response_format(&rf).map_err(js_error)?;
    let ws = match (whitespace.as_deref(), max_whitespace) {
        (None | Some("default"), None) => Whitespace::Default,
        (Some("compact"), None) => Whitespace::Compact,
        (Some("spaced"), None) => Whitespace::Spaced,
        (Some("flexible"), m) => Whitespace::Flexible { max_run: m.unwrap_or(4) },
        (w, Some(_)) if w != Some("flexible") => {
            return Err(js_error(crate::err!(
                ResponseFormat,
                "maxWhitespace applies to whitespace: 'flexible' only (whitespace is {:?})",
                w.unwrap_or("default")
            )))
        }
        (Some(other), _) => {
            return Err(js_error(crate::err!(
                ResponseFormat,
                "whitespace must be 'default', 'compact', 'spaced' or 'flexible', got {other:?}"
            )))
        }
        (None, Some(_)) => unreachable!("matched above"),
    };
    let lexer = match lexer.as_deref() {
        None => None,
        Some(name) => Some(crate::grammar::LexerMode::from_name(name).ok_or_else(|| {
            js_error(crate::err!(ResponseFormat, "lexer must be 'contextual', 'basic' or 'longest', got {name:?}"))
        })?),
    };
    let opts = ConstraintOptions { whitespace: ws, lenient: lenient.unwrap_or(false), strict: strict.unwrap_or(false), lexer };
    let pv = vocab.prepared();
    let (store, warnings) = crate::constraint::compile(&pv, &constraint, &opts).map_err(js_error)?;
    Ok(RawMaskStore::new(store, warnings))
}

/// Compile a Lark grammar into a full, precomputed (streamlined) store for a
/// tokenizer (feature `compiler`): the same blob as `grammask compile`.
/// `%import common.NAME` works (bundled); other imports are not available.
#[cfg(feature = "compiler")]
#[wasm_bindgen(js_name = compileStoreRaw)]
pub fn compile_store(
    grammar: &str,
    vocab: &RawVocab,
    start_rule: Option<String>,
    streamline: Option<bool>,
    on_progress: Option<js_sys::Function>,
) -> Result<RawMaskStore, JsValue> {
    if grammar.len() > MAX_GRAMMAR_BYTES {
        return Err(js_error(crate::err!(Limit, "grammar has {} bytes; the limit is {MAX_GRAMMAR_BYTES}", grammar.len())));
    }
    let cfg = crate::grammar::lark::parse_grammar(grammar, "grammar.lark", start_rule.as_deref(), &|_| None).map_err(js_error)?;
    let opts = crate::store::build::CompileOptions { streamline: streamline.unwrap_or(true) };
    let mut progress = |m: &str| {
        if let Some(f) = &on_progress {
            // A throwing callback must not abort the compile half-way.
            let _ = f.call1(&JsValue::NULL, &JsValue::from_str(m));
        }
    };
    let (store, _) = crate::store::build::compile(&cfg, vocab.vocab().clone(), &opts, &mut progress).map_err(js_error)?;
    Ok(RawMaskStore::new(store, Vec::new()))
}

/// Input limits (grammar/schema text, tokenizer.json), for the JS wrapper's
/// documentation and messages.
#[wasm_bindgen(js_name = compilerLimits)]
pub fn compiler_limits() -> Vec<f64> {
    vec![MAX_GRAMMAR_BYTES as f64, MAX_TOKENIZER_BYTES as f64]
}

// ---- limits(): every limit of crate::Limits, by its JS name (self-contained).

/// Every limit ([`crate::Limits::DEFAULT`]) as a plain JS object
/// `{maxGrammarBytes: 1048576, maxSchemaDepth: 200, ...}` (camelCase names,
/// see [`crate::Limits::entries`]); in both builds.
#[wasm_bindgen(js_name = limits)]
pub fn limits() -> js_sys::Object {
    let out = js_sys::Object::new();
    for (name, value) in crate::Limits::DEFAULT.entries() {
        let _ = js_sys::Reflect::set(&out, &name.into(), &(value as f64).into());
    }
    out
}

/// Whether this build has the compiler.
#[wasm_bindgen(js_name = hasCompiler)]
pub fn has_compiler() -> bool {
    cfg!(feature = "compiler")
}
