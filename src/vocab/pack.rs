//! Compact storage of the token bytes (the blob's `VOCB` section).
//!
//! Every BPE token but the 256 byte tokens is the concatenation of two
//! tokens merged before it, so a token is stored as a *pair* `(a, b)` of
//! smaller ids (`bytes(t) = bytes(a) ++ bytes(b)`) when such a split exists,
//! otherwise as *literal* bytes. Llama-3: every one of the 128,000 model
//! tokens splits; 831 KB of token bytes (plus 128 KB of lengths) become
//! about 430 KB. Decoding is one forward pass (two table lookups and two
//! copies from earlier tokens per token), so a blob still loads with no
//! tokenizer at hand (Workers).
//!
//! Stream, per token id in order, least significant bit first:
//! - `x` (table X): `0` = literal, else the pair's `a + 1`;
//! - pair: `b` (table Y); literal: the length `n` (table Y), then `n` bytes
//!   of 8 bits.
//!
//! A value `v` is coded as its bucket `bitlen(v)` (0 for 0, 1 for 1, 2 for
//! 2..=3, ...) with a canonical Huffman code (at most [`MAX_CODE`] bits),
//! then the `bucket - 1` bits of `v` below its top bit. A table is sent as
//! the code length of each of the 33 buckets (0 = unused).
//!
//! The split chosen for a token is the one whose two ids are the smallest in
//! bit length (then the longest left part); `a` and `b` refer to the first id
//! with those bytes. Deterministic, so blobs are reproducible.

use crate::err;
use crate::Result;
use crate::hash::FxMap as HashMap;

/// Longest Huffman code, in bits (decode tables have `1 << MAX_CODE` entries).
pub const MAX_CODE: u32 = 12;
/// Number of buckets (bit lengths 0..=32).
const BUCKETS: usize = 33;

/// The packed token bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedTokens {
    /// Number of tokens.
    pub n: u32,
    /// Total token bytes once unpacked.
    pub total: u32,
    /// Code lengths of tables X and Y (33 each).
    pub code_lens: Vec<u8>,
    /// The bit stream.
    pub stream: Vec<u8>,
}

#[inline]
fn bucket(v: u32) -> usize {
    (32 - v.leading_zeros()) as usize
}

/// Huffman code lengths (at most `MAX_CODE`) for symbol frequencies; unused
/// symbols get 0. Lengths are limited by flattening the frequencies until
/// the tree is shallow enough.
fn code_lengths(freq: &[u64]) -> Vec<u8> {
    let mut f: Vec<u64> = freq.to_vec();
    loop {
        let used: Vec<usize> = (0..f.len()).filter(|&i| f[i] > 0).collect();
        let mut lens = vec![0u8; f.len()];
        if used.len() == 1 {
            lens[used[0]] = 1;
            return lens;
        }
        if used.is_empty() {
            return lens;
        }
        // Nodes: (weight, id); leaves 0..len, internal nodes after.
        let mut parent: Vec<usize> = vec![usize::MAX; f.len()];
        let mut heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> =
            used.iter().map(|&i| std::cmp::Reverse((f[i], i))).collect();
        let mut next = f.len();
        while heap.len() > 1 {
            let std::cmp::Reverse((w1, a)) = heap.pop().unwrap();
            let std::cmp::Reverse((w2, b)) = heap.pop().unwrap();
            parent.push(usize::MAX);
            parent[a] = next;
            parent[b] = next;
            heap.push(std::cmp::Reverse((w1 + w2, next)));
            next += 1;
        }
        let mut max = 0;
        for &i in &used {
            let (mut d, mut x) = (0u8, i);
            while parent[x] != usize::MAX {
                d += 1;
                x = parent[x];
            }
            lens[i] = d;
            max = max.max(d as u32);
        }
        if max <= MAX_CODE {
            return lens;
        }
        for w in f.iter_mut().filter(|w| **w > 0) {
            *w = (*w >> 1) | 1;
        }
    }
}

