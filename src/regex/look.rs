//! Lookaround, compiled exactly: a pattern with lookahead `(?=R)`/`(?!R)`
//! and lookbehind `(?<=R)`/`(?<!R)` → a HIR without them, of the same
//! language (where the subject is the whole string: a JSON Schema
//! `pattern`'s string value, a regex constraint's text).
//!
//! The dialects write each lookaround as a named group
//! `(?P<_L{kind}{n}>R)` ([`open`]; `kind`: `a` `(?=`, `n` `(?!`, `b`
//! `(?<=`, `c` `(?<!`): no other named group survives their translation.
//! Here the pattern becomes an extended regex (intersection and
//! complement) and a DFA by Brzozowski derivatives over the pattern's
//! character classes (its minterms):
//! - a state is the language of the rest of the subject, so a lookahead at
//!   its head sees exactly that rest: `(?=R)Y` = `(R·Σ*) ∩ Y`,
//!   `(?!R)Y` = `¬(R·Σ*) ∩ Y`; alternatives and repetitions holding a
//!   lookahead are unfolded with the rest of the pattern after them;
//! - each lookbehind body `R` (no lookahead inside) is tracked beside the
//!   state as the derivative of `Σ*·R` by the text read so far: `(?<=R)`
//!   holds where it is nullable (a lookbehind inside `R` refers to a
//!   tracker made before `R`'s);
//! - `^` and `$` are lookarounds too (`(?<![^])`, `(?![^])`).
//!
//! The DFA is minimized and turned back into a HIR by state elimination.
//! Both steps are bounded ([`MAX_STATES`], [`MAX_NODES`]): past them the
//! pattern is refused with a limit error, never approximated.

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look, Repetition};

use crate::hash::FxMap;

/// Most DFA states of a pattern with lookaround.
pub const MAX_STATES: usize = crate::limits::Limits::DEFAULT.max_lookaround_states;
/// Most nodes of the regex it becomes (and of its extended regex).
const MAX_NODES: usize = 16 * MAX_STATES;

/// The text that opens a lookaround group of `kind` (`a`, `n`, `b`, `c`).
pub(crate) fn open(kind: char, n: usize) -> String {
    format!("(?P<_L{kind}{n}>")
}

/// Whether `h` holds a lookaround group.
pub fn has(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Capture(c) => c.name.as_deref().is_some_and(|n| n.starts_with("_L")) || has(&c.sub),
        HirKind::Repetition(r) => has(&r.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().any(has),
        _ => false,
    }
}

type Id = u32;

#[derive(Clone)]
enum N {
    Fail,
    Eps,
    Cls(u32),
    /// Head, tail (right-nested).
    Cat(Id, Id),
    Alt(Vec<Id>),
    And(Vec<Id>),
    Not(Id),
    Star(Id),
    /// Lookahead: body, negated.
    Ahead(Id, bool),
    /// Lookbehind: tracker index, negated.
    Behind(u32, bool),
}

const FAIL: Id = 0;
const EPS: Id = 1;
/// Flags: holds a lookaround, holds a lookbehind, nullable (without lookaround).
const LOOK: u8 = 1;
const BEHIND: u8 = 2;
const NUL: u8 = 4;

struct X {
    nodes: Vec<N>,
    flags: Vec<u8>,
    /// Nodes by [`key`] (one map type for every map here, the crate's own: wasm size).
    ids: FxMap<Vec<u32>, Id>,
    classes: Vec<ClassUnicode>,
    /// One character of each minterm.
    reps: Vec<char>,
    /// `Σ*·R` of each lookbehind body `R` (inner ones first).
    behind: Vec<Id>,
    memo: FxMap<Vec<u32>, Id>,
    /// The `Cat(Star, tail)` states being unfolded (see [`X::cat_d`]).
    stack: Vec<Id>,
    any_star: Id,
    /// Past [`MAX_NODES`] (or unfolding too deep): the build stops.
    over: bool,
}

