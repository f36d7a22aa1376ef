//! The integration tests, one binary (`cargo test --profile ci --test suite`),
//! one module per area; run one area with a filter, e.g.
//! `cargo test --profile ci --test suite experiments::`.
//!
//! Shared helpers: [`common`] (grammar cases, synthetic vocabularies, replay
//! with the mask checked against `commit_token`) and [`schema_common`] (a real
//! tokenizer, JSON Schema compile and replay).

mod common;
mod schema_common;

mod blob;
mod cases;
mod earley;
mod cli;
mod corpus;
mod experiments;
mod frontend;
mod gbnf;
mod key_order;
mod keywords;
mod lalr;
mod lark_adversarial;
mod lark_order;
mod layers;
mod lengths;
mod lazy;
mod lexer;
mod lookaround;
mod oracle;
mod schema_generate;
mod schema_suite;
mod special;
mod vocab;
mod wgsl;
mod skips;
