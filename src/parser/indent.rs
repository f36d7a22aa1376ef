//! The off-side rule (`%indent NL INDENT DEDENT`): the indentation layer
//! that the incremental parser ([`super::incremental::IncParser`]) runs on
//! top of the LR parser, over lexer-level symbols (see
//! [`super::alphabet`]).
//!
//! ## Off-side rule (CPython's tokenizer, on top of the lexer)
//! - A newline terminal inside `()`, `[]` or `{}` (bracket depth > 0) is dropped,
//!   and so are its events.
//! - At depth 0 it feeds the grammar's newline terminal to the LR parser (once per
//!   run of blank lines) and starts measuring the next line's indentation from its
//!   events: `\n` and form feed reset the column, a space adds 1, a tab moves to the
//!   next multiple of 8. CPython's tab-consistency check is kept: a second column is
//!   measured with tabs of width 1, and both must order the same way against the
//!   stack, or the input is rejected (TabError).
//! - When the next real terminal arrives, its column is compared with the
//!   indentation stack: deeper → INDENT; shallower → one DEDENT per popped level,
//!   and the column must then equal the new top (else: inconsistent dedent, rejected).
//! - End of input: a newline is synthesized if the last line has content, then one
//!   DEDENT per open block, then `$END`.
//! - Known leniency: indentation of the very first line is not checked (Python
//!   rejects a file whose first statement is indented).

use super::alphabet::{Events, Sym};
use crate::grammar::IndentConfig;
use crate::ids::TerminalId;
use std::rc::Rc;

/// The runtime form of [`IndentConfig`] (terminal ids as u32 plus bracket flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndentRules {
    pub newline: u32,
    pub indent: u32,
    pub dedent: u32,
    /// Per terminal: +1 for an opening bracket, -1 for a closing one, 0 otherwise.
    pub bracket: Vec<i8>,
}

impl IndentRules {
    pub fn from_config(c: &IndentConfig, n_terminals: usize) -> Self {
        let mut bracket = vec![0i8; n_terminals];
        for t in &c.open {
            bracket[t.index()] = 1;
        }
        for t in &c.close {
            bracket[t.index()] = -1;
        }
        IndentRules { newline: c.newline.0, indent: c.indent.0, dedent: c.dedent.0, bracket }
    }
}

/// Indentation state. Small and `Copy`-cheap except the stack, which is shared
/// (`Rc`) and copied on write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct IndentState {
    /// Indentation stack: pairs (column, column with tab width 1); bottom is (0, 0).
    pub(super) stack: Rc<Vec<(u32, u32)>>,
    pub(super) depth: u32,
    /// A newline was fed at depth 0 and the next line's indentation is pending.
    pub(super) pending: bool,
    pub(super) col: u32,
    pub(super) alt: u32,
    /// Some real terminal was fed since the last newline (for the EOF newline).
    pub(super) content: bool,
}

impl Default for IndentState {
    fn default() -> Self {
        IndentState { stack: Rc::new(vec![(0, 0)]), depth: 0, pending: false, col: 0, alt: 0, content: false }
    }
}

/// What an indentation step asks the LR parser to do before the terminal.
pub(super) enum Layout {
    /// Drop the symbol (an event, or a newline inside brackets).
    Skip,
    /// Feed `dedents` DEDENTs (or one INDENT if `indent`), then the terminal (if `feed`).
    Feed { indent: bool, dedents: u32, feed: bool },
}

/// How the stack changes for a fed sequence: number of INDENTs (0/1) and DEDENTs.
pub(super) fn indent_delta(terms: &[TerminalId], r: &IndentRules) -> (u32, u32) {
    let ind = terms.iter().filter(|t| t.0 == r.indent).count() as u32;
    let ded = terms.iter().filter(|t| t.0 == r.dedent).count() as u32;
    (ind, ded)
}

impl IndentState {
    /// Decide what symbol `s` means for the layout, without mutating; None on
    /// an indentation error.
    pub(super) fn layout(&self, r: &IndentRules, ev: Events, s: Sym) -> Option<Layout> {
        layout_of(r, ev, s, self.depth, self.pending, self.col, self.alt, self.stack.len(), |i| self.stack[i])
    }

    pub(super) fn commit(&mut self, r: &IndentRules, s: Sym, (indents, dedents): (u32, u32)) {
        let ev = Events::new(r.bracket.len() as u32);
        if ev.is_event(s) {
            if self.depth == 0 && self.pending {
                (self.col, self.alt) = step_col(ev, s, self.col, self.alt);
            }
            return;
        }
        if s == r.newline {
            if self.depth == 0 {
                self.pending = true;
                self.col = 0;
                self.alt = 0;
                self.content = false;
            }
            return;
        }
        if self.pending {
            let st = Rc::make_mut(&mut self.stack);
            for _ in 0..dedents {
                st.pop();
            }
            if indents > 0 {
                st.push((self.col, self.alt));
            }
            self.pending = false;
        }
        self.content = true;
        self.depth = bracket_depth(r, s, self.depth);
    }
}

/// Bracket depth after terminal `s`.
#[inline]
pub(super) fn bracket_depth(r: &IndentRules, s: Sym, depth: u32) -> u32 {
    match r.bracket.get(s as usize) {
        Some(&d) if d > 0 => depth + 1,
        Some(&d) if d < 0 => depth.saturating_sub(1),
        _ => depth,
    }
}

pub(super) fn step_col(ev: Events, s: Sym, col: u32, alt: u32) -> (u32, u32) {
    if s == ev.nl() || s == ev.ff() {
        (0, 0)
    } else if s == ev.sp() {
        (col.saturating_add(1), alt.saturating_add(1))
    } else {
        ((col / 8 + 1).saturating_mul(8), alt.saturating_add(1))
    }
}

/// The core decision, shared by the mutating and the simulated paths.
#[allow(clippy::too_many_arguments)]
pub(super) fn layout_of(
    r: &IndentRules,
    ev: Events,
    s: Sym,
    depth: u32,
    pending: bool,
    col: u32,
    alt: u32,
    stack_len: usize,
    stack: impl Fn(usize) -> (u32, u32),
) -> Option<Layout> {
    if ev.is_event(s) {
        return Some(Layout::Skip);
    }
    if s == r.newline {
        if depth > 0 {
            return Some(Layout::Skip);
        }
        // A run of blank lines feeds only one newline.
        return Some(Layout::Feed { indent: false, dedents: 0, feed: !pending });
    }
    if !pending {
        return Some(Layout::Feed { indent: false, dedents: 0, feed: true });
    }
    let (top, top_alt) = stack(stack_len - 1);
    if col > top {
        if alt <= top_alt {
            return None; // TabError
        }
        return Some(Layout::Feed { indent: true, dedents: 0, feed: true });
    }
    if col == top {
        if alt != top_alt {
            return None;
        }
        return Some(Layout::Feed { indent: false, dedents: 0, feed: true });
    }
    let mut i = stack_len - 1;
    let mut dedents = 0;
    while i > 0 && stack(i).0 > col {
        i -= 1;
        dedents += 1;
    }
    let (c, a) = stack(i);
    if c != col || a != alt {
        return None;
    }
    Some(Layout::Feed { indent: false, dedents, feed: true })
}
