//! The token vocabulary of an LLM tokenizer, as grammask sees it: for each
//! token id, the exact bytes the token contributes to the generated text, a
//! "special" flag and the set of end-of-sequence (EOS) ids.
//!
//! Semantics:
//! - [`Vocab::len`] is `max token id + 1` over the model vocabulary *and* the
//!   added tokens. Ids with no token at all (holes, e.g. GPT-4o's unused ids)
//!   have empty bytes and are not special.
//! - [`Vocab::token_bytes`] is what the tokenizer's decoder would emit for the
//!   token in the middle of a sequence: byte-level BPE tokens are mapped through
//!   the inverse GPT-2 byte table, SentencePiece tokens get `▁` → `' '` and
//!   `<0xNN>` → byte `NN` (no start-of-sequence space stripping).
//! - Special tokens (control tokens such as `<|eot_id|>`, `</s>`) keep their
//!   content as bytes but are flagged: they never appear in grammar masks, EOS
//!   excepted (the matcher allows EOS when the grammar accepts).
//! - [`Vocab::fingerprint`] identifies the vocabulary (bytes, flags, EOS ids) so
//!   a mask store can refuse a tokenizer it was not built for.
//!
//! Storage is flat (one byte buffer plus `n + 1` offsets, a packed bitset for
//! the special flags) so that a blob loader can hand the parts to
//! [`Vocab::from_parts`] without per-token allocations. Loading from
//! `tokenizer.json` lives in [`load`] (feature `tokenizer-json`); the token trie used
//! for mask computation lives in [`trie`].

use crate::err;
use crate::ids::TokenId;
use crate::Result;

#[cfg(feature = "tokenizer-json")]
pub mod load;
pub mod pack;
pub mod prepared;
pub mod trie;

#[cfg(feature = "tokenizer-json")]
pub use load::{load_tokenizer_file, vocab_from_json, vocab_from_json_with, LoadOptions};
pub use prepared::PreparedVocab;
pub use trie::TokenTrie;

/// A tokenizer vocabulary: token bytes, special flags and EOS ids.
#[derive(Clone)]
pub struct Vocab {
    /// Number of token ids.
    n: usize,
    /// Token bytes and offsets; for a vocabulary loaded from a blob, decoded
    /// from `packed` on first use (the first commit), not at load.
    flat: std::sync::OnceLock<Flat>,
    /// The packed form it was loaded from (validated at load; written back
    /// as it is by `to_bytes`).
    packed: Option<pack::PackedTokens>,
    /// Special flags, bit `t % 8` of byte `t / 8`; length `ceil(n / 8)`, padding bits zero.
    special: Vec<u8>,
    /// EOS ids, sorted and deduplicated, all `< n`.
    eos: Vec<TokenId>,
}

#[derive(Clone, PartialEq, Eq)]
struct Flat {
    /// Concatenated token bytes, in id order.
    bytes: Vec<u8>,
    /// `offsets[t]..offsets[t + 1]` is token `t`'s slice of `bytes`; length `n + 1`.
    offsets: Vec<u32>,
}

impl PartialEq for Vocab {
    fn eq(&self, o: &Self) -> bool {
        self.n == o.n && self.special == o.special && self.eos == o.eos && self.flat() == o.flat()
    }
}
impl Eq for Vocab {}

impl std::fmt::Debug for Vocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocab")
            .field("len", &self.len())
            .field("special", &self.special_count())
            .field("eos", &self.eos)
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint()))
            .finish()
    }
}

