// Token masks, the one JS home of their bit layout: a mask is a Uint32Array
// in which token `id` is allowed iff bit `id & 31` of word `id >> 5` is set
// (the layout of Matcher.fillMask and of the wasm facade, src/wasm/).
// Used by grammask/transformers, grammask/webgpu and the demo Worker
// (www/worker); an internal module of the package (not in its exports map).
// The tests keep their own reading of a bit (pkg-tests/helpers.mjs `bit`) on
// purpose: it judges this one.

/** Whether token `id` is allowed by `mask`. */
export const isSet = (mask, id) => ((mask[id >>> 5] >>> (id & 31)) & 1) === 1;

/** Allow token `id` (in place). */
export const setBit = (mask, id) => { mask[id >>> 5] |= 1 << (id & 31); };

/** Refuse token `id` (in place). */
export const clearBit = (mask, id) => { mask[id >>> 5] &= ~(1 << (id & 31)); };

/** Number of set bits of a 32-bit word. */
export function popcount(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Number of allowed tokens of a mask (set bits over all its words). */
export function countAllowed(mask) {
  let c = 0;
  for (const x of mask) c += popcount(x);
  return c;
}

/** Index of the lowest set bit of a non-zero 32-bit word. */
export function bitIndex(x) {
  return 31 - Math.clz32(x & -x);
}

/** Allow exactly the ids 0..n-1 (in place): every other bit of the mask is cleared. */
export function fillAll(mask, n) {
  const full = n >>> 5;
  mask.fill(0xffffffff, 0, full);
  mask.fill(0, full);
  if (n & 31) mask[full] = (1 << (n & 31)) - 1 >>> 0;
}
