//! Compact token sets, and unions into a mask.
//!
//! A mask is `ceil(vocab/32)` u32 words; token `id` is bit `id & 31` of word
//! `id >> 5` (the layout of the JS `Uint32Array` and of `bitvec`'s
//! `BitSlice<u32, Lsb0>`).
//!
//! Each set is stored in whichever of three forms is smallest:
//! - **list**: sorted token ids (few tokens);
//! - **ranges**: sorted `[start, end)` pairs (runs of consecutive ids);
//! - **dense**: a full bitset of `words` u32 (many tokens).
//!
//! Identical sets are stored once ([`SetsBuilder`] deduplicates).

use bitvec::prelude::*;

pub const KIND_LIST: u32 = 0;
pub const KIND_RANGES: u32 = 1;
pub const KIND_DENSE: u32 = 2;

/// All token sets of a store, in one flat pool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenSets {
    /// Mask length in words.
    pub words: u32,
    /// Per set: (kind, offset into `data`, length in u32 of its payload).
    pub index: Vec<[u32; 3]>,
    pub data: Vec<u32>,
}

impl TokenSets {
    pub fn len(&self) -> usize {
        self.index.len()
    }
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// OR set `i` into `mask` (`mask.len() >= words`).
    #[inline]
    pub fn or_into(&self, i: u32, mask: &mut [u32]) {
        let [kind, off, len] = self.index[i as usize];
        let d = &self.data[off as usize..(off + len) as usize];
        match kind {
            KIND_LIST => {
                for &t in d {
                    mask[(t >> 5) as usize] |= 1 << (t & 31);
                }
            }
            KIND_RANGES => {
                let bits = mask.view_bits_mut::<Lsb0>();
                for r in d.chunks_exact(2) {
                    bits[r[0] as usize..r[1] as usize].fill(true);
                }
            }
            _ => {
                for (m, w) in mask.iter_mut().zip(d) {
                    *m |= *w;
                }
            }
        }
    }

    /// Number of tokens in set `i`.
    pub fn count(&self, i: u32) -> u32 {
        let [kind, off, len] = self.index[i as usize];
        let d = &self.data[off as usize..(off + len) as usize];
        match kind {
            KIND_LIST => len,
            KIND_RANGES => d.chunks_exact(2).map(|r| r[1] - r[0]).sum(),
            _ => d.iter().map(|w| w.count_ones()).sum(),
        }
    }

    /// Validate structure against `vocab_len` (for the blob loader).
    pub fn validate(&self, vocab_len: u32) -> Result<(), String> {
        if self.words != vocab_len.div_ceil(32) {
            return Err(format!("token sets have {} mask words, vocabulary needs {}", self.words, vocab_len.div_ceil(32)));
        }
        for (i, &[kind, off, len]) in self.index.iter().enumerate() {
            let end = off as u64 + len as u64;
            if end > self.data.len() as u64 {
                return Err(format!("token set {i} points outside the pool"));
            }
            let d = &self.data[off as usize..end as usize];
            match kind {
                KIND_LIST => {
                    if d.iter().any(|&t| t >= vocab_len) || d.windows(2).any(|w| w[0] >= w[1]) {
                        return Err(format!("token set {i}: ids unsorted or out of range"));
                    }
                }
                KIND_RANGES => {
                    if len % 2 != 0 || d.chunks_exact(2).any(|r| r[0] >= r[1] || r[1] > vocab_len) {
                        return Err(format!("token set {i}: bad ranges"));
                    }
                }
                KIND_DENSE => {
                    if len != self.words {
                        return Err(format!("token set {i}: dense set of wrong length"));
                    }
                    let tail = vocab_len % 32;
                    if tail != 0 && d.last().is_some_and(|w| w >> tail != 0) {
                        return Err(format!("token set {i}: bits past the vocabulary"));
                    }
                }
                _ => return Err(format!("token set {i}: unknown kind {kind}")),
            }
        }
        Ok(())
    }
}

/// Builds a deduplicated [`TokenSets`] pool.
#[derive(Default)]
pub struct SetsBuilder {
    sets: TokenSets,
    dedup: std::collections::HashMap<Vec<u32>, u32>,
}

impl SetsBuilder {
    pub fn new(vocab_len: u32) -> Self {
        SetsBuilder { sets: TokenSets { words: vocab_len.div_ceil(32), ..Default::default() }, dedup: Default::default() }
    }

    /// Add a set given as sorted, deduplicated ids; returns its index.
    pub fn add(&mut self, ids: &[u32]) -> u32 {
        if let Some(&i) = self.dedup.get(ids) {
            return i;
        }
        let words = self.sets.words as usize;
        let mut ranges: Vec<[u32; 2]> = Vec::new();
        for &t in ids {
            match ranges.last_mut() {
                Some([_, end]) if *end == t => *end += 1,
                _ => ranges.push([t, t + 1]),
            }
        }
        let (kind, payload): (u32, Vec<u32>) = if ids.len() <= 2 * ranges.len() && ids.len() <= words {
            (KIND_LIST, ids.to_vec())
        } else if 2 * ranges.len() <= words {
            (KIND_RANGES, ranges.into_iter().flatten().collect())
        } else {
            let mut d = vec![0u32; words];
            for &t in ids {
                d[(t >> 5) as usize] |= 1 << (t & 31);
            }
            (KIND_DENSE, d)
        };
        let i = self.sets.index.len() as u32;
        self.sets.index.push([kind, self.sets.data.len() as u32, payload.len() as u32]);
        self.sets.data.extend_from_slice(&payload);
        self.dedup.insert(ids.to_vec(), i);
        i
    }

    pub fn finish(self) -> TokenSets {
        self.sets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_roundtrip_to_same_mask() {
        let vocab = 1000u32;
        let cases: Vec<Vec<u32>> = vec![
            vec![],
            vec![5],
            vec![0, 31, 32, 999],
            (100..400).collect(),
            (0..1000).filter(|i| i % 3 == 0).collect(),
            (0..1000).collect(),
        ];
        let mut b = SetsBuilder::new(vocab);
        let ids: Vec<u32> = cases.iter().map(|c| b.add(c)).collect();
        assert_eq!(b.add(&cases[3]), ids[3], "dedup");
        let sets = b.finish();
        sets.validate(vocab).unwrap();
        let kinds: Vec<u32> = ids.iter().map(|&i| sets.index[i as usize][0]).collect();
        assert_eq!(kinds[3], KIND_RANGES);
        assert_eq!(kinds[4], KIND_DENSE);
        assert_eq!(kinds[2], KIND_LIST);
        for (c, &i) in cases.iter().zip(&ids) {
            let mut m = vec![0u32; 32];
            sets.or_into(i, &mut m);
            let got: Vec<u32> = (0..vocab).filter(|&t| m[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
            assert_eq!(&got, c);
            assert_eq!(sets.count(i) as usize, c.len());
        }
    }
}
