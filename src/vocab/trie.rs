//! A flat, preorder token trie (in the style of llguidance's `toktrie`).
//!
//! The trie holds every non-special token with non-empty bytes. Nodes live in
//! one `Vec` in depth-first preorder, children sorted by byte; node 0 is the
//! root (no byte, no token). Each node stores its edge byte, the first token id
//! whose bytes end at this node (or [`NONE`]), and `subtree_end`: the index one
//! past its last descendant. Hence
//! - the subtree of `n` is exactly the index range `n..subtree_end(n)`;
//! - the first child of `n` (if any) is `n + 1`; the next sibling of a child `c`
//!   is `subtree_end(c)`;
//! - a walker that rejects byte `b` at node `n` skips the whole subtree by
//!   jumping to `subtree_end(n)`.
//!
//! All ids with the same bytes (e.g. Llama-2's `▁` and `<0x20>`) are listed by
//! [`TokenTrie::tokens_at`], ascending.
//!
//! # Walk pattern
//!
//! Iterative DFS over the flat array with an explicit stack of
//! `(subtree_end, state)`; the stack depth is the depth in the trie. A node is
//! visited only if the automaton accepts its byte; otherwise its whole subtree
//! is skipped. [`TokenTrie::walk`] packages this loop; written out:
//!
//! ```
//! use grammask::ids::TokenId;
//! use grammask::vocab::{TokenTrie, Vocab};
//!
//! let vocab = Vocab::from_tokens(
//!     [(&b"1"[..], false), (b"12", false), (b"1a", false), (b"a", false), (b"123", false)],
//!     &[],
//! ).unwrap();
//! let trie = TokenTrie::new(&vocab);
//! // Allowed tokens: all-digit tokens of at most 2 bytes. The state is the depth.
//! let mut allowed = Vec::new();
//! let mut stack: Vec<(u32, usize)> = vec![(trie.node_count() as u32, 0)];
//! let mut n = 1; // first node after the root
//! while (n as usize) < trie.node_count() {
//!     while n >= stack.last().unwrap().0 {
//!         stack.pop(); // left a finished subtree
//!     }
//!     let depth = stack.last().unwrap().1;
//!     if trie.byte(n).is_ascii_digit() && depth < 2 {
//!         allowed.extend_from_slice(trie.tokens_at(n));
//!         stack.push((trie.subtree_end(n), depth + 1));
//!         n += 1; // descend
//!     } else {
//!         n = trie.subtree_end(n); // skip the whole subtree
//!     }
//! }
//! allowed.sort();
//! assert_eq!(allowed, [TokenId(0), TokenId(1)]);
//! ```

use super::Vocab;
use crate::ids::TokenId;

/// "No token ends here" marker in [`TokenTrie::token`].
pub const NONE: u32 = u32::MAX;

/// One trie node (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    /// Subtree is `index..subtree_end`.
    subtree_end: u32,
    /// Smallest token id whose bytes end here, or [`NONE`].
    token: u32,
    /// Edge byte from the parent (0 for the root).
    byte: u8,
}

/// Flat preorder trie over the non-special, non-empty tokens of a [`Vocab`].
#[derive(Clone, Debug)]
pub struct TokenTrie {
    nodes: Vec<Node>,
    /// `ids[tok_start[n]..tok_start[n + 1]]` are the tokens ending at node `n`.
    tok_start: Vec<u32>,
    ids: Vec<TokenId>,
    max_depth: usize,
    cut_depth: usize,
    /// The text slice, built on first use (see [`TokenTrie::text_slice`]).
    text: std::sync::OnceLock<Box<TextSlice>>,
}

/// The *text slice* of a trie (the "slicer" of llguidance): its tokens whose
/// bytes are whole UTF-8 characters, none of them a control character
/// (below U+0020), `"` or `\` — the bulk of a vocabulary (121,825 of
/// Llama-3's 128,000 tokens). A lexeme loop that every such character keeps
/// inside, from every state such characters reach (a string body, a key
/// still being spelled), has them all inside without walking them; only
/// the other tokens are walked, in [`TextSlice::rest`].
#[derive(Clone, Debug)]
pub struct TextSlice {
    /// The slice's tokens as mask words (bit `id & 31` of word `id >> 5`).
    pub inside: Vec<u32>,
    /// The trie of the tokens outside the slice.
    pub rest: TokenTrie,
    /// Per node of `rest`, the node of the whole trie with the same bytes.
    pub node: Vec<u32>,
    /// The slice's tokens by first byte.
    pub by_first: Vec<Vec<u32>>,
    /// The slice's tokens by their number of characters (index 0 unused).
    pub by_chars: Vec<Vec<u32>>,
}

