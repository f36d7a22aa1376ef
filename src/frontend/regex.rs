//! Regex front end (feature `compiler`): the whole output must match one
//! regex (Python `re.fullmatch` semantics) → a normalized
//! [`Cfg`](crate::grammar::Cfg) with a single [`TerminalPattern::Set`](crate::grammar::TerminalPattern::Set) terminal
//! (and an empty alternative when the regex matches the empty string).
//!
//! The pattern is translated by the regex layer's Python dialect
//! (`crate::regex`, shared with the Lark front end)
//! (`\Z`, octal/hex escapes, verbose mode, inline flags `i m s x`, named
//! groups, …). Anchors: a leading `^`/`\A` and a trailing `$`/`\Z` are
//! no-ops under fullmatch; anchors elsewhere are resolved when they can only
//! match at the ends (`a|^b`). Lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`,
//! the text being the subject), `\b`/`\B` and anchors anywhere are
//! compiled exactly (`regex::look`). Unsupported, with an error naming the
//! construct: backreferences (`\1`, `(?P=name)`), atomic groups and
//! possessive quantifiers, conditional groups, the `a`/`L` flags,
//! `\N{...}`, and the multi-line `^`/`$` (flag `m`). Semantics of `\d`, `\w`, `\s` are Unicode,
//! as in Python 3 `str` patterns (CPython 3.11's tables, `regex/python/classes.rs`).

use crate::grammar::{Cfg, LexerMode, NonterminalDef, Rule, Span, Symbol, TerminalDef, TerminalPattern};
use crate::ids::{NonterminalId, TerminalId};
use crate::regex::{lang as rx, python as pyregex};
use crate::{err, Result};

/// Longest pattern accepted (characters).
pub const MAX_PATTERN: usize = crate::limits::Limits::DEFAULT.max_regex_constraint_chars;

/// The regex-syntax text of the strings a Python regex fully matches, and
/// whether the empty string is one of them.
pub fn fullmatch_regex(pattern: &str) -> Result<(String, bool)> {
    if pattern.len() > MAX_PATTERN {
        return Err(err!(Limit, "regex constraint: pattern longer than {MAX_PATTERN} characters"));
    }
    let t = pyregex::translate_whole(pattern).map_err(|e| err!(Regex, "regex constraint {pattern:?}: {e}"))?;
    if !t.unsupported.is_empty() {
        return Err(err!(Regex, "regex constraint {pattern:?}: unsupported: {}", t.unsupported.join(", ")));
    }
    let hir = rx::parse_translated(pattern, &t.regex).map_err(|e| err!(Regex, "regex constraint {pattern:?}: {e}"))?;
    let full = rx::fullmatch_language(&hir).map_err(|e| err!(Regex, "regex constraint {pattern:?}: {e}"))?;
    let re = full.to_string();
    let empty = rx::matches_empty(&re).map_err(|e| err!(Limit, "regex constraint {pattern:?}: {e}"))?;
    Ok((re, empty))
}

/// Compile a Python regex into a grammar whose language is the strings it fully matches.
pub fn to_cfg(pattern: &str) -> Result<Cfg> {
    let (re, empty) = fullmatch_regex(pattern)?;
    let nonempty = rx::set_nonempty(std::slice::from_ref(&re), &[]).map_err(|e| err!(Limit, "regex constraint {pattern:?}: {e}"))?;
    if !nonempty && !empty {
        return Err(err!(Regex, "regex constraint {pattern:?} matches no string"));
    }
    let start = NonterminalId::new(0);
    let mut rules = Vec::new();
    let mut terminals = Vec::new();
    if nonempty {
        terminals.push(TerminalDef::new("REGEX", TerminalPattern::Set { all: vec![re], none: vec![] }));
        rules.push(Rule::new(start, vec![Symbol::T(TerminalId::new(0))], Span::default()));
    }
    if empty {
        rules.push(Rule::new(start, vec![], Span::default()));
    }
    Ok(Cfg {
        terminals,
        nonterminals: vec![NonterminalDef { name: "start".into(), span: Span::default() }],
        rules,
        start,
        indent: None,
        lexer: LexerMode::LongestAll,
        conflicts: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::oracle::Oracle;

    fn accepts(p: &str, s: &str) -> bool {
        Oracle::new(&to_cfg(p).unwrap()).unwrap().check(s.as_bytes()).is_ok()
    }

    #[test]
    fn fullmatch() {
        assert!(accepts(r"\d{3}-\d{4}", "555-1234"));
        assert!(!accepts(r"\d{3}-\d{4}", "555-12345"));
        assert!(accepts(r"^(yes|no)$", "no"));
        assert!(accepts(r"a*", ""));
        assert!(accepts(r"(?i)abc", "ABC"));
        assert!(accepts(r"^a|b$", "b"));
        assert!(to_cfg(r"x^a").is_err(), "matches nothing");
        assert!(accepts(r"(?x) a b  # comment", "ab"));
    }

    #[test]
    fn lookaround() {
        // The subject is the whole text; Lark's string idiom is not applied
        // (under fullmatch `".*?(?<!\\)"` matches `"a"b"`).
        assert!(accepts(r#"".*?(?<!\\)""#, r#""a"b""#) && !accepts(r#"".*?(?<!\\)""#, r#""a\""#));
        assert!(accepts(r"(?!ab)\w+", "ba") && !accepts(r"(?!ab)\w+", "abc"));
        assert!(accepts(r"a(?=b)\w", "ab") && !accepts(r"a(?=b)\w", "ac"));
        assert!(accepts(r"\w+\b", "é1") && accepts(r"x\B\w", "xy") && accepts(r"x\b\W", "x-"));
        assert!(to_cfg(r"x\B\W").is_err(), "matches nothing");
        assert!(to_cfg(r"x\b\w").is_err(), "matches nothing");
        assert!(accepts(r"\d+(?<!0)", "11") && !accepts(r"\d+(?<!0)", "10"));
        assert!(to_cfg("(?=a)b").is_err(), "matches nothing");
    }

    #[test]
    fn unsupported() {
        for p in [r"(a)\1", r"(?<=a+)b", r"(?<=(?=a)a)b", "(?P<x>a)(?P=x)", "[", "a{2"] {
            let r = to_cfg(p);
            if p == "a{2" {
                // Python: a literal "{2".
                assert!(r.is_ok(), "{p}");
                continue;
            }
            assert!(r.is_err(), "{p}");
        }
        assert!(to_cfg("[^\\s\\S]").is_err());
    }
}
