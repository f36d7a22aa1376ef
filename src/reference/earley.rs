//! A textbook Earley recognizer over terminal ids: the reference for the
//! general parser ([`crate::parser::earley`]), written from the definition
//! and sharing no code with it.
//!
//! An item is `(rule, dot, origin)`; each set is closed by prediction and
//! completion repeated until nothing changes (so nullable rules need no
//! special case). Rules that mention a nonterminal deriving no terminal
//! string are never predicted: then the input is a *viable prefix* (some
//! sentence starts with it) iff its last set is not empty.

use crate::grammar::{Cfg, Symbol};
use std::collections::BTreeSet;

type Item = (usize, usize, usize); // (rule, dot, origin); rule == rules.len() is S' -> S

/// The reference recognizer's grammar.
pub struct RefEarley {
    rules: Vec<(usize, Vec<Symbol>)>,
    start: usize,
    usable: Vec<bool>,
}

/// A parse in progress: every item set so far.
#[derive(Clone, PartialEq, Eq)]
pub struct RefEarleyParse {
    sets: Vec<BTreeSet<Item>>,
}

impl RefEarley {
    pub fn new(cfg: &Cfg) -> RefEarley {
        let rules: Vec<(usize, Vec<Symbol>)> = cfg.rules.iter().map(|r| (r.lhs.index(), r.rhs.clone())).collect();
        let mut productive = vec![false; cfg.nonterminals.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (lhs, rhs) in &rules {
                let ok = rhs.iter().all(|s| match s {
                    Symbol::T(_) => true,
                    Symbol::N(n) => productive[n.index()],
                });
                if ok && !productive[*lhs] {
                    productive[*lhs] = true;
                    changed = true;
                }
            }
        }
        let usable = rules.iter().map(|(l, rhs)| productive[*l] && rhs.iter().all(|s| !matches!(s, Symbol::N(n) if !productive[n.index()]))).collect();
        RefEarley { rules, start: cfg.start.index(), usable }
    }

    fn rhs(&self, r: usize) -> Vec<Symbol> {
        if r == self.rules.len() {
            vec![Symbol::N(crate::ids::NonterminalId::new(self.start))]
        } else {
            self.rules[r].1.clone()
        }
    }

    fn close(&self, sets: &mut [BTreeSet<Item>]) {
        let i = sets.len() - 1;
        loop {
            let mut add = Vec::new();
            for &(r, d, o) in &sets[i] {
                let rhs = self.rhs(r);
                match rhs.get(d) {
                    Some(Symbol::N(n)) => {
                        for (k, (l, _)) in self.rules.iter().enumerate() {
                            if *l == n.index() && self.usable[k] {
                                add.push((k, 0, i));
                            }
                        }
                    }
                    Some(Symbol::T(_)) => {}
                    None => {
                        let lhs = if r == self.rules.len() { usize::MAX } else { self.rules[r].0 };
                        for &(r2, d2, o2) in &sets[o] {
                            if self.rhs(r2).get(d2) == Some(&Symbol::N(crate::ids::NonterminalId::new(lhs))) {
                                add.push((r2, d2 + 1, o2));
                            }
                        }
                    }
                }
            }
            let before = sets[i].len();
            sets[i].extend(add);
            if sets[i].len() == before {
                return;
            }
        }
    }

    /// The parse of the empty input.
    pub fn start(&self) -> RefEarleyParse {
        let mut sets = vec![BTreeSet::from([(self.rules.len(), 0, 0)])];
        self.close(&mut sets);
        RefEarleyParse { sets }
    }

    /// Feed terminal `t`: false (and `p` unchanged) if the input is then no
    /// viable prefix.
    pub fn feed(&self, p: &mut RefEarleyParse, t: u32) -> bool {
        let last = p.sets.last().expect("set 0");
        let next: BTreeSet<Item> = last
            .iter()
            .filter(|&&(r, d, _)| matches!(self.rhs(r).get(d), Some(Symbol::T(x)) if x.0 == t))
            .map(|&(r, d, o)| (r, d + 1, o))
            .collect();
        if next.is_empty() {
            return false;
        }
        p.sets.push(next);
        self.close(&mut p.sets);
        true
    }

    /// Is the input so far a sentence?
    pub fn accepts_eof(&self, p: &RefEarleyParse) -> bool {
        p.sets.last().expect("set 0").contains(&(self.rules.len(), 1, 0))
    }
}
