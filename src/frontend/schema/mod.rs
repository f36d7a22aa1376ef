//! JSON Schema front end (feature `compiler`): a JSON Schema (2020-12, with
//! the draft-07/-06/-04 spellings) → normalized [`Cfg`](crate::grammar::Cfg)
//! whose language is the set of instances valid under the schema, serialized
//! under the [`Whitespace`] policy (property order = schema order).
//!
//! Pipeline: [`ir`] (keywords checked, `$ref`/`allOf` closed, `anyOf`/`oneOf`
//! distributed into unions of conjunctions, constraints merged per type) →
//! [`gen`] (deterministic LALR(1) rules, scalar and key terminals as `Set`s).
//! The policy, the supported keywords and the limits are documented in
//! docs/structured-output.md.

pub mod disjoint;
pub mod formats;
pub mod gen;
pub mod ir;
pub mod metaschemas;
pub mod numbers;
pub mod json_text;
pub mod scalar;

use std::collections::HashMap;

use serde_json::Value;

use crate::grammar::Cfg;
use crate::{err, Result};

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

/// The `max_run` of `--whitespace flexible`.
pub const DEFAULT_MAX_RUN: u32 = 16;

/// Options of the schema compile.
#[derive(Clone, Debug, Default)]
pub struct SchemaOptions {
    pub whitespace: Whitespace,
    /// Ignore known keywords that cannot be enforced instead of refusing the
    /// schema; each one ignored is listed in the warnings.
    pub lenient: bool,
    /// Remote schemas that `$ref` may name (URI without fragment → schema),
    /// besides the built-in metaschemas; nothing is ever fetched.
    pub refs: std::sync::Arc<Vec<(String, Value)>>,
}

/// A compiled schema: the grammar and what was ignored (lenient mode).
#[derive(Clone, Debug)]
pub struct SchemaGrammar {
    pub cfg: Cfg,
    pub warnings: Vec<String>,
}

/// Compile a JSON Schema into a grammar.
pub fn to_cfg(schema: &Value, opts: &SchemaOptions) -> Result<SchemaGrammar> {
    to_cfg_prefixed(schema, opts, "")
}

/// [`to_cfg`] with every terminal and nonterminal name prefixed (for
/// embedding into another grammar).
pub fn to_cfg_prefixed(schema: &Value, opts: &SchemaOptions, prefix: &str) -> Result<SchemaGrammar> {
    let layout = layout(schema, opts)?;
    let mut ir = ir::Ir::new(schema, &opts.refs, opts.clone(), disjoint::one_of_disjoint)?;
    let root = ir.schema_loc(schema)?;
    let cfg = gen::Gen::new(&mut ir, &layout, prefix)?.run(&vec![root])?;
    Ok(SchemaGrammar { cfg, warnings: ir.warnings })
}

/// The layout: the options' whitespace, or llguidance's root-level
/// `x-guidance` (`item_separator`, `key_separator`, `whitespace_flexible`).
fn layout(schema: &Value, opts: &SchemaOptions) -> Result<gen::Layout> {
    let mut l = gen::Layout { ws: opts.whitespace, item_sep: None, key_sep: None };
    if let Some(g) = schema.get("x-guidance") {
        let Some(g) = g.as_object() else { return Err(err!(Schema, "JSON Schema: x-guidance at #/x-guidance must be an object")) };
        let sep = |k: &str| -> Result<Option<String>> {
            match g.get(k) {
                None => Ok(None),
                Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
                Some(_) => Err(err!(Schema, "JSON Schema: x-guidance.{k} must be a non-empty string")),
            }
        };
        if g.get("whitespace_flexible").and_then(|b| b.as_bool()) == Some(true) {
            l.ws = Whitespace::Flexible { max_run: DEFAULT_MAX_RUN };
        } else {
            l.item_sep = sep("item_separator")?;
            l.key_sep = sep("key_separator")?;
            if l.item_sep.is_some() || l.key_sep.is_some() {
                l.ws = Whitespace::Compact;
                l.item_sep.get_or_insert_with(|| ",".into());
                l.key_sep.get_or_insert_with(|| ":".into());
            }
        }
    }
    Ok(l)
}

