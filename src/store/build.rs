//! Building the mask store (feature `compiler`).
//!
//! Glossary (paper → code):
//! - `nfa_transition` → the token-trie walk below: for each lexer position
//!   `q = (L, X)`, a depth-first walk of the token trie advancing a set of
//!   `(L, X, S)` configurations by [`walk::step`] per byte; a subtree is skipped
//!   as soon as no configuration survives (so no loop over tokens × bytes).
//! - `mask_store[q][S]` → `entries[q][S]`, a sorted token list, then a
//!   deduplicated [`TokenSets`](super::sets::TokenSets) entry.
//! - `mask_store[q][()]` → `always[q]`.

use super::sets::SetsBuilder;
use super::walk::{self, StepCtx, NO_TARGET};
use super::{MaskStore, StoreInfo, NONE};
use crate::error::Result;
use crate::grammar::Cfg;
use crate::ids::LexStateId;
use crate::lexer::Lexer;
use crate::parser::indent::{Grammar, IndentRules};
use crate::vocab::trie::TokenTrie;
use crate::vocab::Vocab;
use std::collections::HashMap;
use crate::time::Instant;

/// Options of `grammask compile`.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Apply the streamlining steps (default true).
    pub streamline: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { streamline: true }
    }
}

/// Figures reported by `compile`.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CompileReport {
    pub terminals: usize,
    pub rules: usize,
    pub nonterminals: usize,
    pub lr_states: usize,
    pub lexer_states: usize,
    pub lexer_classes: usize,
    pub positions: usize,
    pub token_transitions: u64,
    pub raw_entries: usize,
    pub entries: usize,
    pub always_sets: usize,
    pub token_sets: usize,
    pub set_words: usize,
    pub ms_lexer: u64,
    pub ms_lalr: u64,
    pub ms_walk: u64,
    pub ms_streamline: u64,
    pub interchangeable: Vec<Vec<String>>,
}

/// Interned symbol sequences: a trie of (parent, symbol) → id; id 0 is `()`.
#[derive(Default)]
pub(crate) struct SeqInterner {
    map: HashMap<(u32, u32), u32>,
    nodes: Vec<(u32, u32)>,
}

impl SeqInterner {
    pub fn new() -> Self {
        SeqInterner { map: HashMap::new(), nodes: vec![(NONE, NONE)] }
    }
    pub fn push(&mut self, parent: u32, sym: u32) -> u32 {
        let n = self.nodes.len() as u32;
        *self.map.entry((parent, sym)).or_insert_with(|| {
            self.nodes.push((parent, sym));
            n
        })
    }
    pub fn extend(&mut self, mut id: u32, syms: &[u32]) -> u32 {
        for &s in syms {
            id = self.push(id, s);
        }
        id
    }
    pub fn get(&self, mut id: u32, out: &mut Vec<u32>) {
        let start = out.len();
        while id != 0 {
            let (p, s) = self.nodes[id as usize];
            out.push(s);
            id = p;
        }
        out[start..].reverse();
    }
}

/// Raw (unstreamlined) store contents, as produced by the walk: per position,
/// the map from symbol sequence to sorted tokens.
pub(crate) struct RawStore {
    pub q_base: Vec<u32>,
    pub q_target: Vec<u32>,
    pub entries: Vec<Vec<(Vec<u32>, Vec<u32>)>>,
    /// Per position: tokens that need no parser check (from streamlining).
    pub always: Vec<Vec<u32>>,
    pub transitions: u64,
}