impl TextSlice {
    /// The slice's tokens of at most `k` characters, as mask words.
    pub fn up_to(&self, k: usize) -> Vec<u32> {
        let mut m = vec![0u32; self.inside.len()];
        for t in self.by_chars.iter().take(k + 1).flatten() {
            m[*t as usize / 32] |= 1 << (t % 32);
        }
        m
    }
}

/// The text slice's characters as a byte automaton: the state after `b` in
/// state `u` (0: at a character boundary; 1–3: that many continuation bytes
/// due; 4–7: the restricted second byte of E0, ED, F0, F4 leads), `None` if
/// `b` leaves the slice.
pub fn text_step(u: u8, b: u8) -> Option<u8> {
    let cont = (0x80..=0xBF).contains(&b);
    Some(match (u, b) {
        (0, 0x20..=0x7F) if b != b'"' && b != b'\\' => 0,
        (0, 0xC2..=0xDF) => 1,
        (0, 0xE0) => 4,
        (0, 0xE1..=0xEC | 0xEE..=0xEF) => 2,
        (0, 0xED) => 5,
        (0, 0xF0) => 6,
        (0, 0xF1..=0xF3) => 3,
        (0, 0xF4) => 7,
        (1..=3, _) if cont => u - 1,
        (4, 0xA0..=0xBF) | (5, 0x80..=0x9F) => 1,
        (6, 0x90..=0xBF) | (7, 0x80..=0x8F) => 2,
        _ => return None,
    })
}

impl TokenTrie {
    /// Builds the trie: sorts the eligible tokens by bytes (which yields DFS
    /// preorder directly) and emits nodes along the sorted sequence.
    pub fn new(vocab: &Vocab) -> TokenTrie {
        let mut toks: Vec<TokenId> = (0..vocab.len())
            .map(TokenId::new)
            .filter(|&t| !vocab.is_special(t) && !vocab.token_bytes(t).is_empty())
            .collect();
        // Equal byte strings keep ascending id order (as a stable sort would;
        // the unstable sort is smaller in wasm).
        toks.sort_unstable_by(|&a, &b| vocab.token_bytes(a).cmp(vocab.token_bytes(b)).then(a.cmp(&b)));
        Self::from_sorted(toks.len(), &mut toks.iter().map(|&t| (t, vocab.token_bytes(t))))
    }

