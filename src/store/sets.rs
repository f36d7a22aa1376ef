//! Compact token sets, and unions into a mask.
//!
//! A mask is `ceil(vocab/32)` u32 words; token `id` is bit `id & 31` of word
//! `id >> 5` (the layout of the JS `Uint32Array` and of `bitvec`'s
//! `BitSlice<u32, Lsb0>`).
//!
//! Each set is stored in whichever of six forms has the smallest payload
//! (ties go to the earlier form in this list, the faster to OR):
//! - **dense**: a full bitset of `words` u32 (many tokens, no structure);
//! - **ranges**: sorted `[start, end)` pairs (runs of consecutive ids);
//! - **list**: sorted token ids, one u32 each (one or two tokens);
//! - **list16**: sorted token ids split by 65536-id block: `blocks` u32 end
//!   counts (cumulative), then the low 16 bits of every id packed two per u32
//!   (low half first, a zero half pads an odd count);
//! - **not-list16**: the complement (within the vocabulary) as a list16 (sets
//!   holding nearly every token);
//! - **xor**: another set (its *base*, by index) with some ids toggled: the
//!   base index, then the toggled ids as a list16. Only for heavy sets (see
//!   below), whose bases are heavy sets too: the always-sets of similar
//!   positions differ in a few ids, so a store keeps one of them in full and
//!   the others as differences ([`SetsBuilder::finish`] picks the bases along
//!   a minimum spanning tree of the XOR distances). Following bases never
//!   loops (checked on load).
//!
//! `blocks = ceil(words * 32 / 65536)`. Light sets are read in place, in one
//! pass, with no allocation, at the cost of their payload length. *Heavy*
//! sets (not-list16, xor, and lists with more than `words / 16` ids) are
//! OR-ed from a dense copy made on first use ([`TokenSets::is_heavy`]).
//! Identical sets are stored once ([`SetsBuilder`] deduplicates).

use bitvec::prelude::*;

pub const KIND_LIST: u32 = 0;
pub const KIND_RANGES: u32 = 1;
pub const KIND_DENSE: u32 = 2;
pub const KIND_LIST16: u32 = 3;
pub const KIND_NOT_LIST16: u32 = 4;
pub const KIND_XOR: u32 = 5;

/// All token sets of a store, in one flat pool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenSets {
    /// Mask length in words.
    pub words: u32,
    /// Vocabulary size (bits of the mask that may be set).
    pub vocab_len: u32,
    /// Per set: (kind, offset into `data`, length in u32 of its payload).
    pub index: Vec<[u32; 3]>,
    pub data: Vec<u32>,
    /// Run-time only (not serialized, ignored by `==`): dense copies of the
    /// sets whose compact form is slow to OR, made on first use.
    dense: DenseCache,
}

/// Dense copies of *heavy* sets (see [`TokenSets::is_heavy`]), one slot per
/// set, each filled on the set's first use. OR-ing a compact set costs a few
/// instructions per id (per complement id for not-list16, plus a pass over
/// the mask); a dense copy costs one vectorized pass of `words` words
/// (simd128 in wasm), so sets with more than about `words / 16` ids are
/// expanded: at most 16 KB each for a 128k vocabulary, and only the sets a
/// matcher actually uses.
#[derive(Clone, Default)]
struct DenseCache(Vec<std::sync::OnceLock<Box<[u32]>>>);

impl PartialEq for DenseCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for DenseCache {}
impl std::fmt::Debug for DenseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DenseCache({} of {} filled)", self.0.iter().filter(|c| c.get().is_some()).count(), self.0.len())
    }
}

