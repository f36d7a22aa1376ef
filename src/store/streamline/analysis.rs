//! Grammar-level facts used to streamline the mask store (Tran-Thien, "Accelerating
//! LLM Code Generation Through Mask Store Streamlining", 2025, and its technical
//! appendix).
//!
//! Everything here is about the CFG alone, over its terminals Σ. With
//! `L` = the sentences derivable from `cfg.start` and `Lp` = the prefixes of `L`:
//!
//! - `is_never_legal(X, S)  := ∀P: PXS ∉ Lp` (⟺ no sentence contains `X·S`);
//!   decided *exactly* (Bar-Hillel intersection with `Σ*·X·S·Σ*` + emptiness).
//! - `is_always_legal(X, S) := ∀P: PX ∈ Lp ⇒ PXS ∈ Lp`; undecidable in general
//!   (appendix §3). [`Analysis::is_always_legal`] answers `true` only when it has
//!   a proof (unlimited-credit exploration of the DFT pushdown automaton,
//!   appendix §4); `false` means "unknown".
//! - `are_jointly_legal(X, S1, S2) := ∀P: PXS1 ∈ Lp ⟺ PXS2 ∈ Lp`; some values
//!   follow from known `is_always_legal` facts ([`Analysis::truncate`], §6.1)
//!   and from interchangeable terminals ([`Analysis::interchangeable_classes`],
//!   §6.2).
//!
//! Ignored terminals are not part of the CFG; the caller handles them.
//! All analyses run on the *trimmed* grammar (only rules whose symbols are all
//! productive and whose left-hand side is reachable), which has the same `L`
//! and is what the "no dead ends" lemma (appendix Lemma 2) needs. A terminal
//! that occurs in no sentence ("dead", see [`Analysis::is_live`]) makes both
//! `is_never_legal(X, _)` and `is_always_legal(X, _)` vacuously true. Terminal
//! ids out of range are treated as dead terminals; nothing here panics.
//!
//! # Glossary (paper → code)
//!
//! | paper                                          | code                                                  |
//! |------------------------------------------------|-------------------------------------------------------|
//! | G, Σ, L, L_p                                   | [`Cfg`], [`TerminalId`], sentences of `cfg.start`, prefixes |
//! | `is_never_legal(X, S)` (Alg. 1)                | [`Analysis::is_never_legal`]                          |
//! | DFA of `Σ*XSΣ*`                                | `kmp_table` (KMP automaton, `|S|+2` states)           |
//! | Bar-Hillel intersection + `is_empty`           | `Analysis::bar_hillel_nonempty`: relation `R_A ⊆ Q×Q` per nonterminal, least fixpoint |
//! | successor graph (blog Fig. 2, appendix Fig. 1) | [`Analysis::successor`] (exact on the trimmed grammar) |
//! | DFT pushdown automaton (Def. 1)                | `Pda`                                                 |
//! | states `a`, `•X`, `X•`, `$END`                 | terminal id, `Pda::begin_state`, `Pda::end_state`, `Pda::end` |
//! | stack symbol `X ::= α1…αi`, `Z0`               | `Pda::sym(rule, i)`, `Pda::z0`                        |
//! | `unlimited_credit_exploration` (Alg. 2)        | [`Analysis::is_always_legal`] → `Analysis::explore`   |
//! | maximum stack size of the search               | `max_stack` argument                                  |
//! | debt NFA node (state, stack), borrowed symbol  | `Explorer` node `(state, pos in S, local stack id)`; pops on an empty local stack |
//! | ε-coaccessible                                 | `good` (least fixpoint over an AND/OR graph, see `explore`) |
//! | §6.1 `are_jointly_legal(X, …Y1Y2, …Y1)`        | [`Analysis::truncate`], [`Analysis::truncate_after`]  |
//! | §6.2 interchangeable terminals, `φ_{Y1,Y2}`    | [`Analysis::interchangeable_classes`], [`Analysis::class_rep`] |
//!
//! # ε-coaccessibility, precisely
//!
//! In the DFT automaton every state either only pushes (`•A`; an ε-rule
//! `A ::= ε` gives the stack-neutral move `•A → A•`), only pops (terminals and
//! `X•`), or is `$END` (no move). A debt-NFA node whose local stack is empty and
//! whose state pops is an AND node: it is good iff *every* stack symbol some
//! transition of that state pops (the real top must be one of them, by Lemma 2)
//! leads, borrowed, to a good node. Every other node is an OR node (good iff
//! some successor is good). Nodes that have read all of `S` are good. This is
//! the appendix's definition with the vacuous case made explicit: a push-only
//! state has no poppable symbol but is *not* good for that reason.

use std::cell::RefCell;
use crate::hash::{FxMap as HashMap, FxSet as HashSet};

use crate::grammar::{Cfg, Symbol};
use crate::ids::TerminalId;

/// Above this many debt-NFA nodes one `is_always_legal` exploration gives up
/// and answers "unknown" (`false`).
pub const EXPLORATION_NODE_LIMIT: usize = 200_000;

const NONE: u32 = u32::MAX;

/// Grammar analyses for one CFG, built once; queries are cached.
///
/// Not `Sync` (the caches use `RefCell`); build one per thread if needed.
pub struct Analysis {
    n_terms: usize,
    /// Index of the start nonterminal, `NONE` when `L` is empty.
    start: u32,
    /// Trimmed, deduplicated rules `(lhs, rhs)`.
    rules: Vec<(u32, Vec<Symbol>)>,
    /// `users[B]`: indices of the trimmed rules whose rhs mentions `B`.
    users: Vec<Vec<u32>>,
    n_nts: usize,
    /// Terminal occurs in some sentence.
    live: Vec<bool>,
    /// Words per terminal bitset row.
    words: usize,
    /// `succ[x*words..]`: the terminals that directly follow `x` in some sentence.
    succ: Vec<u64>,
    classes: Vec<Vec<TerminalId>>,
    rep: Vec<TerminalId>,
    pda: Pda,
    /// FIRST sets per nonterminal (bit rows of `words` u64), on the trimmed grammar.
    first: Vec<Vec<u64>>,
    never_cache: RefCell<HashMap<Vec<u32>, bool>>,
    /// Keyed by `x`, the sequence, then `max_stack` (one map type with `never_cache`).
    always_cache: RefCell<HashMap<Vec<u32>, bool>>,
    /// Second prover for `is_always_legal`: the same exploration on the LALR
    /// automaton (see [`super::lr`]), when tables are given.
    lr: Option<super::lr::LrProver>,
    /// Distinct `is_always_legal` queries proved: by the DFT PDA, by the LR
    /// automaton only, and unproved.
    proofs: RefCell<[u64; 3]>,
}

