//! One terminal as a byte-level DFA table (feature `compiler`): what the
//! lexer automaton builder and the reference lexer both run.
//!
//! A [`Table`] has states `0..n`, a transition per (state, byte) (`NONE` =
//! dead: no accepting state is reachable any more) and `accept[s]`: a match
//! of the terminal ends after the bytes that led to `s`.
//! - Literals and `Regex` terminals: the anchored **leftmost-first** DFA of
//!   regex-automata (Python `re.match` semantics: a match ends at an
//!   accepting position, and the terminal's match is the last one before the
//!   table dies);
//! - [`TerminalPattern::Set`] terminals: the product of the **all-matches**
//!   DFAs of its `all` and `none` regexes, with a fresh start state so the
//!   empty string is never in the set.
//!
//! Negative lookahead on one character (`(?![a-z])`, Lark regexes only) is
//! compiled exactly (see [`lookahead`](self#one-character-negative-lookahead));
//! other look-around assertions are rejected, and so are literal/regex
//! terminals that match the empty string.
//!
//! # One-character negative lookahead
//!
//! The Lark front end hands `(?!C)` (C: a set of ASCII characters) over as a
//! typed [`Lookahead`](crate::grammar::Lookahead) of a
//! [`TerminalPattern::Regex`]. Here (and only here) it is written into the
//! regex as `(?:M1 (?:C) M2 | M3)` with bytes that never occur in UTF-8 text
//! as markers ([`LOOKAHEAD_MARKERS`], [`encoded_regex`]). In the DFA of that regex, a state `q`
//! with marker edges `q -M1-> q1` and `q -M3-> q3` is the lookahead's
//! position: the forbidden bytes `F` are the bytes `b` with `q1 -b-> q2 -M2->`,
//! and `q3` is where the pattern continues when the next byte is not in `F`.
//! Two forms are exact and compiled; any other is refused:
//! - **cut point**: `q` has no other edge and does not accept, i.e. every
//!   thread of the match is at the lookahead. `q` takes `q3`'s row minus the
//!   bytes of `F`, and `q3`'s acceptance guarded by `F` (the lexeme may end
//!   at `q` only if the next byte is not in `F`; end of text passes).
//!   Python's backtracking cannot tell this apart: the check succeeds or
//!   fails for all threads at once.
//! - **trailing**: `q3` accepts and has no edge (nothing follows the
//!   lookahead), so `q` gets an accept guarded by `F`; the pattern without
//!   its lookaheads must have the same matches under leftmost-first and
//!   all-matches semantics (no thread is ever cut by a preferred match), so
//!   Python's match order is longest first and its match is the longest one
//!   whose guard holds.
//!
//! A guarded accept is kept in [`Table::guards`]; the lexer automaton
//! decides it when it reads the next byte (or at the end of the text).
//!
//! Compiled tables are kept in a per-thread cache keyed by the pattern
//! (regex and match kind, or a `Set`'s regex lists), bounded in size: the
//! per-request compiles of JSON Schemas and regexes repeat the same
//! terminals (JSON strings, numbers, keys, formats), and a table depends on
//! nothing but its pattern.

use std::cell::RefCell;

use crate::cache::Bounded;
use std::rc::Rc;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

use super::NONE;
use crate::err;
use crate::grammar::{Cfg, Lookahead, TerminalDef, TerminalPattern, EMPTY_GROUP, MAX_LOOKAHEADS};
use crate::ids::TerminalId;
use crate::Result;

/// Size limits for one regex's NFA / DFA construction (bytes).
const NFA_SIZE_LIMIT: usize = crate::limits::Limits::DEFAULT.max_terminal_nfa_bytes;
const DFA_SIZE_LIMIT: usize = crate::limits::Limits::DEFAULT.max_terminal_dfa_bytes;
/// Most states of a [`TerminalPattern::Set`] product table.
const MAX_PRODUCT_STATES: usize = crate::limits::Limits::DEFAULT.max_set_product_states;

/// Most `u32` words (transitions) the table cache keeps before it starts over.
const CACHE_WORDS: usize = 4 << 20;

#[derive(Clone, PartialEq, Eq, Hash)]
enum CacheKey {
    /// A regex and whether it is compiled with all-matches semantics.
    Regex(String, bool),
    Set(Vec<String>, Vec<String>),
}

thread_local! {
    static CACHE: RefCell<Bounded<CacheKey, Rc<Packed>>> = RefCell::new(Bounded::new(CACHE_WORDS));
}

/// A table as the cache keeps it: its columns merged by its own byte
/// classes (a string of up to 255 characters: 3,573 states × 256 bytes,
/// about a quarter of the cache, packs into 3,573 × 9 words).
struct Packed {
    table: Table,
    class: [u8; 256],
}

impl Packed {
    fn new(mut table: Table) -> Packed {
        let n = table.n_states();
        let (class, reps) = own_classes(&table.next, n);
        let width = reps.len();
        let mut next = vec![NONE; n * width];
        for s in 0..n {
            for b in 0..256 {
                next[s * width + class[b] as usize] = table.next[s * 256 + b];
            }
        }
        table.next = next;
        table.width = width;
        Packed { table, class }
    }

    fn unpack(&self) -> Table {
        let t = &self.table;
        let mut next = Vec::with_capacity(t.n_states() * 256);
        for s in 0..t.n_states() {
            next.extend(self.class.iter().map(|&c| t.next[s * t.width + c as usize]));
        }
        Table { start: t.start, next, width: 256, accept: t.accept.clone(), guards: t.guards.clone() }
    }
}