/// `mask[i] |= src[i]` for `i < src.len()` (`mask.len() >= src.len()`).
#[inline]
pub(crate) fn or_words(mask: &mut [u32], src: &[u32]) {
    let mask = &mut mask[..src.len()];
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{v128, v128_load, v128_or, v128_store};
        let n4 = src.len() / 4;
        let (m, s) = (mask.as_mut_ptr() as *mut v128, src.as_ptr() as *const v128);
        // SAFETY: both slices hold at least 4 * n4 u32; v128 loads and stores
        // in wasm have no alignment requirement.
        unsafe {
            for i in 0..n4 {
                v128_store(m.add(i), v128_or(v128_load(m.add(i)), v128_load(s.add(i))));
            }
        }
        for (m, w) in mask[4 * n4..].iter_mut().zip(&src[4 * n4..]) {
            *m |= *w;
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    for (m, w) in mask.iter_mut().zip(src) {
        *m |= *w;
    }
}

/// Number of 65536-id blocks of a list16 payload for masks of `words` words.
#[inline]
pub fn blocks(words: u32) -> usize {
    (words as usize).div_ceil(2048)
}

/// Call `f` on every id of a list16 payload, in order (assumed valid: see
/// [`TokenSets::validate`]).
#[inline(always)]
fn for_each_list16(d: &[u32], nb: usize, mut f: impl FnMut(u32)) {
    let (ends, packed) = d.split_at(nb);
    let mut k = 0usize;
    for (b, &end) in ends.iter().enumerate() {
        let (hi, end) = ((b as u32) << 16, end as usize);
        if k < end && k & 1 == 1 {
            f(hi | packed[k >> 1] >> 16);
            k += 1;
        }
        let pairs = (end - k) / 2;
        for &w in &packed[k >> 1..(k >> 1) + pairs] {
            f(hi | w & 0xffff);
            f(hi | w >> 16);
        }
        k += 2 * pairs;
        if k < end {
            f(hi | packed[k >> 1] & 0xffff);
            k += 1;
        }
    }
}

impl TokenSets {
    pub fn len(&self) -> usize {
        self.index.len()
    }
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// A token set pool from its parts (as read from a blob).
    pub fn new(words: u32, vocab_len: u32, index: Vec<[u32; 3]>, data: Vec<u32>) -> TokenSets {
        let dense = DenseCache((0..index.len()).map(|_| Default::default()).collect());
        TokenSets { words, vocab_len, index, data, dense }
    }

    /// Whether set `i` is OR-ed from a dense copy (made on first use) rather
    /// than from its compact form: not-list16 sets, and lists / list16 sets
    /// with more than `words / 16` ids.
    #[inline]
    pub fn is_heavy(&self, i: u32) -> bool {
        let [kind, _, len] = self.index[i as usize];
        match kind {
            KIND_NOT_LIST16 | KIND_XOR => true,
            KIND_LIST => len > self.words / 16,
            KIND_LIST16 => 2 * len.saturating_sub(blocks(self.words) as u32) > self.words / 16,
            _ => false,
        }
    }

    /// The dense words of set `i` if it is stored dense or is heavy (its
    /// dense copy is made here on first use).
    #[inline]
    fn dense_words(&self, i: u32) -> Option<&[u32]> {
        let [kind, off, len] = self.index[i as usize];
        if kind == KIND_DENSE {
            return Some(&self.data[off as usize..(off + len) as usize]);
        }
        let slot = self.dense.0.get(i as usize)?;
        if let Some(d) = slot.get() {
            return Some(d);
        }
        if !self.is_heavy(i) {
            return None;
        }
        if kind == KIND_XOR {
            return Some(self.expand_xor(i));
        }
        Some(slot.get_or_init(|| {
            let mut d = vec![0u32; self.words as usize];
            self.or_compact(i, &mut d);
            d.into_boxed_slice()
        }))
    }

    /// The base set and the toggled ids (list16) of xor set `i`.
    fn xor_parts(&self, i: u32) -> (u32, &[u32]) {
        let [_, off, len] = self.index[i as usize];
        let d = &self.data[off as usize..(off + len) as usize];
        (d[0], &d[1..])
    }

    /// Toggle the ids of a list16 payload in `mask`.
    fn toggle(&self, ids: &[u32], mask: &mut [u32]) {
        for_each_list16(ids, blocks(self.words), |t| mask[(t >> 5) as usize] ^= 1 << (t & 31));
    }

    /// The dense words of xor set `i`: its chain of bases is followed up to a
    /// set that has dense words (or a light one), then every xor set on the
    /// way back gets its dense copy (iteratively: chains may be long).
    fn expand_xor(&self, i: u32) -> &[u32] {
        let slot = |j: u32| self.dense.0.get(j as usize);
        let mut chain = vec![i];
        let mut b = self.xor_parts(i).0;
        while self.index[b as usize][0] == KIND_XOR && slot(b).is_some_and(|s| s.get().is_none()) {
            chain.push(b);
            b = self.xor_parts(b).0;
        }
        let mut cur = match self.dense_words(b) {
            Some(d) => d.to_vec(),
            None => {
                let mut d = vec![0u32; self.words as usize];
                self.or_compact(b, &mut d);
                d
            }
        };
        let mut last: &[u32] = &[];
        for &j in chain.iter().rev() {
            self.toggle(self.xor_parts(j).1, &mut cur);
            match slot(j) {
                Some(s) => last = s.get_or_init(|| cur.clone().into_boxed_slice()),
                None => unreachable!("xor sets are expanded only with a cache"),
            }
        }
        last
    }

    /// OR set `i` into `mask` (`mask.len() >= words`).
    #[inline]
    pub fn or_into(&self, i: u32, mask: &mut [u32]) {
        match self.dense_words(i) {
            Some(d) => or_words(mask, d),
            None => self.or_compact(i, mask),
        }
    }

    /// Overwrite `mask` with set `i`: its first `words` words hold the set,
    /// the rest (padding to a wider mask) is zeroed. Same as zeroing `mask`
    /// and OR-ing the set, one pass less for dense and heavy sets.
    #[inline]
    pub fn set_into(&self, i: u32, mask: &mut [u32]) {
        match self.dense_words(i) {
            Some(d) => {
                let (head, tail) = mask.split_at_mut(d.len());
                head.copy_from_slice(d);
                tail.fill(0);
            }
            None => {
                mask.fill(0);
                self.or_compact(i, mask);
            }
        }
    }

    /// OR set `i` into `mask` from its compact form.
    fn or_compact(&self, i: u32, mask: &mut [u32]) {
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
            KIND_LIST16 => for_each_list16(d, blocks(self.words), |t| mask[(t >> 5) as usize] |= 1 << (t & 31)),
            KIND_NOT_LIST16 => {
                // Bits of the complement's ids keep their value, all others
                // (within the vocabulary) are set: words are flushed in order.
                let words = self.words as usize;
                let tail = self.vocab_len % 32;
                let last_valid = if tail != 0 { (1u32 << tail) - 1 } else { !0 };
                let (mut cw, mut cb) = (0usize, 0u32);
                for_each_list16(d, blocks(self.words), |t| {
                    let tw = (t >> 5) as usize;
                    if tw != cw {
                        mask[cw] |= !cb;
                        mask[cw + 1..tw].fill(!0);
                        (cw, cb) = (tw, 0);
                    }
                    cb |= 1 << (t & 31);
                });
                if cw < words {
                    mask[cw] |= !cb;
                    mask[cw + 1..words].fill(!0);
                    mask[words - 1] &= last_valid; // padding bits stay zero
                }
            }
            KIND_XOR => {
                // Only without a dense cache (a pool not made by `new`).
                let mut m = match self.dense.0.get(i as usize) {
                    Some(_) => self.expand_xor(i).to_vec(),
                    None => self.xor_uncached(i),
                };
                m.truncate(self.words as usize);
                or_words(mask, &m);
            }
            _ => or_words(mask, d),
        }
    }

    /// Dense words of xor set `i` without the cache (pools not made by
    /// [`TokenSets::new`]; bases assumed acyclic, as validated).
    fn xor_uncached(&self, i: u32) -> Vec<u32> {
        let mut chain = vec![i];
        let mut b = self.xor_parts(i).0;
        while self.index[b as usize][0] == KIND_XOR {
            chain.push(b);
            b = self.xor_parts(b).0;
        }
        let mut cur = vec![0u32; self.words as usize];
        self.or_compact(b, &mut cur);
        for &j in chain.iter().rev() {
            self.toggle(self.xor_parts(j).1, &mut cur);
        }
        cur
    }

    /// Number of tokens in set `i`.
    pub fn count(&self, i: u32) -> u32 {
        let [kind, off, len] = self.index[i as usize];
        let d = &self.data[off as usize..(off + len) as usize];
        let nb = blocks(self.words);
        match kind {
            KIND_LIST => len,
            KIND_RANGES => d.chunks_exact(2).map(|r| r[1] - r[0]).sum(),
            KIND_LIST16 => d[nb - 1],
            KIND_NOT_LIST16 => self.vocab_len - d[nb - 1],
            KIND_XOR => {
                let mut m = vec![0u32; self.words as usize];
                self.or_into(i, &mut m);
                m.iter().map(|w| w.count_ones()).sum()
            }
            _ => d.iter().map(|w| w.count_ones()).sum(),
        }
    }

    /// Validate structure against `vocab_len` (for the blob loader): after
    /// this, [`TokenSets::or_into`] and [`TokenSets::count`] cannot fail.
    pub fn validate(&self, vocab_len: u32) -> Result<(), String> {
        if self.words != vocab_len.div_ceil(32) || self.vocab_len != vocab_len {
            return Err(format!("token sets have {} mask words, vocabulary needs {}", self.words, vocab_len.div_ceil(32)));
        }
        let nb = blocks(self.words);
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
                    if d.chunks_exact(2).zip(d.chunks_exact(2).skip(1)).any(|(a, b)| a[1] > b[0]) {
                        return Err(format!("token set {i}: ranges unsorted"));
                    }
                }
                KIND_LIST16 | KIND_NOT_LIST16 => check_list16(d, nb, vocab_len).map_err(|e| format!("token set {i}: {e}"))?,
                KIND_XOR => {
                    let Some((&base, ids)) = d.split_first() else { return Err(format!("token set {i}: empty xor payload")) };
                    if base as usize >= self.index.len() || base as usize == i {
                        return Err(format!("token set {i}: xor base {base} is not another set"));
                    }
                    check_list16(ids, nb, vocab_len).map_err(|e| format!("token set {i}: {e}"))?;
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
        // Following xor bases ends at a set of another kind (no cycle): each
        // chain is walked once (0 = not seen, 1 = on the current walk, 2 = done).
        let mut seen = vec![0u8; self.index.len()];
        for start in 0..self.index.len() {
            let mut j = start;
            let mut walk = Vec::new();
            while self.index[j][0] == KIND_XOR && seen[j] == 0 {
                seen[j] = 1;
                walk.push(j);
                j = self.data[self.index[j][1] as usize] as usize;
            }
            if self.index[j][0] == KIND_XOR && seen[j] == 1 {
                return Err(format!("token set {start}: xor bases form a cycle"));
            }
            for k in walk {
                seen[k] = 2;
            }
        }
        Ok(())
    }
}

