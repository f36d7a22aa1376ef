//! A small stable 64-bit hash (FNV-1a) for fingerprints and checksums. Stable
//! across platforms and versions: fingerprints written into blobs depend on it.
//! And [`FxHasher`], a fast hasher for the crate's maps (one hasher, so maps
//! with the same key and value types share one instantiation in the wasm).

use std::hash::Hasher;

#[cfg(feature = "compiler")]
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(u64);

#[cfg(feature = "compiler")]
impl Fnv64 {
    pub const fn new() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(feature = "compiler")]
impl Default for Fnv64 {
    fn default() -> Self {
        Self::new()
    }
}

/// FxHash-style hasher for the compiler's interning maps (keys are integer
/// slices: byte-class columns, state sets, item sets). Not for fingerprints:
/// unlike [`Fnv64`] it is not a stable format, and it is weak against chosen
/// keys (a map stays correct, only slower).
#[derive(Default)]
pub(crate) struct FxHasher(u64);
impl Hasher for FxHasher {
    /// The multiply mixes upward only; hashbrown picks the bucket from the
    /// low bits, so the well-mixed high bits are rotated down (keys with
    /// zero low bits, such as regex-automata's premultiplied state ids,
    /// would otherwise all share a bucket).
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}
pub(crate) type FxMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;
pub(crate) type FxSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<FxHasher>>;

/// Hash of a byte slice (the known-value test).
#[cfg(test)]
fn fnv64(bytes: &[u8]) -> u64 {
    let mut h = Fnv64::new();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        assert_eq!(super::fnv64(b""), 0xcbf29ce484222325);
        assert_eq!(super::fnv64(b"a"), 0xaf63dc4c8601ec8c);
    }
}