/// The byte classes of a 256-wide table with `n` states (bytes with equal
/// columns) and one byte of each class.
fn own_classes(next: &[u32], n: usize) -> ([u8; 256], Vec<usize>) {
    let mut r = Refiner::new();
    for row in next[..n * 256].chunks_exact(256) {
        if !r.refine(row) {
            break;
        }
    }
    let mut class = [0u8; 256];
    let mut reps: Vec<usize> = Vec::new();
    for (b, c) in class.iter_mut().enumerate() {
        *c = r.classes[b] as u8;
        if r.classes[b] as usize == reps.len() {
            reps.push(b);
        }
    }
    (class, reps)
}

/// The coarsest partition of the bytes that a sequence of 256-wide rows
/// treats alike, refined row by row; classes are numbered in order of
/// their first byte. A row's refinement looks its `(class, next state)`
/// pairs up in a small stamped hash table (a row holds few distinct pairs),
/// not in a list: a string of up to 512 characters has 7,176 rows.
struct Refiner {
    classes: [u16; 256],
    n: usize,
    /// Open addressing, 1,024 slots: `(stamp, class, next, new class)`.
    slots: Vec<(u32, u16, u32, u16)>,
    stamp: u32,
}

impl Refiner {
    fn new() -> Refiner {
        Refiner { classes: [0; 256], n: 1, slots: vec![(0, 0, 0, 0); 1024], stamp: 0 }
    }

    /// Refines by one row; false once every byte is a class of its own.
    fn refine(&mut self, row: &[u32]) -> bool {
        if self.n == 256 {
            return false;
        }
        self.stamp += 1;
        let mut refined = [0u16; 256];
        let mut n = 0u16;
        for b in 0..256 {
            let (c, t) = (self.classes[b], row[b]);
            let h = (c as u32).wrapping_mul(0x9E37_79B9) ^ t.wrapping_mul(0x85EB_CA6B);
            let mut i = (h ^ h >> 16) as usize & 1023;
            refined[b] = loop {
                let slot = &mut self.slots[i];
                if slot.0 != self.stamp {
                    *slot = (self.stamp, c, t, n);
                    n += 1;
                    break n - 1;
                }
                if slot.1 == c && slot.2 == t {
                    break slot.3;
                }
                i = (i + 1) & 1023;
            };
        }
        (self.classes, self.n) = (refined, n as usize);
        true
    }
}

/// The cached table for `key`, else `make()`'s (kept when it succeeds).
fn cached(key: CacheKey, make: impl FnOnce() -> Result<Table>) -> Result<Rc<Table>> {
    if let Some(p) = CACHE.with(|c| c.borrow().get(&key)) {
        return Ok(Rc::new(p.unpack()));
    }
    let t = make()?;
    let p = Packed::new(t.clone());
    let words = p.table.next.len() + p.table.accept.len() / 4 + 80;
    CACHE.with(|c| c.borrow_mut().insert(key, Rc::new(p), words));
    Ok(Rc::new(t))
}

/// Marker bytes of the lookahead encoding (see the module doc): `M2` (shared)
/// then `(M1, M3)` per lookahead of a pattern, at most
/// [`MAX_LOOKAHEADS`] lookaheads. None of them occurs in UTF-8 text.
const LOOKAHEAD_MARKERS: [u8; 9] = [0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF, 0xC0];
const _: () = assert!(MAX_LOOKAHEADS <= (LOOKAHEAD_MARKERS.len() - 1) / 2);

/// A set of bytes.
pub(crate) type ByteSet = [u64; 4];

#[inline]
pub(crate) fn byte_in(set: &ByteSet, b: u8) -> bool {
    set[b as usize >> 6] >> (b & 63) & 1 == 1
}

/// One terminal's DFA (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct Table {
    /// `NONE` when the terminal matches nothing at all.
    pub start: u32,
    /// `state * width + byte-or-class` → state or `NONE`.
    pub next: Vec<u32>,
    pub width: usize,
    /// A match may end here (for a guarded state: if the next byte allows).
    pub accept: Vec<bool>,
    /// Guarded accepting states, sorted: `(state, forbidden next bytes)`. A
    /// match ends at such a state only if the next byte is not forbidden, or
    /// at the end of the text.
    pub guards: Vec<(u32, ByteSet)>,
}

/// "terminal NAME (at file:line:col)" for messages.
pub(crate) fn describe(def: &TerminalDef) -> String {
    if def.span.file.is_empty() && def.span.line == 0 {
        format!("terminal {}", def.name)
    } else {
        format!("terminal {} (at {})", def.name, def.span)
    }
}