/// Compile a grammar and a vocabulary into a mask store.
pub fn compile(
    cfg: &Cfg,
    vocab: Vocab,
    opts: &CompileOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(MaskStore, CompileReport)> {
    let mut rep = CompileReport {
        terminals: cfg.terminals.len(),
        rules: cfg.rules.len(),
        nonterminals: cfg.nonterminals.len(),
        ..Default::default()
    };
    let t = Instant::now();
    let lexer = crate::lexer::build(cfg)?;
    rep.ms_lexer = t.elapsed().as_millis() as u64;
    rep.lexer_states = lexer.n_states();
    rep.lexer_classes = lexer.n_classes();
    progress(&format!("lexer: {} states, {} byte classes ({} ms)", lexer.n_states(), lexer.n_classes(), rep.ms_lexer));

    let t = Instant::now();
    let tables = crate::parser::lalr::build_tables(cfg)?;
    rep.ms_lalr = t.elapsed().as_millis() as u64;
    rep.lr_states = tables.n_states() as usize;
    progress(&format!("LALR(1): {} states ({} ms)", tables.n_states(), rep.ms_lalr));
    let n_terms = cfg.terminals.len() as u32;
    let indent = cfg.indent.as_ref().map(|c| IndentRules::from_config(c, cfg.terminals.len()));
    let grammar = Grammar::new(tables, indent, n_terms);

    let t = Instant::now();
    let trie = TokenTrie::new(&vocab);
    let raw = walk_all(&lexer, &grammar, &trie, progress);
    rep.ms_walk = t.elapsed().as_millis() as u64;
    rep.positions = raw.q_target.len();
    rep.token_transitions = raw.transitions;
    rep.raw_entries = raw.entries.iter().map(|e| e.len()).sum();
    progress(&format!(
        "token walk: {} positions, {} token transitions, {} raw entries ({} ms)",
        rep.positions, rep.token_transitions, rep.raw_entries, rep.ms_walk
    ));

    let mut raw = raw;
    let mut info = StoreInfo {
        terminal_names: cfg.terminals.iter().map(|t| t.display_name()).collect(),
        grammar_fingerprint: grammar_fingerprint(cfg),
        step_counts: vec![("raw".into(), rep.raw_entries as u64)],
    };
    let t = Instant::now();
    let mut ctx = super::streamline::ContextVerdicts::default();
    if opts.streamline {
        let sr = super::streamline::streamline(
            cfg,
            &grammar,
            &raw.q_target,
            &mut raw.entries,
            &mut raw.always,
            &super::streamline::StreamlineOptions::default(),
        );
        for ((name, n), (_, ms)) in sr.steps.iter().zip(std::iter::once(&(String::new(), 0)).chain(sr.millis.iter().skip(1))) {
            progress(&format!("streamline: {name:<26} {n:>9} entries ({ms} ms)"));
        }
        progress(&format!("streamline: {} interchangeable classes: {:?}", sr.interchangeable.len(), sr.interchangeable));
        let (dft, lr, unknown) = sr.proofs;
        progress(&format!("streamline: is_always_legal queries: {dft} proved on the DFT PDA, {lr} more on the LR automaton, {unknown} unknown"));
        info.step_counts = sr.steps;
        rep.interchangeable = sr.interchangeable;
        ctx = sr.ctx;
    }
    rep.ms_streamline = t.elapsed().as_millis() as u64;
    let store = assemble(lexer, grammar, vocab, info, raw, &ctx);
    rep.entries = store.n_entries();
    rep.always_sets = store.n_always();
    rep.token_sets = store.sets.len();
    rep.set_words = store.sets.data.len();
    Ok((store, rep))
}

/// Compile a grammar for a prepared vocabulary, unstreamlined, for a
/// per-request constraint (see [`crate::constraint::compile`]).
pub fn compile_lazy(cfg: &Cfg, pv: std::rc::Rc<crate::vocab::PreparedVocab>) -> Result<MaskStore> {
    // For now every position is computed up front; lazy positions replace this.
    let opts = CompileOptions { streamline: false };
    compile(cfg, pv.vocab().clone(), &opts, &mut |_| {}).map(|(s, _)| s)
}

/// A stable hash of the normalized grammar (terminals, patterns, rules).
pub fn grammar_fingerprint(cfg: &Cfg) -> u64 {
    let mut h = crate::hash::Fnv64::new();
    for t in &cfg.terminals {
        h.write(t.name.as_bytes());
        match &t.pattern {
            crate::grammar::TerminalPattern::Set { all, none } => {
                for (k, r) in all.iter().map(|r| (b'+', r)).chain(none.iter().map(|r| (b'-', r))) {
                    h.write(&[k]);
                    h.write(r.as_bytes());
                }
            }
            _ => h.write(t.regex().unwrap_or("").as_bytes()),
        }
        h.write(&t.priority.to_le_bytes());
        h.write(&[t.ignored as u8, t.is_literal() as u8]);
    }
    for r in &cfg.rules {
        h.write(&r.lhs.0.to_le_bytes());
        for s in &r.rhs {
            match s {
                crate::grammar::Symbol::T(t) => h.write(&[0, t.0 as u8, (t.0 >> 8) as u8, (t.0 >> 16) as u8]),
                crate::grammar::Symbol::N(n) => h.write(&[1, n.0 as u8, (n.0 >> 8) as u8, (n.0 >> 16) as u8]),
            }
        }
        h.write(&[0xff]);
    }
    h.write(&cfg.start.0.to_le_bytes());
    if let Some(i) = &cfg.indent {
        h.write(&[i.newline.0 as u8, i.indent.0 as u8, i.dedent.0 as u8]);
    }
    h.finish()
}

fn step_ctx<'a>(lexer: &'a Lexer, grammar: &Grammar) -> StepCtx<'a> {
    StepCtx { lexer, events: grammar.events, newline: grammar.indent.as_ref().map_or(NONE, |i| i.newline) }
}

