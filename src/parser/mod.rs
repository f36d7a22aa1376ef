//! LALR(1) parse tables and the incremental LR parser.
//!
//! - [`LrTables`]: a dense ACTION table over terminal ids `0..n` where the
//!   last id (`n_terminals - 1`) is `$END` ([`LrTables::eof`]), and the GOTO
//!   table by rows of (nonterminal, state) pairs (dense in a blob). Built by
//!   [`lalr::build_tables`] (feature `compiler`) or loaded from a blob with
//!   [`LrTables::from_parts`], which validates every index.
//! - [`LrParser`]: an LR parser over a persistent stack ([`stack::PStack`]):
//!   cloning is O(1), so the matcher can fork it per candidate token.
//!
//! Semantics of the queries. The tables contain no default reductions, but
//! LALR(1) lookahead merging still lets a state reduce on a terminal that is
//! rejected only after the reductions. [`LrParser::accepts`] therefore runs the
//! reductions (on a scratch overlay, never touching the stack) and answers true
//! only if every terminal is actually *shifted*; [`LrParser::accepts_eof`] is
//! true only if `accept` is reached. Both are exact: `accepts(w)` holds iff the
//! consumed input followed by `w` is a prefix of some sentence of the grammar
//! (for tables from `lalr::build_tables`, which rejects grammars with
//! reachable nonterminals that derive no terminal string).
//!
//! Grammars that are not LALR(1) (a [`crate::grammar::ConflictPolicy::General`]
//! grammar) run on the general parser, [`earley`], behind the same
//! interface ([`incremental::IncParser`]).
//!
//! Action encoding (`u32`): `0` = error, `(s << 2) | 1` = shift to state `s`,
//! `(r << 2) | 2` = reduce by rule `r`, `3` = accept (only in the `$END`
//! column). Goto: `u32::MAX` = none.

pub mod stack;
pub mod alphabet;
pub mod indent;
pub mod incremental;
pub mod earley;

#[cfg(feature = "compiler")]
pub mod lalr;

use crate::err;
use crate::ids::{NonterminalId, ParseStateId, RuleId, TerminalId};
use crate::Result;
use stack::{Node, PStack};

const TAG_SHIFT: u32 = 1;
const TAG_REDUCE: u32 = 2;
const ACCEPT: u32 = 3;
/// Goto entry meaning "no transition".
pub const NO_GOTO: u32 = u32::MAX;
/// Largest state or rule id that the action encoding can hold.
pub const MAX_ACTION_ID: u32 = (1 << 30) - 1;
/// Reductions allowed for one terminal before the tables are declared
/// broken (valid tables never get near it; corrupt ones must not hang).
const MAX_REDUCTIONS_PER_TERMINAL: u32 = 1 << 20;

/// A decoded action-table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Error,
    Shift(ParseStateId),
    Reduce(RuleId),
    Accept,
}

impl Action {
    pub fn encode(self) -> u32 {
        match self {
            Action::Error => 0,
            Action::Shift(s) => (s.0 << 2) | TAG_SHIFT,
            Action::Reduce(r) => (r.0 << 2) | TAG_REDUCE,
            Action::Accept => ACCEPT,
        }
    }
    pub fn decode(a: u32) -> Action {
        match a & 3 {
            TAG_SHIFT => Action::Shift(ParseStateId(a >> 2)),
            TAG_REDUCE => Action::Reduce(RuleId(a >> 2)),
            ACCEPT => Action::Accept,
            _ => Action::Error,
        }
    }
}

/// The raw pieces of [`LrTables`], for serialization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LrTableParts {
    /// Grammar terminals + 1 (`$END` is the last id).
    pub n_terminals: u32,
    pub n_nonterminals: u32,
    pub n_states: u32,
    pub start_state: u32,
    /// `n_states * n_terminals`, row-major by state.
    pub action: Vec<u32>,
    /// `n_states * n_nonterminals`, row-major by state.
    pub goto_: Vec<u32>,
    pub rule_lhs: Vec<u32>,
    pub rule_len: Vec<u32>,
}