/// Check a list16 payload: block ends, packing, ids sorted and `< vocab_len`.
fn check_list16(d: &[u32], nb: usize, vocab_len: u32) -> Result<(), String> {
    let bad = || "bad list16 payload".to_string();
    if nb == 0 || d.len() < nb {
        return Err(bad());
    }
    let (ends, packed) = d.split_at(nb);
    let n = ends[nb - 1];
    if ends.windows(2).any(|w| w[0] > w[1]) || packed.len() as u64 != (n as u64).div_ceil(2) {
        return Err(bad());
    }
    if n % 2 == 1 && packed[packed.len() - 1] >> 16 != 0 {
        return Err(bad());
    }
    // The structure is sound now, so the ids can be read in place.
    let (mut prev, mut ok) = (None::<u32>, true);
    for_each_list16(d, nb, |t| {
        ok &= t < vocab_len && prev.is_none_or(|p| p < t);
        prev = Some(t);
    });
    if !ok {
        return Err("ids unsorted or out of range".into());
    }
    Ok(())
}

/// A list16 payload for sorted ids (see the module doc).
fn list16(ids: impl Iterator<Item = u32> + Clone, nb: usize) -> Vec<u32> {
    let mut ends = vec![0u32; nb];
    for t in ids.clone() {
        ends[(t >> 16) as usize] += 1;
    }
    for b in 1..nb {
        ends[b] += ends[b - 1];
    }
    let mut out = ends;
    let mut half = false;
    for t in ids {
        if half {
            *out.last_mut().unwrap() |= (t & 0xffff) << 16;
        } else {
            out.push(t & 0xffff);
        }
        half = !half;
    }
    out
}