/// Positions of every lexer state, in store order.
fn positions(lexer: &Lexer) -> (Vec<u32>, Vec<u32>) {
    let mut q_base = Vec::with_capacity(lexer.n_states() + 1);
    let mut q_target = Vec::new();
    for l in 0..lexer.n_states() as u32 {
        q_base.push(q_target.len() as u32);
        q_target.extend(lexer.comp(LexStateId(l)).iter().map(|t| t.0));
        if LexStateId(l) == lexer.start() {
            q_target.push(NO_TARGET);
        }
    }
    q_base.push(q_target.len() as u32);
    (q_base, q_target)
}

fn walk_all(lexer: &Lexer, grammar: &Grammar, trie: &TokenTrie, progress: &mut dyn FnMut(&str)) -> RawStore {
    let (q_base, q_target) = positions(lexer);
    let cx = step_ctx(lexer, grammar);
    let mut seqs = SeqInterner::new();
    let mut entries = Vec::with_capacity(q_target.len());
    let mut transitions = 0u64;
    let mut w = Walker::default();
    let nq = q_target.len();
    let mut last = Instant::now();
    for l in 0..lexer.n_states() {
        for q in q_base[l]..q_base[l + 1] {
            let map = w.walk(cx, trie, &mut seqs, l as u32, q_target[q as usize], &mut transitions);
            let mut list: Vec<(Vec<u32>, Vec<u32>)> = map
                .into_iter()
                .map(|(sid, mut toks)| {
                    toks.sort_unstable();
                    toks.dedup();
                    let mut s = Vec::new();
                    seqs.get(sid, &mut s);
                    // Trailing indentation events never decide anything: the
                    // column only matters once a later terminal arrives.
                    while s.last().is_some_and(|&y| grammar.events.is_event(y)) {
                        s.pop();
                    }
                    (s, toks)
                })
                .collect();
            list.sort();
            super::streamline::merge(&mut list);
            entries.push(list);
            if last.elapsed().as_secs() >= 5 {
                progress(&format!("  token walk: {}/{} positions", q + 1, nq));
                last = Instant::now();
            }
        }
    }
    let always = vec![Vec::new(); q_target.len()];
    RawStore { q_base, q_target, entries, always, transitions }
}