/// The GOTO table by state: state `s`'s entries are
/// `nt[first[s]..first[s + 1]]` (nonterminals, ascending) and the states
/// `to[..]` they lead to. Most cells of a dense GOTO table are empty (a
/// schema's grammar: 35 k states x 700 nonterminals, 99 MB dense).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct SparseGoto {
    pub first: Vec<u32>,
    pub nt: Vec<u32>,
    pub to: Vec<u32>,
}

impl SparseGoto {
    /// The goto of state `s` on nonterminal `n`, or [`NO_GOTO`].
    #[inline]
    fn get(&self, s: u32, n: u32) -> u32 {
        let (a, b) = (self.first[s as usize] as usize, self.first[s as usize + 1] as usize);
        match self.nt[a..b].binary_search(&n) {
            Ok(i) => self.to[a + i],
            Err(_) => NO_GOTO,
        }
    }
}

/// LALR(1) tables (see the module doc for the encoding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LrTables {
    n_terminals: u32,
    n_nonterminals: u32,
    n_states: u32,
    start_state: u32,
    action: Vec<u32>,
    goto_: SparseGoto,
    rule_lhs: Vec<u32>,
    rule_len: Vec<u32>,
}

impl LrTables {
    /// The tables of a grammar that runs on the general parser: one state,
    /// every action an error (never consulted).
    pub fn placeholder(n_terminals: u32) -> LrTables {
        let n = n_terminals + 1;
        LrTables { n_terminals: n, n_nonterminals: 0, n_states: 1, start_state: 0, action: vec![0; n as usize], goto_: SparseGoto { first: vec![0, 0], nt: Vec::new(), to: Vec::new() }, rule_lhs: Vec::new(), rule_len: Vec::new() }
    }

    /// Validates and assembles tables. Every index is checked, so a parser
    /// driven by the result never indexes out of bounds; errors are
    /// [`crate::ErrorKind::BlobCorrupt`].
    pub fn from_parts(mut p: LrTableParts) -> Result<LrTables> {
        let n_goto = (p.n_states as usize).checked_mul(p.n_nonterminals as usize);
        if n_goto != Some(p.goto_.len()) {
            return Err(err!(BlobCorrupt, "LR tables: goto table has {} entries, expected {} x {}", p.goto_.len(), p.n_states, p.n_nonterminals));
        }
        let nn = p.n_nonterminals as usize;
        let mut g = SparseGoto { first: Vec::with_capacity(p.n_states as usize + 1), ..Default::default() };
        g.first.push(0);
        for s in 0..p.n_states as usize {
            for (n, &to) in p.goto_[s * nn..(s + 1) * nn].iter().enumerate() {
                if to != NO_GOTO {
                    g.nt.push(n as u32);
                    g.to.push(to);
                }
            }
            g.first.push(g.nt.len() as u32);
        }
        p.goto_ = Vec::new();
        LrTables::with_goto(p, g)
    }