    /// The trie of `toks`: non-empty byte strings sorted by bytes, then id.
    fn from_sorted<'a>(n_toks: usize, toks: &mut dyn Iterator<Item = (TokenId, &'a [u8])>) -> TokenTrie {
        let mut nodes = vec![Node { subtree_end: 0, token: NONE, byte: 0 }];
        let mut tok_start = vec![0u32];
        let mut ids = Vec::with_capacity(n_toks);
        // path[d] = node index at depth d + 1 along the current token's bytes.
        let mut path: Vec<u32> = Vec::new();
        let mut prev: &[u8] = &[];
        let mut max_depth = 0;
        let mut at_depth: Vec<usize> = vec![0]; // nodes per depth
        for (t, b) in toks {
            let common = b.iter().zip(prev).take_while(|(x, y)| x == y).count();
            // Close the subtrees we leave.
            for &n in &path[common..] {
                nodes[n as usize].subtree_end = nodes.len() as u32;
            }
            path.truncate(common);
            for &byte in &b[common..] {
                path.push(nodes.len() as u32);
                nodes.push(Node { subtree_end: 0, token: NONE, byte });
                if at_depth.len() <= path.len() {
                    at_depth.push(0);
                }
                at_depth[path.len()] += 1;
                tok_start.push(ids.len() as u32);
            }
            let last = *path.last().expect("token bytes are non-empty") as usize;
            if nodes[last].token == NONE {
                nodes[last].token = t.0;
            }
            ids.push(t);
            max_depth = max_depth.max(b.len());
            prev = b;
        }
        let end = nodes.len() as u32;
        for &n in &path {
            nodes[n as usize].subtree_end = end;
        }
        nodes[0].subtree_end = end;
        tok_start.push(ids.len() as u32);
        // The cut: the least depth (at least 8) below which at most
        // max(1024, 1/128 of the nodes) lie.
        let few = (nodes.len() / 128).max(1024);
        let mut deeper = nodes.len() - 1;
        let mut cut_depth = max_depth;
        for (d, &n) in at_depth.iter().enumerate().skip(1) {
            deeper -= n;
            if d >= 8 && deeper <= few {
                cut_depth = d;
                break;
            }
        }
        TokenTrie { nodes, tok_start, ids, max_depth, cut_depth, text: Default::default() }
    }

    /// The root node (index 0).
    #[inline]
    pub fn root(&self) -> u32 {
        0
    }

    /// Number of nodes, root included.
    #[inline]
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of tokens in the trie.
    #[inline]
    pub fn token_count(&self) -> usize {
        self.ids.len()
    }

    /// Length of the longest token (= depth of the deepest node).
    #[inline]
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// A depth below which few nodes lie (at most 1/128 of them, or 1,024;
    /// at least 8): lexeme-loop walks are cached up to it and the deeper
    /// nodes are walked per position (see `store::build::lexeme_loop`), so
    /// that a counted body looks the same at every count more than this
    /// many bytes from its bound. The longest tokens are long (81 bytes in
    /// SmolLM2, 128 in Llama-3) but few.
    #[inline]
    pub fn cut_depth(&self) -> usize {
        self.cut_depth
    }

    /// The trie's [`TextSlice`], built on first use.
    pub fn text_slice(&self) -> &TextSlice {
        self.text.get_or_init(|| {
            let words = self.ids.iter().map(|t| t.0 as usize / 32 + 1).max().unwrap_or(0);
            let mut inside = vec![0u32; words];
            let mut by_first = vec![Vec::new(); 256];
            let mut by_chars: Vec<Vec<u32>> = Vec::new();
            let mut rest: Vec<(TokenId, Vec<u8>)> = Vec::new();
            // (subtree end, text state or 8 = out, characters) along the current path.
            let mut path: Vec<u8> = Vec::new();
            let mut stack: Vec<(u32, u8, usize)> = vec![(self.nodes.len() as u32, 0, 0)];
            for n in 1..self.nodes.len() as u32 {
                while n >= stack.last().expect("the root's entry stays").0 {
                    stack.pop();
                    path.pop();
                }
                let b = self.byte(n);
                let (_, u, c) = *stack.last().expect("the root's entry stays");
                let u2 = if u == 8 { 8 } else { text_step(u, b).unwrap_or(8) };
                let c2 = c + usize::from(u2 == 0);
                path.push(b);
                stack.push((self.subtree_end(n), u2, c2));
                for &t in self.tokens_at(n) {
                    if u2 == 0 {
                        inside[t.0 as usize / 32] |= 1 << (t.0 % 32);
                        by_first[path[0] as usize].push(t.0);
                        if by_chars.len() <= c2 {
                            by_chars.resize(c2 + 1, Vec::new());
                        }
                        by_chars[c2].push(t.0);
                    } else {
                        rest.push((t, path.clone()));
                    }
                }
            }
            let rest = TokenTrie::from_sorted(rest.len(), &mut rest.iter().map(|(t, b)| (*t, &b[..])));
            let mut node = vec![0u32; rest.node_count()];
            rest.walk(&mut Vec::new(), 0u32, |&m, b| self.child(m, b), |n, &m| node[n as usize] = m);
            Box::new(TextSlice { inside, rest, node, by_first, by_chars })
        })
    }

    /// Edge byte of `node` (0 for the root). Panics if `node` is out of range
    /// (node indices come from the trie itself, never from user input).
    #[inline]
    pub fn byte(&self, node: u32) -> u8 {
        self.nodes[node as usize].byte
    }

    /// Smallest token id ending at `node`, or [`NONE`].
    #[inline]
    pub fn token(&self, node: u32) -> u32 {
        self.nodes[node as usize].token
    }

    /// One past the last node of `node`'s subtree.
    #[inline]
    pub fn subtree_end(&self, node: u32) -> u32 {
        self.nodes[node as usize].subtree_end
    }

    /// All token ids ending at `node`, ascending.
    #[inline]
    pub fn tokens_at(&self, node: u32) -> &[TokenId] {
        let n = node as usize;
        &self.ids[self.tok_start[n] as usize..self.tok_start[n + 1] as usize]
    }

    /// The children of `node`, in increasing byte order.
    #[inline]
    pub fn children(&self, node: u32) -> Children<'_> {
        Children { trie: self, next: node + 1, end: self.subtree_end(node) }
    }

    /// The child of `node` along `byte`, if any.
    pub fn child(&self, node: u32, byte: u8) -> Option<u32> {
        self.children(node).find(|&c| self.byte(c) == byte)
    }

    /// The node reached from the root along `bytes`, if any.
    pub fn lookup(&self, bytes: &[u8]) -> Option<u32> {
        bytes.iter().try_fold(self.root(), |n, &b| self.child(n, b))
    }

    /// Runs the DFS-with-skip walk of the module doc. `step(state, byte)`
    /// returns the state after `byte`, or `None` to skip the subtree;
    /// `visit(node, state)` is called for each accepted node with its new
    /// state (use [`TokenTrie::tokens_at`] to get its tokens). `stack` is
    /// scratch space, reused across calls to avoid allocation.
    pub fn walk<S: Clone>(
        &self,
        stack: &mut Vec<(u32, S)>,
        init: S,
        mut step: impl FnMut(&S, u8) -> Option<S>,
        mut visit: impl FnMut(u32, &S),
    ) {
        stack.clear();
        let end = self.nodes.len() as u32;
        stack.push((end, init));
        let mut n = 1u32;
        while n < end {
            while stack.last().is_some_and(|(e, _)| n >= *e) {
                stack.pop();
            }
            let Some((_, st)) = stack.last() else { return };
            let node = self.nodes[n as usize];
            match step(st, node.byte) {
                Some(next) => {
                    visit(n, &next);
                    stack.push((node.subtree_end, next));
                    n += 1;
                }
                None => n = node.subtree_end,
            }
        }
    }
}

