//! Whole-text recognition: the definition of "the grammar's language" that the
//! masks must agree with (feature `compiler`).
//!
//! Text → reference lexer ([`RefLexer`], in the
//! grammar's [`LexerMode`](crate::grammar::LexerMode)) → lexer-level symbols
//! (a terminal per non-ignored lexeme, plus indentation events for the bytes
//! of `%indent` newline lexemes) → [`IncParser`] (LALR(1) + off-side rule) →
//! end of input.
//!
//! Lexing and parsing interleave, as in Lark: under contextual lexing the
//! competing terminals are those of the parser's current state. Under
//! LongestAll a lexeme may be several terminals: the recognizer follows
//! every parser that accepts one of them (parsers in the same state merge),
//! and the text is accepted if one of them reaches the end.

use super::earley::{RefEarley, RefEarleyParse};
use super::lexer::RefLexer;
use crate::error::Result;
use crate::grammar::Cfg;
use crate::grammar::LexerMode;
use crate::parser::alphabet::Sym;
use crate::parser::incremental::{IncParser, IncTables};
use crate::parser::indent::IndentRules;
use crate::ids::TerminalId;
use serde::Serialize;
use std::collections::BTreeMap;

/// Why a text is rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rejection {
    /// Byte offset of the error.
    pub offset: usize,
    /// 1-based line and column (column in characters).
    pub line: usize,
    pub col: usize,
    pub message: String,
    /// Terminals the parser would have accepted there.
    pub expected: Vec<String>,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)?;
        if !self.expected.is_empty() {
            let shown: Vec<&str> = self.expected.iter().take(12).map(|s| s.as_str()).collect();
            write!(f, "; expected one of: {}", shown.join(" "))?;
            if self.expected.len() > 12 {
                write!(f, " … ({} more)", self.expected.len() - 12)?;
            }
        }
        Ok(())
    }
}

/// A compiled recognizer for one grammar.
pub struct Recognizer {
    cfg: Cfg,
    lexer: RefLexer,
    grammar: IncTables,
    /// Contextual lexing: per mode, which terminals compete.
    modes: Vec<Vec<bool>>,
    /// A grammar that is not LALR(1): the textbook Earley recognizer.
    general: Option<RefEarley>,
}

/// A parse in progress: the LR parser, or the reference Earley recognizer.
#[derive(Clone)]
enum P {
    Lr(IncParser),
    Ey(RefEarleyParse),
}

impl Recognizer {
    pub fn new(cfg: Cfg) -> Result<Self> {
        let lexer = RefLexer::new(&cfg)?;
        let tables = crate::parser::lalr::build_tables(&cfg)?;
        if cfg.lexer == LexerMode::Contextual && cfg.indent.is_some() {
            return Err(crate::err!(Grammar, "%indent needs a global lexer (add `%lexer longest` or `%lexer basic`)"));
        }
        let indent = cfg.indent.as_ref().map(|c| IndentRules::from_config(c, cfg.terminals.len()));
        let mut grammar = IncTables::new(tables, indent, cfg.terminals.len() as u32);
        let mut modes = Vec::new();
        if cfg.lexer == LexerMode::Contextual {
            let (m, state_mode) = crate::lexer::contextual_modes(&cfg, &grammar.tables);
            modes = m.into_iter().map(|set| {
                let mut flags = vec![false; cfg.terminals.len()];
                set.iter().for_each(|t| flags[t.index()] = true);
                flags
            }).collect();
            let n = modes.len() as u32;
            grammar = grammar.with_modes(state_mode, n);
        }
        let general = (cfg.conflicts == crate::grammar::ConflictPolicy::General).then(|| RefEarley::new(&cfg));
        if general.is_some() && (cfg.indent.is_some() || cfg.lexer == LexerMode::Contextual) {
            return Err(crate::err!(Grammar, "the general parser needs a global lexer and no %indent"));
        }
        Ok(Recognizer { cfg, lexer, grammar, modes, general })
    }

    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    pub fn grammar(&self) -> &IncTables {
        &self.grammar
    }

    /// With `%indent` (and a grammar that accepts a leading newline), the text
    /// is read as if preceded by a newline, so that the first line's
    /// indentation is checked like every other line's (CPython rejects an
    /// indented first statement). The Matcher starts the same way.
    fn virtual_newline(&self) -> bool {
        let Some(ind) = &self.grammar.indent else { return false };
        let lexes = self.lexer.lexeme_at(b"\n", 0).is_some_and(|l| l.terminal.0 == ind.newline && l.end == 1);
        lexes && IncParser::new(&self.grammar).accepts(&self.grammar, &[ind.newline, self.grammar.events.nl()])
    }

    pub fn check(&self, text: &[u8]) -> std::result::Result<(), Rejection> {
        if self.virtual_newline() {
            let mut t = Vec::with_capacity(text.len() + 1);
            t.push(b'\n');
            t.extend_from_slice(text);
            return self.check_raw(&t).map_err(|mut r| {
                r.offset = r.offset.saturating_sub(1);
                (r.line, r.col) = line_col(text, r.offset);
                r
            });
        }
        self.check_raw(text)
    }