/// Builds a deduplicated [`TokenSets`] pool.
#[cfg(feature = "compiler")]
#[derive(Default)]
pub struct SetsBuilder {
    sets: TokenSets,
    dedup: crate::hash::FxMap<Vec<u32>, u32>,
}

#[cfg(feature = "compiler")]
impl SetsBuilder {
    pub fn new(vocab_len: u32) -> Self {
        SetsBuilder {
            sets: TokenSets::new(vocab_len.div_ceil(32), vocab_len, Vec::new(), Vec::new()),
            dedup: Default::default(),
        }
    }

    /// Add a set given as sorted, deduplicated ids (`< vocab_len`); returns its index.
    pub fn add(&mut self, ids: &[u32]) -> u32 {
        add_dedup(&mut self.sets, &mut self.dedup, ids)
    }

    /// The pool, with heavy sets re-encoded as differences where smaller
    /// (see `delta_encode`).
    pub fn finish(self) -> TokenSets {
        delta_encode(self.sets)
    }
}

/// Add a set to `sets` unless `dedup` already knows it (see [`SetsBuilder`]);
/// used directly by stores that grow after construction.
#[cfg(feature = "compiler")]
pub(crate) fn add_dedup(sets: &mut TokenSets, dedup: &mut crate::hash::FxMap<Vec<u32>, u32>, ids: &[u32]) -> u32 {
    if let Some(&i) = dedup.get(ids) {
        return i;
    }
    let i = sets.push(ids);
    dedup.insert(ids.to_vec(), i);
    i
}