impl Vocab {
    /// Builds a vocabulary from its flat parts (as stored in a blob). Validates
    /// everything and never panics: `offsets` must start at 0, be non-decreasing
    /// and end at `bytes.len()`; `special` must hold `ceil(n / 8)` bytes with
    /// zero padding bits; EOS ids must be `< n` (they are sorted and deduplicated).
    pub fn from_parts(
        bytes: Vec<u8>,
        offsets: Vec<u32>,
        special: Vec<u8>,
        eos: Vec<TokenId>,
    ) -> Result<Vocab> {
        let Some(n) = offsets.len().checked_sub(1) else {
            return Err(err!(BlobCorrupt, "vocab: offsets array is empty (need n + 1 entries)"));
        };
        if n >= u32::MAX as usize {
            return Err(err!(Limit, "vocab: {n} tokens is too many (at most {})", u32::MAX - 1));
        }
        if offsets[0] != 0 {
            return Err(err!(BlobCorrupt, "vocab: offsets[0] = {} (must be 0)", offsets[0]));
        }
        if let Some(t) = offsets.windows(2).position(|w| w[0] > w[1]) {
            return Err(err!(
                BlobCorrupt,
                "vocab: offsets decrease at token {t} ({} > {})",
                offsets[t],
                offsets[t + 1]
            ));
        }
        if offsets[n] as usize != bytes.len() {
            return Err(err!(
                BlobCorrupt,
                "vocab: last offset {} does not match byte length {}",
                offsets[n],
                bytes.len()
            ));
        }
        let (special, eos) = check_flags(n, special, eos)?;
        Ok(Vocab { n, flat: Flat { bytes, offsets }.into(), packed: None, special, eos })
    }

    /// A vocabulary from its packed token bytes (as stored in a blob, see
    /// [`pack`]): the stream is validated now (`max_total`: bound on the
    /// unpacked bytes) and decoded on first use.
    pub fn from_packed(packed: pack::PackedTokens, special: Vec<u8>, eos: Vec<TokenId>, max_total: usize) -> Result<Vocab> {
        pack::check(&packed, max_total)?;
        let n = packed.n as usize;
        let (special, eos) = check_flags(n, special, eos)?;
        Ok(Vocab { n, flat: std::sync::OnceLock::new(), packed: Some(packed), special, eos })
    }

    fn flat(&self) -> &Flat {
        self.flat.get_or_init(|| {
            let p = self.packed.as_ref().expect("a vocabulary without bytes has its packed form");
            let (bytes, offsets) = pack::unpack(p, usize::MAX).expect("the packed form was validated at load");
            Flat { bytes, offsets }
        })
    }

