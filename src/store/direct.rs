//! The direct mask path (feature `compiler`): a mask computed with the parser
//! in the loop over the token trie, for a matcher state whose positions have
//! no store entries yet (a first visit over budget, see
//! [`super::build::Lazy`]).
//!
//! Glossary (paper → code):
//! - `mask_store[q][S]` with the check "the parser accepts `P ++ S`" → the
//!   store's own token walk ([`super::build::Walker::walk_position`]: per
//!   byte [`super::walk::step`], the lexeme-loop cache), but every symbol sequence `S` a configuration
//!   produces is checked as it grows: a configuration whose `P ++ S` the
//!   parser rejects dies at once, with its whole trie subtree. A token is
//!   allowed iff some configuration survives its last byte, which is the
//!   store's answer: parser acceptance of viable prefixes is prefix-closed.
//! - trailing indentation events of `S` (dropped from store entries: they
//!   never decide anything) are fed to the parser only when a later real
//!   symbol follows, so the verdicts are the store path's verdicts.
//! - `always[q]` → the tokens that stay inside the position's lexeme loop
//!   (the empty sequence), OR-ed in as one precomputed mask.
//!
//! The cost is that of the configurations the parser lets live, not that of
//! every terminal the lexer could start (the store's raw walk under global
//! or `LongestAll` lexing starts every key of every object of a schema).

use super::build::{loop_walk, step_ctx, Sink, Walker};
use super::{MaskStore, QId};
use crate::parser::alphabet::Sym;
use crate::parser::incremental::{IncCursor, IncParser, IncTables};
use crate::vocab::trie::TokenTrie;
use crate::vocab::PreparedVocab;
type HashMap<K, V> = crate::hash::FxMap<K, V>;

/// The symbol sequences of one configuration's walk, interned as a trie
/// (id 0 = `()`), each with its parser verdict; the mask being filled.
struct Verdicts<'p, 'o> {
    g: &'p IncTables,
    map: HashMap<(u32, Sym), u32>,
    /// Per sequence: (parent, last symbol).
    node: Vec<(u32, Sym)>,
    /// Per sequence: its cursor (index into `cursors`) after every symbol but
    /// the trailing indentation events, and how many of those trail;
    /// `DEAD` when the parser rejects it.
    verdict: Vec<(u32, u32)>,
    cursors: Vec<IncCursor<'p>>,
    /// The general parser: item set id → the first sequence reaching it.
    general: HashMap<usize, u32>,
    /// The general parser: per sequence id, per symbol `< width`: the
    /// sequence after it (`UNSEEN`: not yet computed; `DEAD`: rejected).
    width: usize,
    dense: Vec<u32>,
    out: &'o mut [u32],
}

const DEAD: u32 = u32::MAX;
const UNSEEN: u32 = u32::MAX - 1;

impl Verdicts<'_, '_> {
    /// The sequence `s ++ [y]`, or `None` if the parser rejects it.
    #[inline]
    fn push(&mut self, s: u32, y: Sym) -> Option<u32> {
        if self.width == 0 || y as usize >= self.width {
            return self.push_new(s, y);
        }
        // The general parser: few sequence ids (one per item set), so a
        // dense transition table instead of the map.
        let i = s as usize * self.width + y as usize;
        match self.dense.get(i) {
            Some(&UNSEEN) | None => {}
            Some(&DEAD) => return None,
            Some(&id) => return Some(id),
        }
        let r = self.push_new(s, y);
        let need = self.node.len() * self.width;
        if self.dense.len() < need {
            self.dense.resize(need, UNSEEN);
        }
        self.dense[i] = r.unwrap_or(DEAD);
        r
    }

    fn push_new(&mut self, s: u32, y: Sym) -> Option<u32> {
        if let Some(&id) = self.map.get(&(s, y)) {
            return (self.verdict[id as usize].0 != DEAD).then_some(id);
        }
        let (cur, trailing) = self.verdict[s as usize];
        let v = if cur == DEAD {
            (DEAD, 0)
        } else if self.g.events.is_event(y) {
            (cur, trailing + 1)
        } else {
            // Feed the trailing events first (in order), then `y`.
            let mut evs = Vec::new();
            let mut n = s;
            for _ in 0..trailing {
                let (p, e) = self.node[n as usize];
                evs.push(e);
                n = p;
            }
            let mut c = self.cursors[cur as usize].clone();
            if evs.iter().rev().all(|&e| c.push(self.g, e)) && c.push(self.g, y) {
                // The general parser: sequences that reach one item set are
                // one configuration from here on (no events: no indentation).
                if let Some(k) = c.general_state() {
                    if let Some(&id) = self.general.get(&k) {
                        self.map.insert((s, y), id);
                        return Some(id);
                    }
                    self.general.insert(k, self.node.len() as u32);
                }
                self.cursors.push(c);
                (self.cursors.len() as u32 - 1, 0)
            } else {
                (DEAD, 0)
            }
        };
        let id = self.node.len() as u32;
        self.node.push((s, y));
        self.verdict.push(v);
        self.map.insert((s, y), id);
        (v.0 != DEAD).then_some(id)
    }
}

impl Sink for Verdicts<'_, '_> {
    fn extend(&mut self, mut s: u32, syms: &[Sym]) -> Option<u32> {
        for &y in syms {
            s = self.push(s, y)?;
        }
        Some(s)
    }
    fn record(&mut self, trie: &TokenTrie, node: u32, _cfgs: &[(u32, u32, u32)]) {
        for t in trie.tokens_at(node) {
            self.out[t.index() >> 5] |= 1 << (t.0 & 31);
        }
    }
    fn record_ids(&mut self, toks: &[u32], cfgs: &[(u32, u32, u32)]) {
        for &t in toks.iter().filter(|_| !cfgs.is_empty()) {
            self.out[t as usize >> 5] |= 1 << (t & 31);
        }
    }
    /// The general parser: sequences are merged by item set (few, and met
    /// again and again), and `extend` is cached.
    fn memo(&self) -> bool {
        self.width > 0
    }
}

/// OR into `out` the tokens allowed from configuration `(q, pending)` over
/// `parser` (EOS aside): exactly the store path's answer for it.
pub(crate) fn mask_into(
    walker: &mut Walker,
    store: &MaskStore,
    pv: &PreparedVocab,
    parser: &IncParser,
    q: QId,
    pending: &[Sym],
    out: &mut [u32],
) {
    let g = &store.grammar;
    let mut base = parser.cursor();
    if !base.push_all(g, pending) {
        return;
    }
    let cx = step_ctx(&store.lexer, g);
    let (l, x) = store.q_parts(q);
    let mut sink = Verdicts { g, map: HashMap::default(), node: vec![(0, 0)], verdict: vec![(0, 0)], cursors: vec![base], general: HashMap::default(), width: if g.earley.is_some() { g.alphabet_size() as usize } else { 0 }, dense: Vec::new(), out };
    if let Some(k) = sink.cursors[0].general_state() {
        sink.general.insert(k, 0);
    }
    let mut lw = |sig: &[u32]| pv.loop_walk(sig, |trie| loop_walk(trie, sig));
    if let Some(lw) = walker.walk_position(cx, pv.trie(), &mut lw, l, x, &mut sink) {
        for (o, &m) in sink.out.iter_mut().zip(&lw.inside) {
            *o |= m;
        }
    }
}
