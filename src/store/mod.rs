//! The mask store: for every lexer position `q = (L, X)` (see [`walk`]), the
//! tokens that can be lexed from `q`, grouped by the lexer-level symbol
//! sequence `S` they produce:
//!
//! ```text
//! mask_store[q][S] = { token t | walking t's bytes from q can yield (q', S) }
//! ```
//!
//! At run time a configuration `(q, P)` (P = symbols not yet consumed by the
//! parser) allows `mask_store[q][S]` iff the parser accepts `P ++ S`
//! (`S` ends with the announcement of the lexeme the token leaves unfinished,
//! so this also checks that the unfinished lexeme can still be completed).
//! The entry `S = ()` needs no check at all: it is stored apart as `always[q]`.
//! Streamlining (see `streamline`) moves more entries into `always[q]` or drops
//! them.

pub mod sets;
pub mod walk;
#[cfg(feature = "compiler")]
pub mod build;
#[cfg(feature = "compiler")]
pub(crate) mod direct;
pub mod wire;
#[cfg(feature = "compiler")]
pub mod streamline;
#[cfg(feature = "compiler")]
pub(crate) mod par;

use crate::lexer::Lexer;
use crate::parser::incremental::IncTables;
use crate::vocab::Vocab;
use sets::TokenSets;
use std::cell::{Ref, RefCell};
use std::rc::Rc;

/// Index of a lexer position `(L, X)` in a store.
pub type QId = u32;

pub const NONE: u32 = u32::MAX;

/// Metadata carried by a store (for messages and stats).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreInfo {
    pub terminal_names: Vec<String>,
    pub grammar_fingerprint: u64,
    /// Counts of entries after each streamlining step (raw first), for `stats`.
    pub step_counts: Vec<(String, u64)>,
}

/// A complete, loadable mask store: everything the runtime needs.
///
/// The lexer positions are known up front; their entries live in
/// [`Tables`]. A blob (or a full compile) holds every position's entries; a
/// store compiled per request ([`crate::constraint::compile`]) computes a
/// position's entries on its first visit ([`MaskStore::ensure`]) and keeps
/// them, so its tables grow behind a `RefCell` (stores are single-threaded:
/// `Rc`, as wasm needs).
#[derive(Clone, Debug)]
pub struct MaskStore {
    pub(crate) lexer: Lexer,
    pub(crate) grammar: IncTables,
    pub(crate) vocab: Rc<Vocab>,
    pub(crate) info: StoreInfo,
    /// Per lexer state L: its positions are `q_base[L]..q_base[L+1]`; their
    /// targets are `q_target[..]` (sorted; `NONE` = no target, sorts last).
    pub(crate) q_base: Vec<u32>,
    pub(crate) q_target: Vec<u32>,
    pub(crate) tables: RefCell<Tables>,
    /// How to compute the positions not visited yet (stores compiled per request).
    #[cfg(feature = "compiler")]
    pub(crate) lazy: Option<RefCell<build::Lazy>>,
    /// The tokens the grammar names, by token id (derived from the
    /// terminal names and the lexer: not in blobs).
    pub(crate) specials: Vec<SpecialToken>,
}

/// A token the grammar names ([`crate::grammar::TerminalPattern::Special`]):
/// committing `token` ends the lexeme in progress, feeds terminal `term` to
/// the parser and puts the lexer at position `q` (right after the token).
/// The token is matched only so, never as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialToken {
    pub token: u32,
    pub term: u32,
    pub q: QId,
}