/// An anchored regex-automata DFA and its start state.
struct Dfa {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

impl Dfa {
    fn accepting_here(&self, s: StateID) -> bool {
        self.dfa.is_match_state(self.dfa.next_eoi_state(s))
    }
}

/// Terminal DFAs up to this size (unminimized, as regex-automata counts it)
/// are minimized (see [`regex_table`]).
const MINIMIZE_MAX_BYTES: usize = 512 << 10;

/// The pruned table of `re` (see [`Table::from_dfa`]), minimized when its
/// unminimized DFA is small. Minimized only when small: large terminal DFAs
/// (a string of up to 512 characters: one state per count) are minimal or
/// nearly so already, and the language, hence every mask, is the same
/// either way. All-matches regexes (the set terminals of JSON Schemas and
/// regex constraints) are minimized by [`Table::minimized`], on the pruned
/// table, at a small fraction of the cost of regex-automata's minimizer (a
/// string of up to 128 characters: 312 ms → a few ms), to the minimal table
/// (regex-automata's can have more states); leftmost-first ones by
/// regex-automata (the test `minimized_tables` checks both).
#[inline(never)]
fn regex_table(re: &str, kind: MatchKind, who: &dyn Fn() -> String) -> Result<Table> {
    if kind != MatchKind::All {
        // regex-automata's minimizer keeps states apart that differ only in
        // its delayed match flag (`[a-z_][a-z0-9_]*`: 3 states, not 2): the
        // leftmost-first tables (literals, Lark terminals; small) stay its
        // own, so stores compiled from Lark grammars stay byte-identical.
        let d = compile_regex_dfa(re, kind, who, false)?;
        if d.dfa.memory_usage() > MINIMIZE_MAX_BYTES {
            return Ok(Table::from_dfa(&d));
        }
        return Ok(Table::from_dfa(&compile_regex_dfa(re, kind, who, true)?));
    }
    let d = compile_regex_dfa(re, kind, who, false)?;
    let t = Table::from_dfa(&d);
    Ok(if d.dfa.memory_usage() <= MINIMIZE_MAX_BYTES { t.minimized() } else { t })
}

/// The DFA of `re`, unminimized unless `ra_minimize` (regex-automata's
/// minimizer: only the tests use it, to check [`Table::minimized`]).
#[inline(never)]
fn compile_regex_dfa(re: &str, kind: MatchKind, who: &dyn Fn() -> String, ra_minimize: bool) -> Result<Dfa> {
    // utf8(false): the lookahead markers are bytes that are not UTF-8.
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(re)
        .map_err(|e| err!(Regex, "{}: invalid regex /{re}/: {e}", who()))?;
    if !hir.properties().look_set().is_empty() {
        return Err(err!(
            Grammar,
            "{}: regex /{re}/ uses a look-around or anchor assertion (^, $, \\A, \\z, \\b, \\B, ...), \
             which terminal regexes do not support",
            who()
        ));
    }
    let nfa = thompson::Compiler::new()
        .configure(thompson::Config::new().nfa_size_limit(Some(NFA_SIZE_LIMIT)))
        .build_from_hir(&hir)
        .map_err(|e| err!(Regex, "{}: cannot compile regex /{re}/: {e}", who()))?;
    let build = |minimize: bool| {
        dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(kind)
                    .start_kind(StartKind::Anchored)
                    .minimize(minimize)
                    .determinize_size_limit(Some(DFA_SIZE_LIMIT))
                    .dfa_size_limit(Some(DFA_SIZE_LIMIT)),
            )
            .build_from_nfa(&nfa)
            .map_err(|e| err!(Regex, "{}: cannot build a DFA for /{re}/: {e}", who()))
    };
    let dfa = build(ra_minimize)?;
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .map_err(|e| err!(Regex, "{}: no anchored start state for /{re}/: {e}", who()))?;
    Ok(Dfa { dfa, start })
}