    /// [`LrTables::from_parts`] with the GOTO table given by rows (`p.goto_`
    /// is ignored): no dense GOTO table is ever allocated.
    pub(crate) fn with_goto(p: LrTableParts, goto_: SparseGoto) -> Result<LrTables> {
        let LrTableParts { n_terminals, n_nonterminals, n_states, start_state, action, goto_: _, rule_lhs, rule_len } = p;
        if n_terminals == 0 {
            return Err(err!(BlobCorrupt, "LR tables: no terminals (not even $END)"));
        }
        if n_states == 0 || n_states > MAX_ACTION_ID + 1 {
            return Err(err!(BlobCorrupt, "LR tables: bad state count {n_states}"));
        }
        if start_state >= n_states {
            return Err(err!(BlobCorrupt, "LR tables: start state {start_state} >= {n_states} states"));
        }
        let n_action = (n_states as usize).checked_mul(n_terminals as usize);
        if n_action != Some(action.len()) {
            return Err(err!(BlobCorrupt, "LR tables: action table has {} entries, expected {n_states} x {n_terminals}", action.len()));
        }
        // Rows are well-formed by construction (from a dense table, or from
        // the LR(0) states); their targets are checked below.
        debug_assert!(
            goto_.first.len() == n_states as usize + 1
                && goto_.first[n_states as usize] as usize == goto_.nt.len()
                && goto_.nt.len() == goto_.to.len()
                && goto_.nt.iter().all(|&n| n < n_nonterminals)
        );
        if rule_lhs.len() != rule_len.len() || rule_lhs.len() > MAX_ACTION_ID as usize + 1 {
            return Err(err!(BlobCorrupt, "LR tables: {} rule lhs vs {} rule lengths", rule_lhs.len(), rule_len.len()));
        }
        if let Some(r) = rule_lhs.iter().position(|&a| a >= n_nonterminals) {
            return Err(err!(BlobCorrupt, "LR tables: rule {r} has lhs {} >= {n_nonterminals} nonterminals", rule_lhs[r]));
        }
        let eof = n_terminals - 1;
        // Row by row: no division per entry (this runs at every blob load).
        let n_rules = rule_lhs.len();
        let bad = |a: u32, t: u32| match a & 3 {
            0 => a != 0,
            TAG_SHIFT => a >> 2 >= n_states,
            TAG_REDUCE => (a >> 2) as usize >= n_rules,
            _ => a != ACCEPT || t != eof,
        };
        for (s, row) in action.chunks_exact(n_terminals as usize).enumerate() {
            if let Some(t) = (0..n_terminals).find(|&t| bad(row[t as usize], t)) {
                let a = row[t as usize];
                return Err(err!(BlobCorrupt, "LR tables: bad action {a:#x} in state {s} on terminal {t}"));
            }
        }
        if let Some(i) = goto_.to.iter().position(|&g| g >= n_states) {
            return Err(err!(BlobCorrupt, "LR tables: goto entry {i} targets state {} >= {n_states}", goto_.to[i]));
        }
        Ok(LrTables { n_terminals, n_nonterminals, n_states, start_state, action, goto_, rule_lhs, rule_len })
    }

    /// A copy of the raw pieces (for writing a blob), the GOTO table dense.
    pub fn to_parts(&self) -> LrTableParts {
        let nn = self.n_nonterminals as usize;
        let mut goto_ = vec![NO_GOTO; self.n_states as usize * nn];
        for s in 0..self.n_states as usize {
            for i in self.goto_.first[s] as usize..self.goto_.first[s + 1] as usize {
                goto_[s * nn + self.goto_.nt[i] as usize] = self.goto_.to[i];
            }
        }
        LrTableParts {
            n_terminals: self.n_terminals,
            n_nonterminals: self.n_nonterminals,
            n_states: self.n_states,
            start_state: self.start_state,
            action: self.action.clone(),
            goto_,
            rule_lhs: self.rule_lhs.clone(),
            rule_len: self.rule_len.clone(),
        }
    }

    /// Number of terminal ids, `$END` included.
    pub fn n_terminals(&self) -> u32 {
        self.n_terminals
    }
    pub fn n_nonterminals(&self) -> u32 {
        self.n_nonterminals
    }
    pub fn n_states(&self) -> u32 {
        self.n_states
    }
    pub fn n_rules(&self) -> u32 {
        self.rule_lhs.len() as u32
    }
    pub fn start_state(&self) -> ParseStateId {
        ParseStateId(self.start_state)
    }
    /// The end-of-input terminal (`n_terminals - 1`).
    pub fn eof(&self) -> TerminalId {
        TerminalId(self.n_terminals - 1)
    }
    pub fn action_table(&self) -> &[u32] {
        &self.action
    }
    pub fn rule_lhs(&self) -> &[u32] {
        &self.rule_lhs
    }
    pub fn rule_len(&self) -> &[u32] {
        &self.rule_len
    }

