// grammask: apply a token mask to logits on the GPU, in place.
// One invocation per logit: global_invocation_id.x = token id, .y = batch row.
// Logit `i` of row `r` becomes -Infinity unless bit (i & 31) of word
// r * mask_words + (i >> 5) of `mask` is set, or if i >= vocab (models whose
// logits are wider than the tokenizer's vocabulary).
// This is the f32 variant. The f16 variant (needs the device feature
// "shader-f16") is derived from it: prepend `enable f16;` and replace each line
// ending in an `f16:` comment by the text after that marker (js/webgpu.js
// `maskShader('f16')` and tests/suite/wgsl.rs do exactly this). -Infinity comes from
// `params.neg_inf`, the bits of an f32 -Infinity (0xff800000), since WGSL has
// no infinity literal; the f16 variant converts it (IEEE: -inf stays -inf).
// (A bitcast to vec2<f16> would be exact, but naga 27 mistypes it, and
// unpack2x16float needs a capability some devices lack.)
alias Logit = f32; // f16: alias Logit = f16;

struct Params {
  vocab: u32,        // ids >= vocab are masked
  width: u32,        // logits per row (the row stride)
  rows: u32,
  mask_words: u32,   // mask words per row
  neg_inf: u32,      // bits of an f32 -Infinity
}

@group(0) @binding(0) var<storage, read_write> logits: array<Logit>;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn neg_inf() -> Logit { return Logit(bitcast<f32>(params.neg_inf)); }

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let row = gid.y;
  if (i >= params.width || row >= params.rows) { return; }
  var allowed = false;
  if (i < params.vocab) {
    let word = mask[row * params.mask_words + (i >> 5u)];
    allowed = ((word >> (i & 31u)) & 1u) == 1u;
  }
  if (!allowed) {
    logits[row * params.width + i] = neg_inf();
  }
}
