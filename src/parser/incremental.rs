//! The incremental parser over *lexer-level* symbols ([`IncParser`]): the
//! LALR(1) parser plus Python's off-side rule (`%indent NL INDENT DEDENT`,
//! [`super::indent`]), with the tables it runs on ([`IncTables`]) and its
//! non-mutating cursor ([`IncCursor`]).
//!
//! The parser reads lexer-level symbols ([`Sym`], see [`super::alphabet`]).
//!
//! Without `%indent`, events never occur and this is a thin wrapper over [`LrParser`].

use super::alphabet::{Events, Sym};
use super::indent::{bracket_depth, indent_delta, layout_of, step_col, IndentRules, IndentState, Layout};
use super::earley::{EarleyCursor, EarleyParser, EarleyTables};
use super::{LrCursor, LrParser, LrTables};
use std::sync::Arc;
use crate::error::Result;
use crate::ids::TerminalId;

/// Modes of [`IncCursor::context`].
pub const MODE_DIRECT: u32 = 0;
pub const MODE_IN_BRACKETS: u32 = 1;
pub const MODE_PENDING_SAME: u32 = 2;
pub const MODE_PENDING_INDENT: u32 = 3;

/// Everything the incremental parser needs that does not change while parsing.
#[derive(Clone, Debug)]
pub struct IncTables {
    pub tables: LrTables,
    pub indent: Option<IndentRules>,
    pub events: Events,
    pub n_terminals: u32,
    /// Contextual lexing: the lexer mode of each LR state (empty otherwise).
    pub state_mode: Vec<u32>,
    pub n_modes: u32,
    /// The general parser's grammar, for a grammar that is not LALR(1)
    /// (`tables` is then a placeholder; no indentation, no modes).
    pub earley: Option<Arc<EarleyTables>>,
}

impl IncTables {
    pub fn new(tables: LrTables, indent: Option<IndentRules>, n_terminals: u32) -> Self {
        IncTables { tables, indent, events: Events::new(n_terminals), n_terminals, state_mode: Vec::new(), n_modes: 0, earley: None }
    }
    /// The tables of a grammar that runs on the general parser.
    pub fn general(t: EarleyTables) -> Self {
        let n = t.n_terms();
        IncTables { earley: Some(Arc::new(t)), ..IncTables::new(LrTables::placeholder(n), None, n) }
    }
    /// With contextual lexing: the mode of every LR state (see
    /// [`crate::lexer::CtxTables::state_mode`]).
    pub fn with_modes(mut self, state_mode: Vec<u32>, n_modes: u32) -> Self {
        self.state_mode = state_mode;
        self.n_modes = n_modes;
        self
    }
    /// Number of lexer-level symbols (terminals, `$END`, events, modes).
    pub fn alphabet_size(&self) -> u32 {
        self.events.mode_base() + self.n_modes
    }
    /// Does LR state `top` have lexer mode symbol `s`?
    #[inline]
    pub(super) fn mode_ok(&self, top: u32, s: Sym) -> bool {
        self.state_mode.get(top as usize).is_some_and(|&m| self.events.mode(m) == s)
    }
}

/// The incremental parser (LR + off-side rule). `Clone` is O(1).
#[derive(Clone)]
pub struct IncParser {
    lr: LrParser,
    ind: IndentState,
    /// The general parser (grammars with `IncTables::earley`).
    ey: Option<EarleyParser>,
}

impl IncParser {
    pub fn new(g: &IncTables) -> Self {
        IncParser { lr: LrParser::new(&g.tables), ind: IndentState::default(), ey: g.earley.as_deref().map(EarleyParser::new) }
    }

    /// Append everything this parser's future depends on to `out` (the whole
    /// LR stack and the indentation state): two parsers with the same key
    /// accept the same continuations (used as a cache key for masks).
    /// Append the indentation state (not the LR stack) to `out`: with the
    /// LR stack's nodes that a computation read, a cache key (see
    /// [`LrCursor::low`]).
    pub fn layout_key_into(&self, out: &mut Vec<u32>) {
        let i = &self.ind;
        out.extend([i.depth, i.pending as u32 | (i.content as u32) << 1, i.col, i.alt, i.stack.len() as u32]);
        out.extend(i.stack.iter().flat_map(|&(a, b)| [a, b]));
    }