    /// The action in state `s` on terminal `t` (`Error` when out of range).
    pub fn action(&self, s: ParseStateId, t: TerminalId) -> Action {
        if s.0 >= self.n_states || t.0 >= self.n_terminals {
            return Action::Error;
        }
        Action::decode(self.action[s.index() * self.n_terminals as usize + t.index()])
    }

    /// The goto of state `s` on nonterminal `n`.
    pub fn goto(&self, s: ParseStateId, n: NonterminalId) -> Option<ParseStateId> {
        if s.0 >= self.n_states || n.0 >= self.n_nonterminals {
            return None;
        }
        match self.goto_.get(s.0, n.0) {
            NO_GOTO => None,
            g => Some(ParseStateId(g)),
        }
    }
}

/// What happened when one terminal was fed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Shifted,
    Accepted,
    Error,
}

/// Overlay capacity: states pushed during a query live here before spilling
/// into a `Vec`.
const OVERLAY: usize = 32;

/// A scratch view of the stack for queries: the persistent part below
/// `base` is read through borrowed references (no refcount traffic), states
/// pushed by the simulation sit in a fixed overlay (then `spill`); `top` is
/// the current top state.
#[derive(Clone)]
struct Sim<'a> {
    base: &'a Node,
    top: u32,
    n: usize,
    ovl: [u32; OVERLAY],
    spill: Vec<u32>,
}

impl<'a> Sim<'a> {
    #[inline]
    fn new(base: &'a Node) -> Self {
        Sim { base, top: base.state(), n: 0, ovl: [0; OVERLAY], spill: Vec::new() }
    }

    #[inline]
    fn push(&mut self, s: u32) {
        if self.n < OVERLAY {
            self.ovl[self.n] = s;
            self.n += 1;
        } else {
            // `n` stays at OVERLAY while `spill` holds the states above it.
            self.spill.push(s);
        }
        self.top = s;
    }

    /// Pops `k` states; false if that would remove the bottom node.
    #[inline]
    fn pop(&mut self, mut k: usize) -> bool {
        if !self.spill.is_empty() {
            let m = k.min(self.spill.len());
            self.spill.truncate(self.spill.len() - m);
            k -= m;
            if let Some(&s) = self.spill.last() {
                self.top = s;
                return true;
            }
        }
        if k < self.n {
            self.n -= k;
            self.top = self.ovl[self.n - 1];
            return true;
        }
        k -= self.n;
        self.n = 0;
        while k > 0 {
            match self.base.parent() {
                Some(p) => self.base = p,
                None => return false,
            }
            k -= 1;
        }
        self.top = self.base.state();
        true
    }

    /// `(state below the top, top state)`, if the stack has two states.
    #[inline]
    fn top2(&self) -> Option<(u32, u32)> {
        let below = match self.spill.len() {
            0 if self.n >= 2 => self.ovl[self.n - 2],
            0 if self.n == 1 => self.base.state(),
            0 => self.base.parent()?.state(),
            1 => self.ovl[self.n - 1],
            k => self.spill[k - 2],
        };
        Some((below, self.top))
    }

    /// Runs the reductions for `term` (which must be `< n_terminals`) and
    /// shifts it if possible.
    #[inline]
    fn feed(&mut self, t: &LrTables, term: u32) -> Step {
        let nt = t.n_terminals as usize;
        let mut reductions = 0u32;
        loop {
            let a = t.action[self.top as usize * nt + term as usize];
            match a & 3 {
                TAG_SHIFT => {
                    self.push(a >> 2);
                    return Step::Shifted;
                }
                TAG_REDUCE => {
                    let r = (a >> 2) as usize;
                    if !self.pop(t.rule_len[r] as usize) {
                        return Step::Error;
                    }
                    let g = t.goto_.get(self.top, t.rule_lhs[r]);
                    reductions += 1;
                    if g == NO_GOTO || reductions > MAX_REDUCTIONS_PER_TERMINAL {
                        return Step::Error;
                    }
                    self.push(g);
                }
                ACCEPT => return Step::Accepted,
                _ => return Step::Error,
            }
        }
    }
}

