//! The direct mask path (feature `compiler`): a mask computed with the parser
//! in the loop over the token trie, for a matcher state whose positions have
//! no store entries yet (a first visit over budget, see
//! [`super::build::Lazy`]).
//!
//! Glossary (paper → code):
//! - `mask_store[q][S]` with the check "the parser accepts `P ++ S`" → the
//!   same token walk as [`super::build`]'s (per byte [`walk::step`], the
//!   lexeme-loop cache), but every symbol sequence `S` a configuration
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

use super::build::{dedup_tail, lexeme_loop, loop_walk, step_ctx};
use super::walk::{self, StepCtx};
use super::{MaskStore, QId};
use crate::parser::alphabet::Sym;
use crate::parser::incremental::{IncCursor, IncParser, IncTables};
use crate::vocab::trie::TokenTrie;
use crate::vocab::PreparedVocab;
use std::collections::HashMap;

/// Scratch space of the direct walk, kept between masks.
#[derive(Clone, Default)]
pub(crate) struct DirectWalk {
    arena: Vec<(u32, u32, u32)>,
    frames: Vec<(usize, usize, usize)>,
    /// Trie nodes visited by the last walk (for stats).
    pub(crate) steps: u64,
}

/// The symbol sequences of one configuration's walk, interned as a trie
/// (id 0 = `()`), each with its parser verdict.
struct Seqs<'p> {
    map: HashMap<(u32, Sym), u32>,
    /// Per sequence: (parent, last symbol).
    node: Vec<(u32, Sym)>,
    /// Per sequence: its cursor (index into `cursors`) after every symbol but
    /// the trailing indentation events, and how many of those trail;
    /// `DEAD` when the parser rejects it.
    verdict: Vec<(u32, u32)>,
    cursors: Vec<IncCursor<'p>>,
}

const DEAD: u32 = u32::MAX;

impl<'p> Seqs<'p> {
    fn new(base: IncCursor<'p>) -> Self {
        Seqs { map: HashMap::new(), node: vec![(0, 0)], verdict: vec![(0, 0)], cursors: vec![base] }
    }

    /// The sequence `s ++ [y]`, or `None` if the parser rejects it.
    fn extend(&mut self, g: &IncTables, s: u32, y: Sym) -> Option<u32> {
        if let Some(&id) = self.map.get(&(s, y)) {
            return (self.verdict[id as usize].0 != DEAD).then_some(id);
        }
        let (cur, trailing) = self.verdict[s as usize];
        let v = if cur == DEAD {
            (DEAD, 0)
        } else if g.events.is_event(y) {
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
            let ok = evs.iter().rev().all(|&e| c.push(g, e)) && c.push(g, y);
            if ok {
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

    fn extend_all(&mut self, g: &IncTables, mut s: u32, syms: &[Sym]) -> Option<u32> {
        for &y in syms {
            s = self.extend(g, s, y)?;
        }
        Some(s)
    }
}

impl DirectWalk {
    /// OR into `out` the tokens allowed from configuration `(q, pending)`
    /// over `parser` (EOS aside): exactly the store path's answer for it.
    pub(crate) fn mask_into(&mut self, store: &MaskStore, pv: &PreparedVocab, parser: &IncParser, q: QId, pending: &[Sym], out: &mut [u32]) {
        let g = &store.grammar;
        let mut base = parser.cursor();
        if !base.push_all(g, pending) {
            return;
        }
        let cx = step_ctx(&store.lexer, g);
        let trie = pv.trie();
        let (l, x) = store.q_parts(q);
        let mut seqs = Seqs::new(base);
        if let Some((sig, order)) = lexeme_loop(cx, l, x, trie.max_depth()) {
            let lw = pv.loop_walk(&sig, |trie| loop_walk(trie, &sig));
            for (o, &m) in out.iter_mut().zip(&lw.inside) {
                *o |= m;
            }
            for &(f, ps) in &lw.frontier {
                self.arena.clear();
                let arena = &mut self.arena;
                walk::step(cx, order[ps as usize], x, trie.byte(f), &mut |l2, z, syms| {
                    if let Some(s2) = seqs.extend_all(g, 0, syms) {
                        arena.push((l2, z, s2));
                    }
                });
                dedup_tail(&mut self.arena, 0);
                if self.arena.is_empty() {
                    continue;
                }
                set_tokens(trie, f, out);
                self.walk_range(cx, g, trie, &mut seqs, f as usize + 1, trie.subtree_end(f) as usize, out);
            }
        } else {
            self.arena.clear();
            self.arena.push((l, x, 0));
            self.walk_range(cx, g, trie, &mut seqs, 1, trie.node_count(), out);
        }
    }

    /// The trie nodes `lo..hi` (the children subtrees of one node) from the
    /// configurations in `arena`, as [`super::build`]'s walk, with the
    /// parser's verdict on every new symbol.
    #[allow(clippy::too_many_arguments)]
    fn walk_range(&mut self, cx: StepCtx<'_>, g: &IncTables, trie: &TokenTrie, seqs: &mut Seqs<'_>, lo: usize, hi: usize, out: &mut [u32]) {
        self.frames.clear();
        self.frames.push((hi, 0, self.arena.len()));
        let mut i = lo;
        while i < hi {
            while i >= self.frames.last().unwrap().0 {
                let (_, lo, _) = self.frames.pop().unwrap();
                self.arena.truncate(lo);
            }
            let (_, plo, phi) = *self.frames.last().unwrap();
            let b = trie.byte(i as u32);
            let start = self.arena.len();
            self.steps += 1;
            for c in plo..phi {
                let (cl, cxg, cs) = self.arena[c];
                let arena = &mut self.arena;
                walk::step(cx, cl, cxg, b, &mut |l2, z, syms| {
                    let s2 = if syms.is_empty() { Some(cs) } else { seqs.extend_all(g, cs, syms) };
                    if let Some(s2) = s2 {
                        arena.push((l2, z, s2));
                    }
                });
            }
            dedup_tail(&mut self.arena, start);
            let end = trie.subtree_end(i as u32) as usize;
            if self.arena.len() == start {
                i = end;
                continue;
            }
            set_tokens(trie, i as u32, out);
            self.frames.push((end, start, self.arena.len()));
            i += 1;
        }
    }
}

#[inline]
fn set_tokens(trie: &TokenTrie, node: u32, out: &mut [u32]) {
    for t in trie.tokens_at(node) {
        out[t.index() >> 5] |= 1 << (t.0 & 31);
    }
}
