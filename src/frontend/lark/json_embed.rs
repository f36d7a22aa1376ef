//! `%json {schema}` in rule bodies (llguidance's syntax): the value must be
//! an instance of the JSON Schema, serialized under the schema policy
//! (docs/structured-output.md). E.g.
//!
//! ```text
//! start: "<tool_call>" %json {"type": "object", "properties": {"name": {"type": "string"}}} "</tool_call>"
//! ```
//!
//! Implementation: a text pre-pass replaces each `%json {...}` by a rule
//! `_json_embed_N` defined as a `%declare`d placeholder terminal; after
//! normalization the schema's grammar (names prefixed `jsonN_`) is merged in
//! and the placeholder is replaced by the schema's start symbol. The
//! embedding grammar keeps its lexer mode: schema terminals that a parser
//! state can shift are disjoint, so masks are exact under the contextual
//! lexer; under the global `longest` mode a string value spelled like a key
//! of the same schema would lex as the key.

use crate::grammar::{Cfg, NonterminalDef, Rule, Symbol, TerminalDef};
use crate::ids::{NonterminalId, TerminalId};
use super::SchemaCompiler;
use crate::{err, Result};

/// The rewritten grammar text and the embedded schemas (JSON text, line).
pub(crate) fn extract(text: &str, file: &str) -> Result<(String, Vec<(String, usize)>)> {
    if !text.contains("%json") {
        return Ok((text.to_string(), Vec::new()));
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut found = Vec::new();
    let mut i = 0;
    let mut last = 0;
    let line_of = |p: usize| text[..p].bytes().filter(|&c| c == b'\n').count() + 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' => {
                i += 1;
                while i < b.len() && b[i] != b'/' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'%' if text[i..].starts_with("%json") && !b.get(i + 5).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') => {
                let start = i;
                let mut j = i + 5;
                while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                    j += 1;
                }
                if b.get(j) != Some(&b'{') {
                    return Err(err!(GrammarSyntax, "{file}:{}: expected a JSON object after %json", line_of(start)));
                }
                // Balanced braces, JSON strings skipped.
                let (mut depth, mut k) = (0i32, j);
                while k < b.len() {
                    match b[k] {
                        b'"' => {
                            k += 1;
                            while k < b.len() && b[k] != b'"' {
                                k += if b[k] == b'\\' { 2 } else { 1 };
                            }
                        }
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                if k >= b.len() {
                    return Err(err!(GrammarSyntax, "{file}:{}: unterminated %json object", line_of(start)));
                }
                out.push_str(&text[last..start]);
                out.push_str(&format!("_json_embed_{}", found.len()));
                found.push((text[j..=k].to_string(), line_of(start)));
                i = k + 1;
                last = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[last..]);
    for n in 0..found.len() {
        out.push_str(&format!("\n%declare _JSON_EMBED_{n}\n_json_embed_{n}: _JSON_EMBED_{n}\n"));
    }
    Ok((out, found))
}

/// Merges the embedded schemas into the normalized grammar.
pub(crate) fn merge(mut cfg: Cfg, found: &[(String, usize)], file: &str, json: &SchemaCompiler) -> Result<Cfg> {
    for (n, (text, line)) in found.iter().enumerate() {
        let schema: serde_json::Value =
            serde_json::from_str(text).map_err(|e| err!(GrammarSyntax, "{file}:{line}: %json: invalid JSON: {e}"))?;
        let g = json(&schema, &format!("json{n}_"))
            .map_err(|e| crate::Error::new(e.kind(), format!("{file}:{line}: %json: {}", e.message())))?;
        let Some(ph) = cfg.terminal_by_name(&format!("_JSON_EMBED_{n}")) else { continue };
        let (t0, n0) = (cfg.terminals.len() as u32, cfg.nonterminals.len() as u32);
        let shift = |s: Symbol| match s {
            Symbol::T(t) => Symbol::T(TerminalId(t.0 + t0)),
            Symbol::N(x) => Symbol::N(NonterminalId(x.0 + n0)),
        };
        cfg.terminals.extend(g.terminals.into_iter().map(|t: TerminalDef| t));
        cfg.nonterminals.extend(g.nonterminals.into_iter().map(|d: NonterminalDef| d));
        let start = NonterminalId(g.start.0 + n0);
        for r in g.rules {
            let rhs = r.rhs.into_iter().map(shift).collect();
            cfg.rules.push(Rule::new(NonterminalId(r.lhs.0 + n0), rhs, r.span));
        }
        for r in cfg.rules.iter_mut() {
            for s in r.rhs.iter_mut() {
                if *s == Symbol::T(ph) {
                    *s = Symbol::N(start);
                }
            }
        }
    }
    Ok(cfg)
}
