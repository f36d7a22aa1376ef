//! `is_always_legal` proved on the LALR(1) automaton: the appendix's
//! unlimited-credit exploration (Alg. 2), run on the deterministic LR
//! automaton instead of the nondeterministic DFT pushdown automaton.
//!
//! Why a second prover: the DFT automaton chooses a rule alternative when it
//! enters `•A`, so after `(` it holds *one* item, e.g. `classdef ::= … "(" • ")"`,
//! and the exploration must show that every such item continues with `S`.
//! `is_always_legal(LPAR, NAME)` is then unknown although no prefix ending in
//! `(` rejects a following name: another alternative (`"(" • arguments ")"`)
//! always exists beside it. An LR state holds all the items at once (it is the
//! left-factored view), so a run over LR states asks exactly the right question.
//!
//! # Glossary (paper → code)
//!
//! | paper (appendix §4)                        | here                                                   |
//! |--------------------------------------------|--------------------------------------------------------|
//! | PDA state after reading `X`                | an LR state entered by shifting `X` ([`LrProver::entered_by`]) |
//! | stack symbols, borrowed when popped        | LR states below the known part of the stack: every state with an edge into the bottom known state ([`LrProver::preds`]) |
//! | debt NFA node                              | `(known stack K, rest of S)`, memoised ([`Verdict`] per node) |
//! | maximum stack size                         | `max_stack`: `K` keeps its top `max_stack` states; forgetting the bottom only widens later borrowing |
//! | ε-coaccessible (every borrowed symbol leads to acceptance of S) | `Verdict::good`: AND over borrowed states; `Verdict::possible`: OR (for "never") |
//!
//! The parser is deterministic on the known stack, so a node only branches
//! where it borrows; after a borrow the known stack is `[p, goto(p, A)]`,
//! whatever the query, so nodes are memoised across queries (cycles, depth
//! and budget overruns count as "doubt": not good, possible).
//!
//! # Soundness
//! Let `P·X ∈ Lp`. The LR parser's stack after `P·X` is `σ·s0` with `s0`
//! entered by shifting `X`. Every adjacent pair `(t, u)` of a real stack has an
//! edge `t → u` in the LR(0) automaton, so the real stack is among the stacks
//! the exploration borrows (it enumerates *all* predecessors). The parser is
//! deterministic given the stack, and the exploration runs it exactly on the
//! known part. If every explored run shifts all of `S`, the real one does, and
//! the parser shifts a terminal only when the input so far is a viable prefix
//! (see `parser` module docs: `accepts` is exact), so `P·X·S ∈ Lp`.
//! Borrowing below a state with no predecessors at the needed depth is
//! vacuous (no real stack has that shape); every other doubt (an error entry
//! reached on a borrowed stack, a missing goto, a node budget overrun) answers
//! "unknown".

use std::cell::RefCell;
use crate::hash::FxMap as HashMap;
use std::rc::Rc;

use crate::ids::{NonterminalId, ParseStateId, TerminalId};
use crate::parser::{Action, LrTables};

/// Recursion depth (nested borrows) past which a node is a doubt.
const MAX_DEPTH: u32 = 256;
/// Reductions in a row on one node before giving up (valid tables never get near).
const MAX_REDUCTIONS: usize = 10_000;

/// What is known of a node: `good` = every stack it stands for shifts the
/// rest of `S`; `possible` = some may. (`good && !possible` only for shapes
/// no real stack has.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub good: bool,
    pub possible: bool,
}

const DONE: Verdict = Verdict { good: true, possible: true };
const FAIL: Verdict = Verdict { good: false, possible: false };
const DOUBT: Verdict = Verdict { good: false, possible: true };
const VACUOUS: Verdict = Verdict { good: true, possible: false };

/// Precomputed LR(0) edges of the parse tables, and the node memo.
pub struct LrProver {
    t: LrTables,
    max_stack: usize,
    /// `preds[s]`: states with an edge (shift or goto) into `s`.
    preds: Vec<Vec<u32>>,
    /// `entered[x]`: states entered by shifting terminal `x`.
    entered: Vec<Vec<u32>>,
    /// `(s, d)` → index into the second vector (a map type the crate has already).
    preds_at: RefCell<(HashMap<(u32, u32), u32>, Vec<Rc<Vec<u32>>>)>,
    /// `None` while a node is being evaluated (a cycle reads it as doubt).
    memo: RefCell<HashMap<(Vec<u32>, Vec<u32>), Option<Verdict>>>,
}

impl LrProver {
    /// `max_stack`: known-stack states kept (at least 2).
    pub fn new(t: &LrTables, max_stack: usize) -> LrProver {
        let ns = t.n_states() as usize;
        let nt = t.n_terminals();
        let mut preds = vec![Vec::new(); ns];
        let mut entered = vec![Vec::new(); nt as usize];
        for s in 0..ns as u32 {
            for x in 0..nt {
                if let Action::Shift(u) = t.action(ParseStateId(s), TerminalId(x)) {
                    preds[u.index()].push(s);
                    entered[x as usize].push(u.0);
                }
            }
            for a in 0..t.n_nonterminals() {
                if let Some(u) = t.goto(ParseStateId(s), NonterminalId(a)) {
                    preds[u.index()].push(s);
                }
            }
        }
        for v in preds.iter_mut().chain(entered.iter_mut()) {
            v.sort_unstable();
            v.dedup();
        }
        LrProver {
            t: t.clone(),
            max_stack: max_stack.max(2),
            preds,
            entered,
            preds_at: RefCell::new((HashMap::default(), Vec::new())),
            memo: RefCell::new(HashMap::default()),
        }
    }

