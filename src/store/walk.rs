//! One byte of lexing, as both the compile-time trie walk and the run-time
//! token commit see it.
//!
//! Glossary (paper → code):
//! - NFA state `q` → a *lexer position* `(L, X)`: lexer automaton state `L`
//!   ([`crate::lexer::Lexer`]) plus the *target* terminal `X` the lexeme in
//!   progress is assumed to become (`X ∈ comp(L)`); `X = NO_TARGET` only before
//!   the first byte of the input. In the store, `(L, X)` is numbered as a
//!   [`QId`](super::QId).
//! - `nfa_transition[q][token]` → repeated [`step`] over the token's bytes; it
//!   yields `(L', Z, new symbols)`.
//! - "new terminals" → lexer-level symbols ([`crate::parser::alphabet::Sym`]): a
//!   terminal is *announced* when its lexeme starts (so viability of the
//!   lexeme in progress is checked by the parser), ignored terminals are never
//!   announced, and bytes of the `%indent` newline lexeme emit events.

use crate::lexer::Lexer;
use crate::parser::alphabet::{Events, Sym};

/// Target of the initial position (no lexeme started yet).
pub const NO_TARGET: u32 = u32::MAX;

/// Lexing context for [`step`].
#[derive(Clone, Copy)]
pub struct StepCtx<'a> {
    pub lexer: &'a Lexer,
    pub events: Events,
    /// The `%indent` newline terminal, or `u32::MAX`.
    pub newline: u32,
}

impl<'a> StepCtx<'a> {
    pub fn of(store: &'a super::MaskStore) -> Self {
        StepCtx {
            lexer: &store.lexer,
            events: store.grammar.events,
            newline: store.grammar.indent.as_ref().map_or(u32::MAX, |i| i.newline),
        }
    }
}

/// Advance lexer position `(l, x)` by byte `b`; call `out(l2, z, syms)` for every
/// possible outcome, where `syms` are the lexer-level symbols produced (0–3).
#[inline]
pub fn step(cx: StepCtx<'_>, l: u32, x: u32, b: u8, out: &mut impl FnMut(u32, u32, &[Sym])) {
    let lx = cx.lexer;
    let s = crate::ids::LexStateId(l);
    if x == NO_TARGET {
        // First byte of the input: choose the target now.
        if let Some(l2) = lx.cont(s, b) {
            for &z in lx.comp(l2) {
                announce(cx, l2.0, z.0, b, None, out);
            }
        }
        return;
    }
    // Continue the lexeme in progress.
    if let Some(l2) = lx.cont(s, b) {
        if lx.can_complete(l2, crate::ids::TerminalId(x)) {
            let mut buf = [0u32; 1];
            let n = event(cx, x, b, &mut buf);
            out(l2.0, x, &buf[..n]);
        }
    }
    // End the lexeme here (only if the target wins here, before `b`) and
    // start a new one with `b`.
    let xt = crate::ids::TerminalId(x);
    if !lx.is_winner_before(s, xt, b) {
        return;
    }
    if lx.contextual().is_none() {
        if let Some(l2) = lx.emit(s, b) {
            for &z in lx.comp(l2) {
                announce(cx, l2.0, z.0, b, None, out);
            }
        }
        return;
    }
    // Contextual: branch on the next lexeme's mode; the parser checks it
    // (a mode symbol), unless `x` is ignored (same mode) or leaves no choice.
    let modes = lx.next_modes(s, xt);
    let check = !lx.is_ignored(xt) && modes.len() > 1;
    for &m in modes {
        if let Some(l2) = lx.emit_in(s, b, m) {
            for &z in lx.comp(l2) {
                announce(cx, l2.0, z.0, b, check.then(|| cx.events.mode(m)), out);
            }
        }
    }
}

#[inline]
fn announce(cx: StepCtx<'_>, l2: u32, z: u32, b: u8, mode: Option<Sym>, out: &mut impl FnMut(u32, u32, &[Sym])) {
    let mut buf = [0u32; 3];
    let mut n = 0;
    if let Some(m) = mode {
        buf[0] = m;
        n = 1;
    }
    if !cx.lexer.is_ignored(crate::ids::TerminalId(z)) {
        buf[n] = z;
        n += 1;
    }
    let mut e = [0u32; 1];
    if event(cx, z, b, &mut e) == 1 {
        buf[n] = e[0];
        n += 1;
    }
    out(l2, z, &buf[..n]);
}

#[inline]
fn event(cx: StepCtx<'_>, target: u32, b: u8, out: &mut [u32; 1]) -> usize {
    if target == cx.newline {
        if let Some(e) = cx.events.for_byte(b) {
            out[0] = e;
            return 1;
        }
    }
    0
}

/// Can the input end with lexer position `(l, x)`? (The lexeme in progress ends
/// here as `x`.) The caller still asks the parser about end of input.
#[inline]
pub fn can_end(lexer: &Lexer, l: u32, x: u32) -> bool {
    x != NO_TARGET && lexer.is_winner(crate::ids::LexStateId(l), crate::ids::TerminalId(x))
}
