//! Construction of the lexer automaton (see the [module doc](super) for the
//! semantics of `cur`, `shadow`, `cont`, `emit`, `winner` and `comp`).
//!
//! Steps:
//! 1. compile every lexable terminal ([`compile_terminal`]) and convert its
//!    DFA to a [`Table`] over all 256 bytes: BFS from the anchored start,
//!    states from which no match is reachable become "dead" (`NONE`);
//! 2. byte classes: bytes with identical columns in every table (whitespace
//!    bytes kept as singletons);
//! 3. BFS over lexer states `(cur, shadow)`, interned by their canonical
//!    packed form (`terminal << 32 | state`, sorted, `cur ++ [SEP] ++ shadow`);
//! 4. `comp` as a least fixpoint, propagated backwards along `cont` edges.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use crate::time::Instant;
use std::time::Duration;

use regex_automata::dfa::Automaton;

use super::reference::{compile_terminal, rank_key, TermDfa};
use super::{Lexer, NONE};
use crate::err;
use crate::grammar::Cfg;
use crate::ids::TerminalId;
use crate::Result;

/// Refuse to build more than this many `state × class` transition entries.
const MAX_TABLE_ENTRIES: usize = 1 << 26;

/// Bytes that always get a class of their own.
const SINGLETON_BYTES: [u8; 5] = [b'\n', b'\r', b' ', b'\t', 0x0c];

/// Figures about a build.
#[derive(Clone, Debug)]
pub struct BuildStats {
    /// Lexer automaton states.
    pub n_states: usize,
    pub n_classes: usize,
    /// Terminals with a pattern.
    pub n_lexable: usize,
    /// Sum of the (pruned) terminal DFA sizes.
    pub terminal_dfa_states: usize,
    /// Largest `|cur| + |shadow|` of a lexer state.
    pub max_state_width: usize,
    pub elapsed: Duration,
}

/// One terminal's DFA as a table: states `0..n`, `NONE` = dead.
struct Table {
    start: u32,
    /// `state * width + byte-or-class` → state or `NONE`.
    next: Vec<u32>,
    width: usize,
    /// `accepting_here(state)`.
    accept: Vec<bool>,
}

impl Table {
    /// Converts a regex-automata DFA: BFS over all bytes, then prune the
    /// states from which no accepting state is reachable.
    fn from_dfa(d: &TermDfa) -> Table {
        let mut ids = HashMap::new();
        let mut order = vec![d.start];
        ids.insert(d.start, 0u32);
        let mut next = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            i += 1;
            for b in 0..=255u8 {
                let n = d.dfa.next_state(s, b);
                if d.dfa.is_dead_state(n) || d.dfa.is_quit_state(n) {
                    next.push(NONE);
                    continue;
                }
                let len = order.len() as u32;
                let id = *ids.entry(n).or_insert_with(|| {
                    order.push(n);
                    len
                });
                next.push(id);
            }
        }
        let accept: Vec<bool> = order.iter().map(|&s| d.accepting_here(s)).collect();
        // Co-accessibility: live = accepting or reaching a live state.
        let n = order.len();
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..n {
            for &t in &next[s * 256..(s + 1) * 256] {
                if t != NONE {
                    preds[t as usize].push(s as u32);
                }
            }
        }
        let mut live = accept.clone();
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
        let mut table = Table { start: remap[0], next: Vec::new(), width: 256, accept: Vec::new() };
        for s in (0..n).filter(|&s| live[s]) {
            table.accept.push(accept[s]);
            table.next.extend(next[s * 256..(s + 1) * 256].iter().map(|&t| if t == NONE { NONE } else { remap[t as usize] }));
        }
        table
    }

    fn n_states(&self) -> usize {
        self.accept.len()
    }

    /// Re-index the columns by byte class.
    fn compress(&mut self, classes: &[u8; 256], n_classes: usize) {
        let mut next = vec![NONE; self.n_states() * n_classes];
        for s in 0..self.n_states() {
            for b in 0..256 {
                next[s * n_classes + classes[b] as usize] = self.next[s * 256 + b];
            }
        }
        self.next = next;
        self.width = n_classes;
    }
}

/// FxHash-style hasher for the interning map (keys are `u64` slices).
#[derive(Default)]
struct FxHasher(u64);
impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}
type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Separates `cur` from `shadow` in an interned key.
const SEP: u64 = u64::MAX;

