//! Regex front end (feature `compiler`): the whole output must match one
//! regex (Python `re.fullmatch` semantics) → a normalized
//! [`Cfg`](crate::grammar::Cfg) with a single [`TerminalPattern::Set`](crate::grammar::TerminalPattern::Set) terminal.

use crate::grammar::Cfg;
use crate::Result;

/// Compile a Python regex into a grammar whose language is the strings it fully matches.
pub fn to_cfg(pattern: &str) -> Result<Cfg> {
    let _ = pattern;
    Err(crate::err!(Regex, "regex constraints are not built yet"))
}