/// The entries of every position (see [`MaskStore`]).
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// Per q: the set that needs no parser check (`NONE` if empty).
    pub(crate) q_always: Vec<u32>,
    /// Per q: its checked entries are `q_entries[2q]..q_entries[2q+1]`
    /// (positions with identical entry lists share them).
    pub(crate) q_entries: Vec<u32>,
    /// Per stored entry: its item, a distinct (sequence, token set) pair
    /// (few pairs are distinct, so entries share them).
    pub(crate) entry_item: Vec<u32>,
    /// Per item: its symbols are `seq_pool[item_seq[2i]..item_seq[2i+1]]`
    /// (equal sequences share storage).
    pub(crate) item_seq: Vec<u32>,
    pub(crate) seq_pool: Vec<u32>,
    /// Per item: its token set.
    pub(crate) item_set: Vec<u32>,
    /// Per stored entry: the length of the prefix its sequence shares with
    /// the previous stored entry's (saturated at 255; not stored in blobs).
    /// Lets the matcher skip the entries under a rejected prefix without
    /// reading their sequences. Computed per entry range on a position's
    /// first visit ([`MaskStore::ensure`]), not at load: until then the
    /// values are 0, which only means "shares nothing" (never wrong, just
    /// no skipping). The matcher never reads the value of a range's first
    /// entry, so it marks the range as computed (1). See
    /// [`Tables::sync_lcp`].
    pub(crate) entry_lcp: Vec<u8>,
    pub(crate) sets: TokenSets,
    /// Parser-context verdicts (streamlining beyond the paper; empty when
    /// the store has none). See [`ContextTable`].
    pub(crate) ctx: ContextTable,
    /// Stores compiled per request: per q (may be shorter than the
    /// positions), an index into `insides` or `NONE`. The position's lexeme
    /// loop's inside tokens, allowed with no parser check like `q_always`'s,
    /// kept as the loop walk's mask words (shared with the vocabulary's
    /// loop cache) instead of copied into a set on every first visit.
    /// [`MaskStore::to_bytes`] joins them into `q_always`.
    #[cfg(feature = "compiler")]
    pub(crate) q_inside: Vec<u32>,
    #[cfg(feature = "compiler")]
    pub(crate) insides: Vec<Rc<crate::vocab::prepared::LoopWalk>>,
}

impl Tables {
    pub fn sets(&self) -> &TokenSets {
        &self.sets
    }
    pub fn context_table(&self) -> &ContextTable {
        &self.ctx
    }
    /// Checked entries (not counting the always-allowed sets).
    pub fn n_entries(&self) -> usize {
        self.q_entries.chunks_exact(2).map(|r| (r[1] - r[0]) as usize).sum()
    }
    /// Checked entries actually stored (positions with equal lists share them).
    pub fn n_stored_entries(&self) -> usize {
        self.entry_item.len()
    }
    pub fn n_always(&self) -> usize {
        self.q_always.iter().filter(|&&s| s != NONE).count()
    }

    #[inline]
    pub fn always(&self, q: QId) -> Option<u32> {
        let s = self.q_always[q as usize];
        (s != NONE).then_some(s)
    }

    /// OR `q`'s loop-inside tokens (see `q_inside`) into `mask`.
    #[inline]
    pub(crate) fn or_inside(&self, q: QId, mask: &mut [u32]) {
        #[cfg(feature = "compiler")]
        if let Some(&i) = self.q_inside.get(q as usize).filter(|&&i| i != NONE) {
            sets::or_words(mask, &self.insides[i as usize].inside);
        }
        #[cfg(not(feature = "compiler"))]
        let _ = (q, mask);
    }

    #[inline]
    pub fn entries(&self, q: QId) -> std::ops::Range<usize> {
        self.q_entries[2 * q as usize] as usize..self.q_entries[2 * q as usize + 1] as usize
    }

    #[inline]
    pub fn entry_seq(&self, e: usize) -> &[u32] {
        let i = self.entry_item[e] as usize;
        &self.seq_pool[self.item_seq[2 * i] as usize..self.item_seq[2 * i + 1] as usize]
    }

    /// Where entry `e`'s sequence starts in the sequence pool.
    #[inline]
    pub fn entry_seq_start(&self, e: usize) -> usize {
        self.item_seq[2 * self.entry_item[e] as usize] as usize
    }