    /// States entered by shifting `x`.
    pub fn entered_by(&self, x: TerminalId) -> &[u32] {
        self.entered.get(x.index()).map_or(&[], |v| v.as_slice())
    }

    /// States with an edge into `s`.
    pub fn preds(&self, s: u32) -> &[u32] {
        self.preds.get(s as usize).map_or(&[], |v| v.as_slice())
    }

    /// Forget memoised nodes (bounds memory between groups of queries).
    pub fn clear_memo(&self) {
        self.memo.borrow_mut().clear();
    }

    /// States `d` edges below `s`.
    fn preds_at(&self, s: u32, d: usize) -> Rc<Vec<u32>> {
        let key = (s, d as u32); // a depth, far below 2^32
        if let Some(&i) = self.preds_at.borrow().0.get(&key) {
            return self.preds_at.borrow().1[i as usize].clone();
        }
        let mut cur = vec![s];
        for _ in 0..d {
            let mut next: Vec<u32> = cur
                .iter()
                .flat_map(|&u| self.preds(u).iter().copied())
                .collect();
            next.sort_unstable();
            next.dedup();
            cur = next;
        }
        let v = Rc::new(cur);
        let mut m = self.preds_at.borrow_mut();
        let i = m.1.len() as u32;
        m.0.insert(key, i);
        m.1.push(v.clone());
        v
    }

    /// `∀P: P·x ∈ Lp ⇒ P·x·s ∈ Lp`; `true` is a proof, `false` means unknown.
    pub fn is_always_legal(&self, x: TerminalId, s: &[TerminalId]) -> bool {
        if s.is_empty() {
            return true;
        }
        if s.iter()
            .chain(std::iter::once(&x))
            .any(|y| y.0 >= self.t.eof().0)
        {
            return false;
        }
        let s: Vec<u32> = s.iter().map(|y| y.0).collect();
        self.entered_by(x)
            .iter()
            .all(|&s0| self.node(vec![s0], &s, 0).good)
    }

    /// Verdict of `s` for a parser whose two top states are `(t, top)`, any
    /// stack below: `good` = every such stack shifts all of `s`, `!possible` =
    /// none does.
    pub fn verdict_in(&self, t: u32, top: u32, s: &[u32]) -> Verdict {
        if s.iter().any(|&y| y >= self.t.eof().0) {
            return DOUBT;
        }
        self.node(vec![t, top], s, 0)
    }

    /// The memoised node `(k, s)`.
    fn node(&self, k: Vec<u32>, s: &[u32], depth: u32) -> Verdict {
        if s.is_empty() {
            return DONE;
        }
        if depth > MAX_DEPTH {
            return DOUBT;
        }
        let key = (k, s.to_vec());
        match self.memo.borrow().get(&key) {
            Some(Some(v)) => return *v,
            Some(None) => return DOUBT, // a cycle
            None => {}
        }
        self.memo.borrow_mut().insert(key.clone(), None);
        let v = self.run(key.0.clone(), s, depth);
        self.memo.borrow_mut().insert(key, Some(v));
        v
    }

    /// Run the parser on `s` from known stack `k` (deterministic) until it
    /// shifts all of `s`, fails, or must borrow below `k`.
    fn run(&self, mut k: Vec<u32>, s: &[u32], depth: u32) -> Verdict {
        let t = &self.t;
        let mut pos = 0;
        let mut reductions = 0;
        while pos < s.len() {
            let top = *k.last().expect("known stack is never empty");
            match t.action(ParseStateId(top), TerminalId(s[pos])) {
                Action::Shift(u) => {
                    k.push(u.0);
                    if k.len() > self.max_stack {
                        k.remove(0);
                    }
                    pos += 1;
                    reductions = 0;
                }
                Action::Reduce(r) => {
                    reductions += 1;
                    if reductions > MAX_REDUCTIONS {
                        return DOUBT;
                    }
                    let n = t.rule_len()[r.index()] as usize;
                    let a = NonterminalId(t.rule_lhs()[r.index()]);
                    if n < k.len() {
                        k.truncate(k.len() - n);
                        match t.goto(ParseStateId(*k.last().unwrap()), a) {
                            Some(g) => k.push(g.0),
                            None => return DOUBT,
                        }
                        continue;
                    }
                    // Borrow: the new top lies `n - |k| + 1` edges below k[0].
                    let tops = self.preds_at(k[0], n - k.len() + 1);
                    if tops.is_empty() {
                        return VACUOUS; // no real stack has this shape
                    }
                    let mut v = VACUOUS;
                    for &p in tops.iter() {
                        let w = match t.goto(ParseStateId(p), a) {
                            Some(g) => self.node(vec![p, g.0], &s[pos..], depth + 1),
                            None => DOUBT,
                        };
                        v.good &= w.good;
                        v.possible |= w.possible;
                        if !v.good && v.possible {
                            break; // nothing more to learn
                        }
                    }
                    return v;
                }
                Action::Error | Action::Accept => return FAIL,
            }
        }
        DONE
    }
}
