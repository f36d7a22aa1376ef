//! The front ends (feature `compiler`), side by side: each reads one kind
//! of constraint and emits the same normalized grammar
//! ([`Cfg`](crate::grammar::Cfg)) over the regex layer (`crate::regex`).
//! - [`gbnf`]: a GBNF (llama.cpp) or EBNF (xgrammar) grammar;
//! - [`lark`]: a Lark grammar (`%json` embeds a JSON Schema through the
//!   schema compiler its caller passes in, as `%import` gets its resolver);
//! - [`schema`]: a JSON Schema (also `json` / `json_object` output);
//! - [`regex`]: one regex the whole output must match.
//!
//! Front ends import the grammar types and the regex layer, never each
//! other, the engine (lexer, parser, store, matcher) or the reference
//! definitions (except in their tests). [`crate::constraint`] is the one
//! compile entry over all of them.

pub mod gbnf;
pub mod lark;
pub mod regex;
pub mod schema;