    /// The packed token bytes (for the blob).
    pub fn packed(&self) -> std::borrow::Cow<'_, pack::PackedTokens> {
        match &self.packed {
            Some(p) => std::borrow::Cow::Borrowed(p),
            None => std::borrow::Cow::Owned(pack::pack(self.bytes(), self.offsets())),
        }
    }

    /// Builds a vocabulary from `(bytes, is_special)` per token id, in id order.
    /// Convenient for synthetic vocabularies and for loaders.
    pub fn from_tokens<I, B>(tokens: I, eos: &[TokenId]) -> Result<Vocab>
    where
        I: IntoIterator<Item = (B, bool)>,
        B: AsRef<[u8]>,
    {
        let mut bytes = Vec::new();
        let mut offsets = vec![0u32];
        let mut special = Vec::new();
        for (i, (b, sp)) in tokens.into_iter().enumerate() {
            bytes.extend_from_slice(b.as_ref());
            let end = u32::try_from(bytes.len())
                .map_err(|_| err!(Limit, "vocab: token bytes exceed 4 GiB in total"))?;
            offsets.push(end);
            if i % 8 == 0 {
                special.push(0u8);
            }
            if sp {
                special[i / 8] |= 1 << (i % 8);
            }
        }
        Vocab::from_parts(bytes, offsets, special, eos.to_vec())
    }

    /// Vocabulary size: max token id + 1 (model vocabulary and added tokens).
    #[inline]
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when the vocabulary has no token ids at all.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The exact bytes token `t` contributes to the text; empty for ids with no
    /// token and for ids out of range.
    #[inline]
    pub fn token_bytes(&self, t: TokenId) -> &[u8] {
        let i = t.index();
        let f = self.flat();
        match (f.offsets.get(i), f.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &f.bytes[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Whether `t` is a special (control) token. False for ids out of range.
    #[inline]
    pub fn is_special(&self, t: TokenId) -> bool {
        let i = t.index();
        i < self.len() && self.special[i / 8] & (1 << (i % 8)) != 0
    }

    /// Whether `t` is one of the EOS ids.
    #[inline]
    pub fn is_eos(&self, t: TokenId) -> bool {
        self.eos.binary_search(&t).is_ok()
    }

    /// EOS ids, sorted, deduplicated.
    #[inline]
    pub fn eos_ids(&self) -> &[TokenId] {
        &self.eos
    }

    #[cfg(feature = "compiler")]
    /// The token a grammar names (see `grammar::TerminalPattern::Special`):
    /// `<[id]>` by id, else the token whose bytes are exactly `name` (a
    /// special one first). The error says why none is.
    pub fn named_token(&self, name: &str) -> std::result::Result<TokenId, String> {
        if let Some(id) = name.strip_prefix("<[").and_then(|n| n.strip_suffix("]>")).and_then(|n| n.parse::<u32>().ok()) {
            return if (id as usize) < self.n { Ok(TokenId(id)) } else { Err(format!("token id {id} is out of range ({} tokens)", self.n)) };
        }
        let f = self.flat();
        let hits: Vec<TokenId> = (0..self.n as u32)
            .map(TokenId)
            .filter(|&t| f.bytes.get(f.offsets[t.index()] as usize..f.offsets[t.index() + 1] as usize) == Some(name.as_bytes()))
            .collect();
        let special: Vec<TokenId> = hits.iter().copied().filter(|&t| self.is_special(t)).collect();
        match (special.as_slice(), hits.as_slice()) {
            ([t], _) | ([], [t]) => Ok(*t),
            ([], []) => Err(format!("no token of the tokenizer is exactly {name} (write \"{name}\" to match the text)")),
            _ => Err(format!("several tokens are exactly {name}; name one by id: <[{}]>, <[{}]>", hits[0].0, hits[1].0)),
        }
    }

    /// Number of special tokens.
    pub fn special_count(&self) -> usize {
        self.special.iter().map(|b| b.count_ones() as usize).sum()
    }

    /// Length in bytes of the longest token.
    pub fn max_token_len(&self) -> usize {
        self.offsets().windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0)
    }

    /// Flat parts, for serialization: concatenated token bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.flat().bytes
    }
    /// Flat parts: the `n + 1` offsets into [`Vocab::bytes`].
    pub fn offsets(&self) -> &[u32] {
        &self.flat().offsets
    }
    /// Flat parts: the packed special bitset (bit `t % 8` of byte `t / 8`).
    pub fn special_bits(&self) -> &[u8] {
        &self.special
    }

    /// Stable 64-bit FNV-1a hash of the token count, every token's length,
    /// bytes and special flag in id order, then the EOS ids. Independent of
    /// platform and of how the vocabulary was built.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv64::new();
        h.write(&(self.len() as u64).to_le_bytes());
        for t in 0..self.len() {
            let id = TokenId::new(t);
            let b = self.token_bytes(id);
            h.write(&(b.len() as u32).to_le_bytes());
            h.write(b);
            h.write(&[self.is_special(id) as u8]);
        }
        h.write(&(self.eos.len() as u32).to_le_bytes());
        for e in &self.eos {
            h.write(&e.0.to_le_bytes());
        }
        h.finish()
    }
}