impl Analysis {
    pub fn new(cfg: &Cfg) -> Analysis {
        let nt = cfg.terminals.len();
        let nn = cfg.nonterminals.len();
        let sym_ok = |s: &Symbol| match *s {
            Symbol::T(t) => t.index() < nt,
            Symbol::N(n) => n.index() < nn,
        };
        let rule_ok = |r: &crate::grammar::Rule| r.lhs.index() < nn && r.rhs.iter().all(sym_ok);

        // Productive nonterminals.
        let mut prod = vec![false; nn];
        let all_prod = |prod: &[bool], rhs: &[Symbol]| {
            rhs.iter().all(|s| match *s {
                Symbol::T(_) => true,
                Symbol::N(n) => prod[n.index()],
            })
        };
        loop {
            let mut changed = false;
            for r in cfg.rules.iter().filter(|r| rule_ok(r)) {
                if !prod[r.lhs.index()] && all_prod(&prod, &r.rhs) {
                    prod[r.lhs.index()] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // Reachable through productive rules.
        let start_ok = cfg.start.index() < nn && prod[cfg.start.index()];
        let mut reach = vec![false; nn];
        if start_ok {
            reach[cfg.start.index()] = true;
        }
        loop {
            let mut changed = false;
            for r in cfg.rules.iter().filter(|r| rule_ok(r)) {
                if reach[r.lhs.index()] && all_prod(&prod, &r.rhs) {
                    for s in &r.rhs {
                        if let Symbol::N(n) = *s {
                            if !reach[n.index()] {
                                reach[n.index()] = true;
                                changed = true;
                            }
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut seen = HashSet::default();
        let rules: Vec<(u32, Vec<Symbol>)> = cfg
            .rules
            .iter()
            .filter(|r| rule_ok(r) && reach[r.lhs.index()] && all_prod(&prod, &r.rhs))
            .filter(|r| seen.insert((r.lhs, r.rhs.clone())))
            .map(|r| (r.lhs.0, r.rhs.clone()))
            .collect();

        let mut users = vec![Vec::new(); nn];
        for (ri, (_, rhs)) in rules.iter().enumerate() {
            for s in rhs {
                if let Symbol::N(n) = *s {
                    if users[n.index()].last() != Some(&(ri as u32)) {
                        users[n.index()].push(ri as u32);
                    }
                }
            }
        }

        // Nullable, FIRST and LAST (terminals that begin / end a non-empty
        // string derived from a nonterminal).
        let mut nullable = vec![false; nn];
        loop {
            let mut changed = false;
            for (lhs, rhs) in &rules {
                let l = *lhs as usize;
                if !nullable[l] && rhs.iter().all(|s| matches!(*s, Symbol::N(n) if nullable[n.index()])) {
                    nullable[l] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let words = nt.div_ceil(64).max(1);
        let nullable_sym = |s: Symbol| matches!(s, Symbol::N(n) if nullable[n.index()]);
        let edge_sets = |reverse: bool| {
            let mut sets = vec![vec![0u64; words]; nn];
            loop {
                let mut changed = false;
                for (lhs, rhs) in &rules {
                    let mut acc = vec![0u64; words];
                    let mut visit = |s: Symbol| {
                        match s {
                            Symbol::T(t) => acc[t.index() / 64] |= 1 << (t.index() % 64),
                            Symbol::N(n) => {
                                for (a, b) in acc.iter_mut().zip(&sets[n.index()]) {
                                    *a |= *b;
                                }
                            }
                        }
                        nullable_sym(s)
                    };
                    if reverse {
                        for &s in rhs.iter().rev() {
                            if !visit(s) {
                                break;
                            }
                        }
                    } else {
                        for &s in rhs.iter() {
                            if !visit(s) {
                                break;
                            }
                        }
                    }
                    for (a, b) in sets[*lhs as usize].iter_mut().zip(&acc) {
                        if *b & !*a != 0 {
                            *a |= *b;
                            changed = true;
                        }
                    }
                }
                if !changed {
                    return sets;
                }
            }
        };
        let first = edge_sets(false);
        let last = edge_sets(true);
        let bits_of = |sets: &Vec<Vec<u64>>, s: Symbol| -> Vec<u64> {
            match s {
                Symbol::T(t) => {
                    let mut v = vec![0u64; words];
                    v[t.index() / 64] |= 1 << (t.index() % 64);
                    v
                }
                Symbol::N(n) => sets[n.index()].clone(),
            }
        };

        // Successor relation: X·Y adjacent in a sentence iff some rule has
        // α_i, α_j (i < j) with everything between nullable, X ∈ LAST(α_i) and
        // Y ∈ FIRST(α_j) (look at the lowest common ancestor of the two leaves).
        let mut live = vec![false; nt];
        let mut succ = vec![0u64; nt * words];
        for (_, rhs) in &rules {
            for (i, &a) in rhs.iter().enumerate() {
                if let Symbol::T(t) = a {
                    live[t.index()] = true;
                }
                let lasts = bits_of(&last, a);
                for &b in &rhs[i + 1..] {
                    let firsts = bits_of(&first, b);
                    for_each_bit(&lasts, |x| {
                        for (d, f) in succ[x * words..(x + 1) * words].iter_mut().zip(&firsts) {
                            *d |= *f;
                        }
                    });
                    if !nullable_sym(b) {
                        break;
                    }
                }
            }
        }

        // Interchangeable terminals: Y1 ~ Y2 iff the sets of one-hole contexts
        // (lhs, rhs with one occurrence replaced by a hole) of their occurrences
        // are equal; this is exactly the appendix §6.2 definition and an
        // equivalence relation.
        let hole = Symbol::T(TerminalId(NONE));
        let mut contexts: Vec<Vec<(u32, Vec<Symbol>)>> = vec![Vec::new(); nt];
        for (lhs, rhs) in &rules {
            for (i, &a) in rhs.iter().enumerate() {
                if let Symbol::T(t) = a {
                    let mut c = rhs.clone();
                    c[i] = hole;
                    contexts[t.index()].push((*lhs, c));
                }
            }
        }
        let mut groups: HashMap<Vec<(u32, Vec<Symbol>)>, Vec<TerminalId>> = HashMap::default();
        for (t, mut c) in contexts.into_iter().enumerate() {
            if !live[t] {
                continue;
            }
            crate::sort::sort_cold(&mut c);
            c.dedup();
            groups.entry(c).or_default().push(TerminalId::new(t));
        }
        let mut classes: Vec<Vec<TerminalId>> = groups.into_values().filter(|g| g.len() >= 2).collect();
        for c in &mut classes {
            c.sort_unstable();
        }
        crate::sort::sort_cold(&mut classes);
        let mut rep: Vec<TerminalId> = (0..nt).map(TerminalId::new).collect();
        for c in &classes {
            for &t in c {
                rep[t.index()] = c[0];
            }
        }

        let start = if start_ok { cfg.start.0 } else { NONE };
        let pda = Pda::new(nt, nn, start, &rules);
        Analysis {
            n_terms: nt,
            start,
            rules,
            users,
            n_nts: nn,
            live,
            words,
            succ,
            classes,
            rep,
            pda,
            first,
            never_cache: RefCell::new(HashMap::default()),
            always_cache: RefCell::new(HashMap::default()),
            lr: None,
            proofs: RefCell::new([0; 3]),
        }
    }

    /// Also try the LALR-automaton prover ([`super::lr`]) for `is_always_legal`.
    /// `t` must be the tables of the same grammar (terminal ids shared).
    pub fn with_lr(mut self, t: &crate::parser::LrTables) -> Analysis {
        self.lr = Some(super::lr::LrProver::new(t, 16));
        self.always_cache.borrow_mut().clear();
        self
    }

    /// Distinct `is_always_legal` queries so far: (proved by the DFT PDA,
    /// proved by the LR automaton only, unknown).
    pub fn proof_counts(&self) -> (u64, u64, u64) {
        let p = self.proofs.borrow();
        (p[0], p[1], p[2])
    }

    /// Whether terminal `t` occurs in at least one sentence of `L`.
    pub fn is_live(&self, t: TerminalId) -> bool {
        self.live.get(t.index()).copied().unwrap_or(false)
    }

    /// The classes (size ≥ 2, sorted, members sorted) of mutually
    /// interchangeable live terminals (appendix §6.2): swapping any single
    /// occurrence of one member for another in a sentence gives a sentence, so
    /// `are_jointly_legal(X, S, φ(S))` for every `X, S`.
    pub fn interchangeable_classes(&self) -> Vec<Vec<TerminalId>> {
        self.classes.clone()
    }

    /// The smallest member of `t`'s interchangeability class, or `t`.
    pub fn class_rep(&self, t: TerminalId) -> TerminalId {
        self.rep.get(t.index()).copied().unwrap_or(t)
    }

    /// Whether terminal `y` directly follows terminal `x` in some sentence.
    /// Exact (on the trimmed grammar): `successor(x, y) == !is_never_legal(x, [y])`.
    pub fn successor(&self, x: TerminalId, y: TerminalId) -> bool {
        let (x, y) = (x.index(), y.index());
        x < self.n_terms && y < self.n_terms && self.succ[x * self.words + y / 64] >> (y % 64) & 1 == 1
    }

    /// `∀P: P·x·s ∉ Lp`, i.e. no sentence contains `x·s`. Exact. Cached.
    pub fn is_never_legal(&self, x: TerminalId, s: &[TerminalId]) -> bool {
        if !self.is_live(x) || s.iter().any(|&t| !self.is_live(t)) {
            return true;
        }
        // Exact shortcut for adjacent pairs; also refutes longer sequences fast.
        let mut prev = x;
        for &t in s {
            if !self.successor(prev, t) {
                return true;
            }
            prev = t;
        }
        if s.len() <= 1 {
            return false;
        }
        let w: Vec<u32> = std::iter::once(x.0).chain(s.iter().map(|t| t.0)).collect();
        if let Some(&v) = self.never_cache.borrow().get(&w) {
            return v;
        }
        let v = !self.bar_hillel_nonempty(&w);
        self.never_cache.borrow_mut().insert(w, v);
        v
    }

    /// Bar-Hillel: is `L ∩ Σ*·w·Σ*` non-empty? For each nonterminal `A`,
    /// `R_A ⊆ Q×Q` holds `(p, q)` when `A` derives a string driving the KMP
    /// automaton of `w` from `p` to `q`; least fixpoint with a worklist of rules.
    fn bar_hillel_nonempty(&self, w: &[u32]) -> bool {
        if self.start == NONE || w.is_empty() {
            return self.start != NONE;
        }
        let (tmap, delta) = kmp_table(w, self.n_terms);
        let m = w.len();
        let k = m + 1;
        let kw = k.div_ceil(64);
        let row = k * kw; // words per relation
        let step = |t: usize, q: usize| -> usize {
            if q == m {
                m
            } else if tmap[t] == NONE {
                0
            } else {
                delta[tmap[t] as usize * k + q] as usize
            }
        };
        let mut rel = vec![0u64; self.n_nts * row];
        let mut cur = vec![0u64; row];
        let mut next = vec![0u64; row];
        let mut queued = vec![true; self.rules.len()];
        let mut queue: Vec<u32> = (0..self.rules.len() as u32).rev().collect();
        let accept = |rel: &[u64]| {
            let base = self.start as usize * row; // row p = 0
            rel[base + m / 64] >> (m % 64) & 1 == 1
        };
        while let Some(ri) = queue.pop() {
            queued[ri as usize] = false;
            let (lhs, rhs) = &self.rules[ri as usize];
            cur.iter_mut().for_each(|x| *x = 0);
            for p in 0..k {
                cur[p * kw + p / 64] |= 1 << (p % 64);
            }
            let mut empty = false;
            for &sym in rhs {
                next.iter_mut().for_each(|x| *x = 0);
                let mut any = 0u64;
                for p in 0..k {
                    let (src, dst) = (&cur[p * kw..(p + 1) * kw], &mut next[p * kw..(p + 1) * kw]);
                    for_each_bit(src, |q| match sym {
                        Symbol::T(t) => {
                            let r = step(t.index(), q);
                            dst[r / 64] |= 1 << (r % 64);
                        }
                        Symbol::N(b) => {
                            let rb = &rel[b.index() * row + q * kw..b.index() * row + (q + 1) * kw];
                            for (d, s) in dst.iter_mut().zip(rb) {
                                *d |= *s;
                            }
                        }
                    });
                    any |= dst.iter().fold(0, |a, b| a | b);
                }
                std::mem::swap(&mut cur, &mut next);
                if any == 0 {
                    empty = true;
                    break;
                }
            }
            if empty {
                continue;
            }
            let dst = &mut rel[*lhs as usize * row..(*lhs as usize + 1) * row];
            let mut changed = false;
            for (d, c) in dst.iter_mut().zip(&cur) {
                if *c & !*d != 0 {
                    *d |= *c;
                    changed = true;
                }
            }
            if changed {
                if *lhs == self.start && accept(&rel) {
                    return true;
                }
                for &u in &self.users[*lhs as usize] {
                    if !queued[u as usize] {
                        queued[u as usize] = true;
                        queue.push(u);
                    }
                }
            }
        }
        accept(&rel)
    }

    /// `∀P: P·x ∈ Lp ⇒ P·x·s ∈ Lp`. `true` is a proof; `false` means unknown
    /// (the property is undecidable). Unlimited-credit exploration of the DFT
    /// pushdown automaton with local stacks of at most `max_stack` symbols and
    /// at most [`EXPLORATION_NODE_LIMIT`] debt-NFA nodes. Cached.
    pub fn is_always_legal(&self, x: TerminalId, s: &[TerminalId], max_stack: usize) -> bool {
        if s.is_empty() || !self.is_live(x) {
            return true; // trivial / vacuous: no P has P·x ∈ Lp
        }
        // x is live, so some P·x ∈ Lp; if P·x·s is never legal the answer is no.
        let mut prev = x;
        for &t in s {
            if !self.successor(prev, t) {
                return false;
            }
            prev = t;
        }
        let key = std::iter::once(x.0).chain(s.iter().map(|t| t.0)).chain([max_stack as u32]).collect::<Vec<u32>>();
        if let Some(&v) = self.always_cache.borrow().get(&key) {
            return v;
        }
        let dft = self.explore(x.0, s, max_stack);
        let v = dft || self.lr.as_ref().is_some_and(|lr| lr.is_always_legal(x, s));
        self.proofs.borrow_mut()[if dft { 0 } else if v { 1 } else { 2 }] += 1;
        self.always_cache.borrow_mut().insert(key, v);
        v
    }

    /// Unlimited-credit exploration from `(x, s, empty stack)`, then the
    /// ε-coaccessibility least fixpoint on the debt NFA (module docs).
    fn first_has(&self, a: usize, y: TerminalId) -> bool {
        let i = y.index();
        self.first.get(a).and_then(|row| row.get(i / 64)).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    fn explore(&self, x: u32, s: &[TerminalId], max_stack: usize) -> bool {
        let mut ex = Explorer {
            s,
            max_stack,
            stacks: vec![(NONE, 0, 0)],
            stack_ids: HashMap::default(),
            ids: HashMap::default(),
            nodes: Vec::new(),
        };
        ex.node(x, 0, 0);
        let inf = u32::MAX;
        let mut need: Vec<u32> = Vec::new();
        let mut edges: Vec<(u32, u32)> = Vec::new(); // (to, from)
        let mut succs: Vec<u32> = Vec::new();
        let mut n = 0;
        while n < ex.nodes.len() {
            if ex.nodes.len() > EXPLORATION_NODE_LIMIT {
                return false;
            }
            let (q, pos, st) = ex.nodes[n];
            succs.clear();
            let pda = &self.pda;
            let nd = if pos as usize == s.len() {
                0
            } else if pda.begin_nt(q).is_some_and(|a| pos as usize + 1 == s.len() && self.first_has(a, s[pos as usize])) {
                // Summarised descent: `•A` with one symbol Y left and Y ∈ FIRST(A).
                // A leftmost derivation of A reaches Y by pushes and by pops of
                // symbols it pushed itself (no borrowing), so a final node is
                // reachable through deterministic moves: this node is good.
                0
            } else if let Some(a) = pda.begin_nt(q) {
                for &(push, target, read) in &pda.begin[a] {
                    if let Some(id) = ex.follow(pos, st, push, target, read) {
                        succs.push(id);
                    }
                }
                if succs.is_empty() { inf } else { 1 }
            } else if q == pda.end() {
                inf
            } else if st != 0 {
                let (top, parent, _) = ex.stacks[st as usize];
                debug_assert!(pda.poppable[q as usize].contains(&top));
                let (target, push, read) = pda.pop[top as usize];
                match ex.follow(pos, parent, push, target, read) {
                    Some(id) => {
                        succs.push(id);
                        1
                    }
                    None => inf,
                }
            } else {
                // AND node: the real top may be any poppable symbol (borrowed).
                let mut ok = true;
                for &z in &pda.poppable[q as usize] {
                    let (target, push, read) = pda.pop[z as usize];
                    if target == pda.end() {
                        ok = false; // `$END` has no move and has not read all of s
                        break;
                    }
                    match ex.follow(pos, 0, push, target, read) {
                        Some(id) => succs.push(id),
                        None => {
                            ok = false;
                            break;
                        }
                    }
                }
                if ok { succs.len() as u32 } else { inf }
            };
            need.push(nd);
            if nd != inf && nd != 0 {
                edges.extend(succs.iter().map(|&t| (t, n as u32)));
            }
            n += 1;
        }
        // Least fixpoint: propagate goodness backwards from the final nodes.
        crate::sort::sort_packed(&mut edges);
        let mut off = vec![0u32; need.len() + 1];
        for &(to, _) in &edges {
            off[to as usize + 1] += 1;
        }
        for i in 0..need.len() {
            off[i + 1] += off[i];
        }
        let mut good = vec![false; need.len()];
        let mut work: Vec<u32> = Vec::new();
        for (i, &nd) in need.iter().enumerate() {
            if nd == 0 {
                good[i] = true;
                work.push(i as u32);
            }
        }
        while let Some(t) = work.pop() {
            for &(_, from) in &edges[off[t as usize] as usize..off[t as usize + 1] as usize] {
                let f = from as usize;
                if !good[f] {
                    need[f] -= 1;
                    if need[f] == 0 {
                        good[f] = true;
                        work.push(from);
                    }
                }
            }
        }
        good[0]
    }

    /// Shortest `m` (≥ 1 for non-empty `s`) such that, for every `P` and `X`,
    /// `P·X·s ∈ Lp ⟺ P·X·s[..m] ∈ Lp`, by repeated application of appendix
    /// §6.1: if `is_always_legal(s[j], s[j+1..cur])` then `s[..cur]` and
    /// `s[..j+1]` are jointly legal. Returns `s.len()` when nothing is proven.
    pub fn truncate(&self, s: &[TerminalId], max_stack: usize) -> usize {
        let mut cur = s.len();
        'outer: loop {
            for j in 0..cur.saturating_sub(1) {
                if self.is_always_legal(s[j], &s[j + 1..cur], max_stack) {
                    cur = j + 1;
                    continue 'outer;
                }
            }
            return cur;
        }
    }

    /// Like [`truncate`](Self::truncate) for a known preceding terminal `x`,
    /// which may also play the role of `Y1`: returns 0 when
    /// `is_always_legal(x, s[..m])`, i.e. `P·x·s ∈ Lp ⟺ P·x ∈ Lp`.
    pub fn truncate_after(&self, x: TerminalId, s: &[TerminalId], max_stack: usize) -> usize {
        let m = self.truncate(s, max_stack);
        if m > 0 && self.is_always_legal(x, &s[..m], max_stack) {
            0
        } else {
            m
        }
    }
}

fn for_each_bit(words: &[u64], mut f: impl FnMut(usize)) {
    for (i, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            f(i * 64 + w.trailing_zeros() as usize);
            w &= w - 1;
        }
    }
}

/// KMP automaton of `Σ*·w·Σ*` over states `0..=m` (`m` accepting, absorbing).
/// Returns `tmap[t]` (index of `t` among the distinct terminals of `w`, or
/// `NONE`: such a terminal sends every state `< m` to 0) and `delta[i*k + p]`.
fn kmp_table(w: &[u32], n_terms: usize) -> (Vec<u32>, Vec<u32>) {
    let m = w.len();
    let k = m + 1;
    let mut tmap = vec![NONE; n_terms];
    let mut distinct = 0u32;
    for &t in w {
        if (t as usize) < n_terms && tmap[t as usize] == NONE {
            tmap[t as usize] = distinct;
            distinct += 1;
        }
    }
    let mut delta = vec![0u32; distinct as usize * k];
    let idx = |t: u32| tmap[t as usize] as usize;
    delta[idx(w[0]) * k] = 1;
    let mut border = 0usize; // state reached on w[1..p]
    for p in 1..m {
        for i in 0..distinct as usize {
            delta[i * k + p] = delta[i * k + border];
        }
        delta[idx(w[p]) * k + p] = p as u32 + 1;
        border = delta[idx(w[p]) * k + border] as usize;
    }
    for i in 0..distinct as usize {
        delta[i * k + m] = m as u32;
    }
    (tmap, delta)
}

/// The DFT pushdown automaton (appendix Definition 1) of the trimmed grammar.
/// States: terminals `0..nt`, `•A = nt + A`, `A• = nt + nn + A`, `$END = nt + 2nn`.
/// Stack symbols: `X ::= α1…αi` for each rule and `1 ≤ i ≤ |α|`, then `Z0`.
struct Pda {
    nt: u32,
    nn: u32,
    /// Per stack symbol: the unique transition popping it,
    /// `(target state, pushed symbol or NONE, read terminal or NONE)`.
    pop: Vec<(u32, u32, u32)>,
    /// Per state: the stack symbols some transition from it pops.
    poppable: Vec<Vec<u32>>,
    /// Per nonterminal `A`: the moves of `•A`, `(pushed or NONE, target, read or NONE)`.
    begin: Vec<Vec<(u32, u32, u32)>>,
}

impl Pda {
    fn new(nt: usize, nn: usize, start: u32, rules: &[(u32, Vec<Symbol>)]) -> Pda {
        let (nt32, nn32) = (nt as u32, nn as u32);
        let start_of = |s: Symbol| match s {
            Symbol::T(t) => (t.0, t.0),
            Symbol::N(b) => (nt32 + b.0, NONE),
        };
        let end_of = |s: Symbol| match s {
            Symbol::T(t) => t.0,
            Symbol::N(b) => nt32 + nn32 + b.0,
        };
        let mut pop = Vec::new();
        let mut poppable = vec![Vec::new(); nt + 2 * nn + 1];
        let mut begin = vec![Vec::new(); nn];
        for (lhs, rhs) in rules {
            let base = pop.len() as u32; // sym(r, i) = base + i - 1
            if rhs.is_empty() {
                begin[*lhs as usize].push((NONE, nt32 + nn32 + lhs, NONE));
                continue;
            }
            let (st, rd) = start_of(rhs[0]);
            begin[*lhs as usize].push((base, st, rd));
            for i in 1..=rhs.len() {
                let sym = base + i as u32 - 1;
                poppable[end_of(rhs[i - 1]) as usize].push(sym);
                pop.push(if i < rhs.len() {
                    let (st, rd) = start_of(rhs[i]);
                    (st, sym + 1, rd)
                } else {
                    (nt32 + nn32 + lhs, NONE, NONE)
                });
            }
        }
        if start != NONE {
            let z0 = pop.len() as u32;
            pop.push((nt32 + 2 * nn32, NONE, NONE));
            poppable[(nt32 + nn32 + start) as usize].push(z0);
        }
        Pda { nt: nt32, nn: nn32, pop, poppable, begin }
    }

    /// `Some(A)` when `q` is `•A`.
    fn begin_nt(&self, q: u32) -> Option<usize> {
        (q >= self.nt && q < self.nt + self.nn).then(|| (q - self.nt) as usize)
    }

    fn end(&self) -> u32 {
        self.nt + 2 * self.nn
    }
}

/// Debt-NFA construction state for one exploration: nodes are
/// `(PDA state, symbols of s read, local stack id)`; local stacks are interned
/// as `(top, parent, depth)` with id 0 the empty stack.
struct Explorer<'a> {
    s: &'a [TerminalId],
    max_stack: usize,
    stacks: Vec<(u32, u32, u32)>,
    stack_ids: HashMap<(u32, u32), u32>,
    ids: HashMap<(u32, u32, u32), u32>,
    nodes: Vec<(u32, u32, u32)>,
}

impl Explorer<'_> {
    fn node(&mut self, q: u32, pos: u32, st: u32) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.ids.entry((q, pos, st)).or_insert(next);
        if id == next {
            self.nodes.push((q, pos, st));
        }
        id
    }

    /// The node after a move that (after any pop) leaves local stack `st`,
    /// pushes `push`, reads `read` and enters `target`; `None` when the read
    /// does not match `s` or the push exceeds `max_stack`.
    fn follow(&mut self, pos: u32, st: u32, push: u32, target: u32, read: u32) -> Option<u32> {
        let pos = if read == NONE {
            pos
        } else if self.s.get(pos as usize).map(|t| t.0) == Some(read) {
            pos + 1
        } else {
            return None;
        };
        let st = if push == NONE {
            st
        } else {
            let depth = self.stacks[st as usize].2 + 1;
            if depth as usize > self.max_stack {
                return None;
            }
            let next = self.stacks.len() as u32;
            let id = *self.stack_ids.entry((push, st)).or_insert(next);
            if id == next {
                self.stacks.push((push, st, depth));
            }
            id
        };
        Some(self.node(target, pos, st))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::{NonterminalDef, Rule, Span, TerminalDef, TerminalPattern};
    use crate::ids::NonterminalId;
    use proptest::prelude::*;
    use std::time::Instant;

    /// A grammar from `lhs: a B | c |` lines (alternatives separated by `|`,
    /// an empty alternative is ε). UPPERCASE names are terminals. The first
    /// lhs is the start symbol.
    fn g(text: &str) -> Cfg {
        let mut terms: Vec<String> = Vec::new();
        let mut nts: Vec<String> = Vec::new();
        let intern = |v: &mut Vec<String>, n: &str| match v.iter().position(|x| x == n) {
            Some(i) => i,
            None => {
                v.push(n.to_string());
                v.len() - 1
            }
        };
        let mut rules = Vec::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (lhs, alts) = line.split_once(':').expect("rule line");
            let lhs = NonterminalId::new(intern(&mut nts, lhs.trim()));
            for alt in alts.split('|') {
                let rhs = alt
                    .split_whitespace()
                    .map(|w| {
                        if w.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') {
                            Symbol::T(TerminalId::new(intern(&mut terms, w)))
                        } else {
                            Symbol::N(NonterminalId::new(intern(&mut nts, w)))
                        }
                    })
                    .collect();
                rules.push(Rule::new(lhs, rhs, Span::default()));
            }
        }
        Cfg {
            terminals: terms
                .into_iter()
                .map(|name| TerminalDef::new(name.clone(), TerminalPattern::Regex { regex: name, lookaheads: vec![] }))
                .collect(),
            nonterminals: nts.into_iter().map(|name| NonterminalDef { name, span: Span::default() }).collect(),
            rules,
            start: NonterminalId(0),
            indent: None,
            lexer: crate::grammar::LexerMode::Longest,
            conflicts: Default::default(),
        }
    }

    fn ts(cfg: &Cfg, names: &str) -> Vec<TerminalId> {
        names.split_whitespace().map(|n| cfg.terminal_by_name(n).expect(n)).collect()
    }

    // ---------------------------------------------------------------------
    // An independent oracle: Earley recognizer (exact Lp / L membership on the
    // productive part of the grammar) and a string-valued Bar-Hillel search
    // for the shortest sentence containing a word.

    type Item = (usize, usize, usize); // (rule, dot, origin)

    struct Oracle {
        rules: Vec<(usize, Vec<Symbol>)>,
        nullable: Vec<bool>,
        start: usize,
        nonempty: bool,
    }

    impl Oracle {
        fn new(cfg: &Cfg) -> Oracle {
            let nn = cfg.nonterminals.len();
            let mut prod = vec![false; nn];
            let mut changed = true;
            while changed {
                changed = false;
                for r in &cfg.rules {
                    let ok = r.rhs.iter().all(|s| match s {
                        Symbol::T(_) => true,
                        Symbol::N(n) => prod[n.index()],
                    });
                    if ok && !prod[r.lhs.index()] {
                        prod[r.lhs.index()] = true;
                        changed = true;
                    }
                }
            }
            let rules: Vec<(usize, Vec<Symbol>)> = cfg
                .rules
                .iter()
                .filter(|r| r.rhs.iter().all(|s| !matches!(s, Symbol::N(n) if !prod[n.index()])))
                .map(|r| (r.lhs.index(), r.rhs.clone()))
                .collect();
            let mut nullable = vec![false; nn];
            changed = true;
            while changed {
                changed = false;
                for (l, rhs) in &rules {
                    if !nullable[*l] && rhs.iter().all(|s| matches!(s, Symbol::N(n) if nullable[n.index()])) {
                        nullable[*l] = true;
                        changed = true;
                    }
                }
            }
            Oracle { rules, nullable, start: cfg.start.index(), nonempty: prod[cfg.start.index()] }
        }

        fn close(&self, chart: &mut [Vec<Item>]) {
            let i = chart.len() - 1;
            let mut j = 0;
            while j < chart[i].len() {
                let (r, d, o) = chart[i][j];
                j += 1;
                let add = |chart: &mut [Vec<Item>], it: Item| {
                    if !chart[i].contains(&it) {
                        chart[i].push(it);
                    }
                };
                let (lhs, rhs) = &self.rules[r];
                if d < rhs.len() {
                    if let Symbol::N(b) = rhs[d] {
                        for (r2, (l2, _)) in self.rules.iter().enumerate() {
                            if *l2 == b.index() {
                                add(chart, (r2, 0, i));
                            }
                        }
                        if self.nullable[b.index()] {
                            add(chart, (r, d + 1, o));
                        }
                    }
                } else {
                    let waiting: Vec<Item> = chart[o]
                        .iter()
                        .copied()
                        .filter(|&(r2, d2, _)| self.rules[r2].1.get(d2) == Some(&Symbol::N(NonterminalId::new(*lhs))))
                        .collect();
                    for (r2, d2, o2) in waiting {
                        add(chart, (r2, d2 + 1, o2));
                    }
                }
            }
        }

        fn init(&self) -> Option<Vec<Vec<Item>>> {
            if !self.nonempty {
                return None;
            }
            let mut chart = vec![self
                .rules
                .iter()
                .enumerate()
                .filter(|(_, (l, _))| *l == self.start)
                .map(|(r, _)| (r, 0, 0))
                .collect::<Vec<_>>()];
            self.close(&mut chart);
            Some(chart)
        }

        fn scan(&self, chart: &[Vec<Item>], t: u32) -> Option<Vec<Vec<Item>>> {
            let last = chart.last().unwrap();
            let set: Vec<Item> = last
                .iter()
                .filter(|&&(r, d, _)| self.rules[r].1.get(d) == Some(&Symbol::T(TerminalId(t))))
                .map(|&(r, d, o)| (r, d + 1, o))
                .collect();
            if set.is_empty() {
                return None;
            }
            let mut c = chart.to_vec();
            c.push(set);
            self.close(&mut c);
            Some(c)
        }

        fn complete(&self, chart: &[Vec<Item>]) -> bool {
            chart
                .last()
                .unwrap()
                .iter()
                .any(|&(r, d, o)| o == 0 && self.rules[r].0 == self.start && d == self.rules[r].1.len())
        }

        fn accepts(&self, w: &[u32]) -> bool {
            let mut c = match self.init() {
                Some(c) => c,
                None => return false,
            };
            for &t in w {
                match self.scan(&c, t) {
                    Some(n) => c = n,
                    None => return false,
                }
            }
            self.complete(&c)
        }

        /// All of Lp and L up to length `n`.
        fn lang(&self, nt: usize, n: usize) -> (HashSet<Vec<u32>>, HashSet<Vec<u32>>) {
            let (mut lp, mut l) = (HashSet::default(), HashSet::default());
            let mut frontier = match self.init() {
                Some(c) => vec![(Vec::new(), c)],
                None => return (lp, l),
            };
            while let Some((w, c)) = frontier.pop() {
                if self.complete(&c) {
                    l.insert(w.clone());
                }
                lp.insert(w.clone());
                if w.len() < n {
                    for t in 0..nt as u32 {
                        if let Some(c2) = self.scan(&c, t) {
                            let mut w2 = w.clone();
                            w2.push(t);
                            frontier.push((w2, c2));
                        }
                    }
                }
            }
            (lp, l)
        }

        /// A shortest sentence containing `w`, by a string-valued fixpoint over
        /// (nonterminal, DFA state, DFA state) with a naive substring DFA.
        fn shortest_containing(&self, nn: usize, w: &[u32]) -> Option<Vec<u32>> {
            if !self.nonempty {
                return None;
            }
            let m = w.len();
            let k = m + 1;
            let delta = |q: usize, t: u32| -> usize {
                if q == m {
                    return m;
                }
                let mut v = w[..q].to_vec();
                v.push(t);
                (0..=v.len().min(m)).rev().find(|&l| v[v.len() - l..] == w[..l]).unwrap()
            };
            let idx = |a: usize, p: usize, q: usize| (a * k + p) * k + q;
            let mut best: Vec<Option<Vec<u32>>> = vec![None; nn * k * k];
            let relax = |slot: &mut Option<Vec<u32>>, cand: Vec<u32>| -> bool {
                if slot.as_ref().is_none_or(|s| s.len() > cand.len()) {
                    *slot = Some(cand);
                    true
                } else {
                    false
                }
            };
            let mut changed = true;
            while changed {
                changed = false;
                for (lhs, rhs) in &self.rules {
                    for p in 0..k {
                        let mut cur: Vec<Option<Vec<u32>>> = vec![None; k];
                        cur[p] = Some(Vec::new());
                        for &sym in rhs {
                            let mut nx: Vec<Option<Vec<u32>>> = vec![None; k];
                            for q in 0..k {
                                let Some(sq) = &cur[q] else { continue };
                                match sym {
                                    Symbol::T(t) => {
                                        let mut c = sq.clone();
                                        c.push(t.0);
                                        relax(&mut nx[delta(q, t.0)], c);
                                    }
                                    Symbol::N(b) => {
                                        for q2 in 0..k {
                                            if let Some(sb) = &best[idx(b.index(), q, q2)] {
                                                let mut c = sq.clone();
                                                c.extend_from_slice(sb);
                                                relax(&mut nx[q2], c);
                                            }
                                        }
                                    }
                                }
                            }
                            cur = nx;
                        }
                        for (q, c) in cur.into_iter().enumerate() {
                            if let Some(c) = c {
                                changed |= relax(&mut best[idx(*lhs, p, q)], c);
                            }
                        }
                    }
                }
            }
            best[idx(self.start, 0, m)].clone()
        }
    }

    fn contains_window(v: &[u32], w: &[u32]) -> bool {
        v.windows(w.len()).any(|x| x == w)
    }

    // ---------------------------------------------------------------------
    // The appendix example and the paper's Python-like facts.

    #[test]
    fn anbn_appendix_example() {
        let cfg = g("s: A s B |");
        let a = Analysis::new(&cfg);
        let (ta, tb) = (ts(&cfg, "A")[0], ts(&cfg, "B")[0]);
        assert!(a.is_always_legal(ta, &[ta], 4));
        assert!(a.is_always_legal(ta, &[tb], 4));
        assert!(a.is_never_legal(tb, &[ta]));
        assert!(!a.is_never_legal(ta, &[tb]) && !a.is_never_legal(tb, &[tb]) && !a.is_never_legal(ta, &[ta]));
        assert!(!a.is_always_legal(tb, &[tb], 8), "b b is unknown (in fact false), never proven");
        assert!(!a.is_always_legal(tb, &[ta], 8));
        // Longer continuations: a·(a a b) always legal; a·(b b) is not (P = ε).
        assert!(a.is_always_legal(ta, &[ta, ta, tb], 4));
        assert!(a.is_always_legal(ta, &[ta, tb, tb], 4));
        assert!(!a.is_always_legal(ta, &[tb, tb], 8));
        assert!(a.successor(ta, tb) && a.successor(tb, tb) && a.successor(ta, ta) && !a.successor(tb, ta));
        assert!(a.interchangeable_classes().is_empty());
        // max_stack 0 forbids the push after the borrowed pop: unknown.
        assert!(!a.is_always_legal(ta, &[tb], 0));
    }

    const EXPR: &str = "
        file: stmt | file stmt
        stmt: DEF NAME LPAR params RPAR COLON expr NL | expr NL
        params: | NAME | params COMMA NAME
        expr: term | expr add_op term
        term: factor | term mul_op factor
        factor: NAME | NUMBER | LPAR expr RPAR | unary_op factor
        add_op: PLUS | MINUS
        mul_op: STAR | SLASH
        unary_op: PLUS | MINUS | TILDE
    ";

    #[test]
    fn python_like_facts() {
        let cfg = g(EXPR);
        let a = Analysis::new(&cfg);
        let t = |s: &str| ts(&cfg, s)[0];
        let v = |s: &str| ts(&cfg, s);
        assert!(a.is_always_legal(t("DEF"), &v("NAME"), 4));
        assert!(a.is_always_legal(t("DEF"), &v("NAME LPAR"), 4));
        assert!(a.is_never_legal(t("DEF"), &v("LPAR")));
        assert!(a.is_always_legal(t("MINUS"), &v("MINUS"), 4));
        assert!(a.is_always_legal(t("MINUS"), &v("MINUS NAME"), 4));
        // `def f(` then NUMBER is illegal, so LPAR·NUMBER is not always legal.
        assert!(!a.is_always_legal(t("LPAR"), &v("NUMBER"), 8));
        assert!(!a.is_never_legal(t("LPAR"), &v("NUMBER")));
        // `def f(a` then PLUS is illegal.
        assert!(!a.is_always_legal(t("NAME"), &v("PLUS"), 8));
        // NAME·LPAR only occurs in `def f(`, which NUMBER cannot follow.
        assert!(a.is_never_legal(t("NAME"), &v("LPAR NUMBER")));
        assert!(!a.is_never_legal(t("NAME"), &v("LPAR RPAR")));
        assert!(a.is_never_legal(t("COMMA"), &v("NAME NUMBER")));
        assert!(a.is_never_legal(t("TILDE"), &v("RPAR")));
        assert_eq!(a.interchangeable_classes(), vec![v("PLUS MINUS"), v("STAR SLASH")]);
        assert_eq!(a.class_rep(t("MINUS")), t("PLUS"));
        assert_eq!(a.class_rep(t("TILDE")), t("TILDE"));
        // §6.1: MINUS·(MINUS NAME) always legal ⇒ (MINUS MINUS NAME) ~ (MINUS).
        assert_eq!(a.truncate(&v("MINUS MINUS NAME"), 4), 1);
        assert_eq!(a.truncate_after(t("NAME"), &v("MINUS MINUS NAME"), 4), 1);
        assert_eq!(a.truncate(&v("NAME LPAR"), 4), 2);
        assert_eq!(a.truncate_after(t("DEF"), &v("NAME LPAR"), 4), 0);
        assert_eq!(a.truncate(&[], 4), 0);
    }

    #[test]
    fn dead_and_out_of_range_terminals() {
        // C only occurs in an unproductive rule; `x` is unreachable.
        let cfg = g("s: A s2 | A C u\n s2: B |\n u: u C\n x: D");
        let a = Analysis::new(&cfg);
        let v = |s: &str| ts(&cfg, s);
        let (ta, tb, tc, td) = (v("A")[0], v("B")[0], v("C")[0], v("D")[0]);
        assert!(a.is_live(ta) && a.is_live(tb) && !a.is_live(tc) && !a.is_live(td));
        assert!(a.is_never_legal(ta, &[tc]) && a.is_never_legal(tc, &[]) && !a.is_never_legal(ta, &[]));
        assert!(a.is_always_legal(tc, &[ta], 4), "vacuous for a dead X");
        assert!(!a.is_always_legal(ta, &[tc], 4));
        assert!(a.interchangeable_classes().is_empty(), "dead terminals form no class");
        let far = TerminalId(999);
        assert!(a.is_never_legal(far, &[ta]) && a.is_never_legal(ta, &[far]) && !a.successor(far, ta));
        assert!(!a.is_always_legal(ta, &[far], 4));
        assert_eq!(a.class_rep(far), far);
        // Empty language.
        let e = Analysis::new(&g("s: s A"));
        assert!(e.is_never_legal(TerminalId(0), &[]) && !e.successor(TerminalId(0), TerminalId(0)));
    }

    // ---------------------------------------------------------------------
    // Soundness and exactness on random small grammars.

    fn random_cfg(nt: usize, nn: usize, rules: &[(usize, Vec<usize>)]) -> Cfg {
        let mut text = String::new();
        let name = |c: usize| if c < 4 { format!("T{}", c % nt) } else { format!("n{}", (c - 4) % nn) };
        // Mention every terminal and nonterminal first so ids are fixed: T0.. and n0 (start)...
        let mut lines: Vec<Vec<String>> = vec![Vec::new(); nn];
        for (i, (lhs, rhs)) in rules.iter().enumerate() {
            let lhs = if i == 0 { 0 } else { lhs % nn };
            lines[lhs].push(rhs.iter().map(|&c| name(c)).collect::<Vec<_>>().join(" "));
        }
        for (i, alts) in lines.iter().enumerate() {
            if !alts.is_empty() {
                text.push_str(&format!("n{i}: {}\n", alts.join(" | ")));
            }
        }
        let mut cfg = g(&text);
        // Renumber so that terminal `Ti` has id i (g numbers by first use) and
        // add never-used terminals so that Σ has exactly nt terminals.
        let mut terms = Vec::new();
        for i in 0..nt {
            let n = format!("T{i}");
            terms.push(match cfg.terminal_by_name(&n) {
                Some(t) => cfg.terminals[t.index()].clone(),
                None => TerminalDef::new(n.clone(), TerminalPattern::Regex { regex: n, lookaheads: vec![] }),
            });
        }
        let old = cfg.terminals.clone();
        for r in &mut cfg.rules {
            for s in &mut r.rhs {
                if let Symbol::T(t) = s {
                    *t = TerminalId::new(terms.iter().position(|d| d.name == old[t.index()].name).unwrap());
                }
            }
        }
        cfg.terminals = terms;
        cfg
    }

    fn grammar_strategy() -> impl Strategy<Value = Cfg> {
        (2..=4usize, 2..=4usize, prop::collection::vec((0..4usize, prop::collection::vec(0..8usize, 0..=3)), 2..=9))
            .prop_map(|(nt, nn, rules)| random_cfg(nt, nn, &rules))
    }

    /// All sequences over `0..nt` of length `1..=max`.
    fn sequences(nt: usize, max: usize) -> Vec<Vec<u32>> {
        let mut out: Vec<Vec<u32>> = Vec::new();
        let mut layer: Vec<Vec<u32>> = vec![Vec::new()];
        for _ in 0..max {
            layer = layer
                .iter()
                .flat_map(|p| (0..nt as u32).map(move |t| p.iter().copied().chain([t]).collect()))
                .collect();
            out.extend(layer.iter().cloned());
        }
        out
    }

    const MAX_STACK: usize = 4;
    const BOUND: usize = 7; // enumerate Lp up to this length

    fn check_grammar(cfg: &Cfg) {
        let nt = cfg.terminals.len();
        let a = Analysis::new(cfg);
        let o = Oracle::new(cfg);
        let (lp, l) = o.lang(nt, BOUND);
        let tid = |v: &[u32]| v.iter().map(|&t| TerminalId(t)).collect::<Vec<_>>();
        let windows: HashSet<Vec<u32>> =
            lp.iter().flat_map(|w| (0..w.len()).flat_map(move |i| (i + 1..=w.len()).map(move |j| w[i..j].to_vec()))).collect();
        let mut by_last: HashMap<u32, Vec<&Vec<u32>>> = HashMap::default();
        for w in &lp {
            if let Some(&x) = w.last() {
                by_last.entry(x).or_default().push(w);
            }
        }
        let cat = |a: &[u32], b: &[u32]| a.iter().chain(b).copied().collect::<Vec<u32>>();

        for x in 0..nt as u32 {
            let tx = TerminalId(x);
            assert_eq!(a.is_live(tx), o.shortest_containing(cfg.nonterminals.len(), &[x]).is_some());
            for y in 0..nt as u32 {
                let bh = a.live[x as usize] && a.live[y as usize] && a.bar_hillel_nonempty(&[x, y]);
                assert_eq!(a.successor(tx, TerminalId(y)), bh, "successor vs Bar-Hillel {x} {y}");
            }
            for s in sequences(nt, 3) {
                let w = cat(&[x], &s);
                let ts = tid(&s);
                // is_never_legal: exact, against an independent shortest witness.
                let never = a.is_never_legal(tx, &ts);
                let wit = o.shortest_containing(cfg.nonterminals.len(), &w);
                assert_eq!(never, wit.is_none(), "never_legal {w:?} witness {wit:?}");
                if let Some(v) = &wit {
                    assert!(o.accepts(v) && contains_window(v, &w), "bad witness {v:?} for {w:?}");
                }
                if never {
                    assert!(!windows.contains(&w), "{w:?} occurs in an enumerated prefix");
                }
                if s.len() >= 2 && a.live[x as usize] && s.iter().all(|&t| a.live[t as usize]) {
                    assert_eq!(never, !a.bar_hillel_nonempty(&w), "shortcut vs Bar-Hillel {w:?}");
                }
                // is_always_legal: sound on every enumerated P·x ∈ Lp.
                let always = a.is_always_legal(tx, &ts, MAX_STACK);
                if always {
                    assert!(!(a.is_live(tx) && never), "always and never legal: {w:?}");
                    for p in by_last.get(&x).into_iter().flatten() {
                        if p.len() + s.len() <= BOUND {
                            assert!(lp.contains(&cat(p, &s)), "always_legal({x}, {s:?}) but {:?} ∉ Lp", cat(p, &s));
                        }
                    }
                }
                // §6.1 truncation: P·X·s ∈ Lp ⟺ P·X·s[..m] ∈ Lp.
                let m = a.truncate(&ts, MAX_STACK);
                assert!(m >= 1 && m <= s.len());
                if m < s.len() {
                    for p in lp.iter().filter(|p| p.len() + s.len() <= BOUND) {
                        assert_eq!(lp.contains(&cat(p, &s)), lp.contains(&cat(p, &s[..m])), "truncate {s:?} to {m} after {p:?}");
                    }
                }
                let m0 = a.truncate_after(tx, &ts, MAX_STACK);
                assert!(m0 <= m);
                if m0 < s.len() {
                    for p in by_last.get(&x).into_iter().flatten().filter(|p| p.len() + s.len() <= BOUND) {
                        assert_eq!(lp.contains(&cat(p, &s)), lp.contains(&cat(p, &s[..m0])), "truncate_after {x} {s:?} to {m0} after {p:?}");
                    }
                }
            }
        }
        // Interchangeable terminals: swapping one occurrence keeps L and Lp membership.
        for class in a.interchangeable_classes() {
            assert!(class.len() >= 2 && class.iter().all(|&t| a.class_rep(t) == class[0]));
            for &y1 in &class {
                for &y2 in &class {
                    for (set, what) in [(&l, "L"), (&lp, "Lp")] {
                        for w in set.iter() {
                            for i in (0..w.len()).filter(|&i| w[i] == y1.0) {
                                let mut v = w.clone();
                                v[i] = y2.0;
                                assert!(set.contains(&v), "{y1:?}~{y2:?} but swapping {w:?} leaves {what}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The LR-automaton prover and the parser-context verdicts
    /// (`super::super::lr`) against the enumerated prefixes: a proof of
    /// "always" / a context verdict must hold for every real prefix.
    fn check_lr(cfg: &Cfg) {
        let Ok(tables) = crate::parser::lalr::build_tables(cfg) else {
            return; // not LALR(1): nothing to check
        };
        let nt = cfg.terminals.len();
        let o = Oracle::new(cfg);
        let (lp, _) = o.lang(nt, BOUND);
        let lr = super::super::lr::LrProver::new(&tables, 16);
        let cat = |a: &[u32], b: &[u32]| a.iter().chain(b).copied().collect::<Vec<u32>>();
        // Top two LR states after each enumerated prefix.
        let ctx: Vec<(&Vec<u32>, Option<(u32, u32)>)> = lp
            .iter()
            .map(|p| {
                let mut ps = crate::parser::LrParser::new(&tables);
                let terms: Vec<TerminalId> = p.iter().map(|&t| TerminalId(t)).collect();
                ps.consume(&tables, &terms).expect("an enumerated prefix parses");
                let st: Vec<u32> = ps.states().map(|s| s.0).take(2).collect();
                (p, (st.len() == 2).then(|| (st[1], st[0])))
            })
            .collect();
        for s in sequences(nt, 3) {
            let ts: Vec<TerminalId> = s.iter().map(|&t| TerminalId(t)).collect();
            for x in 0..nt as u32 {
                if lr.is_always_legal(TerminalId(x), &ts) {
                    for p in lp.iter().filter(|p| p.last() == Some(&x) && p.len() + s.len() <= BOUND) {
                        assert!(lp.contains(&cat(p, &s)), "LR always_legal({x}, {s:?}) but {:?} ∉ Lp", cat(p, &s));
                    }
                }
            }
            for (p, c) in &ctx {
                let (Some((below, top)), true) = (c, p.len() + s.len() <= BOUND) else { continue };
                let v = lr.verdict_in(*below, *top, &s);
                let inside = lp.contains(&cat(p, &s));
                assert!(!(v.good && !inside), "context ({below}, {top}) good for {s:?} but {:?} ∉ Lp", cat(p, &s));
                assert!(!(!v.possible && inside), "context ({below}, {top}) never for {s:?} but {:?} ∈ Lp", cat(p, &s));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn soundness_on_random_grammars(cfg in grammar_strategy()) {
            check_grammar(&cfg);
        }

        #[test]
        fn lr_prover_soundness_on_random_grammars(cfg in grammar_strategy()) {
            check_lr(&cfg);
        }
    }

    #[test]
    fn lr_prover_needs_no_left_factoring() {
        // `( )` and `( NAME )` as separate alternatives: the DFT exploration
        // cannot prove that `(` may be followed by NAME; the LR one can.
        let cfg = g("s: A LPAR RPAR | A LPAR NAME RPAR | B LPAR NAME RPAR");
        let a = Analysis::new(&cfg);
        let t = ts(&cfg, "LPAR NAME");
        assert!(!a.is_always_legal(t[0], &t[1..], MAX_STACK));
        let a = Analysis::new(&cfg).with_lr(&crate::parser::lalr::build_tables(&cfg).unwrap());
        assert!(a.is_always_legal(t[0], &t[1..], MAX_STACK));
        let (dft, lr, _) = a.proof_counts();
        assert_eq!((dft, lr), (0, 1));
    }

    #[test]
    fn kmp_matches_naive_and_needs_borders() {
        // `A A B` only occurs after another A: the KMP borders must be right.
        let cfg = g("s: A A A B");
        let a = Analysis::new(&cfg);
        let v = |s: &str| ts(&cfg, s);
        assert!(!a.is_never_legal(v("A")[0], &v("A B")) && !a.is_never_legal(v("A")[0], &v("A A B")));
        assert!(a.is_never_legal(v("A")[0], &v("A A A")));
        for w in sequences(3, 5) {
            let (tmap, delta) = kmp_table(&w, 3);
            let m = w.len();
            for p in 0..m {
                for t in 0..3u32 {
                    let mut u = w[..p].to_vec();
                    u.push(t);
                    let naive = (0..=u.len().min(m)).rev().find(|&l| u[u.len() - l..] == w[..l]).unwrap();
                    let got = if tmap[t as usize] == NONE { 0 } else { delta[tmap[t as usize] as usize * (m + 1) + p] as usize };
                    assert_eq!(got, naive, "w {w:?} p {p} t {t}");
                }
            }
        }
    }

    #[test]
    fn successor_through_nullable() {
        let cfg = g("s: A n B | n n\n n: | C");
        let a = Analysis::new(&cfg);
        let v = |s: &str| ts(&cfg, s);
        let (ta, tb, tc) = (v("A")[0], v("B")[0], v("C")[0]);
        assert!(a.successor(ta, tb) && a.successor(ta, tc) && a.successor(tc, tb) && a.successor(tc, tc));
        assert!(!a.successor(tb, ta) && !a.successor(tb, tc));
        check_grammar(&cfg);
    }

    #[test]
    fn interchangeable_needs_every_context() {
        // Same hole context `A _` but under different left-hand sides.
        let cfg = g("s: u | v D\n u: A B\n v: A C");
        assert!(Analysis::new(&cfg).interchangeable_classes().is_empty());
        // B and C share `s: A _` but C also occurs in `t: C`, B does not.
        let cfg = g("s: A B | A C | t\n t: C | D");
        let a = Analysis::new(&cfg);
        assert!(a.interchangeable_classes().is_empty());
        let cfg = g("s: A B | A C | t\n t: C | B | D");
        let a = Analysis::new(&cfg);
        assert_eq!(a.interchangeable_classes(), vec![ts(&cfg, "B C")]);
        check_grammar(&cfg);
    }

    // ---------------------------------------------------------------------
    // A Python-like grammar of ~100 terminals / ~300 rules for measurements.

    const PY: &str = "
        file_input: stmts_opt
        stmts_opt: | stmts_opt stmt_or_nl
        stmt_or_nl: NL | stmt
        stmt: simple_stmt | compound_stmt
        simple_stmt: small_stmts NL | small_stmts SEMI NL
        small_stmts: small_stmt | small_stmts SEMI small_stmt
        small_stmt: expr_stmt | PASS | BREAK | CONTINUE | RETURN | RETURN testlist | RAISE | RAISE test | RAISE test FROM test | GLOBAL names | NONLOCAL names | DEL exprlist | ASSERT test | ASSERT test COMMA test | import_stmt | TYPE NAME EQUAL test
        names: NAME | names COMMA NAME
        import_stmt: IMPORT dotted_as_names | FROM dotted_name IMPORT import_targets | FROM dots dotted_name IMPORT import_targets | FROM dots IMPORT import_targets
        dots: DOT | ELLIPSIS | dots DOT | dots ELLIPSIS
        dotted_name: NAME | dotted_name DOT NAME
        dotted_as_names: dotted_as_name | dotted_as_names COMMA dotted_as_name
        dotted_as_name: dotted_name | dotted_name AS NAME
        import_targets: STAR | import_as_names | LPAR import_as_names RPAR
        import_as_names: import_as_name | import_as_names COMMA import_as_name
        import_as_name: NAME | NAME AS NAME
        expr_stmt: testlist | testlist augassign testlist | testlist assigns | testlist COLON test | testlist COLON test EQUAL test | yield_expr
        assigns: EQUAL testlist | EQUAL yield_expr | assigns EQUAL testlist | assigns EQUAL yield_expr
        augassign: PLUSEQ | MINUSEQ | STAREQ | SLASHEQ | PERCENTEQ | AMPEQ | BAREQ | CIRCEQ | LSHIFTEQ | RSHIFTEQ | DSTAREQ | DSLASHEQ | ATEQ
        yield_expr: YIELD | YIELD testlist | YIELD FROM test
        compound_stmt: if_stmt | while_stmt | for_stmt | try_stmt | with_stmt | funcdef | classdef | decorated | async_stmt | match_stmt
        if_stmt: IF namedexpr COLON suite elifs else_opt
        elifs: | elifs ELIF namedexpr COLON suite
        else_opt: | ELSE COLON suite
        while_stmt: WHILE namedexpr COLON suite else_opt
        for_stmt: FOR exprlist IN testlist COLON suite else_opt
        try_stmt: TRY COLON suite excepts else_opt finally_opt | TRY COLON suite FINALLY COLON suite
        excepts: except_clause | excepts except_clause
        except_clause: EXCEPT COLON suite | EXCEPT test COLON suite | EXCEPT test AS NAME COLON suite | EXCEPT STAR test COLON suite
        finally_opt: | FINALLY COLON suite
        with_stmt: WITH with_items COLON suite | WITH LPAR with_items RPAR COLON suite
        with_items: with_item | with_items COMMA with_item
        with_item: test | test AS expr
        funcdef: DEF name LPAR params RPAR ret_opt COLON suite
        name: NAME | MATCH | CASE
        ret_opt: | ARROW test
        params: | paramlist | paramlist COMMA
        paramlist: param | paramlist COMMA param
        param: NAME | NAME EQUAL test | NAME COLON test | NAME COLON test EQUAL test | STAR NAME | STAR | DSTAR NAME | SLASH
        classdef: CLASS name COLON suite | CLASS name LPAR arglist_opt RPAR COLON suite
        decorated: decorators funcdef | decorators classdef | decorators async_stmt
        decorators: decorator | decorators decorator
        decorator: AT namedexpr NL
        async_stmt: ASYNC funcdef | ASYNC with_stmt | ASYNC for_stmt
        match_stmt: MATCH test COLON NL INDENT cases DEDENT
        cases: case | cases case
        case: CASE pattern COLON suite | CASE pattern IF namedexpr COLON suite
        pattern: or_pattern | or_pattern AS NAME
        or_pattern: closed_pattern | or_pattern BAR closed_pattern
        closed_pattern: literal_pattern | NAME | UNDERSCORE | dotted_name DOT NAME | LPAR pattern RPAR | LSQB patterns_opt RSQB | dotted_name LPAR patterns_opt RPAR
        literal_pattern: number | MINUS number | strings | NONE | TRUE | FALSE
        patterns_opt: | patterns
        patterns: pattern | patterns COMMA pattern
        suite: simple_stmt | NL INDENT stmts DEDENT
        stmts: stmt | stmts stmt
        namedexpr: test | NAME COLONEQ test
        test: or_test | or_test IF or_test ELSE test | lambdef
        lambdef: LAMBDA COLON test | LAMBDA names COLON test
        or_test: and_test | or_test OR and_test
        and_test: not_test | and_test AND not_test
        not_test: NOT not_test | comparison
        comparison: expr | comparison comp_op expr
        comp_op: LESSTHAN | MORETHAN | EQEQ | NOTEQ | LESSEQ | MOREEQ | LTGT | IN | NOT IN | IS | IS NOT
        expr: xor_expr | expr BAR xor_expr
        xor_expr: and_expr | xor_expr CIRC and_expr
        and_expr: shift_expr | and_expr AMP shift_expr
        shift_expr: arith | shift_expr shift_op arith
        shift_op: LSHIFT | RSHIFT
        arith: term | arith add_op term
        add_op: PLUS | MINUS
        term: factor | term mul_op factor
        mul_op: STAR | SLASH | PERCENT | DSLASH | AT
        factor: unary_op factor | power
        unary_op: PLUS | MINUS | TILDE
        power: await_primary | await_primary DSTAR factor
        await_primary: AWAIT primary | primary
        primary: atom | primary DOT NAME | primary LPAR arglist_opt RPAR | primary LSQB subscripts RSQB
        subscripts: subscript | subscripts COMMA subscript
        subscript: test | test_opt COLON test_opt | test_opt COLON test_opt COLON test_opt
        test_opt: | test
        atom: name | number | strings | ELLIPSIS | NONE | TRUE | FALSE | LPAR RPAR | LPAR yield_expr RPAR | LPAR testlist_comp RPAR | LSQB RSQB | LSQB testlist_comp RSQB | LBRACE RBRACE | LBRACE dictmaker RBRACE | LBRACE testlist_comp RBRACE
        number: DEC_NUMBER | HEX_NUMBER | OCT_NUMBER | BIN_NUMBER | FLOAT_NUMBER | IMAG_NUMBER
        strings: string | strings string
        string: STRING | LONG_STRING | FSTRING_START fstring_parts FSTRING_END
        fstring_parts: | fstring_parts FSTRING_MIDDLE | fstring_parts LBRACE testlist fconv_opt fspec_opt RBRACE
        fconv_opt: | BANG NAME
        fspec_opt: | COLON fstring_parts
        testlist_comp: star_test | testlist_comp COMMA star_test | star_test comp_for | testlist_comp COMMA
        star_test: test | STAR expr
        comp_for: FOR exprlist IN or_test | ASYNC FOR exprlist IN or_test | comp_for IF or_test | comp_for FOR exprlist IN or_test
        dictmaker: test COLON test | DSTAR expr | dictmaker COMMA test COLON test | dictmaker COMMA DSTAR expr | test COLON test comp_for
        arglist_opt: | arglist | arglist COMMA
        arglist: argument | arglist COMMA argument
        argument: test | test comp_for | NAME EQUAL test | NAME COLONEQ test | STAR test | DSTAR test
        exprlist: star_expr | exprlist COMMA star_expr
        star_expr: expr | STAR expr
        testlist: test | testlist COMMA test
    ";

    fn py() -> Cfg {
        g(PY)
    }

    #[test]
    fn python_grammar_facts() {
        let cfg = py();
        let a = Analysis::new(&cfg);
        let t = |s: &str| ts(&cfg, s)[0];
        let v = |s: &str| ts(&cfg, s);
        assert!(a.is_always_legal(t("DEF"), &v("NAME"), 6));
        assert!(a.is_never_legal(t("DEF"), &v("ASYNC")));
        assert!(a.is_always_legal(t("PLUS"), &v("MINUS"), 8));
        assert!(!a.is_always_legal(t("PLUS"), &v("MINUS NAME LPAR"), 8), "needs a local stack of 9");
        assert!(a.is_always_legal(t("PLUS"), &v("MINUS NAME LPAR"), 12));
        // `case -1`: here MINUS can be followed by a number only.
        assert!(!a.is_always_legal(t("MINUS"), &v("MINUS"), 8));
        let classes = a.interchangeable_classes();
        let has = |names: &str| classes.contains(&{
            let mut c = v(names);
            c.sort();
            c
        });
        assert!(has("PLUSEQ MINUSEQ STAREQ SLASHEQ PERCENTEQ AMPEQ BAREQ CIRCEQ LSHIFTEQ RSHIFTEQ DSTAREQ DSLASHEQ ATEQ"), "{classes:?}");
        assert!(has("LSHIFT RSHIFT") && has("PERCENT DSLASH") && has("HEX_NUMBER OCT_NUMBER BIN_NUMBER FLOAT_NUMBER IMAG_NUMBER DEC_NUMBER"));
        assert!(has("LESSTHAN MORETHAN EQEQ NOTEQ LESSEQ MOREEQ LTGT"));
        assert!(!classes.iter().any(|c| c.contains(&t("PLUS"))), "MINUS also occurs in literal_pattern");
        // successor == Bar-Hillel on all pairs.
        let nt = cfg.terminals.len() as u32;
        for x in 0..nt {
            for y in 0..nt {
                assert_eq!(a.successor(TerminalId(x), TerminalId(y)), a.bar_hillel_nonempty(&[x, y]));
            }
        }
    }

    /// Figures for the report: `cargo test --release -- --ignored --nocapture measure`.
    #[test]
    #[ignore]
    fn measure_python_like() {
        let cfg = py();
        let nt = cfg.terminals.len();
        let t0 = Instant::now();
        let a = Analysis::new(&cfg);
        println!(
            "grammar: {} terminals, {} nonterminals, {} rules; stack symbols {}; Analysis::new {:?}",
            nt,
            cfg.nonterminals.len(),
            cfg.rules.len(),
            a.pda.pop.len(),
            t0.elapsed()
        );
        println!("interchangeable classes: {}", a.interchangeable_classes().len());
        let t0 = Instant::now();
        let mut ne = 0;
        for x in 0..nt as u32 {
            for y in 0..nt as u32 {
                ne += !a.bar_hillel_nonempty(&[x, y]) as usize;
            }
        }
        println!("Bar-Hillel, all {} pairs (no shortcut, no cache): {:?}, never-legal {}", nt * nt, t0.elapsed(), ne);
        let pairs: Vec<(u32, u32)> =
            (0..nt as u32).flat_map(|x| (0..nt as u32).map(move |y| (x, y))).filter(|&(x, y)| a.successor(TerminalId(x), TerminalId(y))).collect();
        let t0 = Instant::now();
        let mut n3 = 0;
        let mut ne3 = 0;
        for &(x, y) in &pairs {
            for z in 0..nt as u32 {
                if a.successor(TerminalId(y), TerminalId(z)) {
                    n3 += 1;
                    ne3 += a.is_never_legal(TerminalId(x), &[TerminalId(y), TerminalId(z)]) as usize;
                }
            }
        }
        println!("Bar-Hillel, {n3} triples x·y·z with successor pairs: {:?}, never-legal {ne3}", t0.elapsed());
        for ms in [4, 6, 8, 12] {
            let a = Analysis::new(&cfg);
            let t0 = Instant::now();
            let mut yes = 0;
            for &(x, y) in &pairs {
                yes += a.is_always_legal(TerminalId(x), &[TerminalId(y)], ms) as usize;
            }
            println!("is_always_legal max_stack {ms}: {} successor pairs, {:?}, proven {yes}", pairs.len(), t0.elapsed());
        }
    }

    /// Completeness statistics on random grammars (not a pass/fail check).
    #[test]
    #[ignore]
    fn measure_random_completeness() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let (mut truth, mut proven) = (0, 0);
        for _ in 0..200 {
            let cfg = grammar_strategy().new_tree(&mut runner).unwrap().current();
            let nt = cfg.terminals.len();
            let a = Analysis::new(&cfg);
            let o = Oracle::new(&cfg);
            let (lp, _) = o.lang(nt, 9);
            for x in 0..nt as u32 {
                if !a.live[x as usize] {
                    continue;
                }
                for y in 0..nt as u32 {
                    let ok = lp.iter().filter(|p| p.last() == Some(&x) && p.len() < 9).all(|p| {
                        let mut q = (*p).clone();
                        q.push(y);
                        lp.contains(&q)
                    });
                    truth += ok as usize;
                    proven += a.is_always_legal(TerminalId(x), &[TerminalId(y)], 8) as usize;
                }
            }
        }
        println!("random grammars: always-legal pairs true up to length 9: {truth}, proven: {proven}");
    }
}
