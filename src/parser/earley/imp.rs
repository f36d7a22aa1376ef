//! The general parser's implementation (feature `compiler`; see [`super`]).

use crate::grammar::{Cfg, Symbol};
use std::cell::{Cell, RefCell};
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

    /// The closure of `kernel` (items of the new set, their origins earlier
    /// sets) by prediction and completion. Items whose origin is the new set
    /// itself come from the precomputed prediction closures and need no
    /// processing: they predict nothing new, and one that is complete
    /// derived ε (its lhs was stepped over where it was predicted).
    fn close(&self, kernel: &[(u32, Rc<Node>)]) -> Node {
        SCRATCH.with(|sc| {
            let sc = &mut *sc.borrow_mut();
            let nt = self.n_terms;
            sc.predicted.clear();
            sc.predicted.resize(self.starts.len().div_ceil(64), 0);
            sc.seen.clear();
            sc.old.clear();
            sc.new.clear();
            for (p, o) in kernel {
                if sc.seen.insert((*p, Rc::as_ptr(o) as usize)) {
                    sc.old.push((*p, Rc::clone(o)));
                }
            }
            let mut accept = false;
            let mut k = 0;
            while k < sc.old.len() {
                let (pos, ref origin) = sc.old[k];
                let origin = Rc::clone(origin);
                k += 1;
                match self.sym[pos as usize] {
                    END => {
                        // Only the augmented rule's end is `accept_pos`, and
                        // `S'` is predicted in the first set only.
                        accept |= pos == self.accept_pos;
                        let a = self.lhs[pos as usize] + nt;
                        let (lo, hi) = origin.waiting(a);
                        for q in lo..hi {
                            let o = origin.org[q].as_ref().unwrap_or(&origin);
                            let x = origin.pos[q] + 1;
                            if sc.seen.insert((x, Rc::as_ptr(o) as usize)) {
                                sc.old.push((x, Rc::clone(o)));
                            }
                        }
                    }
                    s if s >= nt => {
                        let n = (s - nt) as usize;
                        self.predict(n, &mut sc.predicted, &mut sc.new);
                        if self.nullable[n] && sc.seen.insert((pos + 1, Rc::as_ptr(&origin) as usize)) {
                            sc.old.push((pos + 1, origin));
                        }
                    }
                    _ => {}
                }
            }
            self.finish(sc, accept)
        })
    }

    /// Adds the prediction closure of nonterminal `n` (origin: the new set) to `new`.
    #[inline]
    fn predict(&self, n: usize, predicted: &mut [u64], new: &mut Vec<u32>) {
        if predicted[n >> 6] >> (n & 63) & 1 == 1 {
            return;
        }
        for &m in &self.pred_nts[n] {
            predicted[m as usize >> 6] |= 1 << (m & 63);
        }
        new.extend_from_slice(&self.pred[n]);
    }

    /// The new set's items that wait on a symbol, sorted by (symbol,
    /// position, origin); `accept`: the augmented rule completed.
    fn finish(&self, sc: &mut Scratch, accept: bool) -> Node {
        sc.wait.clear();
        for (i, (p, _)) in sc.old.iter().enumerate() {
            let x = self.sym[*p as usize];
            if x != END {
                sc.wait.push((x, *p, i as u32));
            }
        }
        let mut accept = accept;
        for &p in &sc.new {
            let x = self.sym[p as usize];
            if x != END {
                sc.wait.push((x, p, u32::MAX));
            } else {
                accept |= p == self.accept_pos;
            }
        }
        // Kernel and completed items are distinct (position, origin) pairs;
        // predicted ones are distinct positions: ties only between an item
        // with an earlier origin and a predicted one, ordered by origin.
        let old = &sc.old;
        let key = |&(x, p, i): &(u32, u32, u32)| (x, p, if i == u32::MAX { 0 } else { Rc::as_ptr(&old[i as usize].1) as usize });
        sc.wait.sort_unstable_by_key(key);
        let mut n = Node { syms: Vec::with_capacity(sc.wait.len()), pos: Vec::with_capacity(sc.wait.len()), org: Vec::with_capacity(sc.wait.len()), accept, epoch: Cell::new(u32::MAX) };
        let mut last = (u32::MAX, u32::MAX, usize::MAX);
        for w in &sc.wait {
            // Prediction closures of different nonterminals overlap.
            let k = key(w);
            if k == last {
                continue;
            }
            last = k;
            let &(x, p, i) = w;
            n.syms.push(x);
            n.pos.push(p);
            n.org.push((i != u32::MAX).then(|| Rc::clone(&old[i as usize].1)));
        }
        n
    }

    /// The first item set.
    fn first(&self) -> Node {
        SCRATCH.with(|sc| {
            let sc = &mut *sc.borrow_mut();
            sc.predicted.clear();
            sc.predicted.resize(self.starts.len().div_ceil(64), 0);
            sc.old.clear();
            sc.new.clear();
            self.predict(self.starts.len() - 1, &mut sc.predicted, &mut sc.new);
            self.finish(sc, false)
        })
    }
}

