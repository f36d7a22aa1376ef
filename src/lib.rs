//! grammask: grammar-constrained decoding for LLMs.
//!
//! Pipeline (compile once per grammar × tokenizer, run per generated token):
//! - front ends, each emitting the same normalized CFG: [`grammar`] (Lark),
//!   `schema` (JSON Schema), `regex` (one regex); `constraint` is the one
//!   compile entry point over all of them (feature `compiler`);
//! - [`lexer`]: terminal automata → the lexer automaton used for token walks;
//! - [`parser`]: LALR(1) tables, the incremental parser and the indentation layer;
//! - [`vocab`]: tokenizer bytes and the token trie;
//! - [`store`]: the mask store (build, streamline, wire format);
//! - [`matcher`]: the per-sequence state that yields masks and commits tokens;
//! - `wasm`: the thin JS facade (feature `wasm`).
//!
//! Feature `compiler` carries everything needed to build a store; the runtime
//! (loading a blob, computing masks) needs none of it.

pub mod error;
pub mod hash;
pub(crate) mod cache;
pub mod ids;
pub mod grammar;
#[cfg(feature = "compiler")]
pub mod regex;
#[cfg(feature = "compiler")]
pub mod frontend;
#[cfg(feature = "compiler")]
pub mod constraint;
pub mod lexer;
pub mod parser;
pub mod vocab;
pub mod store;
pub mod matcher;
#[cfg(feature = "compiler")]
pub mod reference;
pub mod time;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use error::{Error, ErrorKind, Result};