    pub fn key_into(&self, out: &mut Vec<u32>) {
        let i = &self.ind;
        out.extend([i.depth, i.pending as u32 | (i.content as u32) << 1, i.col, i.alt, i.stack.len() as u32]);
        out.extend(i.stack.iter().flat_map(|&(a, b)| [a, b]));
        out.push(self.lr.stack().depth() as u32);
        out.extend(self.lr.stack().states());
    }

    pub fn lr(&self) -> &LrParser {
        &self.lr
    }

    /// The general parser, for a grammar that is not LALR(1).
    pub fn earley(&self) -> Option<&EarleyParser> {
        self.ey.as_ref()
    }

    /// Would `syms` be accepted as a continuation (a viable prefix)? No mutation.
    pub fn accepts(&self, g: &IncTables, syms: &[Sym]) -> bool {
        self.accepts2(g, &[], syms)
    }

    /// `accepts(a ++ b)` without concatenating.
    pub fn accepts2(&self, g: &IncTables, a: &[Sym], b: &[Sym]) -> bool {
        if g.indent.is_none() && g.n_modes == 0 && self.ey.is_none() {
            // Fast path: no indentation, so every symbol is a terminal.
            return self.lr.accepts_prefix_then(&g.tables, as_terms(a), as_terms(b));
        }
        let mut c = self.cursor();
        c.push_all(g, a) && c.push_all(g, b)
    }

    /// Can the input end after `syms`?
    pub fn accepts_eof(&self, g: &IncTables, syms: &[Sym]) -> bool {
        let mut c = self.cursor();
        c.push_all(g, syms) && c.finish(g)
    }

    /// Same LR stack and layout state (then both accept the same continuations).
    pub fn same_state(&self, o: &IncParser) -> bool {
        if let (Some(a), Some(b)) = (&self.ey, &o.ey) {
            return a.same(b);
        }
        self.ind == o.ind && (self.lr.stack().ptr_eq(o.lr.stack()) || self.lr.states().eq(o.lr.states()))
    }

    /// A cursor at the current state.
    pub fn cursor(&self) -> IncCursor<'_> {
        IncCursor::new(self)
    }

    /// Consume `syms`. On error the parser is unchanged.
    pub fn consume(&mut self, g: &IncTables, syms: &[Sym]) -> Result<()> {
        if let (Some(p), Some(t)) = (&mut self.ey, &g.earley) {
            if p.consume(t, syms) {
                return Ok(());
            }
            return Err(crate::err!(Parse, "unexpected symbol in {syms:?}"));
        }
        let Some(rules) = &g.indent else {
            if g.n_modes == 0 {
                return self.lr.consume(&g.tables, as_terms(syms));
            }
            // Mode symbols are checks on the state reached so far.
            let mut next = self.lr.clone();
            for part in syms.split_inclusive(|&s| g.events.is_mode(s)) {
                let (terms, check) = match part.split_last() {
                    Some((&m, rest)) if g.events.is_mode(m) => (rest, Some(m)),
                    _ => (part, None),
                };
                next.consume(&g.tables, as_terms(terms))?;
                if let Some(m) = check {
                    if !g.mode_ok(next.top_state().0, m) {
                        return Err(crate::err!(Parse, "lexer mode {} does not hold in LR state {}", m - g.events.mode_base(), next.top_state().0));
                    }
                }
            }
            self.lr = next;
            return Ok(());
        };
        let mut next = self.clone();
        let mut terms: Vec<TerminalId> = Vec::with_capacity(syms.len() + 4);
        for &s in syms {
            terms.clear();
            match next.ind.layout(rules, g.events, s) {
                Some(Layout::Skip) => {
                    next.ind.commit(rules, s, (0, 0));
                    continue;
                }
                Some(Layout::Feed { indent, dedents, feed }) => {
                    if indent {
                        terms.push(TerminalId(rules.indent));
                    }
                    terms.extend(std::iter::repeat(TerminalId(rules.dedent)).take(dedents as usize));
                    if feed {
                        terms.push(TerminalId(s));
                    }
                }
                None => {
                    return Err(crate::err!(Parse, "inconsistent indentation before {}", sym_label(g, s)));
                }
            }
            next.lr.consume(&g.tables, &terms)?;
            next.ind.commit(rules, s, indent_delta(&terms, rules));
        }
        *self = next;
        Ok(())
    }

    /// Terminals (grammar ids) that could be announced next, ignoring indentation
    /// subtleties: used for error messages.
    pub fn expected(&self, g: &IncTables) -> Vec<TerminalId> {
        (0..g.n_terminals).map(TerminalId).filter(|&t| self.accepts(g, &[t.0])).collect()
    }
}