/// Iterator over the children of a node (see [`TokenTrie::children`]).
pub struct Children<'a> {
    trie: &'a TokenTrie,
    next: u32,
    end: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.next >= self.end {
            return None;
        }
        let c = self.next;
        self.next = self.trie.subtree_end(c);
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text slice and the rest trie split the tokens, the slice holds
    /// exactly the tokens of whole text characters, and each rest node maps
    /// to the whole trie's node with the same bytes.
    #[test]
    fn text_slice_splits_the_tokens() {
        let texts: [&[u8]; 12] = [
            b"ab",
            b"a\"",
            b"\\n",
            b" caf\xc3\xa9",
            b"\xc3",
            b"\xa9x",
            b"\n",
            b"\x7f",
            b"\xed\xa0\x80",
            b"\xf0\x9f\x98\x80",
            b"\xe2\x82",
            b"ab\\",
        ];
        let vocab = Vocab::from_tokens(texts.iter().map(|t| (*t, false)), &[]).unwrap();
        let trie = TokenTrie::new(&vocab);
        let sl = trie.text_slice();
        for (i, t) in texts.iter().enumerate() {
            let in_slice = sl.inside.get(i / 32).is_some_and(|w| w >> (i % 32) & 1 == 1);
            let text = std::str::from_utf8(t).is_ok_and(|s| s.chars().all(|c| c >= ' ' && c != '"' && c != '\\'));
            assert_eq!(in_slice, text, "{t:?}");
            let chars = std::str::from_utf8(t).map_or(0, |s| s.chars().count());
            for k in 0..6 {
                let up = sl.up_to(k);
                assert_eq!(up.get(i / 32).is_some_and(|w| w >> (i % 32) & 1 == 1), text && chars <= k, "{t:?} up to {k}");
            }
            let r = sl.rest.lookup(t);
            assert_eq!(r.is_some_and(|n| sl.rest.tokens_at(n).contains(&TokenId(i as u32))), !text, "{t:?}");
            if let Some(n) = r.filter(|_| !text) {
                assert_eq!(Some(sl.node[n as usize]), trie.lookup(t));
            }
        }
        assert_eq!(
            sl.rest.token_count() + sl.inside.iter().map(|w| w.count_ones() as usize).sum::<usize>(),
            trie.token_count()
        );
    }
}