/// Canonical codes (bit-reversed for LSB-first output) from code lengths.
fn canonical(lens: &[u8]) -> Vec<(u32, u8)> {
    // Sorted by (length, symbol), packed into u64 keys (the alphabet is far
    // below 2^32 symbols): one sort instantiation with the compiler's.
    let mut keys: Vec<u64> = (0..lens.len()).filter(|&i| lens[i] > 0).map(|i| (lens[i] as u64) << 32 | i as u64).collect();
    keys.sort_unstable();
    let order: Vec<usize> = keys.iter().map(|&k| k as u32 as usize).collect();
    let mut codes = vec![(0u32, 0u8); lens.len()];
    let (mut code, mut prev_len) = (0u32, 0u8);
    for (k, &i) in order.iter().enumerate() {
        if k > 0 {
            code += 1;
        }
        code <<= lens[i] - prev_len;
        prev_len = lens[i];
        let rev = code.reverse_bits() >> (32 - lens[i] as u32);
        codes[i] = (rev, lens[i]);
    }
    codes
}

struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, bits: u32, len: u32) {
        debug_assert!(len <= 32);
        if len == 0 {
            return;
        }
        self.acc |= ((bits as u64) & ((1u64 << len) - 1)) << self.n;
        self.n += len;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// One token's code: pair `(a, b)` or literal bytes.
enum Item<'a> {
    Pair(u32, u32),
    Lit(&'a [u8]),
}

/// Pack the token byte strings (`offsets`: `n + 1` offsets into `bytes`).
pub fn pack(bytes: &[u8], offsets: &[u32]) -> PackedTokens {
    let n = offsets.len().saturating_sub(1);
    let tok = |t: usize| &bytes[offsets[t] as usize..offsets[t + 1] as usize];
    let mut first: HashMap<&[u8], u32> = HashMap::with_capacity_and_hasher(n, Default::default());
    let mut items = Vec::with_capacity(n);
    for t in 0..n {
        let s = tok(t);
        let mut best: Option<(u32, usize, u32, u32)> = None; // (cost, -left len, a, b)
        for k in (1..s.len()).rev() {
            let (Some(&a), Some(&b)) = (first.get(&s[..k]), first.get(&s[k..])) else { continue };
            let cost = bucket(a + 1) as u32 + bucket(b) as u32;
            if best.is_none_or(|(c, _, _, _)| cost < c) {
                best = Some((cost, k, a, b));
            }
        }
        items.push(match best {
            Some((_, _, a, b)) => Item::Pair(a, b),
            None => Item::Lit(s),
        });
        first.entry(s).or_insert(t as u32);
    }
    let (mut fx, mut fy) = (vec![0u64; BUCKETS], vec![0u64; BUCKETS]);
    for it in &items {
        match *it {
            Item::Pair(a, b) => {
                fx[bucket(a + 1)] += 1;
                fy[bucket(b)] += 1;
            }
            Item::Lit(s) => {
                fx[0] += 1;
                fy[bucket(s.len() as u32)] += 1;
            }
        }
    }
    let (lx, ly) = (code_lengths(&fx), code_lengths(&fy));
    let (cx, cy) = (canonical(&lx), canonical(&ly));
    let mut w = BitWriter { out: Vec::with_capacity(bytes.len() / 2), acc: 0, n: 0 };
    let put_v = |w: &mut BitWriter, codes: &[(u32, u8)], v: u32| {
        let k = bucket(v);
        w.put(codes[k].0, codes[k].1 as u32);
        if k >= 2 {
            w.put(v, k as u32 - 1);
        }
    };
    for it in &items {
        match *it {
            Item::Pair(a, b) => {
                put_v(&mut w, &cx, a + 1);
                put_v(&mut w, &cy, b);
            }
            Item::Lit(s) => {
                put_v(&mut w, &cx, 0);
                put_v(&mut w, &cy, s.len() as u32);
                for &c in s {
                    w.put(c as u32, 8);
                }
            }
        }
    }
    let mut code_lens = lx;
    code_lens.extend_from_slice(&ly);
    PackedTokens { n: n as u32, total: bytes.len() as u32, code_lens, stream: w.finish() }
}

/// A decode table: per `MAX_CODE`-bit window, `(bucket, code length)`.
fn decode_table(lens: &[u8]) -> Result<Vec<(u8, u8)>> {
    // Kraft: the code must not be over-subscribed (incomplete is fine:
    // unused windows decode to length 0 and are refused).
    if lens.iter().any(|&l| l as u32 > MAX_CODE) {
        return Err(err!(BlobCorrupt, "vocab: bad code lengths"));
    }
    let kraft: u64 = lens.iter().filter(|&&l| l > 0).map(|&l| 1u64 << (MAX_CODE - l as u32)).sum();
    if kraft > 1 << MAX_CODE {
        return Err(err!(BlobCorrupt, "vocab: bad code lengths"));
    }
    let mut table = vec![(0u8, 0u8); 1 << MAX_CODE];
    for (sym, &(code, len)) in canonical(lens).iter().enumerate() {
        if len == 0 {
            continue;
        }
        let mut i = code as usize;
        while i < table.len() {
            table[i] = (sym as u8, len);
            i += 1 << len;
        }
    }
    Ok(table)
}

/// LSB-first bit reader over a stream padded with 8 zero bytes.
struct BitReader {
    data: Vec<u8>,
    /// Bytes of the stream proper.
    len: usize,
    pos: usize,
    acc: u64,
    n: u32,
}

impl BitReader {
    fn new(stream: &[u8]) -> Self {
        let mut data = Vec::with_capacity(stream.len() + 8);
        data.extend_from_slice(stream);
        data.extend_from_slice(&[0; 8]);
        BitReader { data, len: stream.len(), pos: 0, acc: 0, n: 0 }
    }
    /// At least 56 bits in `acc` (zeros past the end; [`BitReader::over`]
    /// detects bits read past it).
    #[inline(always)]
    fn refill(&mut self) {
        let p = self.pos.min(self.len);
        let w = u64::from_le_bytes(self.data[p..p + 8].try_into().unwrap());
        let w = if self.pos <= self.len { w } else { 0 };
        self.acc |= w << self.n;
        self.pos += (63 - self.n as usize) >> 3;
        self.n |= 56;
    }
    #[inline(always)]
    fn take(&mut self, len: u32) -> u32 {
        let v = (self.acc & ((1u64 << len) - 1)) as u32;
        self.acc >>= len;
        self.n -= len;
        v
    }
    /// Bits consumed beyond the stream?
    fn over(&self) -> bool {
        self.pos * 8 > self.len * 8 + self.n as usize
    }
    #[inline(always)]
    fn value(&mut self, table: &[(u8, u8)]) -> Option<u32> {
        self.refill();
        let (k, len) = table[(self.acc & ((1 << MAX_CODE) - 1)) as usize];
        if len == 0 {
            return None;
        }
        self.take(len as u32);
        Some(match k {
            0 => 0,
            1 => 1,
            k => (1 << (k - 1)) | self.take(k as u32 - 1),
        })
    }
}

/// The checks on a packed stream's header shared by [`check`] and
/// [`unpack`], and its two decoding tables.
fn code_tables(p: &PackedTokens, max_total: usize) -> Result<(Vec<(u8, u8)>, Vec<(u8, u8)>)> {
    if p.code_lens.len() != 2 * BUCKETS {
        return Err(err!(BlobCorrupt, "vocab: code tables have {} entries, expected {}", p.code_lens.len(), 2 * BUCKETS));
    }
    if p.total as usize > max_total {
        return Err(err!(BlobCorrupt, "vocab: {} token bytes declared, more than this blob can hold", p.total));
    }
    let tx = decode_table(&p.code_lens[..BUCKETS])?;
    let ty = decode_table(&p.code_lens[BUCKETS..])?;
    Ok((tx, ty))
}

/// Validate a packed stream without unpacking it (lengths only): after
/// this, [`unpack`] cannot fail. Same checks as [`unpack`].
pub fn check(p: &PackedTokens, max_total: usize) -> Result<()> {
    let (tx, ty) = code_tables(p, max_total)?;
    let n = p.n as usize;
    if n > max_total.saturating_add(1) {
        return Err(err!(BlobCorrupt, "vocab: {n} tokens declared, more than this blob can hold"));
    }
    let total = p.total as u64;
    let mut lens: Vec<u32> = Vec::with_capacity(n);
    let mut r = BitReader::new(&p.stream);
    let bad_code = || err!(BlobCorrupt, "vocab: invalid code in the token stream");
    let mut sum = 0u64;
    for t in 0..n {
        let x = r.value(&tx).ok_or_else(bad_code)?;
        let len = if x == 0 {
            let len = r.value(&ty).ok_or_else(bad_code)?;
            // Skip the literal bytes (at most 7 bytes per refill).
            let mut left = len as u64 * 8;
            while left > 0 {
                r.refill();
                let k = left.min(48) as u32;
                r.take(k);
                left -= k as u64;
            }
            len as u64
        } else {
            let b = r.value(&ty).ok_or_else(bad_code)? as usize;
            let a = x as usize - 1;
            if a >= t || b >= t {
                return Err(err!(BlobCorrupt, "vocab: token {t} refers to a later token"));
            }
            lens[a] as u64 + lens[b] as u64
        };
        sum += len;
        if sum > total {
            return Err(err!(BlobCorrupt, "vocab: token bytes exceed the declared total"));
        }
        lens.push(len as u32);
    }
    if r.over() {
        return Err(err!(BlobCorrupt, "vocab: the token stream is too short"));
    }
    if sum != total {
        return Err(err!(BlobCorrupt, "vocab: {sum} token bytes decoded, {total} declared"));
    }
    Ok(())
}

/// Unpack into (token bytes, `n + 1` offsets). Checks everything: ids of a
/// pair below the token's, the declared total, no bits read past the stream.
/// `max_total` bounds the output (the caller derives it from the blob size).
pub fn unpack(p: &PackedTokens, max_total: usize) -> Result<(Vec<u8>, Vec<u32>)> {
    let (tx, ty) = code_tables(p, max_total)?;
    let total = p.total as usize;
    let n = p.n as usize;
    if n > max_total.saturating_add(1) {
        return Err(err!(BlobCorrupt, "vocab: {n} tokens declared, more than this blob can hold"));
    }
    // 16 bytes of slack: short copies move 16 bytes at once.
    let mut buf = vec![0u8; total + 16];
    let mut offsets: Vec<u32> = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut r = BitReader::new(&p.stream);
    let bad_code = || err!(BlobCorrupt, "vocab: invalid code in the token stream");
    let too_long = || err!(BlobCorrupt, "vocab: token bytes exceed the declared total");
    let mut pos = 0usize;
    for t in 0..n {
        let x = r.value(&tx).ok_or_else(bad_code)?;
        if x == 0 {
            let len = r.value(&ty).ok_or_else(bad_code)? as usize;
            if len > total - pos {
                return Err(too_long());
            }
            for c in &mut buf[pos..pos + len] {
                r.refill();
                *c = r.take(8) as u8;
            }
            pos += len;
        } else {
            let b = r.value(&ty).ok_or_else(bad_code)? as usize;
            let a = x as usize - 1;
            if a >= t || b >= t {
                return Err(err!(BlobCorrupt, "vocab: token {t} refers to a later token"));
            }
            for (s0, s1) in [(offsets[a] as usize, offsets[a + 1] as usize), (offsets[b] as usize, offsets[b + 1] as usize)] {
                let len = s1 - s0;
                if len > total - pos {
                    return Err(too_long());
                }
                if len <= 8 {
                    // s0 + 8 <= pos + 8 <= total + 16: within the buffer.
                    let chunk: [u8; 8] = buf[s0..s0 + 8].try_into().unwrap();
                    buf[pos..pos + 8].copy_from_slice(&chunk);
                } else {
                    buf.copy_within(s0..s1, pos);
                }
                pos += len;
            }
        }
        offsets.push(pos as u32);
    }
    if r.over() {
        return Err(err!(BlobCorrupt, "vocab: the token stream is too short"));
    }
    if pos != total {
        return Err(err!(BlobCorrupt, "vocab: {pos} token bytes decoded, {total} declared"));
    }
    buf.truncate(total);
    Ok((buf, offsets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(tokens: &[&[u8]]) -> (Vec<u8>, Vec<u32>) {
        let mut b = Vec::new();
        let mut o = vec![0u32];
        for t in tokens {
            b.extend_from_slice(t);
            o.push(b.len() as u32);
        }
        (b, o)
    }

    #[test]
    fn roundtrip_pairs_literals_and_holes() {
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|c| vec![c]).collect();
        toks.extend([b"ab".to_vec(), b"abc".to_vec(), vec![], b"<|eot|>".to_vec(), b"abab".to_vec(), b"ab".to_vec(), b"zzzzzzzz".to_vec()]);
        let refs: Vec<&[u8]> = toks.iter().map(|t| &t[..]).collect();
        let (b, o) = flat(&refs);
        let p = pack(&b, &o);
        let (b2, o2) = unpack(&p, b.len()).unwrap();
        assert_eq!((b2, o2), (b.clone(), o.clone()));
        check(&p, b.len()).unwrap();
        // No bound (as a lazily unpacked vocabulary calls it): no overflow.
        assert_eq!(unpack(&p, usize::MAX).unwrap(), (b.clone(), o.clone()));
        check(&p, usize::MAX).unwrap();
        // Damage: a wrong total, a truncated stream, a forward reference.
        let both = |p: &PackedTokens, max: usize| {
            let (u, c) = (unpack(p, max).is_err(), check(p, max).is_err());
            assert_eq!(u, c, "check and unpack agree");
            u
        };
        let mut bad = p.clone();
        bad.total += 1;
        assert!(both(&bad, 1 << 20));
        let mut bad = p.clone();
        bad.stream.truncate(bad.stream.len() / 2);
        assert!(both(&bad, 1 << 20));
        assert!(both(&p, b.len() - 1), "declared total over the limit");
        let mut bad = p.clone();
        bad.code_lens[3] = 13;
        assert!(both(&bad, 1 << 20));
        // Exponential growth is bounded by the declared total.
        let mut bad = p.clone();
        bad.n += 1000;
        assert!(both(&bad, 1 << 20));
        // Every single-bit flip of the stream: both agree, neither panics.
        for i in 0..p.stream.len() * 8 {
            let mut bad = p.clone();
            bad.stream[i / 8] ^= 1 << (i % 8);
            both(&bad, 1 << 20);
        }
    }

    #[test]
    fn random_bytes_roundtrip() {
        // Deterministic pseudo-random tokens, with many splittable ones.
        let mut x = 0x9e37_79b9u32;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let mut toks: Vec<Vec<u8>> = Vec::new();
        for i in 0..3000 {
            let t = if i > 10 && rnd() % 3 > 0 {
                let (a, b) = (rnd() as usize % toks.len(), rnd() as usize % toks.len());
                [toks[a].clone(), toks[b].clone()].concat()
            } else {
                (0..rnd() % 6).map(|_| rnd() as u8).collect()
            };
            toks.push(t.into_iter().take(40).collect());
        }
        let refs: Vec<&[u8]> = toks.iter().map(|t| &t[..]).collect();
        let (b, o) = flat(&refs);
        let p = pack(&b, &o);
        assert!(p.stream.len() < b.len());
        assert_eq!(unpack(&p, b.len()).unwrap(), (b, o));
    }
}