/// A non-mutating view of an [`LrParser`] that terminals can be fed into one
/// at a time; `Clone` is a small copy, so a depth-first search over terminal
/// sequences can keep one cursor per level (the mask computation does).
#[derive(Clone)]
pub struct LrCursor<'a> {
    sim: Sim<'a>,
}

impl LrCursor<'_> {
    /// Feed one terminal (not `$END`): its reductions, then its shift. False
    /// (and the cursor is then unusable) if it is not accepted.
    #[inline]
    pub fn feed(&mut self, t: &LrTables, term: TerminalId) -> bool {
        term.0 + 1 < t.n_terminals && self.sim.feed(t, term.0) == Step::Shifted
    }

    /// Can the input end here?
    #[inline]
    pub fn feed_eof(&mut self, t: &LrTables) -> bool {
        self.sim.feed(t, t.n_terminals - 1) == Step::Accepted
    }

    /// `(state below the top, top state)`, if the stack has two states.
    #[inline]
    pub fn top2(&self) -> Option<(u32, u32)> {
        self.sim.top2()
    }

    /// The state on top.
    #[inline]
    pub fn top(&self) -> u32 {
        self.sim.top
    }

    /// The depth (counted from the bottom, 1 = bottom node) of the lowest
    /// node of the persistent stack this cursor has read so far; with
    /// `top2`, also counting what [`LrCursor::top2`] reads (0: it read that
    /// the bottom has no parent). Everything the cursor did depends only on
    /// the stack's nodes from the top down to that one (and, when it is 1 or
    /// less, on where the bottom is).
    #[inline]
    pub fn low(&self, top2: bool) -> usize {
        let d = self.sim.base.depth();
        if top2 && self.sim.n == 0 && self.sim.spill.is_empty() {
            d - 1
        } else {
            d
        }
    }
}

/// An incremental LR parser. `Clone` is O(1) and shares the stack.
#[derive(Clone, Debug)]
pub struct LrParser {
    stack: PStack,
}

impl LrParser {
    pub fn new(t: &LrTables) -> Self {
        LrParser { stack: PStack::new(t.start_state) }
    }

    /// Would `terms` (in order) be accepted as a continuation, each one
    /// shifted after any reductions? The empty sequence is always accepted.
    /// `$END` counts as accepted only as the last terminal, when the parse
    /// reaches `accept`. Does not allocate unless a query pushes more than
    /// 32 states.
    #[inline]
    pub fn accepts(&self, t: &LrTables, terms: &[TerminalId]) -> bool {
        self.run(t, terms.iter().copied(), terms.len())
    }

    /// `accepts(prefix ++ more)` without building the concatenation.
    #[inline]
    pub fn accepts_prefix_then(&self, t: &LrTables, prefix: &[TerminalId], more: &[TerminalId]) -> bool {
        self.run(t, prefix.iter().chain(more).copied(), prefix.len() + more.len())
    }