impl Table {
    /// BFS over all bytes from the anchored start, then prune.
    fn from_dfa(d: &Dfa) -> Table {
        let mut ids = crate::hash::FxMap::default();
        let mut order = vec![d.start];
        ids.insert(d.start, 0u32);
        let mut next = Vec::new();
        // Bytes of one of the DFA's classes go alike: one look-up per class
        // (ids are still handed out in byte order).
        let classes = d.dfa.byte_classes();
        const UNSET: u32 = NONE - 1;
        let mut by_class = vec![UNSET; classes.alphabet_len()];
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            i += 1;
            by_class.fill(UNSET);
            for b in 0..=255u8 {
                let c = classes.get(b) as usize;
                if by_class[c] == UNSET {
                    let n = d.dfa.next_state(s, b);
                    by_class[c] = if d.dfa.is_dead_state(n) || d.dfa.is_quit_state(n) {
                        NONE
                    } else {
                        let len = order.len() as u32;
                        *ids.entry(n).or_insert_with(|| {
                            order.push(n);
                            len
                        })
                    };
                }
                next.push(by_class[c]);
            }
        }
        let accept: Vec<bool> = order.iter().map(|&s| d.accepting_here(s)).collect();
        Table::pruned(0, next, accept)
    }

    /// The table of a case-sensitive literal (not empty): a chain of
    /// states, the last one accepting. The table its regex compiles to,
    /// without building a DFA (a schema has a literal per property name).
    fn literal(text: &[u8]) -> Table {
        let n = text.len();
        let mut next = vec![NONE; (n + 1) * 256];
        for (s, &b) in text.iter().enumerate() {
            next[s * 256 + b as usize] = s as u32 + 1;
        }
        let mut accept = vec![false; n + 1];
        accept[n] = true;
        Table { start: 0, next, width: 256, accept, guards: Vec::new() }
    }

    /// The minimal table of the same language (this table pruned, as
    /// [`Table::from_dfa`] leaves it): Moore's partition refinement over the
    /// table's own byte classes, then the blocks numbered in the order a
    /// breadth-first walk from the start over bytes 0..=255 meets them (the
    /// order [`Table::from_dfa`] gives, so a table that is minimal already
    /// comes back unchanged).
    fn minimized(self) -> Table {
        let n = self.n_states();
        if self.start == NONE || n <= 1 {
            return self;
        }
        debug_assert_eq!(self.width, 256);
        // Bytes with equal columns act alike: one representative each.
        let (_, reps) = own_classes(&self.next, n);
        // Initial blocks: acceptance (and the guard, if any).
        let mut ids: crate::hash::FxMap<Vec<u32>, u32> = Default::default();
        let mut block = vec![0u32; n];
        let mut sig: Vec<u32> = Vec::with_capacity(reps.len() + 9);
        for (s, bl) in block.iter_mut().enumerate() {
            sig.clear();
            sig.push(self.accept[s] as u32);
            if let Some(g) = self.guard(s as u32) {
                sig.extend(g.iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]));
            }
            let len = ids.len() as u32;
            *bl = *ids.entry(sig.clone()).or_insert(len);
        }
        let mut n_blocks = ids.len();
        // Refine until stable: a round's blocks refine the previous ones, so
        // an unchanged count means no block split.
        let mut new_block = vec![0u32; n];
        loop {
            ids.clear();
            for s in 0..n {
                sig.clear();
                sig.push(block[s]);
                sig.extend(reps.iter().map(|&b| {
                    let t = self.next[s * 256 + b];
                    if t == NONE {
                        NONE
                    } else {
                        block[t as usize]
                    }
                }));
                let len = ids.len() as u32;
                new_block[s] = *ids.entry(sig.clone()).or_insert(len);
            }
            std::mem::swap(&mut block, &mut new_block);
            if ids.len() == n_blocks {
                break;
            }
            n_blocks = ids.len();
        }
        if n_blocks == n {
            // Minimal already: renumbering would give the same order.
            return self;
        }
        let mut rep_of = vec![0u32; n_blocks];
        for s in (0..n).rev() {
            rep_of[block[s] as usize] = s as u32;
        }
        let mut id = vec![NONE; n_blocks];
        let mut order = vec![block[self.start as usize]];
        id[order[0] as usize] = 0;
        let mut next = Vec::with_capacity(n_blocks * 256);
        let mut i = 0;
        while i < order.len() {
            let r = rep_of[order[i] as usize] as usize;
            i += 1;
            for b in 0..256 {
                let t = self.next[r * 256 + b];
                next.push(if t == NONE {
                    NONE
                } else {
                    let bl = block[t as usize] as usize;
                    if id[bl] == NONE {
                        id[bl] = order.len() as u32;
                        order.push(bl as u32);
                    }
                    id[bl]
                });
            }
        }
        let reps_in_order: Vec<u32> = order.iter().map(|&bl| rep_of[bl as usize]).collect();
        let accept = reps_in_order.iter().map(|&r| self.accept[r as usize]).collect();
        let guards = reps_in_order
            .iter()
            .enumerate()
            .filter_map(|(k, &r)| self.guard(r).map(|g| (k as u32, *g)))
            .collect();
        Table { start: 0, next, width: 256, accept, guards }
    }

    /// The table of a regex with `n` lookaheads in the marker encoding (see
    /// the module doc; `d` is its DFA, `plain` the regex without its
    /// lookaheads): resolves them into rows and guarded accepts, or refuses
    /// a form that is not exact.
    fn with_lookaheads(pruned: Table, plain: &str, n: usize, who: &dyn Fn() -> String) -> Result<Table> {
        let refuse = |why: &str| {
            Err(err!(
                Grammar,
                "{}: its lookahead `(?!...)` {why}; grammask compiles a one-character negative lookahead only where it is exact \
                 (see docs/lark.md, \"Lookaround\")",
                who()
            ))
        };
        // Pruned first (`pruned` is): edges into states that never lead to
        // a match (the DFA's delayed match states, for one) are no edges.
        if pruned.start == NONE {
            return Ok(pruned);
        }
        let (mut next, mut accept) = (pruned.next, pruned.accept);
        let ns = accept.len();
        let orig = next.clone();
        let orig_acc = accept.clone();
        let m2 = LOOKAHEAD_MARKERS[0] as usize;
        let is_marker = |b: usize| LOOKAHEAD_MARKERS.contains(&(b as u8));
        let real_edges = |s: usize| (0..256).any(|b| !is_marker(b) && orig[s * 256 + b] != NONE);
        let mut guard: Vec<Option<ByteSet>> = vec![None; ns];
        let mut trailing = false;
        for k in 0..n {
            let (m1, m3) = (LOOKAHEAD_MARKERS[1 + 2 * k] as usize, LOOKAHEAD_MARKERS[2 + 2 * k] as usize);
            for q in 0..ns {
                let (q1, q3) = (orig[q * 256 + m1], orig[q * 256 + m3]);
                if q1 == NONE && q3 == NONE {
                    continue;
                }
                // The forbidden bytes: one ASCII byte, then the body's end.
                let mut f: ByteSet = [0; 4];
                if q1 != NONE {
                    let q1 = q1 as usize;
                    if orig[q1 * 256 + m2] != NONE || orig_acc[q1] {
                        return refuse("can match the empty string");
                    }
                    for b in 0..256 {
                        let q2 = orig[q1 * 256 + b];
                        if q2 == NONE {
                            continue;
                        }
                        let q2 = q2 as usize;
                        if is_marker(b) {
                            return refuse("contains another lookahead");
                        }
                        if b >= 0x80 || orig[q2 * 256 + m2] == NONE || real_edges(q2) || orig_acc[q2] {
                            return refuse("looks at more than one character, or at a non-ASCII one");
                        }
                        f[b >> 6] |= 1 << (b & 63);
                    }
                }
                if q3 == NONE {
                    continue; // the pattern cannot go on after the lookahead
                }
                let q3 = q3 as usize;
                if (0..256).any(|b| is_marker(b) && orig[q3 * 256 + b] != NONE) {
                    return refuse("is directly followed by another lookahead");
                }
                let other_markers = (0..256).any(|b| is_marker(b) && b != m1 && b != m3 && orig[q * 256 + b] != NONE);
                if !real_edges(q) && !orig_acc[q] && !other_markers {
                    // Cut point: every thread is at the lookahead.
                    for b in 0..256 {
                        next[q * 256 + b] =
                            if is_marker(b) || byte_in(&f, b as u8) { NONE } else { orig[q3 * 256 + b] };
                    }
                    if orig_acc[q3] {
                        accept[q] = true;
                        guard[q] = Some(f);
                    }
                } else {
                    // Trailing: nothing may follow the lookahead.
                    if real_edges(q3) || !orig_acc[q3] {
                        return refuse("is followed by more pattern at a point where other alternatives go on");
                    }
                    trailing = true;
                    if !accept[q] {
                        accept[q] = true;
                        guard[q] = Some(f);
                    } else if let Some(g) = &mut guard[q] {
                        // Either guard may hold: forbidden only where both forbid.
                        for (a, b) in g.iter_mut().zip(f) {
                            *a &= b;
                        }
                    }
                }
            }
        }
        for s in 0..ns {
            for &m in &LOOKAHEAD_MARKERS {
                next[s * 256 + m as usize] = NONE;
            }
        }
        if trailing && !Table::prefers_longest(plain, who)? {
            return refuse(
                "ends a match that the pattern can prefer to a longer one (lazy quantifier or alternative order), \
                 so Python's match is not the longest one whose lookahead holds",
            );
        }
        Ok(Table::pruned_guarded(0, next, accept, guard))
    }

    /// Whether the leftmost-first and the all-matches DFAs of `re` accept
    /// the same texts, i.e. no preferred match ever cuts a thread that would
    /// match later: then Python's matches come longest first.
    fn prefers_longest(re: &str, who: &dyn Fn() -> String) -> Result<bool> {
        let a = regex_table(re, MatchKind::LeftmostFirst, who)?;
        let b = regex_table(re, MatchKind::All, who)?;
        Ok(Table::same_language(&a, &b, MAX_PRODUCT_STATES) == Some(true))
    }

    /// Whether `a` and `b` accept the same texts (a walk of their product);
    /// `None` past `limit` product states.
    fn same_language(a: &Table, b: &Table, limit: usize) -> Option<bool> {
        let acc = |t: &Table, s: u32| s != NONE && t.accept[s as usize];
        let step = |t: &Table, s: u32, c: usize| if s == NONE { NONE } else { t.next[s as usize * 256 + c] };
        let mut seen = crate::hash::FxSet::default();
        let mut stack = vec![(a.start, b.start)];
        while let Some((x, y)) = stack.pop() {
            if (x == NONE && y == NONE) || !seen.insert((x, y)) {
                continue;
            }
            if acc(a, x) != acc(b, y) {
                return Some(false);
            }
            if seen.len() > limit {
                return None;
            }
            for c in 0..256 {
                stack.push((step(a, x, c), step(b, y, c)));
            }
        }
        Some(true)
    }

    /// Keeps the states from which an accepting state is reachable
    /// (co-accessible), renumbered in order; `start` may become `NONE`.
    fn pruned(start: u32, next: Vec<u32>, accept: Vec<bool>) -> Table {
        let n = accept.len();
        Table::pruned_guarded(start, next, accept, vec![None; n])
    }

    /// [`Table::pruned`], with guarded accepts, also dropping the states
    /// that cannot be reached from `start`.
    fn pruned_guarded(start: u32, next: Vec<u32>, accept: Vec<bool>, guard: Vec<Option<ByteSet>>) -> Table {
        let n = accept.len();
        let mut reach = vec![false; n];
        let mut stack = vec![start];
        reach[start as usize] = true;
        while let Some(s) = stack.pop() {
            for &t in &next[s as usize * 256..(s as usize + 1) * 256] {
                if t != NONE && !reach[t as usize] {
                    reach[t as usize] = true;
                    stack.push(t);
                }
            }
        }
        // Each predecessor once (a row names few distinct states).
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut last = vec![NONE; n];
        for s in (0..n).filter(|&s| reach[s]) {
            for &t in &next[s * 256..(s + 1) * 256] {
                if t != NONE && last[t as usize] != s as u32 {
                    last[t as usize] = s as u32;
                    preds[t as usize].push(s as u32);
                }
            }
        }
        let mut live: Vec<bool> = (0..n).map(|s| accept[s] && reach[s]).collect();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
        while let Some(s) = stack.pop() {
            for &p in &preds[s as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        let mut remap = vec![NONE; n];
        let mut k = 0;
        for s in 0..n {
            if live[s] {
                remap[s] = k;
                k += 1;
            }
        }
        let mut table = Table { start: remap[start as usize], next: Vec::new(), width: 256, accept: Vec::new(), guards: Vec::new() };
        for s in (0..n).filter(|&s| live[s]) {
            table.accept.push(accept[s]);
            if let (true, Some(g)) = (accept[s], guard[s]) {
                table.guards.push((remap[s], g));
            }
            table.next.extend(next[s * 256..(s + 1) * 256].iter().map(|&t| if t == NONE { NONE } else { remap[t as usize] }));
        }
        table
    }

    /// The forbidden next bytes of state `s`, if its accept is guarded.
    #[inline]
    pub fn guard(&self, s: u32) -> Option<&ByteSet> {
        if self.guards.is_empty() {
            return None;
        }
        self.guards.binary_search_by_key(&s, |g| g.0).ok().map(|i| &self.guards[i].1)
    }

    /// Does a match end at state `s` when `next` follows (`None`: the end
    /// of the text)?
    #[inline]
    pub fn accepts_before(&self, s: u32, next: Option<u8>) -> bool {
        self.accept[s as usize] && match (self.guard(s), next) {
            (Some(f), Some(b)) => !byte_in(f, b),
            _ => true,
        }
    }

    /// The product table of a [`TerminalPattern::Set`]: accepting where every
    /// `all` table accepts and no `none` table does; a fresh, non-accepting
    /// start state excludes the empty string.
    ///
    /// Built over the byte classes of the component tables (bytes that every
    /// component treats alike lead to the same product state), with the
    /// product states' keys in one flat array: a product that reaches the
    /// state limit fails fast and small. The table is the same as a
    /// per-byte product.
    fn product(all: &[Rc<Table>], none: &[Rc<Table>], who: &dyn Fn() -> String) -> Result<Table> {
        if all.iter().any(|t| t.start == NONE) {
            return Ok(Table { start: NONE, next: Vec::new(), width: 256, accept: Vec::new(), guards: Vec::new() });
        }
        let (classes, w) = byte_classes(all.iter().chain(none));
        let mut rep = vec![0usize; w]; // one byte of each class
        for b in (0..256).rev() {
            rep[classes[b] as usize] = b;
        }
        // Key: [is_start, all states..., none states (NONE = dead)...], state
        // `i` at `keys[i * len..]`; `slots`: an open-addressing table of
        // state ids by key hash (`NONE`: empty), at most half full.
        let len = 1 + all.len() + none.len();
        let hash = |k: &[u32]| k.iter().fold(0u64, |h, &x| (h.rotate_left(5) ^ x as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95));
        let mut keys: Vec<u32> = std::iter::once(1).chain(all.iter().map(|t| t.start)).chain(none.iter().map(|t| t.start)).collect();
        let mut slots = vec![NONE; 1024];
        slots[(hash(&keys) >> 40) as usize & 1023] = 0;
        let mut n_states = 1usize;
        let (mut next, mut accept) = (Vec::new(), Vec::new());
        let mut key = Vec::with_capacity(len);
        let mut i = 0;
        while i * len < keys.len() {
            let comps = i * len + 1..(i + 1) * len;
            let k = &keys[comps.clone()];
            let acc = keys[i * len] == 0
                && all.iter().zip(k).all(|(t, &s)| t.accept[s as usize])
                && none.iter().zip(&k[all.len()..]).all(|(t, &s)| s == NONE || !t.accept[s as usize]);
            accept.push(acc);
            'classes: for &b in &rep {
                key.clear();
                key.push(0);
                let k = &keys[comps.clone()];
                for (t, &s) in all.iter().zip(k) {
                    let n = t.next[s as usize * 256 + b];
                    if n == NONE {
                        next.push(NONE);
                        continue 'classes;
                    }
                    key.push(n);
                }
                for (t, &s) in none.iter().zip(&k[all.len()..]) {
                    key.push(if s == NONE { NONE } else { t.next[s as usize * 256 + b] });
                }
                let mask = slots.len() - 1;
                let mut at = (hash(&key) >> 40) as usize & mask;
                while slots[at] != NONE && keys[slots[at] as usize * len..(slots[at] as usize + 1) * len] != key[..] {
                    at = (at + 1) & mask;
                }
                let mut id = slots[at];
                if id == NONE {
                    if n_states >= MAX_PRODUCT_STATES {
                        return Err(err!(Limit, "{}: the set's automaton has over {MAX_PRODUCT_STATES} states", who()));
                    }
                    id = n_states as u32;
                    slots[at] = id;
                    keys.extend_from_slice(&key);
                    n_states += 1;
                    if 2 * n_states > slots.len() {
                        // Grow: re-insert every state.
                        slots = vec![NONE; 2 * slots.len()];
                        let mask = slots.len() - 1;
                        for (i, k) in keys.chunks_exact(len).enumerate() {
                            let mut at = (hash(k) >> 40) as usize & mask;
                            while slots[at] != NONE {
                                at = (at + 1) & mask;
                            }
                            slots[at] = i as u32;
                        }
                    }
                }
                next.push(id);
            }
            i += 1;
        }
        drop((keys, slots));
        let mut wide = Vec::with_capacity(accept.len() * 256);
        for row in next.chunks_exact(w) {
            wide.extend(classes.iter().map(|&c| row[c as usize]));
        }
        drop(next);
        Ok(Table::pruned(0, wide, accept))
    }

    pub fn n_states(&self) -> usize {
        self.accept.len()
    }

    /// Re-index the columns by byte class.
    pub fn compress(&mut self, classes: &[u8; 256], n_classes: usize) {
        let mut next = vec![NONE; self.n_states() * n_classes];
        for s in 0..self.n_states() {
            for b in 0..256 {
                next[s * n_classes + classes[b] as usize] = self.next[s * 256 + b];
            }
        }
        self.next = next;
        self.width = n_classes;
    }

    /// Length of the terminal's match at `text[pos..]` (0: none): the last
    /// accepting offset before the table dies (a guarded accept counts when
    /// the byte after it is allowed or the text ends there). Only on
    /// uncompressed tables.
    pub fn match_len(&self, text: &[u8], pos: usize) -> usize {
        debug_assert_eq!(self.width, 256);
        let (mut s, mut best) = (self.start, 0);
        if s == NONE {
            return 0;
        }
        for p in pos..text.len() {
            s = self.next[s as usize * 256 + text[p] as usize];
            if s == NONE {
                break;
            }
            if self.accepts_before(s, text.get(p + 1).copied()) {
                best = p + 1 - pos;
            }
        }
        best
    }

    /// Does the terminal's leftmost-first match on `text` cover all of it
    /// (Python `re.match(r, text).group(0) == text`)?
    pub fn matches_whole(&self, text: &[u8]) -> bool {
        !text.is_empty() && self.match_len(text, 0) == text.len()
    }
}

