// grammask/webgpu: apply token masks to logits in a GPUBuffer (js/mask.wgsl).
/** WGSL of the f32 kernel. */
export const MASK_WGSL: string;
/** The kernel source for 'f32' or 'f16' (`enable f16;`). */
export function maskShader(dtype?: 'f32' | 'f16'): string;
export const NEG_INF_BITS: { readonly f32: number; readonly f16: number };

export interface ApplyMaskGPUOptions {
  dtype?: 'f32' | 'f16';
  /** Ids >= vocab are masked (default: width). */
  vocab?: number;
  /** Logits per row (default: buffer size / element size / rows). */
  width?: number;
  rows?: number;
  /** Mask words per row (default ceil(width / 32)). */
  maskWords?: number;
  /** Record into this encoder instead of submitting. */
  encoder?: any;
}

/**
 * Mask logits in place on the GPU. `mask`: a GPUBuffer of u32 words, a
 * Uint32Array (uploaded), or a filler `(words) => matcher.fillMask(words)`
 * writing into a buffer mapped at creation.
 */
export function applyMaskGPU(
  device: any, logitsBuffer: any,
  mask: any | Uint32Array | ((words: Uint32Array) => void),
  options?: ApplyMaskGPUOptions,
): { workgroups: number; maskBuffer: any };

/** The kernel run on the CPU invocation by invocation (reference). */
export function maskKernelReference<T extends Float32Array | Uint16Array>(
  logits: T, mask: Uint32Array, dims: { vocab: number; width: number; rows?: number; maskWords?: number },
): T;