#[derive(Default)]
struct Walker {
    arena: Vec<(u32, u32, u32)>,
    frames: Vec<(usize, usize, usize)>,
}

impl Walker {
    /// Walk the whole trie from position (l, x); returns seq id → tokens.
    fn walk(
        &mut self,
        cx: StepCtx<'_>,
        trie: &TokenTrie,
        seqs: &mut SeqInterner,
        l: u32,
        x: u32,
        transitions: &mut u64,
    ) -> HashMap<u32, Vec<u32>> {
        let mut out: HashMap<u32, Vec<u32>> = HashMap::new();
        let n = trie.node_count();
        self.arena.clear();
        self.frames.clear();
        self.arena.push((l, x, 0));
        self.frames.push((n, 0, 1));
        let mut i = 1;
        while i < n {
            while i >= self.frames.last().unwrap().0 {
                let (_, lo, _) = self.frames.pop().unwrap();
                self.arena.truncate(lo);
            }
            let (_, plo, phi) = *self.frames.last().unwrap();
            let b = trie.byte(i as u32);
            let start = self.arena.len();
            for c in plo..phi {
                let (cl, cxg, cs) = self.arena[c];
                let arena = &mut self.arena;
                walk::step(cx, cl, cxg, b, &mut |l2, z, syms| {
                    let s2 = if syms.is_empty() { cs } else { seqs.extend(cs, syms) };
                    let item = (l2, z, s2);
                    if !arena[start..].contains(&item) {
                        arena.push(item);
                    }
                });
            }
            let end = trie.subtree_end(i as u32) as usize;
            if self.arena.len() == start {
                i = end;
                continue;
            }
            let toks = trie.tokens_at(i as u32);
            if !toks.is_empty() {
                for c in start..self.arena.len() {
                    let sid = self.arena[c].2;
                    let v = out.entry(sid).or_default();
                    for t in toks {
                        v.push(t.0);
                    }
                    *transitions += toks.len() as u64;
                }
            }
            self.frames.push((end, start, self.arena.len()));
            i += 1;
        }
        out
    }
}

/// True if `seq` can never be rejected: it holds only indentation events.
pub(crate) fn trivially_legal(grammar: &Grammar, seq: &[u32]) -> bool {
    seq.iter().all(|&s| grammar.events.is_event(s))
}