/// The coarsest partition of the bytes that every table in `tables` treats
/// alike (same next state from every state): `(class of each byte, number
/// of classes)`, classes numbered in order of their first byte.
fn byte_classes<'a>(tables: impl Iterator<Item = &'a Rc<Table>>) -> ([u16; 256], usize) {
    let mut r = Refiner::new();
    for t in tables {
        for row in t.next.chunks_exact(256) {
            if !r.refine(row) {
                return (r.classes, r.n);
            }
        }
    }
    (r.classes, r.n)
}

/// Compiles terminal `t`; `Ok(None)` for `%declare`d terminals. Rejects
/// invalid regexes ([`crate::ErrorKind::Regex`]), look-around assertions and
/// literal/regex terminals that match the empty string
/// ([`crate::ErrorKind::Grammar`]).
pub(crate) fn compile_terminal(cfg: &Cfg, t: TerminalId) -> Result<Option<Table>> {
    let def = cfg.terminal(t);
    let who = || describe(def);
    match &def.pattern {
        TerminalPattern::Declared => Ok(None),
        // A token matched by id: no byte starts it; the one state is where
        // the lexer is after it (see `build`).
        TerminalPattern::Special => Ok(Some(Table { start: NONE, next: vec![NONE; 256], width: 256, accept: vec![true], guards: Vec::new() })),
        TerminalPattern::Literal { text, case_insensitive: false, regex } if !text.is_empty() => {
            let t = Table::literal(text.as_bytes());
            debug_assert!(
                regex_table(regex, MatchKind::LeftmostFirst, &who).is_ok_and(|r| r.next == t.next && r.accept == t.accept),
                "the literal table of {text:?} is its regex's"
            );
            Ok(Some(t))
        }
        TerminalPattern::Literal { .. } | TerminalPattern::Regex { .. } => {
            let Some(regex) = encoded_regex(&def.pattern) else { unreachable!() };
            let (plain, n_la) = match &def.pattern {
                TerminalPattern::Regex { regex, lookaheads } if !lookaheads_ok(regex, lookaheads) => {
                    return Err(err!(
                        Grammar,
                        "{}: more than {MAX_LOOKAHEADS} lookaheads, or one that does not stand at an empty group `{EMPTY_GROUP}` of its regex",
                        who()
                    ))
                }
                TerminalPattern::Regex { regex, lookaheads } => (regex.as_str(), lookaheads.len()),
                _ => ("", 0),
            };
            let regex = regex.as_ref();
            let t = cached(CacheKey::Regex(regex.to_string(), false), || {
                let t = regex_table(regex, MatchKind::LeftmostFirst, &who)?;
                let t = if n_la == 0 { t } else { Table::with_lookaheads(t, plain, n_la, &who)? };
                if t.start != NONE && t.accept[t.start as usize] {
                    return Err(err!(Grammar, "{}: regex /{regex}/ matches the empty string", who()));
                }
                Ok(t)
            })?;
            Ok(Some(Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone())))
        }
        TerminalPattern::Set { all, none } => {
            if all.is_empty() {
                return Err(err!(Grammar, "{}: a set terminal needs at least one regex", who()));
            }
            let t = cached(CacheKey::Set(all.clone(), none.clone()), || {
                let tables = |rs: &[String]| -> Result<Vec<Rc<Table>>> {
                    rs.iter()
                        .map(|r| {
                            cached(CacheKey::Regex(r.clone(), true), || {
                                regex_table(r, MatchKind::All, &who)
                            })
                        })
                        .collect()
                };
                Table::product(&tables(all)?, &tables(none)?, &who)
            })?;
            Ok(Some(Rc::try_unwrap(t).unwrap_or_else(|t| (*t).clone())))
        }
    }
}

