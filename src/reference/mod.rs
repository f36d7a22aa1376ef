//! The reference definitions (feature `compiler`): plain, slow programs
//! that *define* what the engines compute, written from the definitions
//! and kept apart from the engines they check.
//!
//! - [`lexer`] ([`RefLexer`](lexer::RefLexer)): the lexing semantics of
//!   every [`LexerMode`](crate::grammar::LexerMode), one competing terminal
//!   table at a time. Checks the lexer automaton ([`crate::lexer::Lexer`]):
//!   its lexings and completions equal the reference's (tests/suite/lexer.rs).
//! - [`recognizer`] ([`Recognizer`](recognizer::Recognizer)): whole-text
//!   recognition, "the grammar's language": reference lexer + the
//!   incremental parser with the off-side rule, lexing and parsing
//!   interleaved as in Lark. Checks the masks: every mask store and
//!   [`Matcher`](crate::matcher::Matcher) must agree with it (tests, corpus,
//!   `grammask parse`).
//! - [`earley`] ([`RefEarley`](earley::RefEarley)): a textbook Earley
//!   recognizer; the recognizer's parser for grammars that are not LALR(1)
//!   (checks the general parser, [`crate::parser::earley`]).
//! - [`oracle`] ([`Oracle`](oracle::Oracle)): an independent recognizer for
//!   the grammars of the schema and regex front ends (`LongestAll`, `Set`
//!   terminals as DFAs, no lexer automaton). Checks the schema and regex
//!   front ends and the engine end to end (tests, `grammask check --oracle`).
//!
//! The references may use engine pieces that define no semantics of their
//! own (terminal tables, the LR parse tables and parser, the order in which
//! terminals compete: `lexer::order`); the engine never imports them.

pub mod earley;
pub mod lexer;
pub mod oracle;
pub mod recognizer;
