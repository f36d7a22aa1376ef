//! GBNF and EBNF front end: llama.cpp's GBNF, or xgrammar's EBNF (a GBNF
//! superset), → normalized [`Cfg`]. See docs/gbnf.md.
//!
//! 1. `syntax` parses the text into rules of expressions (llama.cpp's
//!    grammar of grammars; xgrammar's with `ebnf`); constructs grammask
//!    cannot enforce (token references `<[id]>` `<|name|>` `!<...>`,
//!    xgrammar's lookahead assertions, macros and rule options) are refused
//!    by name, never dropped;
//! 2. `extract` chooses the terminals (lexer extraction): regular parts
//!    become terminals over the shared regex layer, split finer where global
//!    maximal munch could not find the grammar's own boundaries, so the
//!    lexed language is exactly the character-level language.
//!
//! The grammar is character-level: no whitespace is skipped. Its start rule
//! is `root` (or the one named). Whether the result is LALR(1) is checked
//! by the caller ([`crate::constraint`]).

mod extract;
pub(crate) mod syntax;

use crate::grammar::Cfg;
use crate::{err, Result};

/// Which dialect the text is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// llama.cpp's GBNF.
    Gbnf,
    /// xgrammar's EBNF.
    Ebnf,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Gbnf => "gbnf",
            Dialect::Ebnf => "ebnf",
        }
    }
}

/// Compiles GBNF / EBNF text (`file` names it in messages; `start` is the
/// start rule, `root` by default).
pub fn to_cfg(text: &str, file: &str, dialect: Dialect, start: Option<&str>) -> Result<Cfg> {
    let g = syntax::parse(text, file, dialect == Dialect::Ebnf)?;
    let root = start.unwrap_or("root");
    let Some(r) = g.rules.iter().position(|r| r.name == root) else {
        return Err(err!(Grammar, "{file}: the grammar has no `{root}` rule (its start rule)"));
    };
    extract::extract(&g, r)
}

#[cfg(test)]
mod tests;
