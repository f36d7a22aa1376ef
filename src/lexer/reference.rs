//! The reference lexer: the *definition* of the lexing semantics of every
//! [`LexerMode`], written as plainly as possible: at each lexeme start it
//! runs every competing terminal's table ([`super::table`]) and picks the
//! lexeme by the mode's rule. The lexer automaton ([`super::Lexer`]) and the
//! recognizer ([`crate::parser::driver`]) are tested against it.
//!
//! Rules (the competing terminals are all lexed terminals, or for
//! [`LexerMode::Contextual`] the ones the caller passes):
//! - **Longest**: the longest match wins; ties by [`rank_better`].
//! - **LongestAll**: every terminal with the longest match is a lexeme.
//! - **Lark** (Contextual, Basic): Lark's `BasicLexer`: terminals in Lark's
//!   order (priority desc, max width desc, pattern length desc, name; see
//!   [`LarkOrder`](crate::grammar::LarkOrder)) minus the *embedded* string
//!   literals; the first one that matches wins with its own match. A regex
//!   winner whose match equals a string literal of the same priority that
//!   the regex matches completely (in Lark's order) is retyped to that
//!   literal (Lark's `_create_unless`); a literal is embedded (leaves the
//!   list) when its flags are a subset of such a regex's.

use std::cmp::Reverse;

use super::table::{compile_all, Table};
use super::{LexFailure, Lexeme};
use crate::grammar::{Cfg, LexerMode, TerminalPattern};
use crate::ids::TerminalId;
use crate::Result;

/// The tie-break key of a terminal under [`LexerMode::Longest`] (larger is
/// better): priority, literal over regex, longer literal text, lower id.
pub(crate) fn rank_key(cfg: &Cfg, t: TerminalId) -> (i32, bool, usize, Reverse<u32>) {
    let def = cfg.terminal(t);
    let lit_len = match &def.pattern {
        TerminalPattern::Literal { text, .. } => text.len(),
        _ => 0,
    };
    (def.priority, def.is_literal(), lit_len, Reverse(t.0))
}

/// Whether `a` beats `b` when both match the same length under
/// [`LexerMode::Longest`]: higher priority, then string literal over regex,
/// then the longer literal text, then the lower [`TerminalId`]. A strict
/// total order (false for `a == b`).
pub fn rank_better(cfg: &Cfg, a: TerminalId, b: TerminalId) -> bool {
    rank_key(cfg, a) > rank_key(cfg, b)
}

/// Lark's sort key (smaller sorts first): `(-priority, -max_width,
/// -pattern_len, name)`. Terminals without [`LarkOrder`] (not from the Lark
/// front end) get a literal's length, or an unbounded width for regexes.
fn lark_key(cfg: &Cfg, t: TerminalId) -> (Reverse<i32>, Reverse<u64>, Reverse<usize>, String) {
    let def = cfg.terminal(t);
    let (w, len) = match (&def.lark, &def.pattern) {
        (Some(o), _) => (o.max_width, o.pattern_len),
        (None, TerminalPattern::Literal { text, .. }) => (text.chars().count() as u64, text.len()),
        (None, TerminalPattern::Regex { regex }) => (u64::MAX, regex.len()),
        (None, _) => (u64::MAX, 0),
    };
    (Reverse(def.priority), Reverse(w), Reverse(len), def.name.clone())
}

/// Lark's pattern flags of a terminal.
fn lark_flags(cfg: &Cfg, t: TerminalId) -> Vec<char> {
    let def = cfg.terminal(t);
    match (&def.lark, &def.pattern) {
        (Some(o), _) => o.flags.clone(),
        (None, TerminalPattern::Literal { case_insensitive: true, .. }) => vec!['i'],
        _ => Vec::new(),
    }
}

