//! `RawPrefixSet`: the candidates of `RawMatcher::acceptedPrefixes`.

use super::js_error;
use wasm_bindgen::prelude::*;

/// Byte strings with a token id each and an "and then complete" flag, sorted
/// by bytes: the candidates of `RawMatcher::acceptedPrefixes`.
#[wasm_bindgen(js_name = RawPrefixSet)]
pub struct RawPrefixSet {
    pub(super) bytes: Vec<u8>,
    pub(super) offsets: Vec<u32>,
    pub(super) ids: Vec<u32>,
    pub(super) accepting: Vec<u8>,
}

#[wasm_bindgen(js_class = RawPrefixSet)]
impl RawPrefixSet {
    /// `offsets` has one more element than `ids` and `accepting`; entry `e` is
    /// `bytes[offsets[e] .. offsets[e + 1]]` and must sort after entry `e - 1`.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: Vec<u8>, offsets: Vec<u32>, ids: Vec<u32>, accepting: Vec<u8>) -> Result<RawPrefixSet, JsValue> {
        let n = ids.len();
        let bad = |m: &str| js_error(crate::err!(InvalidState, "prefix set: {m}"));
        if offsets.len() != n + 1 || accepting.len() != n || offsets.first() != Some(&0) || offsets[n] as usize != bytes.len() {
            return Err(bad("offsets must have ids.length + 1 entries from 0 to bytes.length, accepting ids.length"));
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("offsets must not decrease"));
        }
        let entry = |e: usize| &bytes[offsets[e] as usize..offsets[e + 1] as usize];
        if (1..n).any(|e| entry(e - 1) > entry(e)) {
            return Err(bad("entries must be sorted by their bytes"));
        }
        Ok(RawPrefixSet { bytes, offsets, ids, accepting })
    }

    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.ids.len() as u32
    }
}
