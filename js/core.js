// grammask JS API over the wasm-bindgen classes (src/wasm/): argument checks,
// use after free() and wasm traps (Rust panics) as clear Errors, blob
// streaming; Rust's errors are Errors named "GrammaskError" with `kind`.
// Shipped as core.mjs (one export, no imports); build-pkg.sh derives core.cjs.

/**
 * @param raw the wasm-bindgen module (its exports)
 * @param isReady () => boolean: false until the web target's init() finished
 */
export function makeApi(raw, isReady) {
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

  // Node: a path or a file: URL is read from disk (fetch cannot). Elsewhere: null.
  async function readLocalFile(url) {
    const proc = globalThis.process;
    if (!proc || !proc.versions || !proc.versions.node) return null;
    const href = url instanceof URL ? url.href : String(url);
    const isFileUrl = href.startsWith('file:');
    if (!isFileUrl && /^[a-z][a-z0-9+.-]*:/i.test(href) && !/^[a-z]:[\\/]/i.test(href)) return null;
    const load = async (name) => (proc.getBuiltinModule ? proc.getBuiltinModule(name) : await import(/* webpackIgnore: true */ `node:${name}`));
    const fs = await load('fs/promises');
    const path = isFileUrl ? (await load('url')).fileURLToPath(href) : href;
    try {
      const b = await fs.readFile(path);
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    } catch (e) {
      throw new Error(`grammask: reading ${path} failed: ${e.message}`);
    }
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
      const file = await readLocalFile(url);
      if (file) {
        if (onProgress) onProgress(file.length, file.length);
        return MaskStore.fromBytes(file, options);
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
    /** What the compile ignored (lenient schemas); empty for blobs. */
    get warnings() { return guard(() => this.#get().warnings); }
    /** The store's vocabulary as a PreparedVocab (a new handle: free it when done). */
    vocab() { return newVocab(guard(() => this.#get().vocab())); }
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
    #words = 0;
    #view = null;

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
      const r = this.#get();
      if (this.#words === 0) this.#words = guard(() => r.maskWords);
      if (offset + this.#words > out.length) {
        guard(() => r.fillMask(out, offset)); // throws the size error
        return out;
      }
      // The mask is computed into the matcher's buffer in wasm memory and
      // copied out through a view of it (kept until the memory grows).
      guard(() => r.fillMaskBuffer());
      const mem = wasmMemory();
      if (this.#view === null || this.#view.buffer !== mem.buffer) {
        this.#view = new Uint32Array(mem.buffer, guard(() => r.maskPtr), this.#words);
      }
      out.set(this.#view, offset);
      return out;
    }

    isAllowed(id) { u32(id, 'token id'); return guard(() => this.#get().isAllowed(id)); }
    commitToken(id) { u32(id, 'token id'); guard(() => this.#get().commitToken(id)); }
    commitTokens(ids) { const a = tokenArray(ids); guard(() => this.#get().commitTokens(a)); }
    rollback(n = 1) { u32(n, 'rollback count'); guard(() => this.#get().rollback(n)); }
    forcedTokens(limit = 64) { u32(limit, 'limit'); return guard(() => this.#get().forcedTokens(limit)); }
    prefetch(budgetMs = 2) {
      if (!(budgetMs >= 0)) throw new TypeError(`grammask: prefetch budget must be ms >= 0, got ${describe(budgetMs)}`);
      return guard(() => this.#get().prefetch(budgetMs));
    }
    /**
     * Which entries of a PrefixSet the matcher accepts from here (their bytes
     * committed one by one as the single-byte tokens `byteTokens`, an
     * Int32Array(256) with -1 for none), and, for entries that ask, after
     * which the text is complete; entries whose id is set in the mask `skip`
     * are not tried. The matcher ends where it was. Returns { ids, commits }.
     */
    acceptedPrefixes(set, byteTokens, skip = new Uint32Array(0)) {
      const rs = rawOfPrefixSet(set);
      if (!(byteTokens instanceof Int32Array) || byteTokens.length !== 256) throw new TypeError('grammask: byteTokens must be an Int32Array(256)');
      if (!(skip instanceof Uint32Array)) throw new TypeError('grammask: skip must be a Uint32Array mask');
      const r = guard(() => this.#get().acceptedPrefixes(rs, byteTokens, skip));
      return { ids: r.subarray(0, r.length - 1), commits: r[r.length - 1] };
    }
    isAccepting() { return guard(() => this.#get().isAccepting()); }
    isStopped() { return guard(() => this.#get().isStopped()); }
    reset() { guard(() => this.#get().reset()); }

    get freed() { return this.#raw === null; }

    free() {
      if (this.#raw !== null) {
        const r = this.#raw;
        this.#raw = null;
        this.#store = null;
        this.#view = null;
        r.free();
      }
    }
  }

  let rawOfPrefixSet;

  /**
   * Candidate byte strings, each with a token id and an "and then complete"
   * flag, for Matcher.acceptedPrefixes: `new PrefixSet([{ bytes, id, accepting }])`
   * (any order: sorted here).
   */
  class PrefixSet {
    #raw;
    constructor(entries) {
      if (!Array.isArray(entries)) throw new TypeError('grammask: PrefixSet expects an array of { bytes: Uint8Array, id, accepting }');
      const es = entries.map((e, i) => {
        if (!(e?.bytes instanceof Uint8Array)) throw new TypeError(`grammask: PrefixSet entry #${i}: bytes must be a Uint8Array`);
        return { bytes: e.bytes, id: u32(e.id, `PrefixSet entry #${i} id`), accepting: e.accepting ? 1 : 0 };
      });
      es.sort((a, b) => {
        const n = Math.min(a.bytes.length, b.bytes.length);
        for (let i = 0; i < n; i++) if (a.bytes[i] !== b.bytes[i]) return a.bytes[i] - b.bytes[i];
        return a.bytes.length - b.bytes.length;
      });
      const offsets = new Uint32Array(es.length + 1);
      es.forEach((e, i) => { offsets[i + 1] = offsets[i] + e.bytes.length; });
      const bytes = new Uint8Array(offsets[es.length]);
      es.forEach((e, i) => bytes.set(e.bytes, offsets[i]));
      this.#raw = guard(() => new raw.RawPrefixSet(bytes, offsets, Uint32Array.from(es, (e) => e.id), Uint8Array.from(es, (e) => e.accepting)));
    }
    static {
      rawOfPrefixSet = (p) => {
        if (!(p instanceof PrefixSet)) throw new TypeError('grammask: expected a PrefixSet (of this module instance: Matcher.PrefixSet)');
        if (p.#raw === null) throw freed('PrefixSet');
        return p.#raw;
      };
    }
    get length() { return guard(() => rawOfPrefixSet(this).length); }
    free() { if (this.#raw !== null) { const r = this.#raw; this.#raw = null; r.free(); } }
  }
  Matcher.PrefixSet = PrefixSet;

  if (DISPOSE) {
    MaskStore.prototype[DISPOSE] = function () { this.free(); };
    Matcher.prototype[DISPOSE] = function () { this.free(); };
    PrefixSet.prototype[DISPOSE] = function () { this.free(); };
  }

  let memory = null;
  function wasmMemory() {
    if (memory === null) memory = raw.wasmMemory();
    return memory;
  }

  function wasmMemoryBytes() {
    return guard(() => raw.wasmMemoryBytes());
  }

  // ---- vocabularies --------------------------------------------------------

  let rawOfVocab, newVocab;

  // The parts of a tokenizer.json object that the vocabulary needs (not the
  // merges: they are most of the text and irrelevant here).
  function tokenizerJsonText(json, what) {
    if (typeof json === 'string') return json;
    if (json === null || typeof json !== 'object') {
      throw new TypeError(`grammask: ${what} must be the text of tokenizer.json, its parsed object, a transformers.js tokenizer or a PreparedVocab`);
    }
    const model = json.model;
    if (model === null || typeof model !== 'object' || model.vocab == null) {
      throw new TypeError(`grammask: ${what} has no model.vocab: not a tokenizer.json object`);
    }
    const vocab = model.vocab instanceof Map ? Object.fromEntries(model.vocab) : model.vocab;
    return JSON.stringify({
      model: { type: model.type, vocab },
      added_tokens: json.added_tokens ?? [],
      decoder: json.decoder ?? null,
      pre_tokenizer: json.pre_tokenizer ?? null,
    });
  }

  function configText(x, what) {
    if (x === undefined || x === null) return undefined;
    if (typeof x === 'string') return x;
    if (typeof x === 'object') return JSON.stringify(x);
    throw new TypeError(`grammask: ${what} must be a JSON string or an object`);
  }

  function eosList(eos, what = 'eosTokenIds') {
    if (eos === undefined || eos === null) return undefined;
    const a = typeof eos === 'number' || typeof eos === 'bigint' ? [eos] : Array.from(eos);
    return Uint32Array.from(a.map((x, i) => u32(typeof x === 'bigint' ? Number(x) : x, `${what}[${i}]`)));
  }

  // A transformers.js tokenizer (PreTrainedTokenizer, 3.x and 4.x) keeps the
  // parsed tokenizer.json as `_tokenizerJSON` and tokenizer_config.json as
  // `_tokenizerConfig` (or `config`).
  function isTransformersTokenizer(t) {
    return t !== null && (typeof t === 'object' || typeof t === 'function') && t._tokenizerJSON != null;
  }

  function vocabInputs(source, options, what) {
    if (isTransformersTokenizer(source)) {
      return {
        json: tokenizerJsonText(source._tokenizerJSON, `${what}._tokenizerJSON`),
        tokenizerConfig: configText(options.tokenizerConfig ?? source._tokenizerConfig ?? source.config, 'tokenizerConfig'),
      };
    }
    return { json: tokenizerJsonText(source, what), tokenizerConfig: configText(options.tokenizerConfig, 'tokenizerConfig') };
  }

  class PreparedVocab {
    #raw;

    constructor(rawVocab, token) {
      if (token !== INTERNAL) {
        throw new TypeError('grammask: use PreparedVocab.fromTokenizer(), PreparedVocab.fromTokenizerJson() or store.vocab()');
      }
      this.#raw = rawVocab;
    }

    static {
      rawOfVocab = (v) => {
        if (!(v instanceof PreparedVocab)) throw new TypeError('grammask: expected a PreparedVocab');
        return v.#get();
      };
      newVocab = (r) => new PreparedVocab(r, INTERNAL);
    }

    #get() {
      if (this.#raw === null) throw freed('PreparedVocab');
      return this.#raw;
    }

    /**
     * From tokenizer.json (text or parsed object). Options: tokenizerConfig,
     * generationConfig (JSON text or objects: EOS ids), eosTokenIds (replace
     * them), prepare (build the token trie now; default true when the build
     * has the compiler).
     */
    static fromTokenizerJson(json, options = {}) {
      return PreparedVocab.#make(json, options ?? {}, 'tokenizerJson');
    }

    /** From a transformers.js tokenizer (AutoTokenizer.from_pretrained). Options as fromTokenizerJson. */
    static fromTokenizer(tokenizer, options = {}) {
      if (!isTransformersTokenizer(tokenizer)) {
        throw new TypeError('grammask: PreparedVocab.fromTokenizer expects a transformers.js tokenizer (one that keeps its tokenizer.json as _tokenizerJSON); use PreparedVocab.fromTokenizerJson for tokenizer.json text or objects');
      }
      return PreparedVocab.#make(tokenizer, options ?? {}, 'tokenizer');
    }

    static #make(source, options, what) {
      if (typeof options !== 'object') throw new TypeError('grammask: options must be an object');
      const { generationConfig, eosTokenIds, eos, prepare } = options;
      if (prepare !== undefined && typeof prepare !== 'boolean') throw new TypeError('grammask: prepare must be a boolean');
      const { json, tokenizerConfig } = vocabInputs(source, options, what);
      const r = guard(() => raw.RawVocab.fromJson(json, tokenizerConfig, configText(generationConfig, 'generationConfig'),
        eosList(eosTokenIds ?? eos), prepare ?? true));
      return new PreparedVocab(r, INTERNAL);
    }

    get vocabSize() { return guard(() => this.#get().vocabSize); }
    get eosTokenIds() { return guard(() => this.#get().eosTokenIds); }
    /** 16 hex digits: what a store built for this tokenizer (and these EOS ids) carries. */
    get fingerprint() { return guard(() => this.#get().fingerprint); }
    /** True once the token trie is built (compiler builds). */
    get isPrepared() { return guard(() => this.#get().isPrepared); }
    /** Build the token trie now (otherwise the first compile does). False in the runtime-only build. */
    prepare() { return guard(() => this.#get().prepare()); }
    fingerprintWithEos(eosTokenIds) {
      const e = eosList(eosTokenIds);
      if (!e) throw new TypeError('grammask: fingerprintWithEos expects EOS ids');
      return guard(() => this.#get().fingerprintWithEos(e));
    }
    tokenBytes(id) { u32(id, 'token id'); return guard(() => this.#get().tokenBytes(id)); }
    /**
     * Copies of the token data: { bytes, offsets, special, whitespace, byteTokens }
     * (token t is bytes[offsets[t] .. offsets[t+1]]; special and whitespace are
     * masks; byteTokens[b] is the token of the single byte b, or -1).
     */
    tokenTable() {
      return guard(() => {
        const r = this.#get();
        return { bytes: r.allTokenBytes(), offsets: r.tokenOffsets(), special: r.specialMask(), whitespace: r.whitespaceMask(), byteTokens: r.byteTokens() };
      });
    }

    /**
     * Throw unless `store` was built for these tokens (same bytes and special
     * flags; the store's own EOS ids may differ from this vocabulary's).
     */
    checkStore(store) {
      const rs = rawOfStore(store);
      const r = this.#get();
      const [want, n, eos] = guard(() => [rs.tokenizerFingerprint, rs.vocabSize, rs.eosTokenIds]);
      const got = n === this.vocabSize ? guard(() => r.fingerprintWithEos(eos)) : null;
      if (want !== got) {
        const e = new Error(`grammask: the store was built for another tokenizer (store: ${n} tokens, `
          + `tokenizer fingerprint ${want}; this tokenizer: ${this.vocabSize} tokens`
          + `${got ? `, ${got} with the store's EOS ids` : ''})`);
        e.name = 'GrammaskError';
        e.kind = 'BlobTokenizer';
        throw e;
      }
    }

    get freed() { return this.#raw === null; }

    free() {
      if (this.#raw !== null) {
        const r = this.#raw;
        this.#raw = null;
        r.free();
      }
    }
  }

  if (DISPOSE) PreparedVocab.prototype[DISPOSE] = function () { this.free(); };

  // A PreparedVocab from whatever the caller has; `owned` says whether to free it.
  function vocabOf(source, options, what) {
    if (source instanceof PreparedVocab) return { vocab: source, owned: false };
    const o = options ?? {};
    const v = isTransformersTokenizer(source) ? PreparedVocab.fromTokenizer(source, o) : PreparedVocab.fromTokenizerJson(source, o);
    return { vocab: v, owned: true };
  }

  /**
   * The fingerprint of a tokenizer: tokenizer.json (text or object), a
   * transformers.js tokenizer or a PreparedVocab. Options: tokenizerConfig,
   * generationConfig, eosTokenIds.
   */
  function tokenizerFingerprint(tokenizer, options = {}) {
    const { vocab, owned } = vocabOf(tokenizer, { ...(options ?? {}), prepare: false }, 'tokenizer');
    try { return vocab.fingerprint; } finally { if (owned) vocab.free(); }
  }

  const api = { MaskStore, Matcher, PreparedVocab, tokenizerFingerprint, wasmMemoryBytes, hasCompiler: guard.bind(null, () => raw.hasCompiler()) };
  // Every limit by name (src/limits.rs), in both builds.
  api.limits = () => guard(() => Object.freeze(raw.limits()));
  {
    // Read lazily: on the web entry the wasm is not instantiated at module load.
    let limits = null;
    const limit = (i) => (limits ??= guard(() => raw.compilerLimits()))[i];
    api.compilerLimits = Object.freeze({ get maxGrammarBytes() { return limit(0); }, get maxTokenizerBytes() { return limit(1); } });
  }

  const noCompiler = (f) => new Error(`grammask: ${f} needs the compiler; this is the runtime-only build (grammask/runtime): import from 'grammask' instead`);
  const FORMATS = ['json_schema', 'json_object', 'json', 'regex', 'lark', 'gbnf', 'ebnf', 'store'];

  // The response format as the Rust side reads it, with the OpenAI shape
  // {type: 'json_schema', json_schema: {name, schema, strict?}} unwrapped and a
  // schema given as JSON text parsed.
  // A malformed response format or compile option: a TypeError (a bad
  // argument) whose `kind` is 'ResponseFormat', as Rust's ErrorKind names it.
  const formatError = (message) => Object.assign(new TypeError(message), { kind: 'ResponseFormat' });

  // A bare schema is the likely mistake: say how to wrap it.
  const wrap = "; for a JSON Schema, wrap it: { type: 'json_schema', json_schema: <your schema> }";

  function normalizeFormat(rf) {
    if (rf === null || typeof rf !== 'object' || typeof rf.type !== 'string') {
      throw formatError(`grammask: responseFormat must be an object {type} (${FORMATS.join(', ')})${rf && typeof rf === 'object' ? wrap : ''}`);
    }
    if (!FORMATS.includes(rf.type)) {
      throw formatError(`grammask: responseFormat.type ${JSON.stringify(rf.type)} is not one of ${FORMATS.join(', ')}${wrap}`);
    }
    if (rf.type === 'json_schema') {
      let s = rf.json_schema;
      if (s === undefined) throw formatError("grammask: responseFormat {type: 'json_schema'} needs a json_schema field (the schema)");
      if (typeof s === 'string') {
        try { s = JSON.parse(s); } catch (e) { throw formatError(`grammask: responseFormat.json_schema is a string but not JSON: ${e.message}`); }
      }
      if (s && typeof s === 'object' && !Array.isArray(s) && typeof s.name === 'string' && s.schema && typeof s.schema === 'object'
        && !('type' in s) && !('properties' in s) && !('$ref' in s)) {
        s = s.schema; // OpenAI's {name, schema, strict}
      }
      return { ...rf, json_schema: s };
    }
    if (rf.type === 'regex' && typeof rf.regex !== 'string') throw formatError("grammask: responseFormat {type: 'regex'} needs a string regex field");
    if (/^(lark|[ge]bnf)$/.test(rf.type) && typeof rf.grammar !== 'string') throw formatError(`grammask: responseFormat {type: '${rf.type}'} needs a string grammar field`);
    return rf;
  }

  /**
   * Compile a response format for a prepared vocabulary:
   * {type: 'json_schema', json_schema}, {type: 'json_object'}, {type: 'json'},
   * {type: 'regex', regex}, {type: 'lark' | 'gbnf' | 'ebnf', grammar, start?}, or
   * {type: 'store', store} (a MaskStore or blob bytes, checked against the
   * vocabulary and returned as is). Options: whitespace ('default', 'compact',
   * 'spaced', 'flexible'), maxWhitespace (flexible: longest run), lenient,
   * refs ({uri: schema} for remote $ref; nothing is fetched); Lark grammars: strict (refuse shift/reduce conflicts), lexer
   * ('contextual', 'basic', 'longest': overrides the grammar's %lexer).
   */
  function compile(vocab, responseFormat, options = {}) {
    const rv = rawOfVocab(vocab);
    const rf = normalizeFormat(responseFormat);
    if (rf.type === 'store') {
      let store = rf.store;
      if (store instanceof Uint8Array || store instanceof ArrayBuffer) store = MaskStore.fromBytes(store);
      else if (!(store instanceof MaskStore)) throw formatError("grammask: responseFormat {type: 'store'} needs a store field (a MaskStore or the blob's bytes)");
      vocab.checkStore(store);
      return store;
    }
    if (typeof raw.compileRaw !== 'function') throw noCompiler('compile');
    const { whitespace, maxWhitespace, lenient, strict, lexer, refs } = options ?? {};
    if (whitespace !== undefined && !['default', 'compact', 'spaced', 'flexible'].includes(whitespace)) {
      throw formatError(`grammask: whitespace must be 'default', 'compact', 'spaced' or 'flexible', got ${describe(whitespace)}`);
    }
    if (maxWhitespace !== undefined) u32(maxWhitespace, 'maxWhitespace');
    if (lenient !== undefined && typeof lenient !== 'boolean') throw new TypeError('grammask: lenient must be a boolean');
    if (strict !== undefined && typeof strict !== 'boolean') throw new TypeError('grammask: strict must be a boolean');
    if (refs !== undefined && (typeof refs !== 'object' || !refs || Array.isArray(refs))) throw new TypeError('grammask: refs must be an object {uri: schema}');
    if (lexer !== undefined && !['contextual', 'basic', 'longest'].includes(lexer)) {
      throw formatError(`grammask: lexer must be 'contextual', 'basic' or 'longest', got ${describe(lexer)}`);
    }
    let text, rt;
    try { text = JSON.stringify(rf); rt = refs && JSON.stringify(refs); } catch (e) { throw formatError(`grammask: responseFormat cannot be serialized as JSON: ${e.message}`); }
    return new MaskStore(guard(() => raw.compileRaw(rv, text, whitespace, maxWhitespace, lenient, strict, lexer, rt)), INTERNAL);
  }
  api.compile = compile;

  /**
   * Compile a Lark grammar into a full, streamlined store (the blob
   * `grammask compile` makes), for a tokenizer (PreparedVocab, tokenizer.json
   * text or object, or a transformers.js tokenizer).
   */
  api.compileStore = function compileStore(grammarText, tokenizer, options = {}) {
    if (typeof raw.compileStoreRaw !== 'function') throw noCompiler('compileStore');
    if (typeof grammarText !== 'string') throw new TypeError('grammask: compileStore(grammarText, tokenizer, options?): grammarText must be a string');
    if (tokenizer === undefined) throw new TypeError('grammask: compileStore(grammarText, tokenizer, options?) needs a tokenizer');
    const o = options ?? {};
    const { startRule, streamline, onProgress } = o;
    if (onProgress !== undefined && typeof onProgress !== 'function') throw new TypeError('grammask: onProgress must be a function');
    if (streamline !== undefined && typeof streamline !== 'boolean') throw new TypeError('grammask: streamline must be a boolean');
    if (startRule !== undefined && typeof startRule !== 'string') throw new TypeError('grammask: startRule must be a string');
    const { vocab, owned } = vocabOf(tokenizer, { ...o, prepare: false }, 'tokenizer');
    try {
      const rv = rawOfVocab(vocab);
      return new MaskStore(guard(() => raw.compileStoreRaw(grammarText, rv, startRule, streamline, onProgress)), INTERNAL);
    } finally {
      if (owned) vocab.free();
    }
  };
  return api;
}