/// A node as a key: a tag, then its fields.
fn key(n: &N) -> Vec<u32> {
    match n {
        N::Fail => vec![0],
        N::Eps => vec![1],
        &N::Cls(k) => vec![2, k],
        &N::Cat(a, b) => vec![3, a, b],
        N::Alt(v) => [&[4][..], v].concat(),
        N::And(v) => [&[5][..], v].concat(),
        &N::Not(a) => vec![6, a],
        &N::Star(a) => vec![7, a],
        &N::Ahead(a, neg) => vec![8, a, neg as u32],
        &N::Behind(k, neg) => vec![9, k, neg as u32],
    }
}

fn any() -> ClassUnicode {
    ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)])
}

impl X {
    fn mk(&mut self, n: N) -> Id {
        let k = key(&n);
        if let Some(&i) = self.ids.get(&k) {
            return i;
        }
        if self.nodes.len() >= MAX_NODES {
            self.over = true;
        }
        let f = |i: &Id| self.flags[*i as usize];
        const LB: u8 = LOOK | BEHIND;
        let fl = match &n {
            N::Fail | N::Cls(_) => 0,
            N::Eps => NUL,
            N::Star(a) => NUL | f(a) & LB,
            N::Cat(a, b) => (f(a) | f(b)) & LB | f(a) & f(b) & NUL,
            N::Alt(v) => v.iter().fold(0, |x, i| x | f(i)),
            N::And(v) => v.iter().fold(0, |x, i| x | f(i) & LB) | v.iter().fold(NUL, |x, i| x & f(i)),
            N::Not(a) => f(a) & LB | !f(a) & NUL,
            N::Ahead(a, _) => LOOK | f(a) & BEHIND,
            N::Behind(..) => LB,
        };
        let i = self.nodes.len() as Id;
        self.nodes.push(n);
        self.flags.push(fl);
        self.ids.insert(k, i);
        i
    }
    fn fl(&self, i: Id) -> u8 {
        self.flags[i as usize]
    }
    /// `a·b`, right-nested (a loop, not a recursion: literals are long chains).
    fn cat(&mut self, a: Id, b: Id) -> Id {
        if a == FAIL || b == FAIL {
            return FAIL;
        }
        let (mut heads, mut x) = (Vec::new(), a);
        while let N::Cat(h, t) = self.nodes[x as usize] {
            heads.push(h);
            x = t;
        }
        heads.push(x);
        let mut acc = b;
        for h in heads.into_iter().rev() {
            if h != EPS {
                acc = if acc == EPS { h } else { self.mk(N::Cat(h, acc)) };
            }
        }
        acc
    }
    /// Alternation (`and`: intersection) of `v`, flattened, sorted, deduplicated.
    fn alt(&mut self, v: Vec<Id>, and: bool) -> Id {
        let top = self.any_star;
        let (unit, zero) = if and { (top, FAIL) } else { (FAIL, top) };
        let mut out = Vec::new();
        for i in v {
            match &self.nodes[i as usize] {
                N::Alt(w) if !and => out.extend_from_slice(w),
                N::And(w) if and => out.extend_from_slice(w),
                _ if i == zero => return zero,
                _ if i == unit => {}
                _ => out.push(i),
            }
        }
        out.sort_unstable();
        out.dedup();
        match out.len() {
            0 => unit,
            1 => out[0],
            _ => self.mk(if and { N::And(out) } else { N::Alt(out) }),
        }
    }
    fn not(&mut self, a: Id) -> Id {
        match self.nodes[a as usize] {
            N::Not(b) => b,
            _ if a == FAIL => self.any_star,
            _ if a == self.any_star => FAIL,
            _ => self.mk(N::Not(a)),
        }
    }
    fn star(&mut self, a: Id) -> Id {
        match self.nodes[a as usize] {
            N::Fail | N::Eps => EPS,
            N::Star(_) => a,
            _ => self.mk(N::Star(a)),
        }
    }
    fn class(&mut self, c: ClassUnicode) -> Id {
        if c.ranges().is_empty() {
            return FAIL;
        }
        let k = match self.classes.iter().position(|x| *x == c) {
            Some(k) => k,
            None => {
                self.classes.push(c);
                self.classes.len() - 1
            }
        };
        self.mk(N::Cls(k as u32))
    }

