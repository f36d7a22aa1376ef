//! The Matcher: per generated sequence, the allowed-token mask and token commits.
//!
//! State: the incremental parser (everything consumed so far) plus a small set of
//! live *configurations* `(q, P)`: a lexer position `q = (L, X)` (see
//! [`crate::store::walk`]) and the lexer-level symbols `P` that this
//! configuration has produced but the parser has not consumed yet (only the
//! prefix common to all configurations is consumed). Several configurations
//! live at once while the lexer cannot yet decide, e.g. whether `return` is a
//! keyword or the start of `returned`.
//!
//! Mask (paper, "CFG-constrained decoding"): for every configuration and every
//! store entry `S` of its position, `mask |= store[q][S]` if the parser accepts
//! `P ++ S`; `always[q]` needs no check. EOS is allowed iff some configuration
//! can end its lexeme here and the parser accepts end of input after it.
//!
//! Memory stays bounded over long generations: consumed symbols leave the
//! configurations, the parser stack only holds open constructs, and the
//! rollback history keeps at most `max_history` states.

use crate::error::Result;
use crate::ids::TokenId;
use crate::parser::alphabet::Sym;
use crate::parser::incremental::{IncCursor, IncParser};
use crate::store::walk::{self, NO_TARGET};
use crate::store::{MaskStore, QId, NONE, VERDICT_ALWAYS, VERDICT_CHECK, VERDICT_NEVER};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

/// `level_class` entry not looked up yet (`NONE`: no class).
const UNSET: u32 = NONE - 1;

/// Masks of expensive states, keyed by everything the computation read: the
/// configurations, the indentation state (see
/// [`IncParser::layout_key_into`]) and the LR stack's states from the top
/// down to the lowest node any parser call reached (see
/// [`crate::parser::LrCursor::low`]), so a hit is the mask the fill would
/// compute. Two states that differ only below that node share a mask (the
/// same statement at another nesting, a line break inside brackets in
/// another function). EOS is not part of the cached mask: it reads the whole
/// stack, so it is checked on every fill. Oldest entry replaced first.
#[derive(Default)]
struct MaskCache {
    slots: Vec<CacheSlot>,
    next: usize,
    hits: u64,
    misses: u64,
}

struct CacheSlot {
    /// FNV-1a of `key`.
    hash: u64,
    /// Configurations and indentation state.
    key: Vec<u32>,
    /// LR states read, top first.
    lr: Vec<u32>,
    /// The computation reached the bottom of the stack: the depth must match too.
    whole: bool,
    /// Mask words (without EOS).
    mask: Box<[u32]>,
    /// The general parser: its state (the item set, held: see
    /// [`crate::parser::earley::EarleyParser::same`]) replaces the LR states.
    ey: Option<crate::parser::earley::EarleyParser>,
}

impl CacheSlot {
    fn matches(&self, hash: u64, key: &[u32], parser: &IncParser) -> bool {
        if self.hash != hash || self.key != key {
            return false;
        }
        if let Some(e) = parser.earley() {
            return self.ey.as_ref().is_some_and(|s| s.same(e));
        }
        let depth = parser.lr().depth();
        if depth < self.lr.len() || (self.whole && depth != self.lr.len()) {
            return false;
        }
        parser.lr().states().zip(&self.lr).all(|(a, &b)| a.0 == b)
    }
}