/// Check the special bitset and EOS ids for `n` tokens; EOS ids come back
/// sorted and deduplicated.
fn check_flags(n: usize, special: Vec<u8>, mut eos: Vec<TokenId>) -> Result<(Vec<u8>, Vec<TokenId>)> {
    if special.len() != n.div_ceil(8) {
        return Err(err!(
            BlobCorrupt,
            "vocab: special bitset has {} bytes, expected {} for {n} tokens",
            special.len(),
            n.div_ceil(8)
        ));
    }
    if n % 8 != 0 && special[n / 8] >> (n % 8) != 0 {
        return Err(err!(BlobCorrupt, "vocab: special bitset has padding bits set"));
    }
    eos.sort_unstable();
    eos.dedup();
    if let Some(bad) = eos.iter().find(|e| e.index() >= n) {
        return Err(err!(InvalidToken, "vocab: EOS id {} is out of range (vocabulary has {n} tokens)", bad.0));
    }
    Ok((special, eos))
}

/// FNV-1a, 64 bit.
struct Fnv64(u64);

impl Fnv64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    fn new() -> Self {
        Fnv64(Self::OFFSET)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(Self::PRIME);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn fnv_reference_values() {
        // Published FNV-1a 64 test vectors.
        let h = |s: &[u8]| {
            let mut f = Fnv64::new();
            f.write(s);
            f.finish()
        };
        assert_eq!(h(b""), 0xcbf29ce484222325);
        assert_eq!(h(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(h(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn from_parts_rejects_bad_parts() {
        let ok = |b: &[u8], o: &[u32], s: &[u8], e: &[u32]| {
            Vocab::from_parts(b.to_vec(), o.to_vec(), s.to_vec(), e.iter().map(|&x| TokenId(x)).collect())
        };
        assert!(ok(b"ab", &[0, 1, 2], &[0b10], &[1]).is_ok());
        assert_eq!(ok(b"ab", &[], &[], &[]).unwrap_err().kind(), ErrorKind::BlobCorrupt);
        assert_eq!(ok(b"ab", &[1, 1, 2], &[0], &[]).unwrap_err().kind(), ErrorKind::BlobCorrupt);
        assert_eq!(ok(b"ab", &[0, 2, 1], &[0], &[]).unwrap_err().kind(), ErrorKind::BlobCorrupt);
        assert_eq!(ok(b"ab", &[0, 1, 3], &[0], &[]).unwrap_err().kind(), ErrorKind::BlobCorrupt);
        assert_eq!(ok(b"ab", &[0, 1, 2], &[], &[]).unwrap_err().kind(), ErrorKind::BlobCorrupt);
        assert_eq!(ok(b"ab", &[0, 1, 2], &[0b100], &[]).unwrap_err().kind(), ErrorKind::BlobCorrupt);
        assert_eq!(ok(b"ab", &[0, 1, 2], &[0], &[2]).unwrap_err().kind(), ErrorKind::InvalidToken);
    }

    #[test]
    fn accessors_and_out_of_range() {
        let v = Vocab::from_tokens([(&b"a"[..], false), (b"", false), (b"</s>", true)], &[TokenId(2), TokenId(2)])
            .unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v.token_bytes(TokenId(0)), b"a");
        assert_eq!(v.token_bytes(TokenId(1)), b"");
        assert_eq!(v.token_bytes(TokenId(2)), b"</s>");
        assert_eq!(v.token_bytes(TokenId(3)), b"");
        assert_eq!(v.token_bytes(TokenId(u32::MAX)), b"");
        assert!(v.is_special(TokenId(2)) && !v.is_special(TokenId(0)) && !v.is_special(TokenId(99)));
        assert_eq!(v.eos_ids(), &[TokenId(2)]);
        assert!(v.is_eos(TokenId(2)) && !v.is_eos(TokenId(0)));
        assert_eq!(v.special_count(), 1);
        assert_eq!(v.max_token_len(), 4);
        let w = Vocab::from_parts(v.bytes().to_vec(), v.offsets().to_vec(), v.special_bits().to_vec(), v.eos_ids().to_vec())
            .unwrap();
        assert_eq!(v, w);
        assert_eq!(v.fingerprint(), w.fingerprint());
    }
}