fn as_terms(s: &[Sym]) -> &[TerminalId] {
    // SAFETY: TerminalId is #[repr(transparent)] over u32.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const TerminalId, s.len()) }
}

fn sym_label(g: &IncTables, s: Sym) -> String {
    format!("symbol {s} (of {})", g.n_terminals)
}

/// A non-mutating, incrementally fed view of an [`IncParser`]: the
/// indentation state is simulated on a virtual stack (a prefix of the real one
/// plus a few pushed levels) and LR terminals go straight into an
/// [`LrCursor`]. `Clone` is a small copy: the mask computation keeps one per
/// level of its depth-first walk over entry sequences.
#[derive(Clone)]
pub struct IncCursor<'a> {
    base: &'a IncParser,
    lr: LrCursor<'a>,
    depth: u32,
    pending: bool,
    col: u32,
    alt: u32,
    /// Virtual stack = base.stack[..keep] ++ pushed.
    keep: usize,
    pushed: [(u32, u32); 8],
    n_pushed: usize,
    content: bool,
    ey: Option<EarleyCursor<'a>>,
}

impl<'a> IncCursor<'a> {
    fn new(base: &'a IncParser) -> Self {
        let i = &base.ind;
        IncCursor {
            base,
            lr: base.lr.cursor(),
            depth: i.depth,
            pending: i.pending,
            col: i.col,
            alt: i.alt,
            keep: i.stack.len(),
            pushed: [(0, 0); 8],
            n_pushed: 0,
            content: i.content,
            ey: base.ey.as_ref().map(|p| p.cursor()),
        }
    }

    fn stack_len(&self) -> usize {
        self.keep + self.n_pushed
    }

    fn stack_at(&self, i: usize) -> (u32, u32) {
        if i < self.keep {
            self.base.ind.stack[i]
        } else {
            self.pushed[i - self.keep]
        }
    }

    /// The parser context `(state below the top, top state, mode)` that
    /// decides how the next real terminal reaches the LR parser:
    /// - [`MODE_DIRECT`]: straight to the parser, at bracket depth 0;
    /// - [`MODE_IN_BRACKETS`]: straight to the parser, inside brackets (the
    ///   layout drops newlines there);
    /// - [`MODE_PENDING_SAME`]: after a newline, at the current block's column
    ///   (no INDENT/DEDENT);
    /// - [`MODE_PENDING_INDENT`]: after a newline, deeper (one INDENT first).
    ///
    /// `None` when the next terminal would dedent or be rejected by the
    /// layout (inconsistent tabs), or the stack has a single state.
    #[inline]
    pub fn context(&self) -> Option<(u32, u32, u32)> {
        if self.ey.is_some() {
            return None;
        }
        let (b, t) = self.lr.top2()?;
        if !self.pending {
            return Some((b, t, if self.depth > 0 { MODE_IN_BRACKETS } else { MODE_DIRECT }));
        }
        let (top, top_alt) = self.stack_at(self.stack_len() - 1);
        if self.col == top && self.alt == top_alt {
            Some((b, t, MODE_PENDING_SAME))
        } else if self.col > top && self.alt > top_alt && self.n_pushed < self.pushed.len() {
            Some((b, t, MODE_PENDING_INDENT))
        } else {
            None
        }
    }

