//! grammask: grammar-constrained decoding for LLMs.
//!
//! Compile a constraint (a JSON Schema, a regex, a Lark grammar) once per
//! grammar × tokenizer into a [`MaskStore`]; then, per generated sequence, a
//! [`Matcher`] yields the mask of allowed tokens and commits the token the
//! model chose.
//!
//! # Key types
//!
//! - [`Constraint`]: what the output must match, as users give it (JSON
//!   Schema, any JSON, a regex, Lark grammar text; also from an OpenAI-style
//!   response format); [`compile`] turns it into a [`MaskStore`] (feature
//!   `compiler`), with [`ConstraintOptions`] ([`Whitespace`], [`LexerMode`]).
//! - [`Vocab`]: a tokenizer's tokens as bytes, with special flags and EOS ids
//!   (from `tokenizer.json`: [`vocab::load_tokenizer_file`],
//!   [`vocab::vocab_from_json`]); [`PreparedVocab`] adds the token trie and
//!   caches that every compile for that tokenizer reuses.
//! - [`MaskStore`]: the compiled constraint; immutable, shared by matchers
//!   through an `Rc`; saved and loaded as a blob ([`MaskStore::to_bytes`],
//!   [`MaskStore::from_bytes`]) by the runtime, which needs no compiler.
//! - [`Matcher`]: one sequence's state: [`Matcher::compute_mask`] (bit `id & 31`
//!   of word `id >> 5` set iff token `id` is allowed), [`Matcher::commit_token`],
//!   [`Matcher::rollback`], [`Matcher::is_accepting`].
//! - [`Error`] with its [`ErrorKind`] (schema, grammar, regex, response
//!   format, limit, blob, token...), and [`Limits`]: every limit in one table.
//!
//! # Usage pattern
//!
//! Compile → mask → commit, with a tiny vocabulary built in code:
//!
//! ```
//! use grammask::{compile, Constraint, ConstraintOptions, Matcher, PreparedVocab, Vocab};
//! use std::rc::Rc;
//!
//! // Token id → bytes (and "special" flag); token 4 is the EOS token.
//! let tokens: [(&[u8], bool); 5] = [(b"{", false), (b"}", false), (b"\"ok\":", false), (b"true", false), (b"</s>", true)];
//! let vocab = Vocab::from_tokens(tokens, &[grammask::TokenId(4)])?;
//! let vocab = Rc::new(PreparedVocab::new(vocab)); // once per tokenizer
//!
//! let schema = serde_json::json!({
//!     "type": "object",
//!     "properties": {"ok": {"type": "boolean"}},
//!     "required": ["ok"],
//!     "additionalProperties": false
//! });
//! let opts = ConstraintOptions { whitespace: grammask::Whitespace::Compact, ..Default::default() };
//! let (store, _warnings) = compile(&vocab, &Constraint::JsonSchema(schema), &opts)?;
//!
//! let mut m = Matcher::new(Rc::new(store));
//! let allowed = |mask: &[u32], id: u32| mask[id as usize >> 5] >> (id & 31) & 1 == 1;
//! for id in [0, 2, 3, 1] {
//!     // `{` `"ok":` `true` `}`: each is the only allowed token at its step.
//!     let mask = m.compute_mask();
//!     assert!(allowed(&mask, id));
//!     assert_eq!((0..5).filter(|&t| allowed(&mask, t)).count(), 1);
//!     m.commit_token(id)?;
//! }
//! assert!(m.is_accepting());
//! assert!(m.is_allowed(4)); // EOS, now that the object is complete
//! # Ok::<(), grammask::Error>(())
//! ```
//!
//! # Layout
//!
//! Pipeline (compile once per grammar × tokenizer, run per generated token;
//! the map with the type each stage hands to the next: docs/architecture.md):
//! - `frontend`: the front ends side by side — Lark, JSON Schema, one regex —
//!   each emitting the same normalized CFG (`grammar::Cfg`); [`constraint`] is
//!   the one compile entry point over all of them (feature `compiler`);
//! - `regex`: the one regex layer below the front ends (Python and ECMA-262
//!   dialects, the shared language operations);
//! - `grammar`: the normalized grammar every front end emits;
//! - `lexer`: terminal automata → the lexer automaton used for token walks;
//! - `parser`: LALR(1) tables, the incremental parser and the indentation layer;
//! - [`vocab`]: tokenizer bytes and the token trie;
//! - [`store`]: the mask store (build, streamline, wire format);
//! - [`matcher`]: the per-sequence state that yields masks and commits tokens;
//! - `reference`: the reference definitions the engines are checked against
//!   (reference lexer, recognizer, schema oracle; feature `compiler`);
//! - `wasm`: the thin JS facade (feature `wasm`).
//!
//! Feature `compiler` carries everything needed to build a store; the runtime
//! (loading a blob, computing masks) needs none of it.
//!
//! Five modules are public but hidden from these docs, and are not a stable
//! API: `grammar`, `frontend`, `lexer`, `parser` and `reference`. The CLI (`src/bin/grammask`), the integration tests, the
//! examples and the fuzz targets reach into the engine through them (parse a
//! Lark file alone, build LALR tables, run the reference lexer and recognizer,
//! check the schema oracle). Everything else a user needs is re-exported here;
//! `hash`, `sort`, `cache`, `regex` and `time` are crate-private.

pub mod error;
pub(crate) mod hash;
#[cfg(feature = "compiler")]
pub(crate) mod sort;
pub(crate) mod cache;
pub mod ids;
pub mod limits;
#[doc(hidden)] // internal: the CLI, tests and examples parse grammars alone
pub mod grammar;
#[cfg(feature = "compiler")]
pub(crate) mod regex;
#[cfg(feature = "compiler")]
#[doc(hidden)] // internal: the CLI and the front-end tests (parse a Lark file alone, schema serialization)
pub mod frontend;
#[cfg(feature = "compiler")]
pub mod constraint;
#[doc(hidden)] // internal: the lexer tests (reference lexer, automata)
pub mod lexer;
#[doc(hidden)] // internal: the CLI and the parser tests (LALR tables, recognizer)
pub mod parser;
pub mod vocab;
pub mod store;
pub mod matcher;
#[cfg(feature = "compiler")]
#[doc(hidden)] // internal: the tests check the engines against these definitions
pub mod reference;
#[cfg(feature = "compiler")]
pub(crate) mod time;
#[cfg(feature = "wasm")]
pub mod wasm;

// The front door: the key types.
#[cfg(feature = "compiler")]
pub use constraint::{compile, Constraint, ConstraintOptions};
pub use error::{Error, ErrorKind, Result};
pub use grammar::LexerMode;
pub use ids::TokenId;
pub use limits::Limits;
pub use matcher::{Matcher, MatcherOptions};
#[cfg(feature = "compiler")]
pub use frontend::schema::Whitespace;
pub use store::MaskStore;
pub use vocab::{PreparedVocab, Vocab};
