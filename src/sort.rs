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
/// triples through one u128 sort, instead of a sort per tuple type.
pub(crate) fn sort_packed<T: Packed>(v: &mut [T]) {
    if size_of::<T>() <= 8 {
        let mut k: Vec<u64> = v.iter().map(|&x| x.pack() as u64).collect();
        k.sort_unstable();
        v.iter_mut().zip(k).for_each(|(d, s)| *d = T::unpack(s as u128));
    } else {
        let mut k: Vec<u128> = v.iter().map(|&x| x.pack()).collect();
        k.sort_unstable();
        v.iter_mut().zip(k).for_each(|(d, s)| *d = T::unpack(s));
    }
}