/// Buffers reused by every closure (per thread).
#[derive(Default)]
struct Scratch {
    predicted: Vec<u64>,
    seen: crate::hash::FxSet<(u32, usize)>,
    old: Vec<(u32, Rc<Node>)>,
    new: Vec<u32>,
    wait: Vec<(u32, u32, u32)>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// One Earley item set: its items that wait on a symbol, sorted by (that
/// symbol, rhs position, origin), and whether the augmented start rule is
/// complete (with origin the first set: `S'` is predicted there only).
///
/// An item's origin is the item set where it started, held by reference
/// (`None`: this set itself), not by index: a set is a value of its items,
/// whatever its place in the chart. So sets are hash-consed ([`Cache`]) and
/// the set after `(set, terminal)` is computed once: the sets a mask walk
/// visits form an automaton built lazily (inside an identifier of a
/// character-level grammar, the set after `ab` is the set after `abc`).
#[derive(Debug)]
pub struct Node {
    syms: Vec<u32>,
    pos: Vec<u32>,
    org: Vec<Option<Rc<Node>>>,
    accept: bool,
    /// The [`Cache`] epoch that interned this set (`u32::MAX`: none).
    epoch: Cell<u32>,
}

impl Node {
    fn waiting(&self, s: u32) -> (usize, usize) {
        let a = self.syms.partition_point(|&x| x < s);
        let b = a + self.syms[a..].partition_point(|&x| x == s);
        (a, b)
    }

    fn same_items(&self, o: &Node) -> bool {
        self.accept == o.accept && self.syms == o.syms && self.pos == o.pos && self.org.iter().zip(&o.org).all(|(a, b)| ptr(a) == ptr(b))
    }

    fn hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::hash::FxHasher::default();
        self.accept.hash(&mut h);
        self.syms.hash(&mut h);
        self.pos.hash(&mut h);
        for o in &self.org {
            h.write_usize(ptr(o));
        }
        h.finish()
    }
}

fn ptr(o: &Option<Rc<Node>>) -> usize {
    o.as_ref().map_or(0, |n| Rc::as_ptr(n) as usize)
}

impl Drop for Node {
    /// Iteratively: a chain of sets each holding the previous one by its
    /// origins would otherwise drop recursively, as deep as the input is long.
    fn drop(&mut self) {
        let mut stack: Vec<Rc<Node>> = self.org.drain(..).flatten().collect();
        while let Some(n) = stack.pop() {
            if let Ok(mut n) = Rc::try_unwrap(n) {
                stack.extend(n.org.drain(..).flatten());
            }
        }
    }
}

/// Most items and transitions the [`Cache`] holds before it starts over
/// (16 bytes each, and the maps' slots).
const CACHE_ITEMS: usize = 1 << 20;

/// The hash-consed item sets and the transitions between them, shared by a
/// parser and its clones and cursors. Only a cache: clearing it loses
/// sharing, never a parse (parsers and cursors hold their sets).
struct Cache {
    /// Per content hash: the interned sets with it.
    sets: crate::hash::FxMap<u64, Vec<Rc<Node>>>,
    /// (set address, terminal) → the next set (`None`: rejected). Keys are
    /// sets of the current epoch, which `sets` keeps alive.
    next: crate::hash::FxMap<(usize, u32), Option<Rc<Node>>>,
    /// Items of the interned sets, plus transitions.
    items: usize,
    epoch: u32,
    /// [`CACHE_ITEMS`] (smaller in tests).
    limit: usize,
}

impl Cache {
    fn new(limit: usize) -> Cache {
        Cache { sets: Default::default(), next: Default::default(), items: 0, epoch: 0, limit }
    }

    fn intern(&mut self, n: Node) -> Rc<Node> {
        if self.items > self.limit {
            self.sets.clear();
            self.next.clear();
            self.items = 0;
            self.epoch += 1;
        }
        let bucket = self.sets.entry(n.hash()).or_default();
        if let Some(m) = bucket.iter().find(|m| m.same_items(&n)) {
            return Rc::clone(m);
        }
        self.items += n.syms.len() + 1;
        n.epoch.set(self.epoch);
        let n = Rc::new(n);
        bucket.push(Rc::clone(&n));
        n
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cache({} items)", self.items)
    }
}

/// A committed Earley parse: its last item set (which holds, through the
/// origins of its items, every earlier set it can still complete).
/// `Clone` is O(1).
#[derive(Clone, Debug)]
pub struct EarleyParser {
    top: Rc<Node>,
    cache: Rc<RefCell<Cache>>,
    len: usize,
}

impl EarleyParser {
    pub fn new(t: &EarleyTables) -> Self {
        Self::with_cache_limit(t, CACHE_ITEMS)
    }

    /// With a cache of at most about `limit` items before it starts over.
    fn with_cache_limit(t: &EarleyTables, limit: usize) -> Self {
        let mut cache = Cache::new(limit);
        let top = cache.intern(t.first());
        EarleyParser { top, cache: Rc::new(RefCell::new(cache)), len: 1 }
    }

