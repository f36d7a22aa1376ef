// grammask × WebGPU: apply token masks to logits that live in a GPUBuffer
// (e.g. an onnxruntime-web WebGPU output), without reading them back.
// The kernel is js/mask.wgsl (inlined below by scripts/build/build-pkg.sh): one
// invocation per logit, f32 or f16 (`enable f16;`, device feature
// "shader-f16"). See README "WebGPU".
//
//   const masker = applyMaskGPU(device, logitsBuffer, (words) => matcher.fillMask(words),
//                               { dtype: 'f32', vocab: store.vocabSize, width: 128256 });

/** The WGSL source of the f32 kernel (js/mask.wgsl). */
export const MASK_WGSL = /*@MASK_WGSL@*/ '';

/**
 * The kernel for `dtype` ('f32' or 'f16'). f16: `enable f16;` first, and every
 * line carrying a `// f16: ` comment is replaced by the text after it.
 */
export function maskShader(dtype = 'f32') {
  if (dtype === 'f32') return MASK_WGSL;
  if (dtype !== 'f16') throw new TypeError(`grammask: dtype must be 'f32' or 'f16', got ${String(dtype)}`);
  const lines = MASK_WGSL.split('\n').map((l) => {
    const k = l.indexOf('// f16: ');
    return k < 0 ? l : l.slice(k + 8);
  });
  return 'enable f16;\n' + lines.join('\n');
}

/** Bits of -Infinity (f32: the kernel's `params.neg_inf`; f16: what it writes). */
export const NEG_INF_BITS = Object.freeze({ f32: 0xff800000, f16: 0xfc00 });
const WORKGROUP = 256;

const pipelines = new WeakMap(); // GPUDevice -> { f32?: GPUComputePipeline, f16?: ... }

function pipelineFor(device, dtype) {
  let p = pipelines.get(device);
  if (!p) pipelines.set(device, (p = {}));
  if (!p[dtype]) {
    if (dtype === 'f16' && !device.features.has('shader-f16')) {
      throw new Error('grammask: f16 logits need a GPUDevice created with requiredFeatures: ["shader-f16"]');
    }
    const module = device.createShaderModule({ label: `grammask mask ${dtype}`, code: maskShader(dtype) });
    p[dtype] = device.createComputePipeline({ label: `grammask mask ${dtype}`, layout: 'auto', compute: { module, entryPoint: 'main' } });
  }
  return p[dtype];
}

/**
 * Mask `rows` rows of `width` logits in `logitsBuffer` (a GPUBuffer with
 * STORAGE usage, f32 or f16 elements, row-major) in place.
 *
 * `mask` is one of
 *  - a GPUBuffer (STORAGE) holding `rows * maskWords` u32 words;
 *  - a Uint32Array (uploaded with queue.writeBuffer);
 *  - a function `(words: Uint32Array) => void` that fills a buffer mapped at
 *    creation, e.g. `(w) => matcher.fillMask(w)` (no extra copy in JS); for
 *    a batch it gets all rows (`rows * maskWords` words).
 * Options: dtype ('f32' | 'f16', default 'f32'); vocab (ids >= vocab are
 * masked; default width); width (logits per row; default: buffer size / rows);
 * rows (default 1); maskWords (default ceil(width / 32)); encoder (a
 * GPUCommandEncoder to record into; otherwise a command buffer is submitted).
 * Returns { workgroups, maskBuffer } (maskBuffer: the buffer used; the caller
 * owns one it passed in; ones created here are destroyed after submission
 * when no encoder was given).
 */
export function applyMaskGPU(device, logitsBuffer, mask, options = {}) {
  const { dtype = 'f32', rows = 1, encoder } = options;
  const elem = dtype === 'f16' ? 2 : dtype === 'f32' ? 4 : 0;
  if (!elem) throw new TypeError(`grammask: dtype must be 'f32' or 'f16', got ${String(dtype)}`);
  const width = options.width ?? Math.floor(logitsBuffer.size / elem / rows);
  const vocab = options.vocab ?? width;
  const maskWords = options.maskWords ?? Math.ceil(width / 32);
  for (const [k, v] of Object.entries({ width, vocab, rows, maskWords })) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new TypeError(`grammask: ${k} must be a u32, got ${v}`);
  }
  if (rows * width * elem > logitsBuffer.size) throw new RangeError(`grammask: logits buffer holds ${logitsBuffer.size} bytes, need ${rows * width * elem}`);
  if (maskWords * 32 < Math.min(vocab, width)) throw new RangeError('grammask: maskWords too small for vocab');
  const U = globalThis.GPUBufferUsage;
  const maskBytes = Math.max(4, rows * maskWords * 4);
  let maskBuffer, owned = false;
  if (typeof mask === 'function' || mask instanceof Uint32Array) {
    owned = true;
    maskBuffer = device.createBuffer({ label: 'grammask mask', size: maskBytes, usage: U.STORAGE | U.COPY_DST, mappedAtCreation: typeof mask === 'function' });
    if (typeof mask === 'function') {
      mask(new Uint32Array(maskBuffer.getMappedRange(), 0, rows * maskWords));
      maskBuffer.unmap();
    } else {
      if (mask.length < rows * maskWords) throw new RangeError(`grammask: mask has ${mask.length} words, need ${rows * maskWords}`);
      device.queue.writeBuffer(maskBuffer, 0, mask, 0, rows * maskWords);
    }
  } else {
    maskBuffer = mask;
  }
  const params = device.createBuffer({ label: 'grammask params', size: 32, usage: U.UNIFORM, mappedAtCreation: true });
  new Uint32Array(params.getMappedRange()).set([vocab, width, rows, maskWords, NEG_INF_BITS.f32]);
  params.unmap();
  const pipeline = pipelineFor(device, dtype);
  const bind = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: logitsBuffer } },
      { binding: 1, resource: { buffer: maskBuffer } },
      { binding: 2, resource: { buffer: params } },
    ],
  });
  const enc = encoder ?? device.createCommandEncoder({ label: 'grammask mask' });
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  const workgroups = Math.ceil(width / WORKGROUP);
  pass.dispatchWorkgroups(workgroups, rows);
  pass.end();
  if (!encoder) {
    device.queue.submit([enc.finish()]);
    params.destroy();
    if (owned) maskBuffer.destroy();
  }
  return { workgroups, maskBuffer };
}

/**
 * The kernel on the CPU, invocation by invocation (the reference the tests
 * compare with `applyMask` and, where a GPU adapter exists, with the GPU).
 * `logits`: Float32Array (f32) or Uint16Array (f16 bits).
 */
export function maskKernelReference(logits, mask, { vocab, width, rows = 1, maskWords = Math.ceil(width / 32) }) {
  const neg = logits instanceof Uint16Array ? NEG_INF_BITS.f16 : -Infinity;
  const wgX = Math.ceil(width / WORKGROUP);
  for (let row = 0; row < rows; row++) {
    for (let i = 0; i < wgX * WORKGROUP; i++) { // every invocation, including the idle ones
      if (i >= width) continue;
      let allowed = false;
      // The kernel's own bit test, transcribed (not js/mask-bits.js): this is the judge of mask.wgsl.
      if (i < vocab) allowed = ((mask[row * maskWords + (i >>> 5)] >>> (i & 31)) & 1) === 1;
      if (!allowed) logits[row * width + i] = neg;
    }
  }
  return logits;
}
