//! The wasm facade (feature `wasm`): a thin wasm-bindgen layer over
//! [`MaskStore`] and [`Matcher`]. It is the only place where [`Error`]s become
//! JS exceptions: every fallible call returns `Result<_, JsValue>` whose error
//! is a JS `Error` with the Rust message, `name = "GrammaskError"` and
//! `kind` = the [`ErrorKind`] name (e.g. `"InvalidToken"`).
//!
//! The classes here (`RawMaskStore`, `RawMatcher`) are not the public JS API:
//! the hand-written wrapper in `js/core.js` checks arguments and use after
//! `free()`, turns a trap into a clear error, and adds `fromUrl`. Nothing here
//! panics on user input; a panic would abort the module (wasm traps), so a
//! panic hook records its message for the wrapper to report ([`last_panic`]).
//!
//! Masks: token `id` is bit `id & 31` of word `id >> 5`. A matcher's mask is
//! `ceil(mask_width / 32)` words, where `mask_width` (default: the vocabulary
//! size) may exceed the vocabulary to match a model's logits width; tokens at
//! or past the vocabulary size are always 0.

use crate::error::{Error, ErrorKind};
use crate::matcher::{Matcher, MatcherOptions};
use crate::store::MaskStore;
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

fn kind_name(k: ErrorKind) -> String {
    format!("{k:?}")
}

/// The one conversion from [`Error`] to a JS exception.
fn js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.message());
    err.set_name("GrammaskError");
    let _ = js_sys::Reflect::set(&err, &"kind".into(), &kind_name(e.kind()).into());
    err.into()
}

fn hex64(x: u64) -> String {
    format!("{x:016x}")
}

/// A loaded mask store (wrapped by the JS class `MaskStore`).
#[wasm_bindgen(js_name = RawMaskStore)]
pub struct RawMaskStore {
    inner: Rc<MaskStore>,
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
                MaskStore::from_bytes_for(bytes, want)
            }
        };
        store.map(|s| RawMaskStore { inner: Rc::new(s) }).map_err(js_error)
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
        let opts = MatcherOptions { max_rollback: max_rollback.map_or(MatcherOptions::default().max_rollback, |n| n as usize) };
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
}

/// Largest grammar text `compileStore` accepts.
#[cfg(feature = "compiler")]
pub const MAX_GRAMMAR_BYTES: usize = 1 << 20;
/// Largest `tokenizer.json` `compileStore` accepts.
#[cfg(feature = "compiler")]
pub const MAX_TOKENIZER_BYTES: usize = 64 << 20;

#[cfg(feature = "compiler")]
fn vocab_for(
    tokenizer_json: &str,
    tokenizer_config: Option<String>,
    generation_config: Option<String>,
    eos: Option<Vec<u32>>,
) -> crate::Result<crate::vocab::Vocab> {
    if tokenizer_json.len() > MAX_TOKENIZER_BYTES {
        return Err(crate::err!(Limit, "tokenizer.json has {} bytes; the limit is {MAX_TOKENIZER_BYTES}", tokenizer_json.len()));
    }
    crate::vocab::load::vocab_from_json(tokenizer_json, tokenizer_config.as_deref(), generation_config.as_deref(), eos.as_deref())
}

/// Compile a Lark grammar for a tokenizer (feature `compiler`). `%import
/// common.NAME` works (bundled); other imports are not available.
#[cfg(feature = "compiler")]
#[wasm_bindgen(js_name = compileStoreRaw)]
#[allow(clippy::too_many_arguments)]
pub fn compile_store(
    grammar: &str,
    tokenizer_json: &str,
    tokenizer_config: Option<String>,
    generation_config: Option<String>,
    eos: Option<Vec<u32>>,
    start_rule: Option<String>,
    streamline: Option<bool>,
    on_progress: Option<js_sys::Function>,
) -> Result<RawMaskStore, JsValue> {
    if grammar.len() > MAX_GRAMMAR_BYTES {
        return Err(js_error(crate::err!(Limit, "grammar has {} bytes; the limit is {MAX_GRAMMAR_BYTES}", grammar.len())));
    }
    let cfg = crate::grammar::lark::parse_grammar(grammar, "grammar.lark", start_rule.as_deref(), &|_| None).map_err(js_error)?;
    let vocab = vocab_for(tokenizer_json, tokenizer_config, generation_config, eos).map_err(js_error)?;
    let opts = crate::store::build::CompileOptions { streamline: streamline.unwrap_or(true) };
    let mut progress = |m: &str| {
        if let Some(f) = &on_progress {
            // A throwing callback must not abort the compile half-way.
            let _ = f.call1(&JsValue::NULL, &JsValue::from_str(m));
        }
    };
    let (store, _) = crate::store::build::compile(&cfg, vocab, &opts, &mut progress).map_err(js_error)?;
    Ok(RawMaskStore { inner: Rc::new(store) })
}

/// The fingerprint a store built for this tokenizer carries (feature `compiler`).
#[cfg(feature = "compiler")]
#[wasm_bindgen(js_name = tokenizerFingerprintRaw)]
pub fn tokenizer_fingerprint(
    tokenizer_json: &str,
    tokenizer_config: Option<String>,
    generation_config: Option<String>,
    eos: Option<Vec<u32>>,
) -> Result<String, JsValue> {
    vocab_for(tokenizer_json, tokenizer_config, generation_config, eos).map(|v| hex64(v.fingerprint())).map_err(js_error)
}

/// Limits of `compileStore`, for the JS wrapper's documentation and messages.
#[wasm_bindgen(js_name = compilerLimits)]
pub fn compiler_limits() -> Option<Vec<f64>> {
    #[cfg(feature = "compiler")]
    {
        Some(vec![MAX_GRAMMAR_BYTES as f64, MAX_TOKENIZER_BYTES as f64])
    }
    #[cfg(not(feature = "compiler"))]
    {
        None
    }
}
