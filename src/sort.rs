//! One stable sort for the compiler's cold orderings (terminal ranks,
//! conflicting rules, alternation branches).
//!
//! Every `sort_by_key` with its own closure is a separate instantiation of
//! std's stable sort, about 4 KB of wasm each. The orderings here run once per
//! compile on short lists, so they share this single instantiation: sort
//! indices through a `dyn` comparator, then read the items in that order.

use std::cmp::Ordering;

/// Sort `v` stably by `cmp` (one instantiation for all callers).
pub(crate) fn sort_u32_by(v: &mut [u32], cmp: &mut dyn FnMut(u32, u32) -> Ordering) {
    v.sort_by(|&a, &b| cmp(a, b));
}

/// The permutation `0..n` sorted stably by `cmp` over indices.
pub(crate) fn order_by(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    sort_u32_by(&mut v, &mut |a, b| cmp(a as usize, b as usize));
    v
}

/// Sort `v` stably through [`sort_u32_by`]'s instantiation: for cold lists
/// whose element type has no other sort (strings, flags, grammar contexts),
/// so that it gets no sort code of its own.
pub(crate) fn sort_cold<T: Ord>(v: &mut Vec<T>) {
    let order = order_by(v.len(), &mut |a, b| v[a].cmp(&v[b]));
    let mut old: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.iter().filter_map(|&i| old[i as usize].take()));
}

/// Plain integer pairs and triples (LR transitions, edge lists, context
/// keys), packed into one integer whose order is the tuple's order.
pub(crate) trait Packed: Copy {
    fn pack(self) -> u128;
    fn unpack(k: u128) -> Self;
}
impl Packed for (u32, u32) {
    fn pack(self) -> u128 {
        (self.0 as u128) << 32 | self.1 as u128
    }
    fn unpack(k: u128) -> Self {
        ((k >> 32) as u32, k as u32)
    }
}
impl Packed for (u32, u32, u32) {
    fn pack(self) -> u128 {
        (self.0 as u128) << 64 | (self.1 as u128) << 32 | self.2 as u128
    }
    fn unpack(k: u128) -> Self {
        ((k >> 64) as u32, (k >> 32) as u32, k as u32)
    }
}
impl Packed for ([u32; 2], u32) {
    fn pack(self) -> u128 {
        (self.0[0], self.0[1], self.1).pack()
    }
    fn unpack(k: u128) -> Self {
        let (a, b, c) = <(u32, u32, u32)>::unpack(k);
        ([a, b], c)
    }
}

/// Sort `v` like `sort_unstable` (equal items are identical, so the order
/// is the same): pairs through the u64 sort the lexer builder already has,
/// triples through [`sort_wide`], instead of a sort per tuple type.
pub(crate) fn sort_packed<T: Packed>(v: &mut [T]) {
    if size_of::<T>() <= 8 {
        let mut k: Vec<u64> = v.iter().map(|&x| x.pack() as u64).collect();
        k.sort_unstable();
        v.iter_mut().zip(k).for_each(|(d, s)| *d = T::unpack(s as u128));
    } else {
        let mut k: Vec<u128> = v.iter().map(|&x| x.pack()).collect();
        sort_wide(&mut k);
        v.iter_mut().zip(k).for_each(|(d, s)| *d = T::unpack(s));
    }
}

/// Sort packed triples (three u32 fields of a u128): through the u64 sort
/// when the fields' used bits fit in 64 together (the usual case: ids), else
/// through the index sort; no u128 sort of its own (wasm size).
fn sort_wide(k: &mut [u128]) {
    let mut or = 0u128;
    for &x in k.iter() {
        or |= x;
    }
    let bits = |x: u128| 32 - (x as u32).leading_zeros();
    let (wa, wb, wc) = (bits(or >> 64), bits(or >> 32), bits(or));
    if wa + wb + wc <= 64 {
        // Order-preserving: each field keeps its bits, in the same order.
        let (sb, sc) = (wb + wc, wc);
        let mut s: Vec<u64> = Vec::with_capacity(k.len());
        for &x in k.iter() {
            s.push(((x >> 64) << sb | ((x >> 32) & 0xFFFF_FFFF) << sc | (x & 0xFFFF_FFFF)) as u64);
        }
        s.sort_unstable();
        for (d, &y) in k.iter_mut().zip(&s) {
            let y = y as u128;
            *d = (y >> sb) << 64 | ((y >> sc) & ((1u128 << wb) - 1)) << 32 | (y & ((1u128 << wc) - 1));
        }
    } else {
        let order = order_by(k.len(), &mut |a, b| k[a].cmp(&k[b]));
        let old = k.to_vec();
        for (d, &i) in k.iter_mut().zip(&order) {
            *d = old[i as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    /// Both paths of the triple sort equal std's sort (small fields, and
    /// fields too wide together for 64 bits).
    #[test]
    fn packed_triples() {
        let mut x = 0x9E37_79B9u32;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for (mask, n) in [(0xFFu32, 300), (0xFFFF_FFFF, 300), (0x3, 50), (0, 5)] {
            let v: Vec<(u32, u32, u32)> = (0..n).map(|_| (next() & mask, next() & mask, next() & 0xFFFF)).collect();
            let mut a = v.clone();
            super::sort_packed(&mut a);
            let mut b = v;
            b.sort_unstable();
            assert_eq!(a, b);
        }
        let mut e: Vec<(u32, u32, u32)> = Vec::new();
        super::sort_packed(&mut e);
        assert!(e.is_empty());
    }
}
