//! A *prepared vocabulary*: everything about a tokenizer that every compile
//! for it can reuse (token bytes, EOS ids, the token trie). Built once per
//! tokenizer and shared (`Rc`) by the stores compiled for it, so a per-request
//! compile (a JSON Schema, a regex) pays only for its own grammar.

use super::{TokenTrie, Vocab};
use std::rc::Rc;

/// A vocabulary with its token trie (see the module doc).
pub struct PreparedVocab {
    vocab: Rc<Vocab>,
    trie: TokenTrie,
    fingerprint: u64,
}

impl PreparedVocab {
    pub fn new(vocab: Vocab) -> Self {
        let trie = TokenTrie::new(&vocab);
        let fingerprint = vocab.fingerprint();
        PreparedVocab { vocab: Rc::new(vocab), trie, fingerprint }
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
