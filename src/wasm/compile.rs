//! The compile functions (feature `compiler`): response formats and Lark
//! grammars into a `RawMaskStore` for a `RawVocab`.
#![cfg(feature = "compiler")]

use super::mask_store::RawMaskStore;
use super::vocab::RawVocab;
use super::{js_error, MAX_GRAMMAR_BYTES};
use wasm_bindgen::prelude::*;

/// Compile a response format (JSON text of `{type: 'json_schema', json_schema}`,
/// `{type: 'json_object'}`, `{type: 'json'}`, `{type: 'regex', regex}` or
/// `{type: 'lark', grammar, start?}`) for a vocabulary (feature `compiler`).
/// `whitespace`: `default`, `compact`, `spaced` or `flexible` (with at most
/// `max_whitespace` consecutive whitespace characters, default 4). Lark
/// grammars: `strict` refuses shift/reduce conflicts (Lark's `strict=True`),
/// `lexer` overrides the grammar's `%lexer` (`contextual`, `basic`, `longest`).
/// `refs`: JSON text of the schemas' registry (`{uri: schema}`).
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
    refs: Option<String>,
) -> Result<RawMaskStore, JsValue> {
    use crate::constraint::{Constraint, ConstraintOptions};
    use crate::frontend::schema::Whitespace;
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
        (Some("flexible"), m) => Whitespace::Flexible { max_run: m.unwrap_or(crate::frontend::schema::DEFAULT_MAX_RUN) },
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
    let refs = match refs {
        None => Default::default(),
        // JSON.stringify of an object (core.js checks it is one).
        Some(t) => match serde_json::from_str(&t) {
            Ok(serde_json::Value::Object(m)) => std::sync::Arc::new(m.into_iter().collect()),
            _ => return Err(js_error(crate::err!(ResponseFormat, "refs must be an object"))),
        },
    };
    let opts = ConstraintOptions { whitespace: ws, lenient: lenient.unwrap_or(false), strict: strict.unwrap_or(false), lexer, refs };
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
    let cfg = crate::constraint::parse_lark(grammar, "grammar.lark", start_rule.as_deref(), &|_| None).map_err(js_error)?;
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
