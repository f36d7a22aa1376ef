//! The wasm facade (feature `wasm`): a thin wasm-bindgen layer over
//! [`MaskStore`](crate::store::MaskStore) and
//! [`Matcher`](crate::matcher::Matcher). It is the only place where
//! [`Error`]s become JS exceptions: every fallible call returns `Result<_, JsValue>` whose error
//! is a JS `Error` with the Rust message, `name = "GrammaskError"` and
//! `kind` = the [`ErrorKind`](crate::ErrorKind) name (e.g. `"InvalidToken"`).
//!
//! The classes here (`RawMaskStore`, `RawMatcher`, `RawPrefixSet`,
//! `RawVocab`) are not the public JS API:
//! the hand-written wrapper in `js/core.js` checks arguments and use after
//! `free()`, turns a trap into a clear error, and adds `fromUrl`. Nothing here
//! panics on user input; a panic would abort the module (wasm traps), so a
//! panic hook records its message for the wrapper to report ([`last_panic`]).
//!
//! One file per JS class: `mask_store.rs`, `matcher.rs`, `prefix_set.rs`,
//! `vocab.rs`; the compile functions in `compile.rs`. This file holds what
//! they share: the conversion of errors to JS exceptions, the panic hook,
//! memory and limits.
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

mod compile;
mod mask_store;
mod matcher;
mod prefix_set;
mod vocab;

#[cfg(feature = "compiler")]
pub use compile::{compile_raw, compile_store};
pub use mask_store::RawMaskStore;
pub use matcher::RawMatcher;
pub use prefix_set::RawPrefixSet;
pub use vocab::RawVocab;

use crate::error::Error;
use std::cell::RefCell;
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

/// Largest grammar, schema or regex text the compile functions accept.
pub const MAX_GRAMMAR_BYTES: usize = crate::limits::Limits::DEFAULT.max_grammar_bytes;
/// Largest `tokenizer.json` accepted.
pub const MAX_TOKENIZER_BYTES: usize = crate::limits::Limits::DEFAULT.max_tokenizer_bytes;

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
    for (name, value) in crate::limits::Limits::DEFAULT.entries() {
        let _ = js_sys::Reflect::set(&out, &name.into(), &(value as f64).into());
    }
    out
}

/// Whether this build has the compiler.
#[wasm_bindgen(js_name = hasCompiler)]
pub fn has_compiler() -> bool {
    cfg!(feature = "compiler")
}