    /// The extended regex of a HIR.
    fn conv(&mut self, h: &Hir, in_behind: bool) -> Result<Id, String> {
        Ok(match h.kind() {
            HirKind::Empty => EPS,
            HirKind::Literal(l) => {
                let s = std::str::from_utf8(&l.0).map_err(|_| "a byte-level literal is not supported".to_string())?;
                let mut acc = EPS;
                for c in s.chars().rev() {
                    let k = self.class(ClassUnicode::new([ClassUnicodeRange::new(c, c)]));
                    acc = self.cat(k, acc);
                }
                acc
            }
            HirKind::Class(Class::Unicode(c)) => self.class(c.clone()),
            HirKind::Class(Class::Bytes(b)) => match b.to_unicode_class() {
                Some(c) => self.class(c),
                None => return Err("a byte-level class is not supported".into()),
            },
            HirKind::Look(l @ (Look::Start | Look::End)) => {
                if in_behind && *l == Look::End {
                    return Err("`$` inside a lookbehind is not supported".into());
                }
                let a = self.class(any());
                if *l == Look::Start {
                    self.behind_of(a, true)
                } else {
                    self.mk(N::Ahead(a, true))
                }
            }
            HirKind::Look(l) => return Err(format!("the assertion {l:?} (\\b, \\B, multi-line anchors) is not supported")),
            HirKind::Repetition(r) => {
                let a = self.conv(&r.sub, in_behind)?;
                let mut acc = match r.max {
                    None => self.star(a),
                    Some(max) => {
                        let mut acc = EPS;
                        for _ in r.min..max {
                            let t = self.cat(a, acc);
                            acc = self.alt(vec![EPS, t], false);
                        }
                        acc
                    }
                };
                for _ in 0..r.min {
                    acc = self.cat(a, acc);
                }
                acc
            }
            HirKind::Capture(c) => match c.name.as_deref().and_then(|n| n.strip_prefix("_L")).and_then(|n| n.chars().next()) {
                Some(k) => {
                    let behind = k == 'b' || k == 'c';
                    if in_behind && !behind {
                        return Err("lookahead inside a lookbehind is not supported".into());
                    }
                    let a = self.conv(&c.sub, behind)?;
                    if behind {
                        self.behind_of(a, k == 'c')
                    } else {
                        self.mk(N::Ahead(a, k == 'n'))
                    }
                }
                None => self.conv(&c.sub, in_behind)?,
            },
            HirKind::Concat(v) => {
                let mut acc = EPS;
                for s in v.iter().rev() {
                    let a = self.conv(s, in_behind)?;
                    acc = self.cat(a, acc);
                }
                acc
            }
            HirKind::Alternation(v) => {
                let mut out = Vec::new();
                for s in v {
                    out.push(self.conv(s, in_behind)?);
                }
                self.alt(out, false)
            }
        })
    }
    fn behind_of(&mut self, body: Id, neg: bool) -> Id {
        let t = self.cat(self.any_star, body);
        let k = match self.behind.iter().position(|&x| x == t) {
            Some(k) => k,
            None => {
                self.behind.push(t);
                self.behind.len() - 1
            }
        };
        self.mk(N::Behind(k as u32, neg))
    }

    fn has(&self, k: u32, m: usize) -> bool {
        let c = self.reps[m];
        self.classes[k as usize].ranges().binary_search_by(|r| if r.end() < c { std::cmp::Ordering::Less } else if r.start() > c { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Equal }).is_ok()
    }