/// Everything both the reference lexer and the automaton builder need to
/// know about how terminals compete.
pub(crate) struct Order {
    pub mode: LexerMode,
    /// Per terminal: its position in the mode's order (0 = first / best).
    pub rank: Vec<u32>,
    /// Lark modes: per regex terminal `R`, the string literals (ids, in
    /// order) that `R` matches completely and that have `R`'s priority.
    pub unless: Vec<Vec<TerminalId>>,
    /// Lark modes: per (literal, regex) pair in `unless`, whether the
    /// literal's flags are a subset of the regex's (then it is embedded).
    pub embeds: Vec<Vec<bool>>,
    pub ignored: Vec<bool>,
}

impl Order {
    pub fn new(cfg: &Cfg, tables: &[Option<Table>]) -> Order {
        let nt = cfg.terminals.len();
        let mut by: Vec<usize> = (0..nt).collect();
        let lark = matches!(cfg.lexer, LexerMode::Contextual | LexerMode::Basic);
        if lark {
            by.sort_by_key(|&i| lark_key(cfg, TerminalId::new(i)));
        } else {
            by.sort_by_key(|&i| Reverse(rank_key(cfg, TerminalId::new(i))));
        }
        let mut rank = vec![0u32; nt];
        for (r, &i) in by.iter().enumerate() {
            rank[i] = r as u32;
        }
        let is_literal: Vec<bool> = cfg.terminals.iter().map(|t| t.is_literal()).collect();
        let (mut unless, mut embeds) = (vec![Vec::new(); nt], vec![Vec::new(); nt]);
        if lark {
            let flags: Vec<Vec<char>> = (0..nt).map(|i| lark_flags(cfg, TerminalId::new(i))).collect();
            for r in 0..nt {
                let Some(rt) = &tables[r] else { continue };
                if is_literal[r] {
                    continue;
                }
                let mut strs: Vec<usize> = (0..nt)
                    .filter(|&s| {
                        is_literal[s]
                            && tables[s].is_some()
                            && cfg.terminals[s].priority == cfg.terminals[r].priority
                            && match &cfg.terminals[s].pattern {
                                TerminalPattern::Literal { text, .. } => rt.matches_whole(text.as_bytes()),
                                _ => false,
                            }
                    })
                    .collect();
                strs.sort_by_key(|&s| rank[s]);
                embeds[r] = strs.iter().map(|&s| flags[s].iter().all(|f| flags[r].contains(f))).collect();
                unless[r] = strs.into_iter().map(TerminalId::new).collect();
            }
        }
        Order { mode: cfg.lexer, rank, unless, embeds, ignored: cfg.terminals.iter().map(|t| t.ignored).collect() }
    }

    pub fn lark(&self) -> bool {
        matches!(self.mode, LexerMode::Contextual | LexerMode::Basic)
    }

    /// Lark modes: the literals embedded into regexes of the competing set
    /// `competes` (they leave the candidate list).
    pub fn embedded(&self, competes: &dyn Fn(usize) -> bool) -> Vec<bool> {
        let mut out = vec![false; self.rank.len()];
        for r in 0..self.rank.len() {
            if !competes(r) {
                continue;
            }
            for (s, &e) in self.unless[r].iter().zip(&self.embeds[r]) {
                if e && competes(s.index()) {
                    out[s.index()] = true;
                }
            }
        }
        out
    }
}

/// The reference lexer (see the module doc).
pub struct RefLexer {
    tables: Vec<Option<Table>>,
    order: Order,
}

impl RefLexer {
    pub fn new(cfg: &Cfg) -> Result<RefLexer> {
        let tables = compile_all(cfg)?;
        let order = Order::new(cfg, &tables);
        Ok(RefLexer { tables, order })
    }

    pub fn mode(&self) -> LexerMode {
        self.order.mode
    }