    /// A cursor at the current state (see [`LrCursor`]).
    #[inline]
    pub fn cursor(&self) -> LrCursor<'_> {
        LrCursor { sim: Sim::new(self.stack.top()) }
    }

    /// Can the input end here?
    #[inline]
    pub fn accepts_eof(&self, t: &LrTables) -> bool {
        let mut sim = Sim::new(self.stack.top());
        sim.feed(t, t.n_terminals - 1) == Step::Accepted
    }

    #[inline]
    fn run(&self, t: &LrTables, terms: impl Iterator<Item = TerminalId>, len: usize) -> bool {
        let mut sim = Sim::new(self.stack.top());
        for (i, x) in terms.enumerate() {
            if x.0 >= t.n_terminals {
                return false;
            }
            match sim.feed(t, x.0) {
                Step::Shifted => {}
                Step::Accepted => return i + 1 == len,
                Step::Error => return false,
            }
        }
        true
    }

    /// Consumes `terms` (each shifted after its reductions). On error the
    /// parser is unchanged and the error (kind `Parse`) names the offending
    /// terminal id and the expected ones. `$END` cannot be consumed (use
    /// [`LrParser::accepts_eof`] / [`LrParser::consume_eof`]).
    pub fn consume(&mut self, t: &LrTables, terms: &[TerminalId]) -> Result<()> {
        let mut st = self.stack.clone();
        let nt = t.n_terminals as usize;
        let eof = t.n_terminals - 1;
        for (i, &x) in terms.iter().enumerate() {
            if x.0 >= eof {
                return Err(err!(Parse, "terminal id {} at position {i} cannot be consumed (n_terminals = {}, $END = {eof})", x.0, t.n_terminals));
            }
            let mut reductions = 0u32;
            loop {
                let a = t.action[st.state() as usize * nt + x.index()];
                match a & 3 {
                    TAG_SHIFT => {
                        st.push(a >> 2);
                        break;
                    }
                    TAG_REDUCE => {
                        let r = (a >> 2) as usize;
                        let ok = st.pop_n(t.rule_len[r] as usize);
                        let g = t.goto_.get(st.state(), t.rule_lhs[r]);
                        reductions += 1;
                        if !ok || g == NO_GOTO || reductions > MAX_REDUCTIONS_PER_TERMINAL {
                            return Err(err!(Parse, "corrupt LR tables: bad reduction by rule {r}"));
                        }
                        st.push(g);
                    }
                    _ => {
                        // Report relative to the state before this terminal.
                        let exp = LrParser::expected_after(t, self, &terms[..i]);
                        return Err(err!(Parse, "unexpected terminal {} at position {i}; expected one of {:?}", x.0, exp.iter().map(|e| e.0).collect::<Vec<_>>()));
                    }
                }
            }
        }
        self.stack = st;
        Ok(())
    }

    /// Ok if the input can end here (the parser is not changed), else a
    /// `Parse` error listing the expected terminals.
    pub fn consume_eof(&self, t: &LrTables) -> Result<()> {
        if self.accepts_eof(t) {
            Ok(())
        } else {
            let exp: Vec<u32> = self.expected(t).iter().map(|e| e.0).collect();
            Err(err!(Parse, "unexpected end of input; expected one of {exp:?}"))
        }
    }

    fn expected_after(t: &LrTables, p: &LrParser, prefix: &[TerminalId]) -> Vec<TerminalId> {
        (0..t.n_terminals).map(TerminalId).filter(|&x| p.accepts_prefix_then(t, prefix, &[x])).collect()
    }

    /// All terminals `x` (including `$END`) with `accepts(&[x])`.
    pub fn expected(&self, t: &LrTables) -> Vec<TerminalId> {
        let row = self.stack.state() as usize * t.n_terminals as usize;
        (0..t.n_terminals)
            .filter(|&x| t.action[row + x as usize] != 0 && self.accepts(t, &[TerminalId(x)]))
            .map(TerminalId)
            .collect()
    }

    /// Number of states on the stack (1 right after [`LrParser::new`]).
    pub fn depth(&self) -> usize {
        self.stack.depth()
    }

    /// The state on top of the stack.
    pub fn top_state(&self) -> ParseStateId {
        ParseStateId(self.stack.state())
    }

    /// The stack's states, top first.
    pub fn states(&self) -> impl Iterator<Item = ParseStateId> + '_ {
        self.stack.states().map(ParseStateId)
    }

    /// The underlying persistent stack.
    pub fn stack(&self) -> &PStack {
        &self.stack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-written tables for `s -> A s B | <empty>` (terminals A=0, B=1,
    /// $END=2; nonterminal s=0). States: 0 start, 1 after A, 2 s in 0
    /// (accept), 3 s after A, 4 B after s.
    fn anbn_parts() -> LrTableParts {
        let sh = |s: u32| Action::Shift(ParseStateId(s)).encode();
        let rd = |r: u32| Action::Reduce(RuleId(r)).encode();
        let action = vec![
            sh(1), 0, rd(1), // 0
            sh(1), rd(1), 0, // 1
            0, 0, ACCEPT, // 2
            0, sh(4), 0, // 3
            0, rd(0), rd(0), // 4
        ];
        let m = NO_GOTO;
        LrTableParts {
            n_terminals: 3,
            n_nonterminals: 1,
            n_states: 5,
            start_state: 0,
            action,
            goto_: vec![2, 3, m, m, m],
            rule_lhs: vec![0, 0],
            rule_len: vec![3, 0],
        }
    }

    #[test]
    fn hand_tables_anbn() {
        let t = LrTables::from_parts(anbn_parts()).unwrap();
        let (a, b) = (TerminalId(0), TerminalId(1));
        let p = LrParser::new(&t);
        assert!(p.accepts_eof(&t));
        assert!(p.accepts(&t, &[a, a, b, b]));
        assert!(!p.accepts(&t, &[a, b, b]));
        assert!(p.accepts(&t, &[a, b, t.eof()]));
        assert!(!p.accepts(&t, &[a, b, t.eof(), a]));
        let mut q = p.clone();
        q.consume(&t, &[a, a, b]).unwrap();
        assert!(!q.accepts_eof(&t));
        assert_eq!(q.expected(&t), vec![b]);
        assert!(q.consume(&t, &[a, b, b, b]).is_err());
        assert_eq!(q.depth(), 5); // 0 A A s B
        q.consume(&t, &[b]).unwrap();
        assert!(q.accepts_eof(&t));
        assert!(q.consume_eof(&t).is_ok());
        assert_eq!(p.depth(), 1);
    }

    #[test]
    fn from_parts_rejects_corruption() {
        type Corrupt = fn(&mut LrTableParts);
        let cases: &[(&str, Corrupt)] = &[
            ("shift target", |p| p.action[0] = Action::Shift(ParseStateId(5)).encode()),
            ("reduce rule", |p| p.action[1] = Action::Reduce(RuleId(2)).encode()),
            ("accept off $END", |p| p.action[0] = ACCEPT),
            ("garbage error", |p| p.action[1] = 4),
            ("garbage accept", |p| p.action[2] = 7),
            ("goto target", |p| p.goto_[1] = 5),
            ("lhs", |p| p.rule_lhs[1] = 1),
            ("start", |p| p.start_state = 5),
            ("action len", |p| {
                p.action.pop();
            }),
            ("goto len", |p| p.goto_.push(0)),
            ("rule arrays", |p| {
                p.rule_len.pop();
            }),
            ("no terminals", |p| p.n_terminals = 0),
            ("no states", |p| p.n_states = 0),
            ("overflow", |p| {
                p.n_states = u32::MAX;
                p.n_terminals = u32::MAX;
            }),
        ];
        for (name, f) in cases {
            let mut p = anbn_parts();
            f(&mut p);
            let e = LrTables::from_parts(p).expect_err(name);
            assert_eq!(e.kind(), crate::ErrorKind::BlobCorrupt, "{name}");
        }
        assert!(LrTables::from_parts(anbn_parts()).is_ok());
    }

    #[test]
    fn bad_but_valid_indices_do_not_panic_or_hang() {
        // A reduce that pops past the bottom, and an ε-reduce loop.
        let mut p = anbn_parts();
        p.rule_len[0] = 50;
        let t = LrTables::from_parts(p).unwrap();
        let par = LrParser::new(&t);
        assert!(!par.accepts(&t, &[TerminalId(0), TerminalId(1), TerminalId(1)]));
        let mut p = anbn_parts();
        p.goto_[0] = 0; // state 0 reduces s -> ε on $END, goto 0, forever
        let t = LrTables::from_parts(p).unwrap();
        let mut par = LrParser::new(&t);
        assert!(!par.accepts_eof(&t));
        assert!(par.consume(&t, &[TerminalId(9)]).is_err());
        assert!(!par.accepts(&t, &[TerminalId(9)]));
    }
}
