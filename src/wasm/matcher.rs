//! `RawMatcher`: a matcher (wrapped by the JS class `Matcher`).

use super::js_error;
use super::mask_store::RawMaskStore;
use super::prefix_set::RawPrefixSet;
use crate::matcher::{Matcher, MatcherOptions};
use js_sys::Uint32Array;
use wasm_bindgen::prelude::*;

/// A matcher (wrapped by the JS class `Matcher`).
#[wasm_bindgen(js_name = RawMatcher)]
pub struct RawMatcher {
    m: Matcher,
    /// The mask buffer: `ceil(mask_width / 32)` words, reused by every call.
    buf: Vec<u32>,
    mask_width: u32,
}

#[wasm_bindgen(js_class = RawMatcher)]
impl RawMatcher {
    #[wasm_bindgen(constructor)]
    pub fn new(store: &RawMaskStore, max_rollback: Option<u32>, mask_width: Option<u32>) -> Result<RawMatcher, JsValue> {
        let vocab = store.inner.vocab().len() as u32;
        let width = mask_width.unwrap_or(vocab);
        if width < vocab {
            return Err(js_error(crate::err!(
                InvalidState,
                "maskWidth {width} is smaller than the vocabulary size {vocab}: every token of the store needs a bit"
            )));
        }
        let words = (width as usize).div_ceil(32).max(store.inner.mask_words());
        let mut opts = MatcherOptions::default();
        if let Some(n) = max_rollback {
            opts.max_rollback = n as usize;
        }
        Ok(RawMatcher { m: Matcher::with_options(store.inner.clone(), opts), buf: vec![0; words], mask_width: width })
    }

    #[wasm_bindgen(getter, js_name = maskWords)]
    pub fn mask_words(&self) -> u32 {
        self.buf.len() as u32
    }

    #[wasm_bindgen(getter, js_name = maskWidth)]
    pub fn mask_width(&self) -> u32 {
        self.mask_width
    }

    fn fill(&mut self) -> Result<(), JsValue> {
        self.m.fill_mask(&mut self.buf).map_err(js_error)
    }

    /// The mask as a new `Uint32Array` of `maskWords` words.
    #[wasm_bindgen(js_name = computeMask)]
    pub fn compute_mask(&mut self) -> Result<Vec<u32>, JsValue> {
        self.fill()?;
        Ok(self.buf.clone())
    }

    /// Write the mask into `out[offset .. offset + maskWords]`.
    #[wasm_bindgen(js_name = fillMask)]
    pub fn fill_mask(&mut self, out: &Uint32Array, offset: u32) -> Result<(), JsValue> {
        let need = offset as u64 + self.buf.len() as u64;
        if need > out.length() as u64 {
            return Err(js_error(crate::err!(
                InvalidState,
                "fillMask: the output has {} words; offset {offset} + maskWords {} needs {need}",
                out.length(),
                self.buf.len()
            )));
        }
        self.fill()?;
        // SAFETY: the view is used at once, before anything can allocate (and
        // so grow the memory and detach the view).
        let view = unsafe { Uint32Array::view(&self.buf) };
        out.set(&view, offset);
        Ok(())
    }

    /// Compute the mask into this matcher's own buffer in wasm memory (no
    /// copy out): `maskWords` words at byte offset [`RawMatcher::mask_ptr`]
    /// of `wasmMemory().buffer`. The JS layer copies it with one
    /// `TypedArray.set` from a cached view (two fewer calls out of wasm and no
    /// view object per mask than [`RawMatcher::fill_mask`]).
    #[wasm_bindgen(js_name = fillMaskBuffer)]
    pub fn fill_mask_buffer(&mut self) -> Result<(), JsValue> {
        self.fill()
    }

    /// Byte offset of the mask buffer in wasm memory (fixed for the matcher's
    /// life: the buffer is never reallocated).
    #[wasm_bindgen(getter, js_name = maskPtr)]
    pub fn mask_ptr(&self) -> u32 {
        self.buf.as_ptr() as usize as u32
    }

