//! One compile entry point for every constraint format (feature `compiler`):
//! a Lark grammar, a GBNF or EBNF grammar, a JSON Schema, any JSON object or
//! value, or a regex. Each
//! front end emits a normalized [`Cfg`]; [`compile`] turns it into a
//! [`MaskStore`] for a [`PreparedVocab`], computing lexer positions lazily
//! (on first visit) so that a per-request compile costs milliseconds.
//!
//! # Layers
//!
//! This module is the top of the compile side. The crate's modules form
//! layers; a module uses only modules of lower layers (checked from the
//! source by `tests/suite/layers.rs`, which also refuses import circles between
//! sibling modules):
//!
//! 0. `error`, `limits`, `hash`; 1. `ids`, `cache`, `time`;
//! 2. `grammar`: the normalized grammar ([`Cfg`]) every stage hands on;
//! 3. `regex`: the shared regex layer (dialects, language operations);
//! 4. `frontend`: Lark, GBNF/EBNF, JSON Schema and regex, side by side, each → [`Cfg`];
//! 5. the engine: `vocab`, `parser` (5), `lexer` (6), `store` (7),
//!    `matcher` (8); it never imports a front end or a reference;
//! 9. `reference`: the definitions the engine is checked against (may use
//!    engine pieces);
//! 10. `constraint`: the compile entry over the front ends; 11. `wasm`.

use crate::grammar::Cfg;
use crate::frontend::schema::{SchemaOptions, Whitespace};
use crate::store::MaskStore;
use crate::vocab::PreparedVocab;
use crate::{err, Result};
use std::rc::Rc;

/// A constraint, as users give it.
///
/// # Example
///
/// ```
/// use grammask::Constraint;
/// let rf = serde_json::json!({"type": "regex", "regex": "[0-9]{3}"});
/// let c = Constraint::from_response_format(&rf)?;
/// assert!(matches!(c, Constraint::Regex(ref r) if r == "[0-9]{3}"));
/// # Ok::<(), grammask::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum Constraint {
    /// Lark grammar text (`file` names it in messages; `start` overrides the start rule).
    Lark { grammar: String, file: String, start: Option<String> },
    JsonSchema(serde_json::Value),
    /// Any JSON object.
    JsonObject,
    /// Any JSON value.
    Json,
    /// The whole output matches this Python regex (`re.fullmatch`).
    Regex(String),
    /// GBNF (llama.cpp) or EBNF (xgrammar) text (`file` names it in
    /// messages; `start` overrides the start rule `root`).
    Gbnf { grammar: String, file: String, dialect: crate::frontend::gbnf::Dialect, start: Option<String> },
}

impl Constraint {
    /// The response-format shape used by transformers.js and OpenAI-style
    /// APIs: `{type: "json_schema", json_schema}`, `{type: "json_object"}`,
    /// `{type: "json"}`, `{type: "regex", regex}`, `{type: "lark", grammar}`,
    /// `{type: "gbnf", grammar}`, `{type: "ebnf", grammar}`.
    pub fn from_response_format(v: &serde_json::Value) -> Result<Constraint> {
        let ty = v.get("type").and_then(|t| t.as_str()).ok_or_else(|| {
            err!(ResponseFormat, "responseFormat: expected an object with a string `type` (json_schema, json_object, json, regex, lark, gbnf or ebnf)")
        })?;
        let field = |name: &str| {
            v.get(name).ok_or_else(|| err!(ResponseFormat, "responseFormat: type {ty:?} needs a `{name}` field"))
        };
        let string = |name: &str| -> Result<String> {
            field(name)?.as_str().map(str::to_string).ok_or_else(|| err!(ResponseFormat, "responseFormat.{name} must be a string"))
        };
        Ok(match ty {
            "json_schema" => Constraint::JsonSchema(field("json_schema")?.clone()),
            "json_object" => Constraint::JsonObject,
            "json" => Constraint::Json,
            "regex" => Constraint::Regex(string("regex")?),
            "lark" => Constraint::Lark {
                grammar: string("grammar")?,
                file: "<grammar>".into(),
                start: v.get("start").and_then(|s| s.as_str()).map(str::to_string),
            },
            "gbnf" | "ebnf" => Constraint::Gbnf {
                grammar: string("grammar")?,
                file: "<grammar>".into(),
                dialect: if ty == "gbnf" { crate::frontend::gbnf::Dialect::Gbnf } else { crate::frontend::gbnf::Dialect::Ebnf },
                start: v.get("start").and_then(|s| s.as_str()).map(str::to_string),
            },
            other => {
                return Err(err!(
                    ResponseFormat,
                    "responseFormat: unknown type {other:?} (expected json_schema, json_object, json, regex, lark, gbnf or ebnf)"
                ))
            }
        })
    }
}

