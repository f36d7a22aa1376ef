//! How terminals compete for a lexeme under each [`LexerMode`]: the
//! tie-break rank of [`LexerMode::Longest`] ([`rank_better`]) and Lark's
//! terminal order with its keyword retyping ([`Order`], see
//! [`LarkOrder`](crate::grammar::LarkOrder)). Both the lexer automaton
//! builder ([`super::build`]) and the reference lexer
//! (`reference::lexer`) order terminals by it, so it is engine code: the
//! reference imports it, never the other way round.

use std::cmp::Reverse;

use super::table::{encoded_regex, Table};
use crate::grammar::{Cfg, LexerMode, TerminalPattern};
use crate::ids::TerminalId;

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
        // The length of the regex as the lexer compiles it (lookaheads encoded).
        (None, p @ TerminalPattern::Regex { .. }) => (u64::MAX, encoded_regex(p).map_or(0, |r| r.len())),
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
        let lark = matches!(cfg.lexer, LexerMode::Contextual | LexerMode::Basic);
        let by = if lark {
            let keys: Vec<_> = (0..nt).map(|i| lark_key(cfg, TerminalId::new(i))).collect();
            crate::sort::order_by(nt, &mut |a, b| keys[a].cmp(&keys[b]))
        } else {
            let keys: Vec<_> = (0..nt).map(|i| Reverse(rank_key(cfg, TerminalId::new(i)))).collect();
            crate::sort::order_by(nt, &mut |a, b| keys[a].cmp(&keys[b]))
        };
        let mut rank = vec![0u32; nt];
        for (r, &i) in by.iter().enumerate() {
            rank[i as usize] = r as u32;
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
                let mut strs: Vec<u32> = (0..nt as u32)
                    .filter(|&s| {
                        let s = s as usize;
                        is_literal[s]
                            && tables[s].is_some()
                            && cfg.terminals[s].priority == cfg.terminals[r].priority
                            && match &cfg.terminals[s].pattern {
                                TerminalPattern::Literal { text, .. } => rt.matches_whole(text.as_bytes()),
                                _ => false,
                            }
                    })
                    .collect();
                crate::sort::sort_u32_by(&mut strs, &mut |a, b| rank[a as usize].cmp(&rank[b as usize]));
                embeds[r] = strs.iter().map(|&s| flags[s as usize].iter().all(|f| flags[r].contains(f))).collect();
                unless[r] = strs.into_iter().map(|s| TerminalId::new(s as usize)).collect();
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