    /// A cursor at the current state.
    pub fn cursor(&self) -> EarleyCursor<'_> {
        EarleyCursor { top: Rc::clone(&self.top), cache: &self.cache }
    }

    /// Consume `terms`; false (and the parser unchanged) if one is rejected.
    pub fn consume(&mut self, t: &EarleyTables, terms: &[u32]) -> bool {
        let mut c = self.cursor();
        if !terms.iter().all(|&x| c.feed(t, x)) {
            return false;
        }
        self.top = c.top;
        self.len += terms.len();
        true
    }

    /// Number of item sets (terminals consumed + 1).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Same item set (then both accept the same continuations)?
    pub fn same(&self, o: &EarleyParser) -> bool {
        Rc::ptr_eq(&self.top, &o.top) || self.top.same_items(&o.top)
    }
}

/// A non-mutating view of an [`EarleyParser`] that terminals are fed into;
/// `Clone` is O(1).
#[derive(Clone, Debug)]
pub struct EarleyCursor<'a> {
    top: Rc<Node>,
    cache: &'a RefCell<Cache>,
}

impl EarleyCursor<'_> {
    /// Feed terminal `x`; false if it is rejected (the cursor is then unusable).
    pub fn feed(&mut self, t: &EarleyTables, x: u32) -> bool {
        if x >= t.n_terms {
            return false;
        }
        let mut c = self.cache.borrow_mut();
        let key = (Rc::as_ptr(&self.top) as usize, x);
        let cached = self.top.epoch.get() == c.epoch;
        if cached {
            if let Some(r) = c.next.get(&key) {
                return match r {
                    Some(n) => {
                        self.top = Rc::clone(n);
                        true
                    }
                    None => false,
                };
            }
        }
        let top = &self.top;
        let (lo, hi) = top.waiting(x);
        let r = if lo == hi {
            None
        } else {
            let kernel: Vec<(u32, Rc<Node>)> = (lo..hi).map(|q| (top.pos[q] + 1, Rc::clone(top.org[q].as_ref().unwrap_or(top)))).collect();
            Some(c.intern(t.close(&kernel)))
        };
        // `intern` may have started a new epoch: then `top` is no longer kept.
        if cached && self.top.epoch.get() == c.epoch {
            c.next.insert(key, r.clone());
            c.items += 1;
        }
        match r {
            Some(n) => {
                self.top = n;
                true
            }
            None => false,
        }
    }

    /// Can the input end here?
    pub fn accepts_eof(&self) -> bool {
        self.top.accept
    }

    /// The address of the current item set (see [`Node`]): equal sets of
    /// one cache are one value.
    pub fn state_id(&self) -> usize {
        Rc::as_ptr(&self.top) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a cache that starts over every few sets (sharing lost, sets of
    /// earlier epochs still held by cursors), every answer on random walks
    /// equals the textbook recognizer's and the default cache's.
    #[test]
    fn small_cache_agrees_with_reference() {
        let g = "root ::= (expr \"=\" ws term \"\\n\")+\nexpr ::= term ([-+*/] term)*\nterm ::= ident | num | \"(\" ws expr \")\" ws\nident ::= [a-z] [a-z0-9_]* ws\nnum ::= [0-9]+ ws\nws ::= [ \\t\\n]*\n";
        let cfg = crate::constraint::gbnf_cfg(g, "a.gbnf", crate::frontend::gbnf::Dialect::Gbnf, None).unwrap();
        assert_eq!(cfg.conflicts, crate::grammar::ConflictPolicy::General);
        let t = EarleyTables::new(&cfg).unwrap();
        let r = crate::reference::earley::RefEarley::new(&cfg);
        let n = t.n_terms();
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        let mut checked = 0;
        for limit in [0, 40, 1000] {
            for _walk in 0..4 {
                let (mut small, mut big, mut rp) = (EarleyParser::with_cache_limit(&t, limit), EarleyParser::new(&t), r.start());
                // Earlier parsers (clones sharing the cache): their sets
                // outlive cache epochs and are fed again later.
                let mut hist: Vec<(EarleyParser, crate::reference::earley::RefEarleyParse)> = Vec::new();
                for _ in 0..60 {
                    assert_eq!(small.cursor().accepts_eof(), r.accepts_eof(&rp));
                    assert_eq!(big.cursor().accepts_eof(), r.accepts_eof(&rp));
                    let mut ok = Vec::new();
                    for x in 0..n {
                        let mut q = rp.clone();
                        let want = r.feed(&mut q, x);
                        assert_eq!(small.cursor().feed(&t, x), want, "limit {limit}: terminal {x}");
                        assert_eq!(big.cursor().feed(&t, x), want);
                        checked += 1;
                        if want {
                            ok.push((x, q));
                        }
                    }
                    if ok.is_empty() {
                        break;
                    }
                    let (x, q) = ok.swap_remove(next() as usize % ok.len());
                    assert!(small.consume(&t, &[x]) && big.consume(&t, &[x]));
                    rp = q;
                    hist.push((small.clone(), rp.clone()));
                    let (p, q) = &hist[next() as usize % hist.len()];
                    let x = next() % n;
                    assert_eq!(p.cursor().feed(&t, x), r.feed(&mut q.clone(), x), "limit {limit}: an earlier parser, terminal {x}");
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }
}