/// Every terminal's table, indexed by terminal id (`None`: not lexed).
pub(crate) fn compile_all(cfg: &Cfg) -> Result<Vec<Option<Table>>> {
    (0..cfg.terminals.len()).map(|i| compile_terminal(cfg, TerminalId::new(i))).collect()
}

/// The marker text that opens lookahead `k` (see [`encoded_regex`]).
fn lookahead_open(k: usize) -> String {
    format!("(?:(?-u:\\x{:02X})(?:", LOOKAHEAD_MARKERS[1 + 2 * k])
}

/// The marker text that closes lookahead `k`.
fn lookahead_close(k: usize) -> String {
    format!(")(?-u:\\x{:02X})|(?-u:\\x{:02X}))", LOOKAHEAD_MARKERS[0], LOOKAHEAD_MARKERS[2 + 2 * k])
}

/// The regex the lexer compiles for a literal or a regex terminal (`None`
/// for sets and `%declare`d terminals): a regex's [`Lookahead`]s written in
/// the marker encoding (see the module doc), each in place of its
/// [`EMPTY_GROUP`]. The grammar fingerprint hashes this text too.
pub(crate) fn encoded_regex(p: &TerminalPattern) -> Option<std::borrow::Cow<'_, str>> {
    match p {
        TerminalPattern::Literal { regex, .. } => Some(regex.into()),
        TerminalPattern::Regex { regex, lookaheads } if lookaheads.is_empty() || !lookaheads_ok(regex, lookaheads) => Some(regex.into()),
        TerminalPattern::Regex { regex, lookaheads } => Some(encode_lookaheads(regex, lookaheads).into()),
        TerminalPattern::Set { .. } | TerminalPattern::Declared | TerminalPattern::Special => None,
    }
}