impl TokenSets {
    /// Append a set given as sorted, deduplicated ids (`< vocab_len`) in its
    /// smallest form; returns its index.
    pub fn push(&mut self, ids: &[u32]) -> u32 {
        let (words, vocab) = (self.words as usize, self.vocab_len);
        let nb = blocks(self.words);
        let mut ranges: Vec<[u32; 2]> = Vec::new();
        for &t in ids {
            match ranges.last_mut() {
                Some([_, end]) if *end == t => *end += 1,
                _ => ranges.push([t, t + 1]),
            }
        }
        let n = ids.len();
        let n_not = vocab as usize - n;
        // Payload sizes in words, in order of preference on ties.
        let sizes = [
            (KIND_DENSE, words),
            (KIND_RANGES, 2 * ranges.len()),
            (KIND_LIST, n),
            (KIND_LIST16, nb + n.div_ceil(2)),
            (KIND_NOT_LIST16, nb + n_not.div_ceil(2)),
        ];
        let kind = sizes.iter().min_by_key(|k| k.1).unwrap().0;
        let payload: Vec<u32> = match kind {
            KIND_DENSE => {
                let mut d = vec![0u32; words];
                for &t in ids {
                    d[(t >> 5) as usize] |= 1 << (t & 31);
                }
                d
            }
            KIND_RANGES => ranges.into_iter().flatten().collect(),
            KIND_LIST => ids.to_vec(),
            KIND_LIST16 => list16(ids.iter().copied(), nb),
            _ => {
                let mut it = ids.iter().copied().peekable();
                let not: Vec<u32> = (0..vocab)
                    .filter(|&t| {
                        if it.peek() == Some(&t) {
                            it.next();
                            false
                        } else {
                            true
                        }
                    })
                    .collect();
                list16(not.iter().copied(), nb)
            }
        };
        let i = self.index.len() as u32;
        self.index.push([kind, self.data.len() as u32, payload.len() as u32]);
        self.data.extend_from_slice(&payload);
        self.dense.0.push(Default::default());
        i
    }
}