/// Options of [`compile`] (and [`to_cfg`]).
#[derive(Clone, Debug, Default)]
pub struct ConstraintOptions {
    /// JSON whitespace policy (schema, json_object, json).
    pub whitespace: Whitespace,
    /// Schemas: ignore known keywords that cannot be enforced (listed in the warnings).
    pub lenient: bool,
    /// Lark grammars: refuse shift/reduce conflicts instead of resolving them as shift
    /// (Lark's `strict=True`).
    pub strict: bool,
    /// Lark grammars: the lexer mode, overriding the grammar's `%lexer`.
    pub lexer: Option<crate::grammar::LexerMode>,
    /// Schemas: remote schemas that `$ref` may name (URI → schema), besides
    /// the built-in metaschemas (nothing is fetched).
    pub refs: std::sync::Arc<Vec<(String, serde_json::Value)>>,
}

/// A constraint as a grammar, with the warnings of its front end.
pub fn to_cfg(c: &Constraint, o: &ConstraintOptions) -> Result<(Cfg, Vec<String>)> {
    let so = SchemaOptions { whitespace: o.whitespace, lenient: o.lenient, refs: o.refs.clone() };
    match c {
        Constraint::Lark { grammar, file, start } => {
            let mut cfg = parse_lark(grammar, file, start.as_deref(), &|_| None)?;
            if o.strict {
                cfg.conflicts = cfg.conflicts.strict();
            }
            if let Some(m) = o.lexer {
                crate::frontend::lark::set_lexer(&mut cfg, m)?;
            }
            // The conflicts Lark's rules settle are reported as warnings.
            let warnings = crate::parser::lalr::build(&cfg)?.warnings.into_iter().map(|w| w.message).collect();
            Ok((cfg, warnings))
        }
        Constraint::JsonSchema(s) => crate::frontend::schema::to_cfg(s, &so).map(|g| (g.cfg, g.warnings)),
        Constraint::JsonObject => crate::frontend::schema::any_json(true, &so).map(|g| (g.cfg, g.warnings)),
        Constraint::Json => crate::frontend::schema::any_json(false, &so).map(|g| (g.cfg, g.warnings)),
        Constraint::Regex(r) => Ok((crate::frontend::regex::to_cfg(r)?, Vec::new())),
        Constraint::Gbnf { grammar, file, dialect, start } => {
            if o.strict || o.lexer.is_some() {
                return Err(err!(ResponseFormat, "strict and lexer apply to Lark grammars only"));
            }
            Ok((gbnf_cfg(grammar, file, *dialect, start.as_deref())?, Vec::new()))
        }
    }
}

/// A GBNF / EBNF grammar → [`Cfg`] ([`crate::frontend::gbnf::to_cfg`]).
/// A grammar that is not LALR(1) after lexer extraction runs on the general
/// parser ([`ConflictPolicy::General`](crate::grammar::ConflictPolicy::General)).
pub fn gbnf_cfg(text: &str, file: &str, dialect: crate::frontend::gbnf::Dialect, start: Option<&str>) -> Result<Cfg> {
    let mut cfg = crate::frontend::gbnf::to_cfg(text, file, dialect, start)?;
    if let Err(e) = crate::parser::lalr::build(&cfg) {
        if e.kind() != crate::ErrorKind::Conflict {
            return Err(e);
        }
        cfg.conflicts = crate::grammar::ConflictPolicy::General;
    }
    Ok(cfg)
}

/// The grammar formats a file may be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrammarFormat {
    Lark,
    Gbnf,
    Ebnf,
}

impl GrammarFormat {
    pub fn from_name(s: &str) -> Option<GrammarFormat> {
        match s {
            "lark" => Some(GrammarFormat::Lark),
            "gbnf" => Some(GrammarFormat::Gbnf),
            "ebnf" => Some(GrammarFormat::Ebnf),
            _ => None,
        }
    }
    /// By file extension: `.gbnf`, `.ebnf`, else Lark.
    pub fn of_path(path: &std::path::Path) -> GrammarFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some("gbnf") => GrammarFormat::Gbnf,
            Some("ebnf") => GrammarFormat::Ebnf,
            _ => GrammarFormat::Lark,
        }
    }
}

