//! The regex layer (feature `compiler`): what every front end needs to know
//! about regexes, below all of them.
//!
//! Each front end reads patterns in its own dialect and hands the rest of
//! the compiler regex-syntax text (in a [`TerminalPattern`] of the
//! [`Cfg`](crate::grammar::Cfg)). The dialects and the operations on the
//! resulting languages live here, once, rather than inside the front end
//! that needed them first:
//! - `python`: Python `re` → regex-syntax (Lark terminals, the regex
//!   constraint), with CPython's Unicode classes and `sre_parse`'s width
//!   rules (Lark's terminal order); one-character negative lookaheads come
//!   out as typed [`Lookahead`](crate::grammar::Lookahead)s, never as text;
//! - [`ecma`]: ECMA-262 → regex-syntax (JSON Schema `pattern`), lookaround
//!   and `\b`/`\B` as lookaround groups;
//! - [`look`]: lookaround compiled exactly where the subject is the whole
//!   text (schema patterns, the regex constraint; `python::translate_whole`),
//!   by derivatives of an extended regex (intersection, complement) into
//!   a plain HIR;
//! - [`lang`]: language operations on regex-syntax text and HIR, shared by
//!   the front ends and the schema oracle: anchors resolved for search or
//!   full-match semantics, full-match DFAs, emptiness of intersections and
//!   differences (the `Set` terminals).
//!
//! Why a layer: the regex front end is Python syntax with full-match
//! semantics, the schema front end is ECMA syntax with search semantics,
//! and `%json` in a Lark grammar puts both in one grammar. Kept here, the
//! front ends share one implementation of each and never import each
//! other. The layer imports only the normalized grammar's types
//! ([`crate::grammar`]); the lexer compiles terminal tables itself (it
//! needs match kinds and lookahead guards this layer knows nothing of).
//!
//! [`TerminalPattern`]: crate::grammar::TerminalPattern

pub mod ecma;
pub mod lang;
pub mod look;
pub(crate) mod python;