    fn check_raw(&self, text: &[u8]) -> std::result::Result<(), Rejection> {
        let g = &self.grammar;
        let nl = g.indent.as_ref().map(|i| i.newline);
        // Parsers waiting at each lexeme start, in text order.
        let mut at: BTreeMap<usize, Vec<P>> = BTreeMap::new();
        at.insert(0, vec![self.new_parse()]);
        // The failure furthest into the text (the first one found there).
        let mut err: Option<Rejection> = None;
        let fail = |r: Rejection, err: &mut Option<Rejection>| {
            if err.as_ref().is_none_or(|e| r.offset > e.offset) {
                *err = Some(r);
            }
        };
        let mut syms: Vec<Sym> = Vec::new();
        while let Some((pos, parsers)) = at.pop_first() {
            for p in parsers {
                if pos == text.len() {
                    if self.accepts_eof(&p) {
                        return Ok(());
                    }
                    fail(self.rejection(text, pos, "unexpected end of input".into(), &p), &mut err);
                    continue;
                }
                let mode = match &p {
                    P::Lr(p) => self.modes.get(g.state_mode.get(p.lr().top_state().index()).copied().unwrap_or(0) as usize),
                    P::Ey(_) => None,
                };
                let competes = mode.map(|m| move |t: TerminalId| m[t.index()]);
                let (n, ts) = match &competes {
                    Some(f) => self.lexer.lexemes_at(text, pos, Some(f)),
                    None => self.lexer.lexemes_at(text, pos, None),
                };
                if n == 0 {
                    // Under contextual lexing, name a terminal of another context.
                    let other = if competes.is_some() { self.lexer.lexemes_at(text, pos, None).1.first().copied() } else { None };
                    let msg = match other.filter(|t| !self.cfg.terminals[t.index()].ignored) {
                        Some(t) => format!("unexpected {} (not valid here)", self.cfg.terminals[t.index()].display_name()),
                        None => {
                            let ch = String::from_utf8_lossy(&text[pos..(pos + 4).min(text.len())]).chars().next().unwrap_or('?');
                            format!("no terminal matches at {ch:?}")
                        }
                    };
                    fail(self.rejection(text, pos, msg, &p), &mut err);
                    continue;
                }
                for t in ts {
                    let mut q = p.clone();
                    if !self.cfg.terminals[t.index()].ignored {
                        syms.clear();
                        syms.push(t.0);
                        if Some(t.0) == nl {
                            syms.extend(text[pos..pos + n].iter().filter_map(|&b| g.events.for_byte(b)));
                        }
                        if !self.consume(&mut q, &syms) {
                            let name = self.cfg.terminals[t.index()].display_name();
                            let snippet = String::from_utf8_lossy(&text[pos..(pos + n).min(pos + 20)]).into_owned();
                            fail(self.rejection(text, pos, format!("unexpected {name} {snippet:?}"), &p), &mut err);
                            continue;
                        }
                    }
                    let list = at.entry(pos + n).or_default();
                    if !list.iter().any(|o| self.same(o, &q)) {
                        list.push(q);
                    }
                }
            }
        }
        Err(err.unwrap_or_else(|| self.rejection(text, 0, "no parse".into(), &self.new_parse())))
    }

    fn new_parse(&self) -> P {
        match &self.general {
            Some(e) => P::Ey(e.start()),
            None => P::Lr(IncParser::new(&self.grammar)),
        }
    }

    fn accepts_eof(&self, p: &P) -> bool {
        match (p, &self.general) {
            (P::Lr(p), _) => p.accepts_eof(&self.grammar, &[]),
            (P::Ey(p), Some(e)) => e.accepts_eof(p),
            (P::Ey(_), None) => false,
        }
    }

    fn consume(&self, p: &mut P, syms: &[Sym]) -> bool {
        match (p, &self.general) {
            (P::Lr(p), _) => p.consume(&self.grammar, syms).is_ok(),
            (P::Ey(p), Some(e)) => {
                let mut q = p.clone();
                let ok = syms.iter().all(|&s| e.feed(&mut q, s));
                if ok {
                    *p = q;
                }
                ok
            }
            (P::Ey(_), None) => false,
        }
    }

    fn same(&self, a: &P, b: &P) -> bool {
        match (a, b) {
            (P::Lr(a), P::Lr(b)) => a.same_state(b),
            (P::Ey(a), P::Ey(b)) => a == b,
            _ => false,
        }
    }

    fn expected_of(&self, p: &P) -> Vec<TerminalId> {
        let n = self.cfg.terminals.len() as u32;
        match p {
            P::Lr(p) => p.expected(&self.grammar),
            P::Ey(_) => (0..n).filter(|&t| self.consume(&mut p.clone(), &[t])).map(TerminalId).collect(),
        }
    }

    fn rejection(&self, text: &[u8], offset: usize, message: String, p: &P) -> Rejection {
        let (line, col) = line_col(text, offset);
        let expected = self.expected_of(p).into_iter().map(|t| self.cfg.terminals[t.index()].display_name()).collect();
        Rejection { offset, line, col, message, expected }
    }
}

/// 1-based (line, column in characters) of a byte offset.
pub fn line_col(text: &[u8], offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, col)
}