/// Turn raw entries into the flat runtime store.
fn assemble(lexer: Lexer, grammar: Grammar, vocab: Vocab, info: StoreInfo, raw: RawStore, ctx: &super::streamline::ContextVerdicts) -> MaskStore {
    let mut sets = SetsBuilder::new(vocab.len() as u32);
    let nq = raw.q_target.len();
    let mut q_always = Vec::with_capacity(nq);
    let mut q_entries = Vec::with_capacity(2 * nq);
    // Lists are shared between positions; with context verdicts only between
    // positions of the same target (an entry's verdict index is per target).
    let mut shared: HashMap<(u32, Vec<(&[u32], u32)>), (u32, u32)> = HashMap::new();
    let mut entry_vidx: Vec<u32> = Vec::new();
    let mut pool_vidx: Vec<u32> = Vec::new();
    let newline = grammar.indent.as_ref().map_or(NONE, |r| r.newline);
    // The code index of `seq[k+1..]` among the sequences of `seq[k]` (after an
    // indentation event: of the newline, since the rest follows a newline).
    let rest_vidx = |seq: &[u32], k: usize| -> u32 {
        let y = if grammar.events.is_event(seq[k]) { newline } else { seq[k] };
        let rest = &seq[k + 1..];
        if rest.is_empty() {
            return NONE;
        }
        ctx.seqs.get(&y).and_then(|m| m.get(rest)).copied().unwrap_or(NONE)
    };
    let mut entry_item = Vec::new();
    let (mut item_seq, mut seq_pool, mut item_set) = (Vec::new(), Vec::new(), Vec::new());
    let mut seq_ids: HashMap<&[u32], [u32; 2]> = HashMap::new();
    let mut item_ids: HashMap<(&[u32], u32), u32> = HashMap::new();
    for ((list, proven), &x) in raw.entries.iter().zip(&raw.always).zip(&raw.q_target) {
        let xseqs = ctx.seqs.get(&x);
        let mut always: Vec<u32> = proven.clone();
        let mut checked: Vec<(&[u32], u32)> = Vec::with_capacity(list.len());
        for (seq, toks) in list {
            if trivially_legal(&grammar, seq) {
                always.extend_from_slice(toks);
            } else {
                checked.push((seq, sets.add(toks)));
            }
        }
        let key = (if xseqs.is_some() { x } else { NONE }, checked.clone());
        let range = *shared.entry(key).or_insert_with(|| {
            let lo = entry_item.len() as u32;
            for &(seq, set) in &checked {
                entry_vidx.push(xseqs.and_then(|m| m.get(seq)).copied().unwrap_or(NONE));
                let item = *item_ids.entry((seq, set)).or_insert_with(|| {
                    let range = *seq_ids.entry(seq).or_insert_with(|| {
                        seq_pool.extend_from_slice(seq);
                        pool_vidx.extend((0..seq.len()).map(|k| rest_vidx(seq, k)));
                        [(seq_pool.len() - seq.len()) as u32, seq_pool.len() as u32]
                    });
                    item_seq.extend_from_slice(&range);
                    item_set.push(set);
                    item_set.len() as u32 - 1
                });
                entry_item.push(item);
            }
            (lo, entry_item.len() as u32)
        });
        q_entries.extend_from_slice(&[range.0, range.1]);
        always.sort_unstable();
        always.dedup();
        q_always.push(if always.is_empty() { NONE } else { sets.add(&always) });
    }
    let ctx_table = context_table(&grammar, ctx, entry_vidx, pool_vidx);
    let entry_lcp = super::entry_lcps(&entry_item, &item_seq, &seq_pool);
    MaskStore {
        entry_lcp,
        ctx: ctx_table,
        lexer,
        grammar,
        vocab,
        info,
        q_base: raw.q_base,
        q_target: raw.q_target,
        q_always,
        q_entries,
        entry_item,
        item_seq,
        seq_pool,
        item_set,
        sets: sets.finish(),
    }
}

/// Pack [`ContextVerdicts`](super::streamline::ContextVerdicts) into the
/// runtime table (empty when there are no classes).
fn context_table(grammar: &Grammar, ctx: &super::streamline::ContextVerdicts, entry_vidx: Vec<u32>, pool_vidx: Vec<u32>) -> super::ContextTable {
    if ctx.classes.is_empty() {
        return super::ContextTable::default();
    }
    let ns = grammar.tables.n_states() as usize;
    let mut t = super::ContextTable { entry_vidx, pool_vidx, ..Default::default() };
    t.ctx_off = vec![0; ns + 1];
    for &(s, _, _) in &ctx.contexts {
        t.ctx_off[s as usize + 1] += 1;
    }
    for i in 0..ns {
        t.ctx_off[i + 1] += t.ctx_off[i];
    }
    // `contexts` is sorted by (top, below).
    t.ctx_pred = ctx.contexts.iter().map(|c| c.1).collect();
    t.ctx_class = ctx.contexts.iter().map(|c| c.2).collect();
    t.class_off.push(0);
    let mut n = 0usize;
    for (x, codes) in &ctx.classes {
        t.class_target.push(*x);
        for &c in codes {
            if n % 16 == 0 {
                t.bits.push(0);
            }
            *t.bits.last_mut().unwrap() |= (c as u32) << (2 * (n % 16));
            n += 1;
        }
        t.class_off.push(n as u32);
    }
    t
}