    /// Matches the empty rest of the subject (`tr`: the lookbehind trackers).
    fn nullable(&self, e: Id, tr: &[Id]) -> bool {
        if self.fl(e) & LOOK == 0 {
            return self.fl(e) & NUL != 0;
        }
        match &self.nodes[e as usize] {
            &N::Cat(a, mut b) => {
                if !self.nullable(a, tr) {
                    return false;
                }
                while let N::Cat(h, t) = self.nodes[b as usize] {
                    if !self.nullable(h, tr) {
                        return false;
                    }
                    b = t;
                }
                self.nullable(b, tr)
            }
            N::Alt(v) => v.iter().any(|&a| self.nullable(a, tr)),
            N::And(v) => v.iter().all(|&a| self.nullable(a, tr)),
            &N::Not(a) => !self.nullable(a, tr),
            &N::Ahead(a, neg) => self.nullable(a, tr) != neg,
            &N::Behind(k, neg) => self.nullable(tr[k as usize], tr) != neg,
            _ => true,
        }
    }

    /// The derivative of state `e` by minterm `m`.
    fn d(&mut self, e: Id, m: usize, tr: &[Id]) -> Id {
        let key = vec![e, m as u32];
        let plain = self.fl(e) & LOOK == 0;
        if plain {
            if let Some(&r) = self.memo.get(&key) {
                return r;
            }
        }
        let r = match self.nodes[e as usize].clone() {
            N::Fail | N::Eps | N::Ahead(..) | N::Behind(..) => FAIL,
            N::Cls(k) => {
                if self.has(k, m) {
                    EPS
                } else {
                    FAIL
                }
            }
            N::Alt(v) | N::And(v) => {
                let and = matches!(self.nodes[e as usize], N::And(_));
                let mut out = Vec::with_capacity(v.len());
                for a in v {
                    out.push(self.d(a, m, tr));
                }
                self.alt(out, and)
            }
            N::Not(a) => {
                let x = self.d(a, m, tr);
                self.not(x)
            }
            N::Star(a) if plain => {
                let x = self.d(a, m, tr);
                self.cat(x, e)
            }
            N::Star(_) => self.cat_d(e, EPS, m, tr),
            N::Cat(h, t) => self.cat_d(h, t, m, tr),
        };
        if plain {
            self.memo.insert(key, r);
        }
        r
    }

    /// The derivative of `h·t`, `t` the whole rest of the subject.
    fn cat_d(&mut self, h: Id, t: Id, m: usize, tr: &[Id]) -> Id {
        if self.fl(h) & LOOK == 0 {
            let dh = self.d(h, m, tr);
            let a = self.cat(dh, t);
            return if self.fl(h) & NUL != 0 {
                let b = self.d(t, m, tr);
                self.alt(vec![a, b], false)
            } else {
                a
            };
        }
        match self.nodes[h as usize].clone() {
            N::Alt(v) => {
                let mut out = Vec::new();
                for a in v {
                    let c = self.cat(a, t);
                    out.push(self.d(c, m, tr));
                }
                self.alt(out, false)
            }
            N::Star(r) => {
                // An iteration that reads nothing only adds assertions: a
                // path back to this state before reading is cut.
                let e = self.cat(h, t);
                if self.stack.contains(&e) {
                    return FAIL;
                }
                if self.stack.len() > 200 {
                    self.over = true;
                    return FAIL;
                }
                self.stack.push(e);
                let c = self.cat(r, e);
                let a = self.d(c, m, tr);
                let b = self.d(t, m, tr);
                self.stack.pop();
                self.alt(vec![a, b], false)
            }
            N::Ahead(b, neg) => {
                let p = self.cat(b, self.any_star);
                let p = if neg { self.not(p) } else { p };
                let x = self.alt(vec![p, t], true);
                self.d(x, m, tr)
            }
            N::Behind(..) => {
                if self.nullable(h, tr) {
                    self.d(t, m, tr)
                } else {
                    FAIL
                }
            }
            // `Cat` heads are flattened; `And`/`Not` only stand for whole states.
            _ => FAIL,
        }
    }
}