fn state_key(state: &State, key: &mut Vec<u32>) -> u64 {
    key.clear();
    key.push(state.configs.len() as u32);
    for c in &state.configs {
        key.extend([c.q, c.pending.len() as u32]);
        key.extend(&c.pending);
    }
    state.parser.layout_key_into(key);
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &w in key.iter() {
        h = (h ^ w as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Config {
    q: QId,
    pending: Vec<Sym>,
}

#[derive(Clone)]
struct State {
    parser: IncParser,
    configs: Vec<Config>,
    stopped: bool,
}

/// Options for [`Matcher::with_options`].
#[derive(Clone, Debug)]
pub struct MatcherOptions {
    /// How many committed tokens [`Matcher::rollback`] can undo (default 64).
    pub max_rollback: usize,
    /// How many expensive masks the matcher keeps, keyed by the part of its
    /// state the mask computation read (configurations, indentation state,
    /// the LR stack down to the deepest node reached; default 32: at most 32
    /// masks of `mask_words` words; 0: none). A state that comes back (the
    /// start of a statement at the same nesting, the next item of a list,
    /// the same construct deeper in the file) then costs a copy.
    pub mask_cache: usize,
    /// A mask goes through the cache only when its configurations' positions
    /// have at least this many store entries between them (default 512:
    /// below that, computing it costs about as much as building the key).
    pub mask_cache_min_entries: usize,
}

impl Default for MatcherOptions {
    fn default() -> Self {
        MatcherOptions { max_rollback: 64, mask_cache: 32, mask_cache_min_entries: 512 }
    }
}

/// Per-sequence matcher over a shared [`MaskStore`].
pub struct Matcher {
    store: Rc<MaskStore>,
    state: State,
    history: VecDeque<State>,
    max_history: usize,
    parser_calls: Cell<u64>,
    direct_masks: Cell<u64>,
    /// Feeds of an entry's first symbol, and how many of those were rejected.
    first_feeds: Cell<(u64, u64)>,
    cache: RefCell<MaskCache>,
    cache_cap: usize,
    cache_min: usize,
}

impl Matcher {
    pub fn new(store: Rc<MaskStore>) -> Self {
        Self::with_options(store, MatcherOptions::default())
    }

    pub fn with_options(store: Rc<MaskStore>, opts: MatcherOptions) -> Self {
        let state = Self::initial(&store);
        Matcher {
            store,
            state,
            history: VecDeque::new(),
            max_history: opts.max_rollback,
            parser_calls: Cell::new(0),
            direct_masks: Cell::new(0),
            first_feeds: Cell::new((0, 0)),
            cache: RefCell::new(MaskCache::default()),
            cache_cap: opts.mask_cache,
            cache_min: opts.mask_cache_min_entries,
        }
    }

    fn initial(store: &MaskStore) -> State {
        let g = &store.grammar;
        let mut parser = IncParser::new(g);
        let l0 = store.lexer.start().0;
        // With `%indent`, the text starts as if after a newline, so the first
        // line's indentation is checked (see `parser::indent`).
        if let Some(nl) = g.indent.as_ref().map(|i| i.newline) {
            let mut start = None;
            walk::step(walk::StepCtx::of(store), l0, NO_TARGET, b'\n', &mut |l2, z, syms| {
                if z == nl && start.is_none() {
                    start = Some((l2, syms.to_vec()));
                }
            });
            if let Some((l2, syms)) = start {
                if let Some(q) = store.q_of(l2, nl) {
                    if parser.consume(g, &syms).is_ok() {
                        return State { parser, configs: vec![Config { q, pending: Vec::new() }], stopped: false };
                    }
                }
            }
        }
        let q = store.q_of(l0, NO_TARGET).expect("store has a start position");
        State { parser, configs: vec![Config { q, pending: Vec::new() }], stopped: false }
    }

    pub fn store(&self) -> &Rc<MaskStore> {
        &self.store
    }

    /// Mask length in u32 words.
    pub fn mask_words(&self) -> usize {
        self.store.mask_words()
    }

    /// (first-symbol feeds, rejected first-symbol feeds) so far: the only
    /// feeds that conditioning entries on the previous terminal could remove.
    pub fn first_symbol_feeds(&self) -> (u64, u64) {
        self.first_feeds.get()
    }

    /// Total symbols fed to the incremental parser by mask computations so far
    /// (the "parser calls" of the paper: one per store-entry symbol checked).
    pub fn parser_calls(&self) -> u64 {
        self.parser_calls.get()
    }

    /// Write the allowed-token mask into `out[..mask_words()]`; words past that
    /// (padding to a model's logits width) are zeroed too.
    pub fn fill_mask(&self, out: &mut [u32]) -> Result<()> {
        let words = self.mask_words();
        if out.len() < words {
            return Err(crate::err!(InvalidState, "mask buffer has {} words, needs {}", out.len(), words));
        }
        self.fill_from(&self.state, out);
        Ok(())
    }

    /// (hits, misses) of the mask cache (see [`MatcherOptions::mask_cache`]).
    pub fn mask_cache_stats(&self) -> (u64, u64) {
        let c = self.cache.borrow();
        (c.hits, c.misses)
    }

    fn fill_from(&self, state: &State, out: &mut [u32]) {
        if state.stopped {
            out.fill(0);
            return;
        }
        let st = &*self.store;
        let work: usize = if self.cache_cap == 0 {
            0
        } else if self.positions_ready(state) {
            let t = st.tables();
            state.configs.iter().map(|c| t.entries(c.q).len()).sum()
        } else {
            // Computed directly (a first visit over budget): always worth caching.
            usize::MAX
        };
        if self.cache_cap == 0 || work < self.cache_min {
            self.compute_into(state, out);
            self.add_tokens(state, out);
            return;
        }
        let words = self.mask_words();
        let mut c = self.cache.borrow_mut();
        let mut key = Vec::new();
        let h = state_key(state, &mut key);
        if let Some(slot) = c.slots.iter().find(|s| s.matches(h, &key, &state.parser)) {
            out[..words].copy_from_slice(&slot.mask);
            out[words..].fill(0);
            c.hits += 1;
            drop(c);
            self.add_tokens(state, out);
            return;
        }
        c.misses += 1;
        let low = self.compute_into(state, out);
        let depth = state.parser.lr().depth();
        let lr: Vec<u32> = state.parser.lr().states().take((depth + 1).saturating_sub(low)).map(|s| s.0).collect();
        // The general parser's state is its item set (hash-consed, so equal
        // sets are mostly one value): kept with the configurations' key.
        let slot = CacheSlot { hash: h, key, lr, whole: low <= 1, mask: out[..words].into(), ey: state.parser.earley().cloned() };
        if c.slots.len() < self.cache_cap {
            c.slots.push(slot);
        } else {
            let i = c.next;
            c.slots[i] = slot;
            c.next = (i + 1) % self.cache_cap;
        }
        drop(c);
        self.add_tokens(state, out);
    }

    /// The tokens outside the store's entries: the grammar's named tokens
    /// (see [`MaskStore::special`]; not as text, only where the grammar
    /// takes them), then EOS.
    fn add_tokens(&self, state: &State, out: &mut [u32]) {
        for sp in &self.store.specials {
            let (w, bit) = (sp.token as usize >> 5, 1u32 << (sp.token & 31));
            out[w] &= !bit;
            if !self.special_configs(state, sp.term, sp.q).is_empty() {
                out[w] |= bit;
            }
        }
        self.add_eos(state, out);
    }

    /// The configurations after the grammar's token `term` (position `q`):
    /// from each configuration whose lexeme in progress can end here (or
    /// has not started), with `term` fed to the parser after its symbols.
    #[inline(never)]
    fn special_configs(&self, state: &State, term: u32, q: QId) -> Vec<Config> {
        let st = &*self.store;
        let mut out: Vec<Config> = Vec::new();
        for c in &state.configs {
            let (l, x) = st.q_parts(c.q);
            if x != NO_TARGET && !walk::can_end(&st.lexer, l, x) {
                continue;
            }
            let mut pending = c.pending.clone();
            if !st.lexer.is_ignored(crate::ids::TerminalId(term)) {
                pending.push(term);
            }
            let c = Config { q, pending };
            if !out.contains(&c) && state.parser.accepts(&st.grammar, &c.pending) {
                out.push(c);
            }
        }
        out
    }

    fn add_eos(&self, state: &State, out: &mut [u32]) {
        if self.can_end(state) {
            for &t in self.store.vocab.eos_ids() {
                out[t.index() >> 5] |= 1 << (t.0 & 31);
            }
        }
    }

    /// The mask without EOS; returns the depth of the lowest LR stack node
    /// read (see [`crate::parser::LrCursor::low`]; the stack's depth + 1
    /// when none was).
    fn compute_into(&self, state: &State, out: &mut [u32]) -> usize {
        let st = &*self.store;
        // Per-request stores compute a position's entries on its first
        // visit, within a budget; over it, the mask is computed directly.
        if !self.positions_ready(state) {
            return self.compute_direct(state, out);
        }
        let tables = st.tables();
        let t = &*tables;
        // The first configuration's always-set overwrites the buffer (one
        // pass instead of zeroing then OR-ing); the rest is OR-ed in.
        match state.configs.first().and_then(|c| t.always(c.q)) {
            Some(s) => t.sets.set_into(s, out),
            None => out.fill(0),
        }
        let g = &st.grammar;
        let mut calls = 0u64;
        let (mut first, mut first_rej) = (0u64, 0u64);
        let mut levels: Vec<IncCursor<'_>> = Vec::with_capacity(16);
        // Per level k >= 1: the context class of `levels[k]` for `seq[k-1]`
        // (looked up once per level, shared by the entries with that prefix).
        let mut level_class: Vec<u32> = Vec::with_capacity(16);
        let has_ctx = !t.ctx.is_empty();
        let newline = g.indent.as_ref().map_or(NONE, |r| r.newline);
        let mut low = state.parser.lr().depth() + 1;
        for (ci, c) in state.configs.iter().enumerate() {
            if let Some(s) = t.always(c.q).filter(|_| ci > 0) {
                t.sets.or_into(s, out);
            }
            t.or_inside(c.q, out);
            let range = t.entries(c.q);
            if range.is_empty() {
                continue;
            }
            // Depth-first over the entries' symbol sequences, which are sorted:
            // `levels[k]` is the parser after `P ++ seq[..k]`; a rejected prefix
            // skips every following entry that shares it.
            let mut base = state.parser.cursor();
            let pushed = base.push_all(g, &c.pending);
            low = low.min(base.lr_low(false));
            if !pushed {
                continue;
            }
            // Beyond the paper: in a known parser context, most entries have
            // a verdict (legal on every stack below, or on none).
            let class = if !has_ctx {
                None
            } else {
                // After a newline that dedents, the context after the DEDENTs
                // decides the entries that start with a real terminal.
                low = low.min(base.lr_low(true));
                base.context()
                    .or_else(|| base.dedent_context(g, &mut low))
                    .and_then(|(below, top, mode)| t.ctx.class_of(below, top, mode, st.q_target[c.q as usize]))
            };
            levels.clear();
            levels.push(base);
            level_class.clear();
            level_class.push(NONE);
            // `run`: the length of the prefix entry `e` shares with the last
            // walked entry (the minimum of the adjacent entries' shared
            // prefixes since then: the sequences are sorted), 0 before any.
            // Saturated at 255: then it is computed from `prev`.
            let mut run: usize = 0;
            let mut prev: &[u32] = &[];
            let mut dead: usize = usize::MAX;
            for e in range {
                run = run.min(t.entry_lcp[e] as usize);
                if let Some(k) = class {
                    match t.ctx.verdict(k, e) {
                        VERDICT_NEVER => continue,
                        VERDICT_ALWAYS => {
                            t.sets.or_into(t.entry_set(e), out);
                            continue;
                        }
                        _ => {}
                    }
                }
                if run >= dead && run < 255 {
                    continue;
                }
                let seq = t.entry_seq(e);
                let l = if run < 255 { run } else { prev.iter().zip(seq).take_while(|(a, b)| a == b).count() };
                if l >= dead {
                    continue;
                }
                run = usize::MAX;
                dead = usize::MAX;
                prev = seq;
                levels.truncate(l.min(levels.len() - 1) + 1);
                level_class.truncate(levels.len());
                let mut ok = true;
                let off = t.entry_seq_start(e);
                for k in levels.len() - 1..seq.len() {
                    // After `seq[..k]`, the parser's context may decide the
                    // rest of the entry (also when resuming a shared prefix).
                    if k > 0 && has_ctx {
                        let v = t.ctx.pool_vidx[off + k - 1];
                        if v != NONE {
                            if level_class[k] == UNSET {
                                // After an event or a newline, the rest is looked
                                // up among the sequences that follow a newline.
                                let y = if g.events.is_event(seq[k - 1]) { newline } else { seq[k - 1] };
                                low = low.min(levels[k].lr_low(true));
                                level_class[k] = levels[k]
                                    .context()
                                    .or_else(|| if y == newline { levels[k].dedent_context(g, &mut low) } else { None })
                                    .and_then(|(b, top, mode)| t.ctx.class_of(b, top, mode, y))
                                    .unwrap_or(NONE);
                            }
                            if level_class[k] != NONE {
                                let code = t.ctx.code(level_class[k], v);
                                if code != VERDICT_CHECK {
                                    ok = code == VERDICT_ALWAYS;
                                    break;
                                }
                            }
                        }
                    }
                    let mut cur = levels[k].clone();
                    calls += 1;
                    first += (k == 0) as u64;
                    let pushed = cur.push(g, seq[k]);
                    low = low.min(cur.lr_low(false));
                    if !pushed {
                        first_rej += (k == 0) as u64;
                        dead = k + 1;
                        ok = false;
                        break;
                    }
                    levels.push(cur);
                    level_class.push(UNSET);
                }
                if ok {
                    t.sets.or_into(t.entry_set(e), out);
                }
            }
        }
        self.parser_calls.set(self.parser_calls.get() + calls);
        let (a, b) = self.first_feeds.get();
        self.first_feeds.set((a + first, b + first_rej));
        low
    }

    /// Do the state's positions have their store entries? (A per-request
    /// store computes them on first visit, within a budget; see
    /// [`MaskStore::ensure_bounded`].)
    #[inline(never)]
    fn positions_ready(&self, state: &State) -> bool {
        self.store.ensure_bounded(state.configs.iter().map(|c| c.q))
    }

    /// The mask without EOS, with the parser in the loop over the token trie
    /// (see [`crate::store::direct`]); returns 0 (the whole LR stack may
    /// have been read: a cached copy must match it all).
    fn compute_direct(&self, state: &State, out: &mut [u32]) -> usize {
        out.fill(0);
        #[cfg(not(feature = "compiler"))]
        let _ = state;
        #[cfg(feature = "compiler")]
        for c in &state.configs {
            self.store.direct_mask_into(&state.parser, c.q, &c.pending, out);
        }
        self.direct_masks.set(self.direct_masks.get() + 1);
        0
    }

    /// Masks computed directly so far (first visits over budget).
    pub fn direct_masks(&self) -> u64 {
        self.direct_masks.get()
    }

    /// Spend up to `budget` of idle time (e.g. while the model runs its
    /// forward pass) computing the store entries of positions whose first
    /// visit was computed directly, so that later masks there come from the
    /// store. Returns true if such positions remain. Cheap when there is
    /// nothing to do; the store is shared, so every matcher on it gains.
    pub fn prefetch(&self, budget: std::time::Duration) -> bool {
        // Only stores compiled per request (feature `compiler`) defer walks.
        #[cfg(feature = "compiler")]
        {
            let t = crate::time::Instant::now();
            self.store.prefetch(|| t.elapsed() < budget)
        }
        #[cfg(not(feature = "compiler"))]
        {
            let _ = budget;
            false
        }
    }

    /// The allowed-token mask as a new vector.
    pub fn compute_mask(&self) -> Vec<u32> {
        let mut m = vec![0u32; self.mask_words()];
        self.fill_mask(&mut m).expect("buffer has the right size");
        m
    }

    /// Can the text end here (EOS allowed)?
    pub fn is_accepting(&self) -> bool {
        !self.state.stopped && self.can_end(&self.state)
    }

    /// True once EOS was committed.
    pub fn is_stopped(&self) -> bool {
        self.state.stopped
    }

    fn can_end(&self, state: &State) -> bool {
        let st = &*self.store;
        state.configs.iter().any(|c| {
            let (l, x) = st.q_parts(c.q);
            let lexeme_ends = if x == NO_TARGET { true } else { walk::can_end(&st.lexer, l, x) };
            lexeme_ends && state.parser.accepts_eof(&st.grammar, &c.pending)
        })
    }

    /// Is token `id` allowed now? (Same answer as the mask, computed directly.)
    pub fn is_allowed(&self, id: u32) -> bool {
        self.advance(&self.state, id).is_ok()
    }

    /// Commit one token. A token outside the mask is refused with an error and
    /// the state is left unchanged.
    pub fn commit_token(&mut self, id: u32) -> Result<()> {
        let next = self.advance(&self.state, id)?;
        self.push_state(next);
        Ok(())
    }

    fn push_state(&mut self, next: State) {
        let prev = std::mem::replace(&mut self.state, next);
        if self.max_history > 0 {
            if self.history.len() == self.max_history {
                self.history.pop_front();
            }
            self.history.push_back(prev);
        }
    }

    /// Commit several tokens; if one is refused, nothing is committed.
    pub fn commit_tokens(&mut self, ids: &[u32]) -> Result<()> {
        let mut states = Vec::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            let from = states.last().unwrap_or(&self.state);
            match self.advance(from, id) {
                Ok(s) => states.push(s),
                Err(e) => return Err(crate::Error::new(e.kind(), format!("token #{i} of {}: {}", ids.len(), e.message()))),
            }
        }
        for s in states {
            self.push_state(s);
        }
        Ok(())
    }

    /// Undo the last `n` committed tokens.
    pub fn rollback(&mut self, n: usize) -> Result<()> {
        if n > self.history.len() {
            return Err(crate::err!(
                InvalidState,
                "cannot roll back {n} tokens: only {} are kept (max_rollback = {})",
                self.history.len(),
                self.max_history
            ));
        }
        for _ in 0..n {
            self.state = self.history.pop_back().expect("checked length");
        }
        Ok(())
    }

    /// Back to the start; clears the rollback history.
    pub fn reset(&mut self) {
        self.state = Self::initial(&self.store);
        self.history.clear();
    }

    /// The longest token sequence that is the only possibility from here (at
    /// most `limit` tokens). Does not change the matcher.
    pub fn forced_tokens(&self, limit: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut st = self.state.clone();
        let mut mask = vec![0u32; self.mask_words()];
        while out.len() < limit && !st.stopped {
            self.fill_from(&st, &mut mask);
            let mut only = None;
            let mut count = 0u32;
            for (w, &bits) in mask.iter().enumerate() {
                if bits != 0 {
                    count += bits.count_ones();
                    if count > 1 {
                        break;
                    }
                    only = Some((w as u32) * 32 + bits.trailing_zeros());
                }
            }
            let Some(t) = only.filter(|_| count == 1) else { break };
            match self.advance(&st, t) {
                Ok(next) => {
                    out.push(t);
                    st = next;
                }
                Err(_) => break,
            }
        }
        out
    }

    /// Compute the state after token `id`, without changing `self`.
    fn advance(&self, from: &State, id: u32) -> Result<State> {
        let st = &*self.store;
        if from.stopped {
            return Err(crate::err!(InvalidState, "the matcher is stopped (EOS was committed); reset() or rollback() first"));
        }
        let vocab = &st.vocab;
        if id as usize >= vocab.len() {
            return Err(crate::err!(InvalidToken, "token id {id} is out of range (vocabulary size {})", vocab.len()));
        }
        // A token the grammar names: that terminal (an EOS id the grammar
        // names is EOS where the grammar does not take it).
        if let Some(sp) = st.special(id) {
            let configs = self.special_configs(from, sp.term, sp.q);
            if !configs.is_empty() {
                return self.consume_common(from, configs);
            }
            if !vocab.eos_ids().contains(&TokenId(id)) {
                return Err(crate::err!(InvalidToken, "token {id} ({:?}) is not allowed here", String::from_utf8_lossy(vocab.token_bytes(TokenId(id)))));
            }
        }
        if vocab.eos_ids().contains(&TokenId(id)) {
            if self.can_end(from) {
                let mut s = from.clone();
                s.stopped = true;
                return Ok(s);
            }
            return Err(crate::err!(InvalidToken, "EOS token {id} is not allowed here: the text is not a complete sentence of the grammar"));
        }
        let bytes = vocab.token_bytes(TokenId(id));
        if vocab.is_special(TokenId(id)) || bytes.is_empty() {
            return Err(crate::err!(InvalidToken, "token {id} is a special token and is never allowed by a grammar"));
        }
        let cx = walk::StepCtx::of(st);
        // Walk the token's bytes from every configuration.
        let mut cur: Vec<(u32, u32, Vec<Sym>, usize)> = Vec::new();
        for (ci, c) in from.configs.iter().enumerate() {
            let (l, x) = st.q_parts(c.q);
            cur.push((l, x, Vec::new(), ci));
        }
        let mut next = Vec::new();
        for &b in bytes {
            next.clear();
            for (l, x, ext, ci) in &cur {
                walk::step(cx, *l, *x, b, &mut |l2, z, syms| {
                    let mut e = ext.clone();
                    e.extend_from_slice(syms);
                    // Pruned as soon as the parser refuses (viable prefixes are prefix-closed, so
                    // the check at the end would refuse it too): contextual mode branches would
                    // otherwise multiply per byte (6^k on a run of k `;` in syncode's java.lark).
                    if !syms.is_empty() && !from.parser.accepts2(&st.grammar, &from.configs[*ci].pending, &e) {
                        return;
                    }
                    let item = (l2, z, e, *ci);
                    if !next.contains(&item) {
                        next.push(item);
                    }
                });
            }
            std::mem::swap(&mut cur, &mut next);
            if cur.is_empty() {
                break;
            }
        }
        let mut configs: Vec<Config> = Vec::new();
        for (l, z, ext, ci) in cur {
            let Some(q) = st.q_of(l, z) else { continue };
            let mut pending = from.configs[ci].pending.clone();
            pending.extend_from_slice(&ext);
            let c = Config { q, pending };
            if configs.contains(&c) {
                continue;
            }
            if from.parser.accepts(&st.grammar, &c.pending) {
                configs.push(c);
            }
        }
        if configs.is_empty() {
            return Err(crate::err!(
                InvalidToken,
                "token {id} ({:?}) is not allowed here",
                String::from_utf8_lossy(bytes)
            ));
        }
        self.consume_common(from, configs)
    }

    /// The state with `configs`, the prefix common to all of them consumed.
    fn consume_common(&self, from: &State, mut configs: Vec<Config>) -> Result<State> {
        let st = &*self.store;
        let k = common_prefix(&configs);
        let mut parser = from.parser.clone();
        if k > 0 {
            parser.consume(&st.grammar, &configs[0].pending[..k])?;
            for c in &mut configs {
                c.pending.drain(..k);
            }
        }
        Ok(State { parser, configs, stopped: false })
    }

    /// Number of live configurations (for stats and tests).
    pub fn n_configs(&self) -> usize {
        self.state.configs.len()
    }
}

fn common_prefix(cs: &[Config]) -> usize {
    let first = &cs[0].pending;
    let mut k = first.len();
    for c in &cs[1..] {
        k = k.min(c.pending.iter().zip(first).take_while(|(a, b)| a == b).count());
    }
    k
}