/// Whether a regex's lookaheads can be encoded: at most [`MAX_LOOKAHEADS`],
/// in order, each at an [`EMPTY_GROUP`] of the text.
fn lookaheads_ok(regex: &str, lookaheads: &[Lookahead]) -> bool {
    let mut pos = 0;
    lookaheads.len() <= MAX_LOOKAHEADS
        && lookaheads.iter().all(|la| {
            let ok = la.at >= pos && regex.get(la.at..).is_some_and(|r| r.starts_with(EMPTY_GROUP));
            pos = la.at + EMPTY_GROUP.len();
            ok
        })
}

fn encode_lookaheads(regex: &str, lookaheads: &[Lookahead]) -> String {
    let mut out = String::with_capacity(regex.len() + 64 * lookaheads.len());
    let mut pos = 0;
    for (k, la) in lookaheads.iter().enumerate() {
        out.push_str(&regex[pos..la.at]);
        out.push_str(&format!("{}{}{}", lookahead_open(k), la.not, lookahead_close(k)));
        pos = la.at + EMPTY_GROUP.len();
    }
    out.push_str(&regex[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoding is the one the Lark front end wrote into regex text
    /// before lookaheads were typed (tests/lexer.proptest-regressions keeps
    /// such patterns): the blobs' grammar fingerprints hash this text.
    #[test]
    fn lookahead_encoding_is_unchanged() {
        let la = |at: usize, not: &str| Lookahead { at, not: not.into() };
        let p = TerminalPattern::Regex { regex: r"\.\.?(?:)".into(), lookaheads: vec![la(5, r"\.")] };
        assert_eq!(encoded_regex(&p).unwrap(), r"\.\.?(?:(?-u:\xF9)(?:\.)(?-u:\xF8)|(?-u:\xFA))");
        let p = TerminalPattern::Regex { regex: r#""(?:)[^"]*"?"#.into(), lookaheads: vec![la(1, "\"")] };
        assert_eq!(encoded_regex(&p).unwrap(), r#""(?:(?-u:\xF9)(?:")(?-u:\xF8)|(?-u:\xFA))[^"]*"?"#);
        let p = TerminalPattern::Regex { regex: "a(?:)b(?:)".into(), lookaheads: vec![la(1, "x"), la(6, "y")] };
        assert_eq!(
            encoded_regex(&p).unwrap(),
            r"a(?:(?-u:\xF9)(?:x)(?-u:\xF8)|(?-u:\xFA))b(?:(?-u:\xFB)(?:y)(?-u:\xF8)|(?-u:\xFC))"
        );
        let bad = TerminalPattern::Regex { regex: "ab".into(), lookaheads: vec![la(1, "x")] };
        assert_eq!(encoded_regex(&bad).unwrap(), "ab");
    }

    /// [`Table::minimized`] (all-matches regexes): the language of
    /// regex-automata's minimized DFA in at most as many states, and a fixed
    /// point; literal chains are their regex's tables.
    #[test]
    fn minimized_tables() {
        let who = || "test".to_string();
        let res = [
            r"[a-z_][a-z0-9_]*",
            r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+\-]?[0-9]+)?",
            r#""(?:[^"\\\x00-\x1f]|\\["\\bfnrt]|\\u00(?:0[0-7bef]|1[0-9a-f])){0,32}""#,
            r#"(?:null|true|false|"(?:[^"\\]|\\.)*")"#,
            r"(?:0|-?[1-9][0-9]*)",
            r"(?:[1-9][0-9]{1,}|[2-9]|1)",
            r"[ \t\n\r]{0,16}:[ \t\n\r]{0,16}",
            r"(?:ab|abc|abcd)",
            r"a*?b",
            r"(?:\x22ver\x22|\x22host\x22|\x22rec\x22|\x22id\x22)",
            r"[^\n]*",
            r"(?i:select|from)",
            r"\p{L}+",
        ];
        let equal_language = |a: &Table, b: &Table| Table::same_language(a, b, usize::MAX) == Some(true);
        let mut fewer = 0;
        for re in res {
            let ours = regex_table(re, MatchKind::All, &who).unwrap();
            let ra = Table::from_dfa(&compile_regex_dfa(re, MatchKind::All, &who, true).unwrap());
            assert!(ours.n_states() <= ra.n_states(), "/{re}/");
            assert!(equal_language(&ours, &ra), "/{re}/");
            fewer += (ours.n_states() < ra.n_states()) as usize;
            // Minimal: minimizing again changes nothing.
            let again = ours.clone().minimized();
            assert_eq!((again.start, &again.next, &again.accept), (ours.start, &ours.next, &ours.accept), "/{re}/");
        }
        assert!(fewer > 0, "regex-automata's tables are larger for some (delayed match states)");
        // Literals: the chain is the regex's table.
        for text in ["{", "\"ver\"", "naïve", "a.b*c", "\u{10ffff}x"] {
            let ra = Table::from_dfa(&compile_regex_dfa(&regex_syntax::escape(text), MatchKind::LeftmostFirst, &who, true).unwrap());
            let ours = Table::literal(text.as_bytes());
            assert_eq!((ours.start, &ours.next, &ours.accept), (ra.start, &ra.next, &ra.accept), "{text:?}");
        }
    }
}