/// The grammar of any JSON value (`object_only`: any JSON object).
pub fn any_json(object_only: bool, opts: &SchemaOptions) -> Result<SchemaGrammar> {
    let v = if object_only { serde_json::json!({"type": "object"}) } else { serde_json::json!({}) };
    to_cfg(&v, opts)
}

/// Serialization under the policy, for tests and tools: compact (`spaced`:
/// Python `json.dumps` separators), strings with canonical minimal escaping,
/// numbers in plain decimal (integral values without a fraction), object
/// keys ordered by `rank` (see [`key_rank`]; unranked keys keep their order
/// after the ranked ones).
pub fn serialize(v: &Value, spaced: bool, rank: &HashMap<String, usize>) -> String {
    let mut out = String::new();
    ser(v, spaced, rank, &mut out);
    out
}

fn ser(v: &Value, spaced: bool, rank: &HashMap<String, usize>, out: &mut String) {
    let (comma, colon) = if spaced { (", ", ": ") } else { (",", ":") };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match numbers::Dec::from_json(n) {
            Some(d) => out.push_str(&d.text()),
            None => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(&json_text::quote(s)),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                ser(x, spaced, rank, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            let mut keys: Vec<(usize, usize, &String)> = o.keys().enumerate().map(|(i, k)| (rank.get(k).copied().unwrap_or(usize::MAX), i, k)).collect();
            keys.sort_unstable();
            out.push('{');
            for (i, (_, _, k)) in keys.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                out.push_str(&json_text::quote(k));
                out.push_str(colon);
                ser(&o[k.as_str()], spaced, rank, out);
            }
            out.push('}');
        }
    }
}

/// Property names in the order the schema declares them (first declaration
/// wins): `properties` keys, `required` entries and the keys dependencies
/// name, depth-first.
pub fn key_rank(schema: &Value) -> HashMap<String, usize> {
    rank_of(schema).into_iter().collect()
}

/// [`key_rank`] in the crate's map (the generator's strict key order).
pub(crate) fn rank_of(schema: &Value) -> crate::hash::FxMap<String, usize> {
    use crate::hash::FxMap as HashMap;
    let mut rank = HashMap::default();
    fn walk(v: &Value, rank: &mut HashMap<String, usize>, depth: usize) {
        if depth > crate::limits::Limits::DEFAULT.max_schema_depth {
            return;
        }
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(p)) = o.get("properties") {
                    for k in p.keys() {
                        let n = rank.len();
                        rank.entry(k.clone()).or_insert(n);
                    }
                }
                if let Some(Value::Array(r)) = o.get("required") {
                    for k in r.iter().filter_map(|k| k.as_str()) {
                        let n = rank.len();
                        rank.entry(k.to_string()).or_insert(n);
                    }
                }
                // Keys named by dependencies (the generator's order: trigger, then its keys).
                for kw in ["dependentRequired", "dependencies", "dependentSchemas"] {
                    if let Some(Value::Object(d)) = o.get(kw) {
                        for (k, v) in d {
                            let n = rank.len();
                            rank.entry(k.clone()).or_insert(n);
                            for k in v.as_array().into_iter().flatten().filter_map(|k| k.as_str()) {
                                let n = rank.len();
                                rank.entry(k.to_string()).or_insert(n);
                            }
                        }
                    }
                }
                for (k, c) in o {
                    if k != "enum" && k != "const" {
                        walk(c, rank, depth + 1);
                    }
                }
                if let Some(c) = o.get("const") {
                    walk_const(c, rank, depth + 1);
                }
                if let Some(Value::Array(e)) = o.get("enum") {
                    for c in e {
                        walk_const(c, rank, depth + 1);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, rank, depth + 1)),
            _ => {}
        }
    }
    fn walk_const(v: &Value, rank: &mut HashMap<String, usize>, depth: usize) {
        if depth > crate::limits::Limits::DEFAULT.max_schema_depth {
            return;
        }
        match v {
            Value::Object(o) => {
                for (k, c) in o {
                    let n = rank.len();
                    rank.entry(k.clone()).or_insert(n);
                    walk_const(c, rank, depth + 1);
                }
            }
            Value::Array(a) => a.iter().for_each(|c| walk_const(c, rank, depth + 1)),
            _ => {}
        }
    }
    walk(schema, &mut rank, 0);
    rank
}

#[cfg(test)]
mod tests;