    #[inline]
    pub fn entry_set(&self, e: usize) -> u32 {
        self.item_set[self.entry_item[e] as usize]
    }

    /// Extend `entry_lcp` to the stored entries added since the last call,
    /// not computed yet (see [`Tables::entry_lcp`]).
    pub(crate) fn sync_lcp(&mut self) {
        self.entry_lcp.resize(self.entry_item.len(), 0);
    }

    /// Whether position `q`'s entry range still needs its shared-prefix lengths.
    #[inline]
    fn lcp_pending(&self, q: QId) -> bool {
        let r = self.entries(q);
        r.len() > 1 && self.entry_lcp.get(r.start) == Some(&0)
    }

    /// Compute the shared-prefix lengths of `q`'s entry range (indices must
    /// be valid: the store was validated).
    fn compute_lcp(&mut self, q: QId) {
        let r = self.entries(q);
        if r.len() < 2 || r.end > self.entry_lcp.len() {
            return;
        }
        for e in r.start + 1..r.end {
            let l = self.entry_seq(e - 1).iter().zip(self.entry_seq(e)).take_while(|(a, b)| a == b).count();
            self.entry_lcp[e] = l.min(255) as u8;
        }
        self.entry_lcp[r.start] = 1;
    }
}

/// Verdicts of checked entries in a *parser context*: the two top states
/// `(t, s)` of the LR stack, where `s` was entered by the position's target
/// terminal `X`, and the layout's mode (see
/// [`crate::parser::incremental::IncCursor::context`]). For the `%indent` newline
/// terminal `X`, the entries are the sequences that follow a newline (from
/// their first real terminal on), in the pending modes. In such a context an
/// entry's sequence may be proven legal on every stack below
/// (`VERDICT_ALWAYS`: no parser call), on none (`VERDICT_NEVER`: skipped), or
/// neither (`VERDICT_CHECK`). Contexts of one target with identical verdict
/// rows share a *class*.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextTable {
    /// Per LR state `s`: its contexts are `ctx_off[s]..ctx_off[s+1]` (empty
    /// table: no contexts at all).
    pub(crate) ctx_off: Vec<u32>,
    /// Per context: `4 * (state below s) + mode` (sorted within `s`), and its
    /// class.
    pub(crate) ctx_pred: Vec<u32>,
    pub(crate) ctx_class: Vec<u32>,
    /// Per class: its target terminal, and its codes at
    /// `class_off[k]..class_off[k+1]` (2 bits per code, 16 per word of `bits`).
    pub(crate) class_target: Vec<u32>,
    pub(crate) class_off: Vec<u32>,
    pub(crate) bits: Vec<u32>,
    /// Per stored entry: its code index within its target's classes (`NONE`:
    /// always checked).
    pub(crate) entry_vidx: Vec<u32>,
    /// Parallel to `seq_pool`: for symbol `Y = seq[k]`, the code index of the
    /// rest `seq[k+1..]` within `Y`'s classes (`NONE`: none); for an
    /// indentation event or the newline terminal, within the newline's. Once
    /// the matcher has fed `seq[..=k]`, the parser's new context may decide
    /// the rest.
    pub(crate) pool_vidx: Vec<u32>,
}

pub const VERDICT_CHECK: u32 = 0;
pub const VERDICT_ALWAYS: u32 = 1;
pub const VERDICT_NEVER: u32 = 2;