/// The minterms of `classes`: the coarsest partition of the characters
/// that every class respects, as classes.
fn minterms(classes: &[ClassUnicode]) -> Vec<ClassUnicode> {
    let mut pts: Vec<u32> = vec![0, 0x110000];
    for c in classes {
        for r in c.ranges() {
            pts.push(r.start() as u32);
            pts.push(r.end() as u32 + 1);
        }
    }
    pts.sort_unstable();
    pts.dedup();
    let mut by_sig: FxMap<Vec<u32>, u32> = Default::default();
    let mut out: Vec<Vec<ClassUnicodeRange>> = Vec::new();
    for w in pts.windows(2) {
        let (Some(a), Some(b)) = (char::from_u32(w[0]).or(char::from_u32(0xE000)), char::from_u32(w[1] - 1).or(char::from_u32(0xD7FF))) else { continue };
        if a > b {
            continue;
        }
        let sig: Vec<u32> = classes.iter().map(|c| c.ranges().iter().any(|r| r.start() <= a && a <= r.end()) as u32).collect();
        let n = by_sig.len() as u32;
        let k = *by_sig.entry(sig).or_insert(n) as usize;
        if k == out.len() {
            out.push(Vec::new());
        }
        out[k].push(ClassUnicodeRange::new(a, b));
    }
    out.into_iter().map(ClassUnicode::new).collect()
}

/// The language of `h` (a HIR with lookaround groups) as a HIR without
/// them: the strings it matches in full (`search`: the strings it finds a
/// match in, JSON Schema's semantics).
pub fn language(h: &Hir, search: bool) -> Result<Hir, String> {
    let mut x = X {
        nodes: Vec::new(),
        flags: Vec::new(),
        ids: Default::default(),
        classes: Vec::new(),
        reps: Vec::new(),
        behind: Vec::new(),
        memo: Default::default(),
        stack: Vec::new(),
        any_star: 0,
        over: false,
    };
    x.mk(N::Fail);
    x.mk(N::Eps);
    let a = x.class(any());
    x.any_star = x.star(a);
    let mut e = x.conv(h, false)?;
    if search {
        e = x.cat(e, x.any_star);
        e = x.cat(x.any_star, e);
    }
    let mts = minterms(&x.classes);
    x.reps = mts.iter().map(|c| c.ranges()[0].start()).collect();
    let nm = mts.len();
    // The DFA: states are `[e, trackers...]` (no trackers where the state
    // holds no lookbehind).
    let tr0 = if x.fl(e) & BEHIND != 0 { x.behind.clone() } else { Vec::new() };
    let mut states: Vec<(Id, Vec<Id>)> = vec![(e, tr0)];
    let mut index: FxMap<Vec<Id>, u32> = Default::default();
    const DEAD: u32 = u32::MAX;
    let mut next: Vec<u32> = Vec::new();
    let mut acc: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < states.len() {
        let (e, tr) = states[i].clone();
        i += 1;
        acc.push(x.nullable(e, &tr));
        for m in 0..nm {
            let e2 = x.d(e, m, &tr);
            if e2 == FAIL {
                next.push(DEAD);
                continue;
            }
            let mut tr2 = Vec::new();
            if x.fl(e2) & BEHIND != 0 {
                for &t in &tr {
                    tr2.push(x.d(t, m, &tr));
                }
            }
            let mut k = vec![e2];
            k.extend_from_slice(&tr2);
            let n = states.len() as u32;
            let id = *index.entry(k).or_insert(n);
            if x.over {
                return Err(format!("a pattern with lookaround needs over {MAX_NODES} regex nodes"));
            }
            if id == n {
                if states.len() >= MAX_STATES {
                    return Err(format!("a pattern with lookaround needs over {MAX_STATES} states (limit maxLookaroundStates)"));
                }
                states.push((e2, tr2));
            }
            next.push(id);
        }
    }
    if x.over {
        return Err(format!("a pattern with lookaround needs over {MAX_NODES} regex nodes"));
    }
    drop(x);
    to_hir(&minimize(next, acc, nm), &mts)
}