    /// Where [`context`](Self::context) is `None` because the next real
    /// terminal would dedent: the context after those DEDENTs, `(state below
    /// the top, top state entered by DEDENT, MODE_PENDING_SAME)`. The layout
    /// then feeds a real terminal straight to the parser, as in any
    /// `MODE_PENDING_SAME` context, so sequences that start with a real
    /// terminal have the same verdicts from here as from that context.
    /// `None` when not dedenting, when the dedent is inconsistent, or when
    /// the LR parser rejects a DEDENT.
    /// `low` is lowered to the lowest LR stack node read (see [`LrCursor::low`]).
    pub fn dedent_context(&self, g: &IncTables, low: &mut usize) -> Option<(u32, u32, u32)> {
        let r = g.indent.as_ref()?;
        if !self.pending || self.depth > 0 || self.ey.is_some() {
            return None;
        }
        let n = self.stack_len();
        if self.col >= self.stack_at(n - 1).0 {
            return None;
        }
        let Some(Layout::Feed { indent: false, dedents, feed: true }) =
            layout_of(r, g.events, r.dedent, self.depth, self.pending, self.col, self.alt, n, |i| self.stack_at(i))
        else {
            return None;
        };
        let mut lr = self.lr.clone();
        for _ in 0..dedents {
            if !lr.feed(&g.tables, TerminalId(r.dedent)) {
                *low = (*low).min(lr.low(false));
                return None;
            }
        }
        *low = (*low).min(lr.low(true));
        let (b, t) = lr.top2()?;
        Some((b, t, MODE_PENDING_SAME))
    }

    /// See [`LrCursor::low`]: the lowest LR stack node read so far.
    #[inline]
    pub fn lr_low(&self, top2: bool) -> usize {
        self.lr.low(top2)
    }

    /// Feed one lexer-level symbol. False if it is rejected (the cursor is
    /// then unusable).
    #[inline]
    pub fn push(&mut self, g: &IncTables, s: Sym) -> bool {
        let Some(r) = &g.indent else {
            if let Some(c) = &mut self.ey {
                return g.earley.as_deref().is_some_and(|t| c.feed(t, s));
            }
            if g.events.is_mode(s) {
                return g.mode_ok(self.lr.top(), s);
            }
            return self.lr.feed(&g.tables, TerminalId(s));
        };
        let ev = g.events;
        let lay = layout_of(r, ev, s, self.depth, self.pending, self.col, self.alt, self.stack_len(), |i| self.stack_at(i));
        match lay {
            None => false,
            Some(Layout::Skip) => {
                if ev.is_event(s) && self.depth == 0 && self.pending {
                    (self.col, self.alt) = step_col(ev, s, self.col, self.alt);
                }
                true
            }
            Some(Layout::Feed { indent, dedents, feed }) => {
                let t = &g.tables;
                if s == r.newline {
                    if feed && !self.lr.feed(t, TerminalId(s)) {
                        return false;
                    }
                    self.pending = true;
                    self.col = 0;
                    self.alt = 0;
                    self.content = false;
                    return true;
                }
                if self.pending {
                    for _ in 0..dedents {
                        if !self.lr.feed(t, TerminalId(r.dedent)) {
                            return false;
                        }
                        if self.n_pushed > 0 {
                            self.n_pushed -= 1;
                        } else {
                            self.keep -= 1;
                        }
                    }
                    if indent {
                        if self.n_pushed == self.pushed.len() || !self.lr.feed(t, TerminalId(r.indent)) {
                            return false;
                        }
                        self.pushed[self.n_pushed] = (self.col, self.alt);
                        self.n_pushed += 1;
                    }
                    self.pending = false;
                }
                if !self.lr.feed(t, TerminalId(s)) {
                    return false;
                }
                self.content = true;
                self.depth = bracket_depth(r, s, self.depth);
                true
            }
        }
    }

    /// For the general parser: an id of the current item set. Two cursors
    /// of one parser with the same id accept the same continuations (valid
    /// while either cursor lives).
    #[inline]
    pub fn general_state(&self) -> Option<usize> {
        self.ey.as_ref().map(|c| c.state_id())
    }

    /// Feed several symbols.
    #[inline]
    pub fn push_all(&mut self, g: &IncTables, syms: &[Sym]) -> bool {
        syms.iter().all(|&s| self.push(g, s))
    }

    /// Can the input end here? (Synthesizes the final newline and dedents.)
    pub fn finish(mut self, g: &IncTables) -> bool {
        if let Some(c) = &self.ey {
            return c.accepts_eof();
        }
        let t = &g.tables;
        if let Some(r) = &g.indent {
            if self.content && !self.pending && !self.lr.feed(t, TerminalId(r.newline)) {
                return false;
            }
            for _ in 1..self.stack_len() {
                if !self.lr.feed(t, TerminalId(r.dedent)) {
                    return false;
                }
            }
        }
        self.lr.feed_eof(t)
    }
}