/// Re-encode heavy sets as xor sets where that is smaller: the heavy sets
/// (and dense ones) are the nodes of a graph whose edge weights are XOR
/// distances (all pairs for up to 256 nodes, else each node and its 32 next
/// ones by token count); along a minimum spanning tree, rooted in each
/// component at its smallest payload, every other node becomes its parent
/// plus the toggled ids when that payload is smaller than its own.
/// Deterministic (ties broken by index), so blobs stay reproducible.
#[cfg(feature = "compiler")]
pub(crate) fn delta_encode(sets: TokenSets) -> TokenSets {
    let words = sets.words as usize;
    let nb = blocks(sets.words);
    let nodes: Vec<u32> = (0..sets.len() as u32).filter(|&i| sets.is_heavy(i) || sets.index[i as usize][0] == KIND_DENSE).collect();
    let n = nodes.len();
    if n < 2 {
        return sets;
    }
    let mut bits = vec![0u32; n * words];
    for (k, &i) in nodes.iter().enumerate() {
        sets.or_into(i, &mut bits[k * words..(k + 1) * words]);
    }
    let row = |k: usize| &bits[k * words..(k + 1) * words];
    let dist = |a: usize, b: usize| row(a).iter().zip(row(b)).map(|(x, y)| (x ^ y).count_ones()).sum::<u32>();
    let mut edges: Vec<(u32, u32, u32)> = Vec::new();
    if n <= 256 {
        for a in 0..n {
            for b in a + 1..n {
                edges.push((dist(a, b), a as u32, b as u32));
            }
        }
    } else {
        let mut by_count: Vec<(u32, u32)> = (0..n).map(|k| (row(k).iter().map(|w| w.count_ones()).sum(), k as u32)).collect();
        crate::sort::sort_packed(&mut by_count);
        for x in 0..n {
            for y in x + 1..(x + 33).min(n) {
                let (a, b) = (by_count[x].1.min(by_count[y].1) as usize, by_count[x].1.max(by_count[y].1) as usize);
                edges.push((dist(a, b), a as u32, b as u32));
            }
        }
    }
    crate::sort::sort_packed(&mut edges);
    // Kruskal.
    let mut up: Vec<usize> = (0..n).collect();
    fn find(up: &mut [usize], mut x: usize) -> usize {
        while up[x] != x {
            up[x] = up[up[x]];
            x = up[x];
        }
        x
    }
    let mut adj: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for &(w, a, b) in &edges {
        let (ra, rb) = (find(&mut up, a as usize), find(&mut up, b as usize));
        if ra != rb {
            up[ra] = rb;
            adj[a as usize].push((b as usize, w));
            adj[b as usize].push((a as usize, w));
        }
    }
    // Roots: the smallest payload of each component; parents by BFS.
    let payload = |k: usize| sets.index[nodes[k] as usize][2] as usize;
    // By payload, ties by index (a stable sort of 0..n).
    let order: Vec<usize> = crate::sort::order_by(n, &mut |a, b| payload(a).cmp(&payload(b))).into_iter().map(|k| k as usize).collect();
    let mut parent: Vec<Option<(usize, u32)>> = vec![None; n];
    let mut done = vec![false; n];
    for &root in &order {
        if done[root] {
            continue;
        }
        done[root] = true;
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(x) = queue.pop_front() {
            for &(y, w) in &adj[x] {
                if !done[y] {
                    done[y] = true;
                    parent[y] = Some((x, w));
                    queue.push_back(y);
                }
            }
        }
    }
    let mut new_payload: crate::hash::FxMap<u32, Vec<u32>> = Default::default();
    for k in 0..n {
        let Some((p, w)) = parent[k] else { continue };
        if 1 + nb + (w as usize).div_ceil(2) >= payload(k) {
            continue;
        }
        let toggled = row(k).iter().zip(row(p)).enumerate().flat_map(|(wi, (x, y))| {
            let mut d = x ^ y;
            std::iter::from_fn(move || {
                (d != 0).then(|| {
                    let t = d.trailing_zeros();
                    d &= d - 1;
                    (wi as u32) * 32 + t
                })
            })
        });
        let mut pl = vec![nodes[p]];
        pl.extend(list16(toggled, nb));
        new_payload.insert(nodes[k], pl);
    }
    if new_payload.is_empty() {
        return sets;
    }
    let (mut index, mut data) = (Vec::with_capacity(sets.len()), Vec::new());
    for (i, &[kind, off, len]) in sets.index.iter().enumerate() {
        let start = data.len() as u32;
        match new_payload.get(&(i as u32)) {
            Some(pl) => {
                data.extend_from_slice(pl);
                index.push([KIND_XOR, start, pl.len() as u32]);
            }
            None => {
                data.extend_from_slice(&sets.data[off as usize..(off + len) as usize]);
                index.push([kind, start, len]);
            }
        }
    }
    TokenSets::new(sets.words, sets.vocab_len, index, data)
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
            (0..1000).filter(|&i| ![3, 500, 999].contains(&i)).collect(),
            (0..1000).filter(|&i| i != 0).collect(),
        ];
        let mut b = SetsBuilder::new(vocab);
        let ids: Vec<u32> = cases.iter().map(|c| b.add(c)).collect();
        assert_eq!(b.add(&cases[3]), ids[3], "dedup");
        let sets = b.finish();
        sets.validate(vocab).unwrap();
        let kinds: Vec<u32> = ids.iter().map(|&i| sets.index[i as usize][0]).collect();
        assert_eq!(kinds, [KIND_RANGES, KIND_LIST, KIND_LIST16, KIND_RANGES, KIND_DENSE, KIND_NOT_LIST16, KIND_NOT_LIST16, KIND_RANGES]);
        for (c, &i) in cases.iter().zip(&ids) {
            let mut m = vec![0u32; 32];
            sets.or_into(i, &mut m);
            assert_eq!(m[31] >> (vocab % 32), 0, "no bits past the vocabulary");
            let got: Vec<u32> = (0..vocab).filter(|&t| m[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
            assert_eq!(&got, c);
            assert_eq!(sets.count(i) as usize, c.len());
        }
    }

    /// Heavy sets (OR-ed from a dense copy made on first use) and light ones
    /// give the same masks as their compact forms, OR-ed over existing bits
    /// and written with `set_into` into a wider, dirty buffer.
    #[test]
    fn heavy_sets_match_compact_forms() {
        let vocab = 70_001u32;
        let cases: Vec<Vec<u32>> = vec![
            (0..vocab).filter(|t| t % 97 != 3).collect(), // not-list16
            (0..vocab).filter(|t| t % 97 == 5).collect(), // list16, heavy
            (0..vocab).filter(|t| t % 9001 == 0).collect(), // list16, light
            vec![4, 70_000],                                 // list
            (0..vocab).filter(|t| t % 3 == 0).collect(),   // dense
        ];
        let mut b = SetsBuilder::new(vocab);
        let ids: Vec<u32> = cases.iter().map(|c| b.add(c)).collect();
        let sets = b.finish();
        sets.validate(vocab).unwrap();
        let heavy: Vec<bool> = ids.iter().map(|&i| sets.is_heavy(i)).collect();
        assert_eq!(heavy, [true, true, false, false, false]);
        let words = sets.words as usize;
        // Existing bits within the vocabulary (a mask never has bits past it).
        let mut noise: Vec<u32> = (0..words as u32 + 5).map(|w| w.wrapping_mul(0x9e37_79b9) & 0x0101_0101).collect();
        noise[words - 1] &= (1 << (vocab % 32)) - 1;
        for (c, &i) in cases.iter().zip(&ids) {
            let mut want = noise[..words].to_vec();
            sets.or_compact(i, &mut want);
            for _ in 0..2 {
                // The second round uses the dense copy made by the first.
                let mut m = noise.clone();
                sets.or_into(i, &mut m);
                assert!(m[..words] == want[..], "or_into, set {i}");
                assert!(m[words..] == noise[words..], "or_into leaves words past the mask");
                let mut m = noise.clone();
                sets.set_into(i, &mut m);
                let got: Vec<u32> = (0..vocab).filter(|&t| m[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
                assert!(&got == c, "set_into, set {i}");
                assert!(m[words - 1] >> (vocab % 32) == 0 && m[words..].iter().all(|&w| w == 0), "set_into padding");
            }
        }
    }

    /// Similar heavy sets become xor sets along a spanning tree; masks are
    /// unchanged (in any order of first use), and a cycle of bases or a bad
    /// base is refused on load.
    #[test]
    fn xor_sets_roundtrip_and_validate() {
        let vocab = 100_000u32;
        let base: Vec<u32> = (0..vocab).filter(|t| t % 5 != 1).collect();
        let mut cases = vec![base.clone()];
        for k in 0..6u32 {
            // Each differs from the previous one in a few ids.
            let mut c: Vec<u32> = cases.last().unwrap().iter().copied().filter(|t| t % 1000 != 7 * k + 3).collect();
            c.push(5 * (k + 1000) + 1);
            c.sort_unstable();
            cases.push(c);
        }
        cases.push((0..300).collect()); // light: stays as it is
        let mut b = SetsBuilder::new(vocab);
        let ids: Vec<u32> = cases.iter().map(|c| b.add(c)).collect();
        let sets = b.finish();
        sets.validate(vocab).unwrap();
        let kinds: Vec<u32> = ids.iter().map(|&i| sets.index[i as usize][0]).collect();
        assert_eq!(kinds.iter().filter(|&&k| k == KIND_XOR).count(), 6, "kinds {kinds:?}");
        assert_eq!(kinds[7], KIND_RANGES);
        let words = sets.words as usize;
        for order in [vec![0, 1, 2, 3, 4, 5, 6, 7], vec![6, 3, 7, 0, 5, 1, 4, 2]] {
            let fresh = TokenSets::new(sets.words, sets.vocab_len, sets.index.clone(), sets.data.clone());
            for k in order {
                let mut m = vec![0u32; words];
                fresh.or_into(ids[k], &mut m);
                let got: Vec<u32> = (0..vocab).filter(|&t| m[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
                assert!(got == cases[k], "set {k}");
                assert_eq!(fresh.count(ids[k]) as usize, cases[k].len());
            }
        }
        // Damage: a base pointing to itself, and a cycle of two.
        let xs: Vec<usize> = (0..sets.len()).filter(|&i| sets.index[i][0] == KIND_XOR).collect();
        let mut bad = sets.clone();
        bad.data[bad.index[xs[0]][1] as usize] = xs[0] as u32;
        assert!(bad.validate(vocab).is_err());
        let mut bad = sets.clone();
        bad.data[bad.index[xs[0]][1] as usize] = xs[1] as u32;
        bad.data[bad.index[xs[1]][1] as usize] = xs[0] as u32;
        assert!(bad.validate(vocab).unwrap_err().contains("cycle"));
        let mut bad = sets.clone();
        bad.data[bad.index[xs[0]][1] as usize] = sets.len() as u32;
        assert!(bad.validate(vocab).is_err());
    }

    #[test]
    fn list16_spans_blocks_and_validate_rejects_damage() {
        let vocab = 200_000u32;
        let mut ids = vec![1, 65535, 65536, 131072 + 7, 199_999];
        ids.extend((0..20).map(|i| 300 + 2 * i));
        ids.sort_unstable();
        let mut b = SetsBuilder::new(vocab);
        let i = b.add(&ids);
        let not: Vec<u32> = (0..vocab).filter(|t| !ids.contains(t)).collect();
        let j = b.add(&not);
        let sets = b.finish();
        assert_eq!((sets.index[i as usize][0], sets.index[j as usize][0]), (KIND_LIST16, KIND_NOT_LIST16));
        sets.validate(vocab).unwrap();
        for (set, want) in [(i, &ids), (j, &not)] {
            let mut m = vec![0u32; sets.words as usize];
            sets.or_into(set, &mut m);
            let got: Vec<u32> = (0..vocab).filter(|&t| m[(t >> 5) as usize] >> (t & 31) & 1 == 1).collect();
            assert_eq!(&got, want);
            assert_eq!(sets.count(set) as usize, want.len());
        }
        let [_, off, _] = sets.index[i as usize];
        for (k, v) in [(0usize, 9u32), (3, 0xffff_0001), (4, 0)] {
            let mut bad = sets.clone();
            bad.data[off as usize + k] = v;
            assert!(bad.validate(vocab).is_err(), "word {k} = {v:#x} accepted");
        }
    }
}