/// Moore's minimization of a DFA (`next[s * nm + m]`, `DEAD`), states that
/// reach no accepting one dropped: `(next, accept)` over blocks, start 0.
fn minimize(next: Vec<u32>, acc: Vec<bool>, nm: usize) -> (Vec<u32>, Vec<bool>) {
    const DEAD: u32 = u32::MAX;
    let n = acc.len();
    // Live: an accepting state is reachable.
    let mut live = acc.clone();
    loop {
        let mut changed = false;
        for s in 0..n {
            if !live[s] && next[s * nm..(s + 1) * nm].iter().any(|&t| t != DEAD && live[t as usize]) {
                live[s] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let tgt = |s: usize, m: usize, block: &[u32]| {
        let t = next[s * nm + m];
        if t == DEAD || !live[t as usize] {
            DEAD
        } else {
            block[t as usize]
        }
    };
    let mut block: Vec<u32> = acc.iter().map(|&a| a as u32).collect();
    let mut count = 0;
    loop {
        let mut ids: FxMap<Vec<u32>, u32> = Default::default();
        let mut nb = vec![0u32; n];
        for s in 0..n {
            let mut sig = vec![block[s]];
            sig.extend((0..nm).map(|m| tgt(s, m, &block)));
            let l = ids.len() as u32;
            nb[s] = *ids.entry(sig).or_insert(l);
        }
        block = nb;
        if ids.len() == count {
            break;
        }
        count = ids.len();
    }
    // Renumber from the start state (block of state 0 first).
    let mut rep = vec![0usize; count];
    for s in (0..n).rev() {
        rep[block[s] as usize] = s;
    }
    let mut id = vec![DEAD; count];
    let mut order = vec![0usize];
    id[block[0] as usize] = 0;
    let (mut nx, mut ac) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < order.len() {
        let s = order[i];
        i += 1;
        ac.push(acc[s] && live[s]);
        for m in 0..nm {
            let t = tgt(s, m, &block);
            nx.push(if t == DEAD {
                DEAD
            } else {
                if id[t as usize] == DEAD {
                    id[t as usize] = order.len() as u32;
                    order.push(rep[t as usize]);
                }
                id[t as usize]
            });
        }
    }
    if !live[0] {
        return (vec![DEAD; nm], vec![false]);
    }
    (nx, ac)
}

/// A regex of a DFA's language by state elimination.
fn to_hir((next, acc): &(Vec<u32>, Vec<bool>), mts: &[ClassUnicode]) -> Result<Hir, String> {
    let nm = mts.len();
    let n = acc.len();
    // Nodes 0..n the states, n the new start, n + 1 the new end; edges as
    // lists (few per state): a label and its size.
    type L = (Hir, usize);
    type E = Vec<Vec<(usize, L)>>;
    fn take(out: &mut E, a: usize, b: usize) -> Option<L> {
        let i = out[a].iter().position(|e| e.0 == b)?;
        Some(out[a].swap_remove(i).1)
    }
    fn add(out: &mut E, inn: &mut [Vec<usize>], a: usize, b: usize, l: L) -> Result<(), String> {
        let l = match take(out, a, b) {
            Some(o) => (Hir::alternation(vec![o.0, l.0]), o.1 + l.1 + 1),
            None => {
                inn[b].push(a);
                l
            }
        };
        if l.1 > MAX_NODES {
            return Err(format!("a pattern with lookaround becomes a regex of over {MAX_NODES} nodes"));
        }
        out[a].push((b, l));
        Ok(())
    }
    let mut out: E = vec![Vec::new(); n + 2];
    let mut inn: Vec<Vec<usize>> = vec![Vec::new(); n + 2];
    for s in 0..n {
        let mut by: Vec<(u32, ClassUnicode)> = Vec::new();
        for m in 0..nm {
            let t = next[s * nm + m];
            if t != u32::MAX {
                match by.iter_mut().find(|e| e.0 == t) {
                    Some(e) => e.1.union(&mts[m]),
                    None => by.push((t, mts[m].clone())),
                }
            }
        }
        for (t, c) in by {
            add(&mut out, &mut inn, s, t as usize, (Hir::class(Class::Unicode(c)), 1))?;
        }
        if acc[s] {
            add(&mut out, &mut inn, s, n + 1, (Hir::empty(), 1))?;
        }
    }
    add(&mut out, &mut inn, n, 0, (Hir::empty(), 1))?;
    let mut gone = vec![false; n + 2];
    for _ in 0..n {
        // The state with the fewest in × out edges next.
        let Some(k) = (0..n).filter(|&k| !gone[k]).min_by_key(|&k| inn[k].len() * out[k].len()) else { break };
        gone[k] = true;
        let lp = take(&mut out, k, k).map(|(h, z)| (Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(h) }), z + 1));
        let ins: Vec<usize> = inn[k].iter().copied().filter(|&i| i != k && !gone[i]).collect();
        let outs: Vec<(usize, L)> = std::mem::take(&mut out[k]).into_iter().filter(|(j, _)| !gone[*j]).collect();
        for &i in &ins {
            let Some(a) = take(&mut out, i, k) else { continue };
            for (j, b) in &outs {
                let mut parts = vec![a.0.clone()];
                let mut z = a.1 + b.1 + 1;
                if let Some(l) = &lp {
                    parts.push(l.0.clone());
                    z += l.1;
                }
                parts.push(b.0.clone());
                add(&mut out, &mut inn, i, *j, (Hir::concat(parts), z))?;
            }
        }
        for (j, _) in &outs {
            inn[*j].retain(|&i| i != k);
        }
    }
    Ok(take(&mut out, n, n + 1).map_or_else(Hir::fail, |l| l.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regex::lang::Dfa;

    fn lang(re: &str, search: bool) -> Dfa {
        let h = crate::regex::lang::parse_hir(re).unwrap();
        Dfa::from_hir(&language(&h, search).unwrap()).unwrap()
    }

    #[test]
    fn lookahead_and_lookbehind() {
        let d = lang(r"^(?P<_Ln0>org\.bukkit\.)[a-zA-Z0-9_.]+$", true);
        assert!(d.full_match(b"org.foo") && d.full_match(b"com.x") && !d.full_match(b"org.bukkit.x") && !d.full_match(b""));
        // Tempered token: no `ab` anywhere.
        let d = lang(r"(?:(?P<_Ln0>ab).)*", false);
        assert!(d.full_match(b"aacb") && d.full_match(b"ba") && !d.full_match(b"xaby"));
        // A lookahead past the match sees the rest of the subject.
        let d = lang(r"a(?P<_La0>b)", true);
        assert!(d.full_match(b"xab") && !d.full_match(b"xa") && !d.full_match(b"ac"));
        let d = lang(r"(?P<_Lb0>x)a", true);
        assert!(d.full_match(b"xa") && !d.full_match(b"ya") && !d.full_match(b"a"));
        let d = lang(r"^a+(?P<_Lc0>aaa)$", true);
        assert!(d.full_match(b"aa") && !d.full_match(b"aaa") && !d.full_match(b"aaaa"));
        let d = lang(r"(?P<_La0>.*[0-9])(?P<_La1>.*[a-z])[a-z0-9]{3}", false);
        assert!(d.full_match(b"a1b") && !d.full_match(b"abc") && !d.full_match(b"123") && !d.full_match(b"a1b2"));
    }
}
