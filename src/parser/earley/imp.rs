//! The general parser's implementation (feature `compiler`; see [`super`]).

use crate::grammar::{Cfg, Symbol};
use std::rc::Rc;

const END: u32 = u32::MAX;
/// Most prediction-closure entries the tables may hold (all nonterminals
/// together; 4 bytes each).
pub const MAX_PREDICTION_ITEMS: usize = 1 << 24;

/// The grammar in Earley form.
#[derive(Debug)]
pub struct EarleyTables {
    n_terms: u32,
    /// Per rhs position: the symbol there (terminal `t`, nonterminal
    /// `n_terms + n`), or `END` at a rule's end.
    sym: Vec<u32>,
    /// Per rhs position: its rule's left-hand side.
    lhs: Vec<u32>,
    /// Per nonterminal: the first rhs position of each of its rules.
    starts: Vec<Vec<u32>>,
    nullable: Vec<bool>,
    /// Per nonterminal `A`: the rhs positions of the items that predicting
    /// `A` adds (its rules, and transitively those of the nonterminals they
    /// start with, stepping over nullable ones), and those nonterminals.
    pred: Vec<Vec<u32>>,
    pred_nts: Vec<Vec<u32>>,
    /// The augmented rule `S' -> S`: its first and end positions.
    start_pos: u32,
    accept_pos: u32,
}