#[inline]
fn pack(t: u32, s: u32) -> u64 {
    (t as u64) << 32 | s as u64
}

/// Builds the lexer automaton of `cfg`'s terminals.
pub fn build(cfg: &Cfg) -> Result<Lexer> {
    build_with_stats(cfg).map(|(l, _)| l)
}

/// [`build`], also returning figures about the construction.
pub fn build_with_stats(cfg: &Cfg) -> Result<(Lexer, BuildStats)> {
    let t0 = Instant::now();
    let nt = cfg.terminals.len();
    if nt >= u32::MAX as usize {
        return Err(err!(Limit, "too many terminals"));
    }
    // 1. Terminal tables (indexed by terminal id; None = not lexable).
    let mut tables: Vec<Option<Table>> = Vec::with_capacity(nt);
    for i in 0..nt {
        tables.push(compile_terminal(cfg, TerminalId::new(i))?.map(|d| Table::from_dfa(&d)));
    }
    // 2. Byte classes: equal columns in every table, whitespace singletons.
    let mut classes = [0u8; 256];
    let mut sig_ids: HashMap<Vec<u32>, u8> = HashMap::new();
    for (b, class) in classes.iter_mut().enumerate() {
        let mut sig = Vec::new();
        if SINGLETON_BYTES.contains(&(b as u8)) {
            sig.push(NONE - 1 - b as u32);
        }
        for tb in tables.iter().flatten() {
            sig.extend((0..tb.n_states()).map(|s| tb.next[s * 256 + b]));
        }
        let len = sig_ids.len() as u8; // at most 255: one new id per byte
        *class = *sig_ids.entry(sig).or_insert(len);
    }
    let n_classes = sig_ids.len();
    for tb in tables.iter_mut().flatten() {
        tb.compress(&classes, n_classes);
    }
    let terminal_dfa_states = tables.iter().flatten().map(Table::n_states).sum();
    let n_lexable = tables.iter().flatten().count();

    // Rank position of each terminal (0 = best).
    let mut by_rank: Vec<usize> = (0..nt).collect();
    by_rank.sort_by_key(|&i| std::cmp::Reverse(rank_key(cfg, TerminalId::new(i))));
    let mut rank = vec![0u32; nt];
    for (r, &i) in by_rank.iter().enumerate() {
        rank[i] = r as u32;
    }

    let tb = |t: u64| tables[(t >> 32) as usize].as_ref().expect("lexable terminal");
    let accepting = |e: u64| tb(e).accept[e as u32 as usize];
    // Advance a set of packed entries by class `c` into `out` (dead dropped;
    // stays sorted when terminals are distinct).
    let advance = |set: &[u64], c: usize, out: &mut Vec<u64>| {
        out.clear();
        for &e in set {
            let table = tb(e);
            let n = table.next[(e as u32 as usize) * n_classes + c];
            if n != NONE {
                out.push(pack((e >> 32) as u32, n));
            }
        }
    };

    // 3. Lexer states.
    let l0_cur: Vec<u64> = tables
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.as_ref().filter(|t| t.start != NONE).map(|t| pack(i as u32, t.start)))
        .collect();
    let mut start_adv: Vec<Vec<u64>> = vec![Vec::new(); n_classes];
    for (c, out) in start_adv.iter_mut().enumerate() {
        advance(&l0_cur, c, out);
    }
    let mut ids: FxMap<Box<[u64]>, u32> = FxMap::default();
    let mut states: Vec<Box<[u64]>> = Vec::new(); // interned keys
    let mut key = l0_cur.clone();
    key.push(SEP);
    ids.insert(key.clone().into_boxed_slice(), 0);
    states.push(key.clone().into_boxed_slice());

    let (mut cont, mut emit, mut winner) = (Vec::new(), Vec::new(), Vec::new());
    let (mut adv_cur, mut adv_sh, mut merged) = (Vec::new(), Vec::new(), Vec::new());
    let mut max_state_width = 0;
    let mut intern = |cur: &[u64], shadow: &[u64], key: &mut Vec<u64>, states: &mut Vec<Box<[u64]>>| -> Result<u32> {
        key.clear();
        key.extend_from_slice(cur);
        key.push(SEP);
        key.extend_from_slice(shadow);
        if let Some(&id) = ids.get(key.as_slice()) {
            return Ok(id);
        }
        let id = states.len() as u32;
        if (id as usize + 1) * n_classes > MAX_TABLE_ENTRIES {
            return Err(err!(Limit, "lexer automaton too large (over {id} states); simplify the terminals"));
        }
        let b: Box<[u64]> = key.as_slice().into();
        ids.insert(b.clone(), id);
        states.push(b);
        Ok(id)
    };
    let mut i = 0;
    while i < states.len() {
        let st = states[i].clone();
        i += 1;
        max_state_width = max_state_width.max(st.len() - 1);
        let sep = st.iter().position(|&e| e == SEP).expect("separator");
        let (cur, shadow) = (&st[..sep], &st[sep + 1..]);
        let w = cur.iter().filter(|&&e| accepting(e)).map(|&e| (e >> 32) as u32).min_by_key(|&t| rank[t as usize]);
        winner.push(w.unwrap_or(NONE));
        for (c, start_c) in start_adv.iter().enumerate() {
            advance(cur, c, &mut adv_cur);
            advance(shadow, c, &mut adv_sh);
            let acc_sh = adv_sh.iter().any(|&e| accepting(e));
            let acc_cur = adv_cur.iter().any(|&e| accepting(e));
            adv_sh.sort_unstable();
            adv_sh.dedup();
            cont.push(if acc_sh || adv_cur.is_empty() {
                NONE
            } else {
                intern(&adv_cur, &adv_sh, &mut key, &mut states)?
            });
            emit.push(if w.is_none() || acc_sh || acc_cur || start_c.is_empty() {
                NONE
            } else {
                merged.clear();
                merged.extend_from_slice(&adv_cur);
                merged.extend_from_slice(&adv_sh);
                merged.sort_unstable();
                merged.dedup();
                intern(start_c, &merged, &mut key, &mut states)?
            });
        }
    }
    let ns = states.len();

    // 4. comp: least fixpoint, propagated backwards along cont edges.
    let words = nt.div_ceil(64).max(1);
    let mut bits = vec![0u64; ns * words];
    let mut preds_off = vec![0u32; ns + 1];
    for &t in cont.iter().filter(|&&t| t != NONE) {
        preds_off[t as usize + 1] += 1;
    }
    for s in 0..ns {
        preds_off[s + 1] += preds_off[s];
    }
    let mut fill = preds_off.clone();
    let mut preds = vec![0u32; preds_off[ns] as usize];
    for (k, &t) in cont.iter().enumerate() {
        if t != NONE {
            preds[fill[t as usize] as usize] = (k / n_classes) as u32;
            fill[t as usize] += 1;
        }
    }
    let mut queued = vec![true; ns];
    let mut work: Vec<u32> = (0..ns as u32).collect();
    for (s, &w) in winner.iter().enumerate() {
        if w != NONE {
            bits[s * words + w as usize / 64] |= 1 << (w % 64);
        }
    }
    while let Some(s) = work.pop() {
        let s = s as usize;
        queued[s] = false;
        for &p in &preds[preds_off[s] as usize..preds_off[s + 1] as usize] {
            let p = p as usize;
            let mut changed = false;
            for k in 0..words {
                let new = bits[p * words + k] | bits[s * words + k];
                changed |= new != bits[p * words + k];
                bits[p * words + k] = new;
            }
            if changed && !queued[p] {
                queued[p] = true;
                work.push(p as u32);
            }
        }
    }
    let mut comp_offsets = vec![0u32];
    let mut comp = Vec::new();
    for s in 0..ns {
        for t in 0..nt {
            if bits[s * words + t / 64] >> (t % 64) & 1 == 1 {
                comp.push(TerminalId::new(t));
            }
        }
        comp_offsets.push(comp.len() as u32);
    }

    let (cont_row, cont_rows) = super::dedup_rows(&cont, n_classes);
    let (emit_row, emit_rows) = super::dedup_rows(&emit, n_classes);
    let lexer = Lexer {
        classes,
        n_classes: n_classes as u32,
        n_states: ns as u32,
        cont_row,
        cont_rows,
        emit_row,
        emit_rows,
        winner,
        comp_offsets,
        comp,
        n_terminals: nt as u32,
        ignored: cfg.terminals.iter().map(|t| t.ignored).collect(),
    };
    let stats = BuildStats {
        n_states: ns,
        n_classes,
        n_lexable,
        terminal_dfa_states,
        max_state_width,
        elapsed: t0.elapsed(),
    };
    Ok((lexer, stats))
}
