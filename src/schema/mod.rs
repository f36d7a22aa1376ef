//! JSON Schema front end (feature `compiler`): a JSON Schema (2020-12, with
//! the draft-07/-06/-04 spellings) → normalized [`Cfg`](crate::grammar::Cfg)
//! whose language is the set of instances valid under the schema, serialized
//! under the [`Whitespace`] policy (property order = schema order).

use crate::grammar::Cfg;
use crate::Result;

/// Whitespace policy of the serialized JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Whitespace {
    /// `compact` or `spaced` (each `,` and `:` may be followed by one space;
    /// nothing else).
    #[default]
    Default,
    /// `{"a":1,"b":[1,2]}`.
    Compact,
    /// Python `json.dumps` defaults: `{"a": 1, "b": [1, 2]}`.
    Spaced,
    /// RFC 8259 whitespace around every structural character, at most
    /// `max_run` consecutive whitespace characters in each place.
    Flexible { max_run: u32 },
}

/// Options of the schema compile.
#[derive(Clone, Debug, Default)]
pub struct SchemaOptions {
    pub whitespace: Whitespace,
    /// Ignore known keywords that cannot be enforced instead of refusing the
    /// schema; each one ignored is listed in the warnings.
    pub lenient: bool,
}

/// A compiled schema: the grammar and what was ignored (lenient mode).
#[derive(Clone, Debug)]
pub struct SchemaGrammar {
    pub cfg: Cfg,
    pub warnings: Vec<String>,
}

/// Compile a JSON Schema into a grammar.
pub fn to_cfg(schema: &serde_json::Value, opts: &SchemaOptions) -> Result<SchemaGrammar> {
    let _ = (schema, opts);
    Err(crate::err!(Grammar, "JSON Schema: the schema front end is not built yet"))
}

/// The grammar of any JSON value (`object_only`: any JSON object).
pub fn any_json(object_only: bool, opts: &SchemaOptions) -> Result<SchemaGrammar> {
    let v = if object_only { serde_json::json!({"type": "object"}) } else { serde_json::json!({}) };
    to_cfg(&v, opts)
}