impl ContextTable {
    pub fn is_empty(&self) -> bool {
        self.class_target.is_empty()
    }
    pub fn n_classes(&self) -> usize {
        self.class_target.len()
    }
    /// Number of parser contexts with a class.
    pub fn n_contexts(&self) -> usize {
        self.ctx_pred.len()
    }
    /// Number of verdict codes over all classes.
    pub fn n_codes(&self) -> usize {
        self.class_off.last().copied().unwrap_or(0) as usize
    }
    /// The class of context `(below, top, mode)` for target `x`, if any
    /// (mode: [`crate::parser::incremental::IncCursor::context`]).
    #[inline]
    pub fn class_of(&self, below: u32, top: u32, mode: u32, x: u32) -> Option<u32> {
        let lo = *self.ctx_off.get(top as usize)? as usize;
        let hi = *self.ctx_off.get(top as usize + 1)? as usize;
        let key = below.checked_mul(4)? | (mode & 3);
        let i = self.ctx_pred[lo..hi].binary_search(&key).ok()?;
        let k = self.ctx_class[lo + i];
        (self.class_target[k as usize] == x).then_some(k)
    }
    /// The verdict of stored entry `e` in class `k`.
    #[inline]
    pub fn verdict(&self, k: u32, e: usize) -> u32 {
        self.code(k, self.entry_vidx[e])
    }
    /// The verdict of code index `v` in class `k`.
    #[inline]
    pub fn code(&self, k: u32, v: u32) -> u32 {
        let (lo, hi) = (self.class_off[k as usize], self.class_off[k as usize + 1]);
        if v == NONE || v >= hi - lo {
            return VERDICT_CHECK;
        }
        let i = (lo + v) as usize;
        (self.bits[i / 16] >> (2 * (i % 16))) & 3
    }
    fn validate(
        &self,
        n_states: usize,
        n_entries: usize,
        n_terms: u32,
        pool_len: usize,
    ) -> Result<(), String> {
        if self.is_empty() {
            let none = self.ctx_off.is_empty()
                && self.ctx_pred.is_empty()
                && self.ctx_class.is_empty()
                && self.class_off.is_empty()
                && self.bits.is_empty()
                && self.entry_vidx.is_empty()
                && self.pool_vidx.is_empty();
            return if none {
                Ok(())
            } else {
                Err("context table without classes".into())
            };
        }
        let nk = self.class_target.len();
        if self.ctx_off.len() != n_states + 1
            || self.ctx_off[0] != 0
            || self.ctx_off.windows(2).any(|w| w[0] > w[1])
        {
            return Err("context index does not match the LR states".into());
        }
        let nc = *self.ctx_off.last().unwrap() as usize;
        if self.ctx_pred.len() != nc || self.ctx_class.len() != nc {
            return Err("context lists have the wrong length".into());
        }
        for s in 0..n_states {
            let p = &self.ctx_pred[self.ctx_off[s] as usize..self.ctx_off[s + 1] as usize];
            if p.windows(2).any(|w| w[0] >= w[1]) || p.iter().any(|&t| (t / 4) as usize >= n_states)
            {
                return Err(format!("contexts of LR state {s} are not sorted states"));
            }
        }
        if self.ctx_class.iter().any(|&k| k as usize >= nk)
            || self.class_target.iter().any(|&x| x >= n_terms)
        {
            return Err("a context points to a missing class".into());
        }
        if self.class_off.len() != nk + 1
            || self.class_off[0] != 0
            || self.class_off.windows(2).any(|w| w[0] > w[1])
        {
            return Err("class index is inconsistent".into());
        }
        if (*self.class_off.last().unwrap() as usize).div_ceil(16) != self.bits.len() {
            return Err("verdict bits have the wrong length".into());
        }
        if self.bits.iter().any(|&w| (w & (w >> 1) & 0x5555_5555) != 0) {
            return Err("a verdict code is out of range".into());
        }
        if self.entry_vidx.len() != n_entries || self.pool_vidx.len() != pool_len {
            return Err("verdict indices have the wrong length".into());
        }
        Ok(())
    }
}