    #[wasm_bindgen(js_name = isAllowed)]
    pub fn is_allowed(&self, id: u32) -> bool {
        self.m.is_allowed(id)
    }

    #[wasm_bindgen(js_name = commitToken)]
    pub fn commit_token(&mut self, id: u32) -> Result<(), JsValue> {
        self.m.commit_token(id).map_err(js_error)
    }

    #[wasm_bindgen(js_name = commitTokens)]
    pub fn commit_tokens(&mut self, ids: &[u32]) -> Result<(), JsValue> {
        self.m.commit_tokens(ids).map_err(js_error)
    }

    pub fn rollback(&mut self, n: u32) -> Result<(), JsValue> {
        self.m.rollback(n as usize).map_err(js_error)
    }

    #[wasm_bindgen(js_name = forcedTokens)]
    pub fn forced_tokens(&self, limit: u32) -> Vec<u32> {
        self.m.forced_tokens(limit as usize)
    }

    /// Spend up to `budget_ms` of idle time computing the store entries of
    /// positions whose first visit was computed directly (see
    /// `Matcher::prefetch`); true if such positions remain.
    pub fn prefetch(&self, budget_ms: f64) -> bool {
        // `as` saturates (NaN and negatives give 0).
        self.m.prefetch(std::time::Duration::from_micros((budget_ms * 1e3) as u64))
    }

    #[wasm_bindgen(js_name = isAccepting)]
    pub fn is_accepting(&self) -> bool {
        self.m.is_accepting()
    }

    #[wasm_bindgen(js_name = isStopped)]
    pub fn is_stopped(&self) -> bool {
        self.m.is_stopped()
    }

    pub fn reset(&mut self) {
        self.m.reset()
    }

    /// The entries of `set` whose bytes the matcher accepts from its current
    /// state (committed one by one as the single-byte tokens of
    /// `byte_tokens`, -1: none, the entry fails), and, for entries that ask,
    /// after which the text is complete. Entries whose id is set in `skip`
    /// (a mask) are not tried. Shared prefixes are committed once (the set is
    /// sorted); a refused byte skips every entry that shares it. The matcher
    /// is rolled back to where it was. Returns the ids of the hits, then the
    /// number of commits made (last element).
    #[wasm_bindgen(js_name = acceptedPrefixes)]
    pub fn accepted_prefixes(&mut self, set: &RawPrefixSet, byte_tokens: &[i32], skip: &[u32]) -> Result<Vec<u32>, JsValue> {
        let mut hits = Vec::new();
        let mut path: Vec<u8> = Vec::new();
        let mut failed: Option<Vec<u8>> = None;
        let mut commits = 0u32;
        let is_set = |m: &[u32], id: u32| m.get(id as usize >> 5).is_some_and(|w| w >> (id & 31) & 1 == 1);
        for e in 0..set.ids.len() {
            let id = set.ids[e];
            if is_set(skip, id) {
                continue;
            }
            let pre = &set.bytes[set.offsets[e] as usize..set.offsets[e + 1] as usize];
            if let Some(f) = &failed {
                if pre.starts_with(f) {
                    continue;
                }
            }
            let l = path.iter().zip(pre).take_while(|(a, b)| a == b).count();
            if path.len() > l {
                self.m.rollback(path.len() - l).map_err(js_error)?;
                path.truncate(l);
            }
            let mut ok = true;
            for (i, &b) in pre.iter().enumerate().skip(l) {
                let t = byte_tokens.get(b as usize).copied().unwrap_or(-1);
                commits += 1;
                if t < 0 || self.m.commit_token(t as u32).is_err() {
                    failed = Some(pre[..=i].to_vec());
                    ok = false;
                    break;
                }
                path.push(b);
            }
            if ok && (set.accepting[e] == 0 || self.m.is_accepting()) {
                hits.push(id);
            }
        }
        if !path.is_empty() {
            self.m.rollback(path.len()).map_err(js_error)?;
        }
        hits.push(commits);
        Ok(hits)
    }
}
