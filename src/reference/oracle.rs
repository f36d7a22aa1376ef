//! A plain whole-text recognizer for the grammars of the schema and regex
//! front ends, written from the definitions: `LexerMode::LongestAll` (at each
//! lexeme start, the longest match over all terminals, where a `Set`
//! terminal matches its longest prefix in the set and every terminal tied at
//! that length is a candidate) and a deterministic LALR(1) parser that keeps
//! the candidates it can use. Independent of the lexer automaton, so it
//! serves as a cross-check of the engine (tests, `grammask check --oracle`).

use crate::grammar::{Cfg, TerminalPattern};
use crate::ids::TerminalId;
use crate::parser::{LrParser, LrTables};
use crate::regex::lang::Dfa;
use crate::{err, Result};

enum Matcher {
    Lit(Vec<u8>),
    Set { all: Vec<Dfa>, none: Vec<Dfa> },
}

impl Matcher {
    /// The longest prefix of `text` in the terminal's language (0: none).
    fn longest(&self, text: &[u8]) -> usize {
        match self {
            Matcher::Lit(l) => {
                if text.starts_with(l) {
                    l.len()
                } else {
                    0
                }
            }
            Matcher::Set { all, none } => {
                let mut best = 0;
                let mut runs: Vec<_> = all.iter().map(|d| d.runner()).collect();
                let mut nruns: Vec<_> = none.iter().map(|d| Some(d.runner())).collect();
                for (i, &b) in text.iter().enumerate() {
                    let mut alive = true;
                    for r in runs.iter_mut() {
                        if !r.step(b) {
                            alive = false;
                        }
                    }
                    if !alive {
                        break;
                    }
                    for r in nruns.iter_mut() {
                        if let Some(x) = r {
                            if !x.step(b) {
                                *r = None;
                            }
                        }
                    }
                    if runs.iter().all(|r| r.accepting()) && nruns.iter().all(|r| r.as_ref().is_none_or(|x| !x.accepting())) {
                        best = i + 1;
                    }
                }
                best
            }
        }
    }
}

/// The recognizer.
pub struct Oracle {
    tables: LrTables,
    terms: Vec<Option<Matcher>>,
}

impl Oracle {
    pub fn new(cfg: &Cfg) -> Result<Oracle> {
        let tables = crate::parser::lalr::build_tables(cfg)?;
        let mut terms = Vec::new();
        for t in &cfg.terminals {
            terms.push(match &t.pattern {
                TerminalPattern::Literal { text, case_insensitive: false, .. } => Some(Matcher::Lit(text.as_bytes().to_vec())),
                TerminalPattern::Set { all, none } => {
                    let c = |r: &String| Dfa::new(r).map_err(|e| err!(Regex, "terminal {}: {e}", t.name));
                    Some(Matcher::Set { all: all.iter().map(c).collect::<Result<_>>()?, none: none.iter().map(c).collect::<Result<_>>()? })
                }
                TerminalPattern::Regex { lookaheads, .. } if !lookaheads.is_empty() => {
                    return Err(err!(Regex, "terminal {}: the oracle has no lookahead `(?!...)`", t.name));
                }
                TerminalPattern::Regex { regex, .. } => {
                    // Only used for regexes whose leftmost-first match is the longest one.
                    Some(Matcher::Set { all: vec![Dfa::new(regex).map_err(|e| err!(Regex, "{e}"))?], none: vec![] })
                }
                _ => None,
            });
        }
        Ok(Oracle { tables, terms })
    }

    /// Whether `text` is in the language; on refusal, the byte offset.
    pub fn check(&self, text: &[u8]) -> std::result::Result<(), usize> {
        let mut parsers = vec![LrParser::new(&self.tables)];
        let mut pos = 0;
        while pos < text.len() {
            let rest = &text[pos..];
            let lens: Vec<usize> = self.terms.iter().map(|m| m.as_ref().map_or(0, |m| m.longest(rest))).collect();
            let best = lens.iter().copied().max().unwrap_or(0);
            if best == 0 {
                return Err(pos);
            }
            let mut next = Vec::new();
            for p in &parsers {
                for (t, &l) in lens.iter().enumerate() {
                    if l == best {
                        let mut q = p.clone();
                        if q.consume(&self.tables, &[TerminalId::new(t)]).is_ok() {
                            next.push(q);
                        }
                    }
                }
            }
            if next.is_empty() {
                return Err(pos);
            }
            if next.len() > 64 {
                next.truncate(64);
            }
            parsers = next;
            pos += best;
        }
        if parsers.iter().any(|p| p.accepts_eof(&self.tables)) {
            Ok(())
        } else {
            Err(text.len())
        }
    }
}
