//! The official JSON Schema metaschemas (draft-04, -06, -07, 2019-09 and
//! 2020-12 with their vocabulary metaschemas), built in so that `$ref` to
//! them resolves with nothing fetched. `metaschemas.json` is written by
//! scripts/gen/metaschemas.py (annotations left out); it is parsed once, on
//! the first `$ref` to a URI that neither the schema nor the caller's
//! registry holds.

use serde_json::Value;
use std::sync::OnceLock;

static TEXT: &str = include_str!("metaschemas.json");

/// The metaschema with this URI (no fragment), if built in.
pub fn get(uri: &str) -> Option<&'static Value> {
    static DOCS: OnceLock<Value> = OnceLock::new();
    if !uri.contains("json-schema.org/") {
        return None;
    }
    DOCS.get_or_init(|| serde_json::from_str(TEXT).unwrap_or(Value::Null)).get(uri)
}

/// The URIs built in.
#[cfg(test)]
pub fn uris() -> Vec<String> {
    serde_json::from_str::<serde_json::Map<String, Value>>(TEXT).map(|m| m.keys().cloned().collect()).unwrap_or_default()
}