    /// The lexemes possible at `pos`, with their common length (0 and none
    /// when no terminal matches). `competes` restricts the competing
    /// terminals (contextual lexing); `None` means all.
    pub fn lexemes_at(&self, text: &[u8], pos: usize, competes: Option<&dyn Fn(TerminalId) -> bool>) -> (usize, Vec<TerminalId>) {
        let ok = |i: usize| competes.is_none_or(|f| f(TerminalId::new(i)));
        let live = |i: usize| self.tables[i].as_ref().filter(|_| ok(i));
        if self.order.lark() {
            let embedded = self.order.embedded(&|i| ok(i) && self.tables[i].is_some());
            let mut cands: Vec<usize> = (0..self.tables.len()).filter(|&i| live(i).is_some() && !embedded[i]).collect();
            cands.sort_by_key(|&i| self.order.rank[i]);
            for r in cands {
                let n = self.tables[r].as_ref().map_or(0, |t| t.match_len(text, pos));
                if n == 0 {
                    continue;
                }
                if self.order.ignored[r] {
                    // Retyping an ignored match keeps it ignored (Lark).
                    return (n, vec![TerminalId::new(r)]);
                }
                let value = &text[pos..pos + n];
                let retyped = self.order.unless[r]
                    .iter()
                    .find(|s| ok(s.index()) && self.tables[s.index()].as_ref().is_some_and(|t| t.matches_whole(value)))
                    .copied();
                return (n, vec![retyped.unwrap_or(TerminalId::new(r))]);
            }
            return (0, Vec::new());
        }
        let mut best = 0;
        let mut winners: Vec<usize> = Vec::new();
        for i in 0..self.tables.len() {
            let Some(t) = live(i) else { continue };
            let m = t.match_len(text, pos);
            if m == 0 || m < best {
                continue;
            }
            if m > best {
                best = m;
                winners.clear();
            }
            winners.push(i);
        }
        winners.sort_by_key(|&i| self.order.rank[i]);
        if self.order.mode != LexerMode::LongestAll {
            winners.truncate(1);
        }
        (best, winners.into_iter().map(TerminalId::new).collect())
    }

    /// The lexeme at `pos` when every terminal competes (the first one for
    /// [`LexerMode::LongestAll`]), if any terminal matches.
    pub fn lexeme_at(&self, text: &[u8], pos: usize) -> Option<Lexeme> {
        let (n, ts) = self.lexemes_at(text, pos, None);
        ts.first().map(|&t| Lexeme { terminal: t, start: pos, end: pos + n })
    }

    /// Lexes `text` completely (ignored lexemes included) with every
    /// terminal competing; for [`LexerMode::LongestAll`], the first lexeme of
    /// each tie. (Contextual lexing needs the parser: see the recognizer.)
    pub fn lex(&self, text: &[u8]) -> std::result::Result<Vec<Lexeme>, LexFailure> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let lx = self.lexeme_at(text, pos).ok_or(LexFailure { pos })?;
            pos = lx.end;
            out.push(lx);
        }
        Ok(out)
    }

    /// Every complete lexing of `text` with every terminal competing (one
    /// per choice among ties under [`LexerMode::LongestAll`]; at most
    /// `limit`). Empty when the text does not lex.
    pub fn lexings(&self, text: &[u8], limit: usize) -> Vec<Vec<Lexeme>> {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        self.lexings_from(text, 0, &mut cur, &mut out, limit);
        out
    }

    fn lexings_from(&self, text: &[u8], pos: usize, cur: &mut Vec<Lexeme>, out: &mut Vec<Vec<Lexeme>>, limit: usize) {
        if out.len() >= limit {
            return;
        }
        if pos == text.len() {
            out.push(cur.clone());
            return;
        }
        let (n, ts) = self.lexemes_at(text, pos, None);
        for t in ts {
            cur.push(Lexeme { terminal: t, start: pos, end: pos + n });
            self.lexings_from(text, pos + n, cur, out, limit);
            cur.pop();
        }
    }

    /// Is terminal `t` ignored (`%ignore`)?
    pub fn is_ignored(&self, t: TerminalId) -> bool {
        self.order.ignored.get(t.index()).copied().unwrap_or(false)
    }
}
