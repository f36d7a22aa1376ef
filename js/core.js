// grammask JS API: a thin, hand-written layer over the wasm-bindgen classes
// RawMaskStore / RawMatcher (src/wasm.rs). It only
//  - checks arguments (token ids, offsets, options) and throws clear errors,
//  - refuses use after free() with a clear error,
//  - turns a wasm trap (a Rust panic: an internal bug) into an Error and
//    refuses further calls on that module instance,
//  - streams blobs with fetch (MaskStore.fromUrl).
// Everything else (errors from bad blobs, invalid tokens, ...) comes from Rust
// as a JS Error with name "GrammaskError" and `kind` set.
//
// This file has no import/export statements: scripts/build-pkg.sh appends
// `export { makeApi };` (core.mjs) or `module.exports = { makeApi };`
// (core.cjs).

/**
 * @param raw the wasm-bindgen module (its exports)
 * @param isReady () => boolean: false until the web target's init() finished
 */
function makeApi(raw, isReady) {
  const INTERNAL = Symbol('grammask.internal');
  const DISPOSE = typeof Symbol.dispose === 'symbol' ? Symbol.dispose : null;
  let broken = null; // message of a trap that happened in this module instance

  function ready() {
    if (broken) throw new Error(`grammask: the wasm module hit an internal error earlier (${broken}); reload it`);
    if (!isReady()) throw new Error('grammask: the wasm module is not initialized; call `await init()` first');
  }

  // Run a wasm call; a trap becomes a clear Error and poisons the instance.
  function guard(f) {
    ready();
    try {
      return f();
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) {
        let p = null;
        try { p = raw.lastPanic(); } catch { /* the instance may be unusable */ }
        broken = p || e.message;
        throw new Error(`grammask: internal error (${broken}); please report it. This module instance can no longer be used`);
      }
      throw e;
    }
  }

  function u32(x, what) {
    if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 0xffffffff) {
      throw new TypeError(`grammask: ${what} must be an integer in 0..2^32-1, got ${describe(x)}`);
    }
    return x;
  }

  function describe(x) {
    if (typeof x === 'string') return JSON.stringify(x);
    if (typeof x === 'bigint') return `${x}n`;
    try { return String(x); } catch { return typeof x; }
  }

  function tokenArray(ids) {
    if (ids instanceof Uint32Array) return ids;
    if (ids == null || typeof ids[Symbol.iterator] !== 'function') {
      throw new TypeError('grammask: commitTokens expects a Uint32Array or an iterable of token ids');
    }
    const a = Array.from(ids);
    a.forEach((x, i) => u32(x, `token id #${i}`));
    return Uint32Array.from(a);
  }

  function freed(cls) {
    return new Error(`grammask: this ${cls} was freed (free() or [Symbol.dispose]() was called); create a new one`);
  }

  let rawOfStore;

  class MaskStore {
    #raw;

    constructor(rawStore, token) {
      if (token !== INTERNAL) {
        throw new TypeError('grammask: use MaskStore.fromBytes(), MaskStore.fromUrl() or compileStore() to create a MaskStore');
      }
      this.#raw = rawStore;
    }

    static {
      rawOfStore = (s) => {
        if (!(s instanceof MaskStore)) throw new TypeError('grammask: expected a MaskStore');
        return s.#get();
      };
    }

    #get() {
      if (this.#raw === null) throw freed('MaskStore');
      return this.#raw;
    }

    static fromBytes(bytes, options = {}) {
      if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
      if (!(bytes instanceof Uint8Array)) {
        throw new TypeError('grammask: MaskStore.fromBytes expects a Uint8Array (or an ArrayBuffer)');
      }
      const fp = options?.expectTokenizerFingerprint;
      if (fp !== undefined && typeof fp !== 'string') {
        throw new TypeError('grammask: expectTokenizerFingerprint must be a string of 16 hex digits');
      }
      return new MaskStore(guard(() => raw.RawMaskStore.fromBytes(bytes, fp)), INTERNAL);
    }

    static async fromUrl(url, init, onProgress, options) {
      ready();
      if (onProgress !== undefined && typeof onProgress !== 'function') {
        throw new TypeError('grammask: onProgress must be a function (loaded, total) => void');
      }
      const res = await fetch(url, init);
      if (!res.ok) throw new Error(`grammask: fetching ${url} failed: HTTP ${res.status} ${res.statusText}`);
      const len = Number(res.headers.get('content-length'));
      // With a Content-Encoding the length is of the compressed body: no total then.
      const total = Number.isFinite(len) && len > 0 && !res.headers.get('content-encoding') ? len : undefined;
      let bytes;
      if (res.body && typeof res.body.getReader === 'function') {
        const reader = res.body.getReader();
        let buf = new Uint8Array(total ?? 1 << 20);
        let loaded = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (loaded + value.length > buf.length) {
            const bigger = new Uint8Array(Math.max(buf.length * 2, loaded + value.length));
            bigger.set(buf.subarray(0, loaded));
            buf = bigger;
          }
          buf.set(value, loaded);
          loaded += value.length;
          if (onProgress) onProgress(loaded, total);
        }
        bytes = buf.length === loaded ? buf : buf.slice(0, loaded);
      } else {
        bytes = new Uint8Array(await res.arrayBuffer());
        if (onProgress) onProgress(bytes.length, total ?? bytes.length);
      }
      return MaskStore.fromBytes(bytes, options);
    }

    get vocabSize() { return guard(() => this.#get().vocabSize); }
    get maskWords() { return guard(() => this.#get().maskWords); }
    get eosTokenIds() { return guard(() => this.#get().eosTokenIds); }
    get tokenizerFingerprint() { return guard(() => this.#get().tokenizerFingerprint); }
    get grammarFingerprint() { return guard(() => this.#get().grammarFingerprint); }
    tokenBytes(id) { u32(id, 'token id'); return guard(() => this.#get().tokenBytes(id)); }
    stats() { return guard(() => this.#get().stats()); }
    toBytes() { return guard(() => this.#get().toBytes()); }

    get freed() { return this.#raw === null; }

    free() {
      if (this.#raw !== null) {
        const r = this.#raw;
        this.#raw = null;
        r.free();
      }
    }
  }

  class Matcher {
    #raw;
    #store;

    constructor(store, options = {}) {
      const rs = rawOfStore(store);
      if (options === null || typeof options !== 'object') throw new TypeError('grammask: Matcher options must be an object');
      const { maxRollback, maskWidth } = options;
      if (maxRollback !== undefined) u32(maxRollback, 'maxRollback');
      if (maskWidth !== undefined) u32(maskWidth, 'maskWidth');
      this.#raw = guard(() => new raw.RawMatcher(rs, maxRollback, maskWidth));
      this.#store = store;
    }

    #get() {
      if (this.#raw === null) throw freed('Matcher');
      return this.#raw;
    }

    get store() { this.#get(); return this.#store; }
    get maskWords() { return guard(() => this.#get().maskWords); }
    get maskWidth() { return guard(() => this.#get().maskWidth); }

    computeMask() { return guard(() => this.#get().computeMask()); }

    fillMask(out, offset = 0) {
      if (!(out instanceof Uint32Array)) throw new TypeError('grammask: fillMask expects a Uint32Array');
      u32(offset, 'offset');
      guard(() => this.#get().fillMask(out, offset));
      return out;
    }

    isAllowed(id) { u32(id, 'token id'); return guard(() => this.#get().isAllowed(id)); }
    commitToken(id) { u32(id, 'token id'); guard(() => this.#get().commitToken(id)); }
    commitTokens(ids) { const a = tokenArray(ids); guard(() => this.#get().commitTokens(a)); }
    rollback(n = 1) { u32(n, 'rollback count'); guard(() => this.#get().rollback(n)); }
    forcedTokens(limit = 64) { u32(limit, 'limit'); return guard(() => this.#get().forcedTokens(limit)); }
    isAccepting() { return guard(() => this.#get().isAccepting()); }
    isStopped() { return guard(() => this.#get().isStopped()); }
    reset() { guard(() => this.#get().reset()); }

    get freed() { return this.#raw === null; }

    free() {
      if (this.#raw !== null) {
        const r = this.#raw;
        this.#raw = null;
        this.#store = null;
        r.free();
      }
    }
  }

  if (DISPOSE) {
    MaskStore.prototype[DISPOSE] = function () { this.free(); };
    Matcher.prototype[DISPOSE] = function () { this.free(); };
  }

  function wasmMemoryBytes() {
    return guard(() => raw.wasmMemoryBytes());
  }

  const api = { MaskStore, Matcher, wasmMemoryBytes };

  if (typeof raw.compileStoreRaw === 'function') {
    // Read lazily: on the web entry the wasm is not instantiated at module load.
    let limits = null;
    const limit = (i) => (limits ??= guard(() => raw.compilerLimits()))[i];
    const str = (x, what) => {
      if (x !== undefined && typeof x !== 'string') throw new TypeError(`grammask: ${what} must be a string`);
      return x;
    };
    const eosIds = (eos) => {
      if (eos === undefined) return undefined;
      const a = Array.isArray(eos) || eos instanceof Uint32Array ? Array.from(eos) : [eos];
      a.forEach((x) => u32(x, 'eos token id'));
      return Uint32Array.from(a);
    };
    api.compilerLimits = Object.freeze({ get maxGrammarBytes() { return limit(0); }, get maxTokenizerBytes() { return limit(1); } });
    api.compileStore = function compileStore(grammarText, tokenizerJson, options = {}) {
      str(grammarText, 'grammarText');
      str(tokenizerJson, 'tokenizerJson');
      if (grammarText === undefined || tokenizerJson === undefined) {
        throw new TypeError('grammask: compileStore(grammarText, tokenizerJson, options?) needs both texts');
      }
      const { eos, startRule, tokenizerConfig, generationConfig, streamline, onProgress } = options ?? {};
      if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('grammask: onProgress must be a function');
      if (streamline !== undefined && typeof streamline !== 'boolean') throw new TypeError('grammask: streamline must be a boolean');
      const r = guard(() => raw.compileStoreRaw(
        grammarText, tokenizerJson, str(tokenizerConfig, 'tokenizerConfig'), str(generationConfig, 'generationConfig'),
        eosIds(eos), str(startRule, 'startRule'), streamline, onProgress));
      return new MaskStore(r, INTERNAL);
    };
    api.tokenizerFingerprint = function tokenizerFingerprint(tokenizerJson, options = {}) {
      str(tokenizerJson, 'tokenizerJson');
      const { eos, tokenizerConfig, generationConfig } = options ?? {};
      return guard(() => raw.tokenizerFingerprintRaw(
        tokenizerJson, str(tokenizerConfig, 'tokenizerConfig'), str(generationConfig, 'generationConfig'), eosIds(eos)));
    };
  }
  return api;
}