/// A grammar file in the given format (default: by its extension, see
/// [`GrammarFormat::of_path`]) → [`Cfg`].
pub fn load_grammar_file(path: &std::path::Path, start: Option<&str>, format: Option<GrammarFormat>) -> Result<Cfg> {
    let dialect = match format.unwrap_or_else(|| GrammarFormat::of_path(path)) {
        GrammarFormat::Lark => return load_lark_file(path, start),
        GrammarFormat::Gbnf => crate::frontend::gbnf::Dialect::Gbnf,
        GrammarFormat::Ebnf => crate::frontend::gbnf::Dialect::Ebnf,
    };
    let bytes = std::fs::read(path).map_err(|e| err!(Io, "{}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| err!(GrammarSyntax, "{}: not UTF-8 text", path.display()))?;
    gbnf_cfg(&text, &path.display().to_string(), dialect, start)
}

/// The schema front end as the Lark front end's `%json` compiler
/// ([`SchemaCompiler`](crate::frontend::lark::SchemaCompiler)): default
/// schema options, names prefixed.
pub fn embedded_schema(schema: &serde_json::Value, prefix: &str) -> Result<Cfg> {
    crate::frontend::schema::to_cfg_prefixed(schema, &SchemaOptions::default(), prefix).map(|g| g.cfg)
}

/// A Lark grammar → [`Cfg`] ([`crate::frontend::lark::parse_grammar`]), with
/// `%json` compiled by the schema front end ([`embedded_schema`]).
pub fn parse_lark(text: &str, file_name: &str, start: Option<&str>, resolve: &dyn Fn(&str) -> Option<String>) -> Result<Cfg> {
    crate::frontend::lark::parse_grammar(text, file_name, start, resolve, &embedded_schema).map(lark_earley)
}

/// A `%parser earley` Lark grammar (the front end gives it
/// [`ConflictPolicy::Strict`](crate::grammar::ConflictPolicy::Strict); other
/// Lark grammars keep Lark's conflict rules): its LALR(1) tables when they
/// are conflict-free, else the general parser.
fn lark_earley(mut cfg: Cfg) -> Cfg {
    if cfg.conflicts == crate::grammar::ConflictPolicy::Strict && crate::parser::lalr::build(&cfg).is_err_and(|e| e.kind() == crate::ErrorKind::Conflict) {
        cfg.conflicts = crate::grammar::ConflictPolicy::General;
    }
    cfg
}

/// A Lark grammar file → [`Cfg`] ([`crate::frontend::lark::load_grammar_file`]),
/// with `%json` compiled by the schema front end ([`embedded_schema`]).
pub fn load_lark_file(path: &std::path::Path, start: Option<&str>) -> Result<Cfg> {
    crate::frontend::lark::load_grammar_file(path, start, &embedded_schema).map(lark_earley)
}

/// Compile a constraint for a prepared vocabulary. The store computes its
/// lexer positions on first visit; its masks equal those of a fully
/// precomputed, unstreamlined store of the same grammar.
pub fn compile(pv: &Rc<PreparedVocab>, c: &Constraint, o: &ConstraintOptions) -> Result<(MaskStore, Vec<String>)> {
    let (cfg, warnings) = to_cfg(c, o)?;
    let (store, _) = crate::store::build::compile_lazy(&cfg, pv.clone())?;
    Ok((store, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use serde_json::json;

    fn kind_of(rf: serde_json::Value) -> ErrorKind {
        let c = match Constraint::from_response_format(&rf) {
            Ok(c) => c,
            Err(e) => return e.kind(),
        };
        to_cfg(&c, &ConstraintOptions::default()).expect_err(&rf.to_string()).kind()
    }

    /// The kinds tell a schema, a grammar, a regex and a response-format error apart.
    #[test]
    fn error_kinds_name_the_front_end() {
        let cases = [
            (json!({"type": "json_schema", "json_schema": {"type": "strnig"}}), ErrorKind::Schema),
            (json!({"type": "json_schema", "json_schema": {"not": {}}}), ErrorKind::Schema),
            (json!({"type": "json_schema", "json_schema": {"$ref": "#/nowhere"}}), ErrorKind::Schema),
            (json!({"type": "json_schema", "json_schema": {"type": "string", "pattern": "a("}}), ErrorKind::Regex),
            (json!({"type": "lark", "grammar": "start: undefined_rule"}), ErrorKind::Grammar),
            (json!({"type": "lark", "grammar": "start: \"a\" ("}), ErrorKind::GrammarSyntax),
            (json!({"type": "regex", "regex": "a("}), ErrorKind::Regex),
            (json!({"type": "regex", "regex": "[^\\s\\S]"}), ErrorKind::Regex),
            (json!({"type": "yaml"}), ErrorKind::ResponseFormat),
            (json!("json"), ErrorKind::ResponseFormat),
            (json!({"type": "regex"}), ErrorKind::ResponseFormat),
            (json!({"type": "lark", "grammar": 5}), ErrorKind::ResponseFormat),
        ];
        for (rf, want) in cases {
            assert_eq!(kind_of(rf.clone()), want, "{rf}");
        }
    }
}
