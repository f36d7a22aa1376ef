//! The reference lexer: the *definition* of the lexing semantics described
//! in the [module doc](super), written as plainly as possible. It runs every
//! terminal's regex-automata DFA at each lexeme start and takes the longest
//! match, breaking ties with [`rank_better`]. The lexer automaton
//! ([`super::Lexer`]) is tested against it.
//!
//! This module also compiles terminal regexes (shared with the automaton
//! builder), which is where bad terminals are rejected.

use std::cmp::Reverse;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

use super::{LexFailure, Lexeme};
use crate::err;
use crate::grammar::{Cfg, TerminalDef, TerminalPattern};
use crate::ids::TerminalId;
use crate::Result;

/// Size limits for one terminal's NFA / DFA construction (bytes).
const NFA_SIZE_LIMIT: usize = 64 << 20;
const DFA_SIZE_LIMIT: usize = 256 << 20;

/// A compiled terminal: its anchored leftmost-first dense DFA and start state.
pub(crate) struct TermDfa {
    pub dfa: dense::DFA<Vec<u32>>,
    pub start: StateID,
}

impl TermDfa {
    /// A match of the terminal ends after the bytes that led to `s`.
    #[inline]
    pub fn accepting_here(&self, s: StateID) -> bool {
        self.dfa.is_match_state(self.dfa.next_eoi_state(s))
    }

    /// Length of the anchored leftmost-first match at `text[pos..]` (0: none):
    /// the last accepting offset before the DFA dies.
    pub fn match_len(&self, text: &[u8], pos: usize) -> usize {
        let (mut s, mut best) = (self.start, 0);
        for p in pos..=text.len() {
            if self.accepting_here(s) {
                best = p - pos;
            }
            if p == text.len() {
                break;
            }
            s = self.dfa.next_state(s, text[p]);
            if self.dfa.is_dead_state(s) || self.dfa.is_quit_state(s) {
                break;
            }
        }
        best
    }
}

/// "terminal NAME (at file:line:col)" for messages.
pub(crate) fn describe(def: &TerminalDef) -> String {
    if def.span.file.is_empty() && def.span.line == 0 {
        format!("terminal {}", def.name)
    } else {
        format!("terminal {} (at {})", def.name, def.span)
    }
}

/// Compiles terminal `t`'s regex; `Ok(None)` for `%declare`d terminals.
/// Rejects invalid regexes ([`crate::ErrorKind::Regex`]), look-around
/// assertions and empty-matching terminals ([`crate::ErrorKind::Grammar`]).
pub(crate) fn compile_terminal(cfg: &Cfg, t: TerminalId) -> Result<Option<TermDfa>> {
    let def = cfg.terminal(t);
    let Some(re) = def.regex() else { return Ok(None) };
    let who = || describe(def);
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(re)
        .map_err(|e| err!(Regex, "{}: invalid regex /{re}/: {e}", who()))?;
    if !hir.properties().look_set().is_empty() {
        return Err(err!(
            Grammar,
            "{}: regex /{re}/ uses a look-around or anchor assertion (^, $, \\A, \\z, \\b, \\B, ...), \
             which terminal regexes do not support",
            who()
        ));
    }
    let nfa = thompson::Compiler::new()
        .configure(thompson::Config::new().nfa_size_limit(Some(NFA_SIZE_LIMIT)))
        .build_from_hir(&hir)
        .map_err(|e| err!(Regex, "{}: cannot compile regex /{re}/: {e}", who()))?;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::LeftmostFirst)
                .start_kind(StartKind::Anchored)
                .minimize(true)
                .determinize_size_limit(Some(DFA_SIZE_LIMIT))
                .dfa_size_limit(Some(DFA_SIZE_LIMIT)),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| err!(Regex, "{}: cannot build a DFA for /{re}/: {e}", who()))?;
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .map_err(|e| err!(Regex, "{}: no anchored start state for /{re}/: {e}", who()))?;
    let td = TermDfa { dfa, start };
    if td.accepting_here(start) {
        return Err(err!(Grammar, "{}: regex /{re}/ matches the empty string", who()));
    }
    Ok(Some(td))
}

/// The tie-break key of a terminal (larger is better): priority, literal
/// over regex, longer literal text, lower id.
pub(crate) fn rank_key(cfg: &Cfg, t: TerminalId) -> (i32, bool, usize, Reverse<u32>) {
    let def = cfg.terminal(t);
    let lit_len = match &def.pattern {
        TerminalPattern::Literal { text, .. } => text.len(),
        _ => 0,
    };
    (def.priority, def.is_literal(), lit_len, Reverse(t.0))
}

/// Whether `a` beats `b` when both match the same length: higher priority,
/// then string literal over regex, then the longer literal text, then the
/// lower [`TerminalId`]. A strict total order (false for `a == b`).
pub fn rank_better(cfg: &Cfg, a: TerminalId, b: TerminalId) -> bool {
    rank_key(cfg, a) > rank_key(cfg, b)
}

/// The reference lexer (see the module doc).
pub struct RefLexer {
    /// Lexable terminals, in id order.
    terms: Vec<(TerminalId, TermDfa)>,
    keys: Vec<(i32, bool, usize, Reverse<u32>)>,
}

impl RefLexer {
    pub fn new(cfg: &Cfg) -> Result<RefLexer> {
        let mut terms = Vec::new();
        for i in 0..cfg.terminals.len() {
            let t = TerminalId::new(i);
            if let Some(d) = compile_terminal(cfg, t)? {
                terms.push((t, d));
            }
        }
        let keys = (0..cfg.terminals.len()).map(|i| rank_key(cfg, TerminalId::new(i))).collect();
        Ok(RefLexer { terms, keys })
    }

    /// The longest-match lexeme at `pos` (ties by rank), if any terminal matches.
    pub fn lexeme_at(&self, text: &[u8], pos: usize) -> Option<Lexeme> {
        let mut best: Option<(usize, TerminalId)> = None;
        for (t, d) in &self.terms {
            let m = d.match_len(text, pos);
            if m == 0 {
                continue;
            }
            let better = match best {
                None => true,
                Some((bm, bt)) => m > bm || (m == bm && self.keys[t.index()] > self.keys[bt.index()]),
            };
            if better {
                best = Some((m, *t));
            }
        }
        best.map(|(m, t)| Lexeme { terminal: t, start: pos, end: pos + m })
    }

    /// Lexes `text` completely (ignored lexemes included).
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
}
