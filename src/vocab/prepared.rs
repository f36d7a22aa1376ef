//! A *prepared vocabulary*: everything about a tokenizer that every compile
//! for it can reuse (token bytes, EOS ids, the token trie). Built once per
//! tokenizer and shared (`Rc`) by the stores compiled for it, so a per-request
//! compile (a JSON Schema, a regex) pays only for its own grammar.

use super::{TokenTrie, Vocab};
use std::cell::RefCell;
use crate::cache::Bounded;
use std::rc::Rc;

/// The trie walk of a *lexeme loop* (see `store::build`): the tokens whose
/// bytes all stay inside the loop (as mask words: bit `id & 31` of word
/// `id >> 5`; the words past the highest such token are left out), and the
/// trie nodes where the walk leaves the loop, each with the start in `paths`
/// of the bytes above it (up to the next one's start).
#[derive(Debug, Default)]
pub struct LoopWalk {
    pub inside: Vec<u32>,
    pub frontier: Vec<(u32, u32)>,
    pub paths: Vec<u8>,
}

impl LoopWalk {
    /// The inside tokens, ascending.
    pub fn inside_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.inside.iter().enumerate().flat_map(|(w, &word)| {
            let mut b = word;
            std::iter::from_fn(move || {
                (b != 0).then(|| {
                    let t = w as u32 * 32 + b.trailing_zeros();
                    b &= b - 1;
                    t
                })
            })
        })
    }
}

/// Most words (signature + tokens + frontier) the loop cache keeps.
const LOOP_CACHE_WORDS: usize = 8 << 20;

/// A vocabulary with its token trie (see the module doc).
pub struct PreparedVocab {
    vocab: Rc<Vocab>,
    trie: TokenTrie,
    fingerprint: u64,
    /// Loop walks by loop signature (see [`PreparedVocab::loop_walk`]).
    loops: RefCell<Bounded<Vec<u32>, Rc<LoopWalk>>>,
}

impl PreparedVocab {
    pub fn new(vocab: Vocab) -> Self {
        let trie = TokenTrie::new(&vocab);
        // Every compile walks JSON-string-like text through the slice: built
        // here, with the trie, not in the first mask of the first compile
        // (15 ms natively for Llama-3, in the middle of a generation).
        trie.text_slice();
        let fingerprint = vocab.fingerprint();
        PreparedVocab { vocab: Rc::new(vocab), trie, fingerprint, loops: RefCell::new(Bounded::new(LOOP_CACHE_WORDS)) }
    }
    /// The loop walk for signature `sig`, computed by `make` on a miss and
    /// kept for later compiles for this vocabulary (it depends only on the
    /// signature and the trie).
    pub fn loop_walk(&self, sig: &[u32], make: impl FnOnce(&TokenTrie) -> LoopWalk) -> Rc<LoopWalk> {
        if let Some(w) = self.loops.borrow().get(sig) {
            return w;
        }
        let w = Rc::new(make(&self.trie));
        let n = sig.len() + w.inside.len() + 2 * w.frontier.len() + w.paths.len() / 4 + 16;
        self.loops.borrow_mut().insert(sig.to_vec(), w.clone(), n);
        w
    }
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    /// The vocabulary, shared with the stores compiled for it.
    pub fn vocab_rc(&self) -> &Rc<Vocab> {
        &self.vocab
    }
    pub fn trie(&self) -> &TokenTrie {
        &self.trie
    }
    /// [`Vocab::fingerprint`], computed once.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

impl std::fmt::Debug for PreparedVocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedVocab").field("vocab", &self.vocab).field("trie_nodes", &self.trie.node_count()).finish()
    }
}