impl EarleyTables {
    /// From a grammar. Rules that mention a nonterminal deriving no terminal
    /// string are dropped (they can never complete). A `Limit` error when
    /// the prediction closures would exceed [`MAX_PREDICTION_ITEMS`].
    pub fn new(cfg: &Cfg) -> crate::Result<EarleyTables> {
        let n_terms = cfg.terminals.len() as u32;
        let nn = cfg.nonterminals.len();
        // Productive nonterminals (fixpoint).
        let mut productive = vec![false; nn];
        loop {
            let mut changed = false;
            for r in &cfg.rules {
                if !productive[r.lhs.index()] && r.rhs.iter().all(|s| matches!(s, Symbol::T(_)) || matches!(s, Symbol::N(n) if productive[n.index()])) {
                    productive[r.lhs.index()] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut t = EarleyTables { n_terms, sym: Vec::new(), lhs: Vec::new(), starts: vec![Vec::new(); nn + 1], nullable: vec![false; nn + 1], pred: Vec::new(), pred_nts: Vec::new(), start_pos: 0, accept_pos: 0 };
        let enc = |s: &Symbol| match s {
            Symbol::T(x) => x.0,
            Symbol::N(n) => n_terms + n.0,
        };
        // The augmented start symbol is nonterminal `nn`.
        t.start_pos = 0;
        t.sym.extend([n_terms + cfg.start.0, END]);
        t.lhs.extend([n_terms + nn as u32; 2]);
        t.accept_pos = 1;
        t.starts[nn].push(0);
        for r in &cfg.rules {
            if !productive[r.lhs.index()] || r.rhs.iter().any(|s| matches!(s, Symbol::N(n) if !productive[n.index()])) {
                continue;
            }
            t.starts[r.lhs.index()].push(t.sym.len() as u32);
            t.sym.extend(r.rhs.iter().map(enc));
            t.sym.push(END);
            t.lhs.extend(std::iter::repeat(r.lhs.0).take(r.rhs.len() + 1));
        }
        // Nullable nonterminals (fixpoint).
        loop {
            let mut changed = false;
            for n in 0..nn {
                if t.nullable[n] {
                    continue;
                }
                if t.starts[n].iter().any(|&p| t.rest_nullable(p)) {
                    t.nullable[n] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // Prediction closures.
        let mut total = 0usize;
        let (mut pos_seen, mut nt_seen) = (vec![u32::MAX; t.sym.len()], vec![u32::MAX; nn + 1]);
        for a in 0..=nn {
            let stamp = a as u32;
            let (mut list, mut nts) = (Vec::new(), vec![a as u32]);
            nt_seen[a] = stamp;
            let mut q = 0;
            while q < nts.len() {
                let b = nts[q] as usize;
                q += 1;
                for &p0 in &t.starts[b] {
                    let mut p = p0;
                    while pos_seen[p as usize] != stamp {
                        pos_seen[p as usize] = stamp;
                        list.push(p);
                        let s = t.sym[p as usize];
                        if s == END || s < n_terms {
                            break;
                        }
                        let c = (s - n_terms) as usize;
                        if nt_seen[c] != stamp {
                            nt_seen[c] = stamp;
                            nts.push(c as u32);
                        }
                        if !t.nullable[c] {
                            break;
                        }
                        p += 1;
                    }
                }
            }
            total += list.len() + nts.len();
            if total > MAX_PREDICTION_ITEMS {
                return Err(crate::err!(Limit, "grammar too large for the general parser: over {MAX_PREDICTION_ITEMS} prediction items"));
            }
            t.pred.push(list);
            t.pred_nts.push(nts);
        }
        Ok(t)
    }

    fn rest_nullable(&self, mut p: u32) -> bool {
        loop {
            match self.sym[p as usize] {
                END => return true,
                s if s < self.n_terms => return false,
                s if !self.nullable[(s - self.n_terms) as usize] => return false,
                _ => p += 1,
            }
        }
    }

    /// Number of grammar terminals (symbols `>=` it are not fed).
    pub fn n_terms(&self) -> u32 {
        self.n_terms
    }

    /// Is the start symbol productive (does the language have a sentence)?
    pub fn has_sentences(&self) -> bool {
        let start = self.sym[self.start_pos as usize] - self.n_terms;
        !self.starts[start as usize].is_empty()
    }

    /// The closure of `kernel` (items of set `i`, origins `< i`) by
    /// prediction and completion; `at(j)` is set `j < i`. Items with origin
    /// `i` come from the precomputed prediction closures and need no
    /// processing: they predict nothing new, and one that is complete
    /// derived ε (its lhs was stepped over where it was predicted).
    fn close<'s>(&self, kernel: &[u64], i: u32, at: &dyn Fn(u32) -> &'s ESet) -> ESet {
        SCRATCH.with(|sc| {
            let sc = &mut *sc.borrow_mut();
            let nt = self.n_terms;
            sc.predicted.clear();
            sc.predicted.resize(self.starts.len().div_ceil(64), 0);
            sc.seen.clear();
            sc.old.clear();
            sc.new.clear();
            for &it in kernel {
                if sc.seen.insert(it) {
                    sc.old.push(it);
                }
            }
            let mut k = 0;
            while k < sc.old.len() {
                let it = sc.old[k];
                k += 1;
                let (pos, origin) = ((it >> 32) as u32, it as u32);
                match self.sym[pos as usize] {
                    END => {
                        let a = self.lhs[pos as usize] + nt;
                        for &w in at(origin).waiting(a) {
                            let x = w + (1 << 32);
                            if sc.seen.insert(x) {
                                sc.old.push(x);
                            }
                        }
                    }
                    s if s >= nt => {
                        let n = (s - nt) as usize;
                        self.predict(n, i, &mut sc.predicted, &mut sc.new);
                        if self.nullable[n] {
                            let x = it + (1 << 32);
                            if sc.seen.insert(x) {
                                sc.old.push(x);
                            }
                        }
                    }
                    _ => {}
                }
            }
            self.finish(sc)
        })
    }

    /// Adds the prediction closure of nonterminal `n` (origin `i`) to `new`.
    #[inline]
    fn predict(&self, n: usize, i: u32, predicted: &mut [u64], new: &mut Vec<u64>) {
        if predicted[n >> 6] >> (n & 63) & 1 == 1 {
            return;
        }
        for &m in &self.pred_nts[n] {
            predicted[m as usize >> 6] |= 1 << (m & 63);
        }
        new.extend(self.pred[n].iter().map(|&p| (p as u64) << 32 | i as u64));
    }

    fn finish(&self, sc: &mut Scratch) -> ESet {
        let accept = sc.old.iter().chain(&sc.new).any(|&it| it == (self.accept_pos as u64) << 32);
        // (symbol, item) packed in a u128: one sort, no tuple vector.
        sc.wait.clear();
        for &it in sc.old.iter().chain(&sc.new) {
            let x = self.sym[(it >> 32) as usize];
            if x != END {
                sc.wait.push((x as u128) << 64 | it as u128);
            }
        }
        sc.wait.sort_unstable();
        sc.wait.dedup();
        let syms = sc.wait.iter().map(|&w| (w >> 64) as u32).collect();
        let items = sc.wait.iter().map(|&w| w as u64).collect();
        ESet { syms, items, accept }
    }

    /// The first item set.
    fn first(&self) -> ESet {
        SCRATCH.with(|sc| {
            let sc = &mut *sc.borrow_mut();
            sc.predicted.clear();
            sc.predicted.resize(self.starts.len().div_ceil(64), 0);
            sc.old.clear();
            sc.new.clear();
            self.predict(self.starts.len() - 1, 0, &mut sc.predicted, &mut sc.new);
            self.finish(sc)
        })
    }

    /// The kernel of the set after `top` on terminal `t` (empty: rejected).
    fn scan(&self, top: &ESet, t: u32) -> Vec<u64> {
        top.waiting(t).iter().map(|&w| w + (1 << 32)).collect()
    }
}

/// Buffers reused by every closure (per thread).
#[derive(Default)]
struct Scratch {
    predicted: Vec<u64>,
    seen: crate::hash::FxSet<u64>,
    old: Vec<u64>,
    new: Vec<u64>,
    wait: Vec<u128>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// One Earley item set: its items that wait on a symbol, sorted by that
/// symbol (what scanning and completion look up), and whether the
/// augmented start rule is complete with origin 0.
#[derive(Debug)]
pub struct ESet {
    syms: Vec<u32>,
    items: Vec<u64>,
    accept: bool,
}

impl ESet {
    fn waiting(&self, s: u32) -> &[u64] {
        let a = self.syms.partition_point(|&x| x < s);
        let b = a + self.syms[a..].partition_point(|&x| x == s);
        &self.items[a..b]
    }
}

/// A committed Earley parse: the item sets so far. `Clone` is O(1).
#[derive(Clone, Debug)]
pub struct EarleyParser {
    sets: Rc<Vec<Rc<ESet>>>,
}

impl EarleyParser {
    pub fn new(t: &EarleyTables) -> Self {
        EarleyParser { sets: Rc::new(vec![Rc::new(t.first())]) }
    }

    /// A cursor at the current state.
    pub fn cursor(&self) -> EarleyCursor<'_> {
        EarleyCursor { base: &self.sets, ext: None, len: self.sets.len() as u32 }
    }

    /// Consume `terms`; false (and the parser unchanged) if one is rejected.
    pub fn consume(&mut self, t: &EarleyTables, terms: &[u32]) -> bool {
        let mut c = self.cursor();
        if !terms.iter().all(|&x| c.feed(t, x)) {
            return false;
        }
        let mut added = Vec::new();
        let mut e = c.ext;
        while let Some(x) = e {
            let x = Rc::try_unwrap(x).unwrap_or_else(|rc| Ext { set: Rc::clone(&rc.set), parent: rc.parent.clone() });
            added.push(x.set);
            e = x.parent;
        }
        let v = Rc::make_mut(&mut self.sets);
        v.extend(added.into_iter().rev());
        true
    }

    /// Number of item sets (terminals consumed + 1).
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Same chart (shared, or equal item sets)?
    pub fn same(&self, o: &EarleyParser) -> bool {
        Rc::ptr_eq(&self.sets, &o.sets)
            || (self.sets.len() == o.sets.len() && self.sets.iter().zip(o.sets.iter()).all(|(a, b)| Rc::ptr_eq(a, b) || (a.syms == b.syms && a.items == b.items && a.accept == b.accept)))
    }
}

#[derive(Debug)]
struct Ext {
    set: Rc<ESet>,
    parent: Option<Rc<Ext>>,
}

/// A non-mutating view of an [`EarleyParser`] that terminals are fed into;
/// `Clone` is O(1).
#[derive(Clone, Debug)]
pub struct EarleyCursor<'a> {
    base: &'a [Rc<ESet>],
    ext: Option<Rc<Ext>>,
    len: u32,
}

impl EarleyCursor<'_> {
    fn at(&self, j: u32) -> &ESet {
        if (j as usize) < self.base.len() {
            return &self.base[j as usize];
        }
        let mut e = self.ext.as_deref().expect("set index within the cursor");
        for _ in j + 1..self.len {
            e = e.parent.as_deref().expect("set index within the cursor");
        }
        &e.set
    }

    fn top(&self) -> &ESet {
        match &self.ext {
            Some(e) => &e.set,
            None => &self.base[self.base.len() - 1],
        }
    }

    /// Feed terminal `x`; false if it is rejected (the cursor is then unusable).
    pub fn feed(&mut self, t: &EarleyTables, x: u32) -> bool {
        if x >= t.n_terms {
            return false;
        }
        let kernel = t.scan(self.top(), x);
        if kernel.is_empty() {
            return false;
        }
        let set = t.close(&kernel, self.len, &|j| self.at(j));
        self.ext = Some(Rc::new(Ext { set: Rc::new(set), parent: self.ext.take() }));
        self.len += 1;
        true
    }

    /// Can the input end here?
    pub fn accepts_eof(&self) -> bool {
        self.top().accept
    }
}