impl MaskStore {
    /// The tokens the grammar names, from the terminal names (`<[id]>` in
    /// a store: see `build::terminal_names`) and the lexer state each one
    /// has (the only state where it wins).
    pub(crate) fn find_specials(&self) -> std::result::Result<Vec<SpecialToken>, &'static str> {
        let mut out = Vec::new();
        for (i, name) in self.info.terminal_names.iter().enumerate() {
            if !crate::grammar::is_special_name(name) {
                continue;
            }
            // `<[digits]>`, the id below the vocabulary's size.
            let digits = name.strip_prefix("<[").and_then(|n| n.strip_suffix("]>")).filter(|d| !d.is_empty() && d.len() < 10);
            let digits = digits.filter(|d| d.bytes().all(|b| b.is_ascii_digit())).ok_or("bad token terminal")?;
            let token = digits.bytes().fold(0u64, |n, b| n * 10 + (b - b'0') as u64);
            if token >= self.vocab.len() as u64 {
                return Err("token terminal out of range");
            }
            let t = crate::ids::TerminalId(i as u32);
            let l = (0..self.lexer.n_states() as u32).find(|&l| self.lexer.winners(crate::ids::LexStateId(l)).contains(&t));
            let q = l.and_then(|l| self.q_of(l, i as u32)).ok_or("token terminal without a position")?;
            out.push(SpecialToken { token: token as u32, term: i as u32, q });
        }
        Ok(out)
    }

    /// The grammar's token `id`, if it names it.
    #[inline]
    pub fn special(&self, id: u32) -> Option<&SpecialToken> {
        self.specials.iter().find(|s| s.token == id)
    }

    pub fn specials(&self) -> &[SpecialToken] {
        &self.specials
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    /// The vocabulary, shared.
    pub fn vocab_rc(&self) -> &Rc<Vocab> {
        &self.vocab
    }
    pub fn lexer(&self) -> &Lexer {
        &self.lexer
    }
    pub fn grammar(&self) -> &IncTables {
        &self.grammar
    }
    pub fn info(&self) -> &StoreInfo {
        &self.info
    }
    /// Mask length in u32 words: `ceil(vocab_size / 32)`.
    pub fn mask_words(&self) -> usize {
        self.vocab.len().div_ceil(32)
    }
    pub fn n_positions(&self) -> usize {
        self.q_target.len()
    }

    /// The entry tables (of the positions computed so far, for a store
    /// compiled per request: see [`MaskStore::ensure`]).
    #[inline]
    pub fn tables(&self) -> Ref<'_, Tables> {
        self.tables.borrow()
    }

    /// Whether positions are computed on first visit.
    pub fn is_lazy(&self) -> bool {
        #[cfg(feature = "compiler")]
        {
            self.lazy.is_some()
        }
        #[cfg(not(feature = "compiler"))]
        {
            false
        }
    }

    /// Make sure positions `qs` have their entries (computed on first visit
    /// for a store compiled per request) and their entries' shared-prefix
    /// lengths (computed on first visit for every store).
    #[inline]
    pub fn ensure(&self, qs: impl IntoIterator<Item = QId> + Clone) {
        #[cfg(feature = "compiler")]
        if let Some(l) = &self.lazy {
            let mut l = l.borrow_mut();
            for q in qs.clone() {
                if !l.has(q) {
                    l.visit(self, &mut self.tables.borrow_mut(), q, true);
                }
            }
        }
        self.sync_lcp(qs);
    }

    /// [`MaskStore::ensure`] within the first-visit budget (see
    /// [`build::Lazy`]): false if some position has no entries yet (its
    /// walk is deferred), so the mask must be computed directly
    /// ([`MaskStore::direct_mask_into`]).
    #[inline]
    pub fn ensure_bounded(&self, qs: impl IntoIterator<Item = QId> + Clone) -> bool {
        #[cfg(feature = "compiler")]
        if let Some(l) = &self.lazy {
            let mut l = l.borrow_mut();
            let mut all = true;
            for q in qs.clone() {
                if !l.has(q) {
                    all &= l.visit(self, &mut self.tables.borrow_mut(), q, false);
                }
            }
            if !all {
                return false;
            }
        }
        self.sync_lcp(qs);
        true
    }

    /// OR into `out` the tokens allowed from configuration `(q, pending)`
    /// over `parser`, EOS aside, with the parser in the loop over the token
    /// trie ([`direct`]); the store's answer, without its entries. Only
    /// stores compiled per request have the prepared vocabulary this needs:
    /// for the others (every position computed) this is never called.
    #[cfg(feature = "compiler")]
    pub(crate) fn direct_mask_into(&self, parser: &crate::parser::incremental::IncParser, q: QId, pending: &[u32], out: &mut [u32]) {
        if let Some(l) = &self.lazy {
            let mut l = l.borrow_mut();
            let (walker, pv) = l.direct_parts();
            direct::mask_into(walker, self, pv, parser, q, pending, out);
        }
    }

    /// Spend idle time computing the entries of positions whose first visit
    /// was over budget, until `more_time()` says stop (checked between
    /// positions). True if such positions remain. A store without
    /// deferred positions returns false at once.
    pub fn prefetch(&self, more_time: impl FnMut() -> bool) -> bool {
        #[cfg(feature = "compiler")]
        if let Some(l) = &self.lazy {
            return l.borrow_mut().prefetch(self, &mut self.tables.borrow_mut(), more_time);
        }
        let _ = more_time;
        false
    }

    /// Positions whose first visit went over budget and are not computed yet.
    pub fn n_deferred(&self) -> usize {
        #[cfg(feature = "compiler")]
        if let Some(l) = &self.lazy {
            return l.borrow().n_deferred();
        }
        0
    }

    /// Set the first-visit budget of a store compiled per request, in token
    /// walk steps (0: every first visit is computed directly; `u64::MAX`:
    /// never). For tests and benchmarks; no effect on other stores.
    pub fn set_first_visit_budget(&self, steps: u64) {
        #[cfg(feature = "compiler")]
        if let Some(l) = &self.lazy {
            l.borrow_mut().set_first_visit_budget(steps);
        }
        let _ = steps;
    }

    #[inline]
    fn sync_lcp(&self, qs: impl IntoIterator<Item = QId> + Clone) {
        if qs.clone().into_iter().any(|q| self.tables.borrow().lcp_pending(q)) {
            let mut t = self.tables.borrow_mut();
            for q in qs {
                if t.lcp_pending(q) {
                    t.compute_lcp(q);
                }
            }
        }
    }

    /// Compute every position (before writing a blob, or for stats).
    pub fn ensure_all(&self) {
        self.ensure(0..self.n_positions() as QId);
    }

    /// Join every position's loop-inside tokens into its always-set (the
    /// form a blob stores). Masks are unchanged.
    #[cfg(feature = "compiler")]
    pub(crate) fn join_insides(&self) {
        let mut t = self.tables.borrow_mut();
        let t = &mut *t;
        if t.q_inside.iter().all(|&i| i == NONE) {
            return;
        }
        let mut mask = vec![0u32; self.mask_words()];
        let mut dedup = crate::hash::FxMap::default();
        for q in 0..t.q_inside.len() {
            if t.q_inside[q] == NONE {
                continue;
            }
            match t.always(q as QId) {
                Some(s) => t.sets.set_into(s, &mut mask),
                None => mask.fill(0),
            }
            t.or_inside(q as QId, &mut mask);
            let ids: Vec<u32> = mask
                .iter()
                .enumerate()
                .flat_map(|(w, &word)| (0..32).filter(move |b| word >> b & 1 == 1).map(move |b| w as u32 * 32 + b))
                .collect();
            t.q_always[q] = sets::add_dedup(&mut t.sets, &mut dedup, &ids);
            t.q_inside[q] = NONE;
        }
    }

    /// Positions whose entries are computed (all of them for a complete store).
    pub fn n_computed(&self) -> usize {
        #[cfg(feature = "compiler")]
        if let Some(l) = &self.lazy {
            return l.borrow().n_computed();
        }
        self.n_positions()
    }

    /// The position for lexer state `l` and target `x`.
    #[inline]
    pub fn q_of(&self, l: u32, x: u32) -> Option<QId> {
        let lo = self.q_base[l as usize] as usize;
        let hi = self.q_base[l as usize + 1] as usize;
        let t = &self.q_target[lo..hi];
        // NONE sorts last as u32::MAX; targets are sorted ascending.
        t.binary_search(&x).ok().map(|i| (lo + i) as u32)
    }

    /// (lexer state, target) of position `q`.
    #[inline]
    pub fn q_parts(&self, q: QId) -> (u32, u32) {
        let l = self.q_base.partition_point(|&b| b <= q) - 1;
        (l as u32, self.q_target[q as usize])
    }

    /// Human-readable name of a lexer-level symbol.
    pub fn sym_name(&self, s: u32) -> String {
        let ev = self.grammar.events;
        if let Some(n) = self.info.terminal_names.get(s as usize) {
            n.clone()
        } else if s == self.grammar.n_terminals {
            "$END".into()
        } else if s == ev.nl() {
            "<nl>".into()
        } else if s == ev.sp() {
            "<sp>".into()
        } else if s == ev.tab() {
            "<tab>".into()
        } else if s == ev.ff() {
            "<ff>".into()
        } else if ev.is_mode(s) && s < self.grammar.alphabet_size() {
            format!("<mode {}>", s - ev.mode_base())
        } else {
            format!("<{s}?>")
        }
    }

    /// Check every internal index (used by the blob loader after reading).
    pub(crate) fn validate(&self) -> Result<(), String> {
        let nl = self.lexer.n_states();
        let nq = self.q_target.len();
        let t = self.tables.borrow();
        let ne = t.entry_item.len();
        let ni = t.item_set.len();
        if self.q_base.len() != nl + 1 || self.q_base[0] != 0 || *self.q_base.last().unwrap() as usize != nq {
            return Err("position index does not match the lexer".into());
        }
        if self.q_base.windows(2).any(|w| w[0] > w[1]) {
            return Err("position index is not monotone".into());
        }
        let alpha = self.grammar.alphabet_size();
        for l in 0..nl {
            let t = &self.q_target[self.q_base[l] as usize..self.q_base[l + 1] as usize];
            if t.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("targets of lexer state {l} are not sorted"));
            }
            for &x in t {
                if x != NONE && !self.lexer.can_complete(crate::ids::LexStateId(l as u32), crate::ids::TerminalId(x)) {
                    return Err(format!("lexer state {l} has an impossible target {x}"));
                }
            }
        }
        if t.q_always.len() != nq || t.q_entries.len() != 2 * nq {
            return Err("per-position tables have the wrong length".into());
        }
        if t.q_entries.chunks_exact(2).any(|w| w[0] > w[1] || w[1] as usize > ne) {
            return Err("entry index is inconsistent".into());
        }
        if t.entry_item.iter().any(|&i| i as usize >= ni) {
            return Err("an entry points to a missing item".into());
        }
        if t.item_seq.len() != 2 * ni {
            return Err("sequence index has the wrong length".into());
        }
        if t.item_seq.chunks_exact(2).any(|w| w[0] > w[1] || w[1] as usize > t.seq_pool.len()) {
            return Err("sequence index is inconsistent".into());
        }
        if t.seq_pool.iter().any(|&s| s >= alpha || s == self.grammar.n_terminals) {
            return Err("a sequence holds an unknown symbol".into());
        }
        t.ctx.validate(
            self.grammar.tables.n_states() as usize,
            ne,
            self.grammar.n_terminals,
            t.seq_pool.len(),
        )?;
        let ns = t.sets.len() as u32;
        if t.q_always.iter().any(|&s| s != NONE && s >= ns) || t.item_set.iter().any(|&s| s >= ns) {
            return Err("an entry points to a missing token set".into());
        }
        t.sets.validate(self.vocab.len() as u32)?;
        if self.info.terminal_names.len() != self.grammar.n_terminals as usize {
            return Err("terminal names do not match the grammar".into());
        }
        Ok(())
    }
}
