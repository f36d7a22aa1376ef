// Structural tags as a response format: xgrammar's / web-llm's structural-tag
// JSON, read unchanged, becomes a Lark grammar (as tools.js builds one):
//   { type: 'structural_tag', format: {...} }                    xgrammar's request shape
//   { type: 'structural_tag', structural_tag: {...} | '...' }    web-llm's ResponseFormat
//   { type: 'structural_tag', structures: [{ begin, schema, end }], triggers }   the older (legacy) form
// Free text (any_text, and triggered_tags outside its tags) is a right-linear
// grammar over the Aho-Corasick automaton of the strings it may not contain
// (its triggers, its excludes and whatever can follow it: an enclosing tag's
// end, the next element of a sequence), so where it ends is decided exactly:
// it cannot contain any of them, and what follows starts with one of them.
import { tokenOf } from './tools.js';
import { isSet } from '../mask-bits.js';

function fail(msg, where) {
  return Object.assign(new TypeError(`grammask: structural_tag${where ? ` at ${where}` : ''}: ${msg}`), { kind: 'ResponseFormat' });
}

// The formats grammask refuses, by name, and why.
const REFUSED = {
  grammar: 'an EBNF grammar cannot be embedded in the Lark grammar grammask builds (a whole EBNF grammar is the response format { type: \'ebnf\', grammar })',
  exclude_token: 'exactly one token, whatever its text, cannot be expressed: grammask\'s grammars constrain the text and the tokens they name, not how the text is split into tokens (any_tokens, zero or more tokens, is supported)',
};

// Known fields per format (others are refused, never ignored).
const FIELDS = {
  const_string: ['value'],
  json_schema: ['json_schema', 'style', 'any_order'],
  qwen_xml_parameter: ['json_schema', 'style', 'any_order'],
  regex: ['pattern'],
  any_text: ['excludes'],
  sequence: ['elements'],
  or: ['elements'],
  optional: ['content'],
  plus: ['content'],
  star: ['content'],
  repeat: ['min', 'max', 'content'],
  tag: ['begin', 'content', 'end'],
  token: ['token'],
  triggered_tags: ['triggers', 'tags', 'at_least_one', 'stop_after_first', 'excludes'],
  tags_with_separator: ['tags', 'separator', 'at_least_one', 'stop_after_first'],
  dispatch: ['rules', 'loop', 'excludes'],
  any_tokens: ['exclude_tokens'],
  token_triggered_tags: ['trigger_tokens', 'tags', 'exclude_tokens', 'at_least_one', 'stop_after_first'],
  token_dispatch: ['rules', 'loop', 'exclude_tokens'],
};
// Fields xgrammar has that grammask refuses by name.
const REFUSED_FIELDS = {
  max_tokens: 'a token budget inside the text is not supported (it would count tokens, which a grammar over text cannot)',
  max_chars: 'a character budget is not supported',
  max_whitespace_cnt: 'not supported (the JSON whitespace is the %json default: none or one space)',
};

/** The format object of a structural-tag response format (the three accepted shapes), or a TypeError. */
export function structuralTagFormat(rf) {
  let st = rf;
  if (rf.structural_tag !== undefined) {
    st = rf.structural_tag;
    if (typeof st === 'string') {
      try { st = JSON.parse(st); } catch (e) { throw fail(`structural_tag is a string that is not JSON (${e.message})`); }
    }
    if (st === null || typeof st !== 'object' || Array.isArray(st)) throw fail('structural_tag must be an object (or its JSON text)');
  }
  if (st.format !== undefined) {
    if (st !== rf && st.type !== undefined && st.type !== 'structural_tag') throw fail(`the structural tag's type must be 'structural_tag', got ${JSON.stringify(st.type)}`);
    return st.format;
  }
  if (st !== rf && typeof st.type === 'string' && st.type !== 'structural_tag') return st; // web-llm: a bare format object
  if (st.structures !== undefined || st.triggers !== undefined) {
    // The older form: triggered_tags with one json_schema tag per structure.
    if (!Array.isArray(st.structures) || !Array.isArray(st.triggers)) throw fail('the older form needs both structures: [{ begin, schema, end }] and triggers: [...]');
    return {
      type: 'triggered_tags',
      triggers: st.triggers,
      tags: st.structures.map((s, i) => {
        if (s === null || typeof s !== 'object') throw fail(`structures[${i}] is not { begin, schema, end }`);
        let schema = s.schema ?? s.json_schema;
        if (typeof schema === 'string') {
          try { schema = JSON.parse(schema); } catch (e) { throw fail(`structures[${i}].schema is a string that is not JSON (${e.message})`); }
        }
        return { type: 'tag', begin: s.begin, content: { type: 'json_schema', json_schema: schema }, end: s.end };
      }),
    };
  }
  throw fail('expected { type: \'structural_tag\', format: {...} }, { type: \'structural_tag\', structural_tag: {...} } or { type: \'structural_tag\', structures: [...], triggers: [...] }');
}

// ---- what can start a format, what can follow it ------------------------------

// A set of leading things: literal strings, tokens (their specs: an id or
// the token's text), "anything" (free text, JSON, a regex, any token), and
// whether the format can be empty.
const EMPTY = { strings: [], toks: [], any: false, nullable: true };
const ANY = { strings: [], toks: [], any: true, nullable: true };
const TOK = (spec) => ({ strings: [], toks: [spec], any: false, nullable: false });
const STR = (strings) => ({ strings, toks: [], any: false, nullable: false });
const union = (a, b) => ({ strings: [...a.strings, ...b.strings], toks: [...a.toks, ...b.toks], any: a.any || b.any, nullable: a.nullable || b.nullable });
/** a, then b where a can be empty. */
const then = (a, b) => (a.nullable ? { ...union(a, b), nullable: b.nullable } : a);
const isTokenFormat = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) && x.type === 'token';

function tagsOf(f) { return Array.isArray(f.tags) ? f.tags : []; }
function rulesOf(f) { return Array.isArray(f.rules) ? f.rules.filter((r) => Array.isArray(r)) : []; }

/** What the format's text can start with. */
function first(f) {
  switch (f?.type) {
    case 'const_string': return f.value ? STR([f.value]) : EMPTY;
    case 'token': return TOK(f.token);
    case 'tag': {
      if (isTokenFormat(f.begin)) return TOK(f.begin.token);
      if (f.begin) return STR([f.begin]);
      return then(first(f.content), isTokenFormat(f.end) ? TOK(f.end.token) : STR([].concat(f.end)));
    }
    case 'sequence': return (f.elements ?? []).reduce((a, e) => then(a, first(e)), EMPTY);
    case 'or': return (f.elements ?? []).reduce((a, e) => union(a, first(e)), { ...EMPTY, nullable: false });
    case 'optional': case 'star': return { ...first(f.content), nullable: true };
    case 'plus': return first(f.content);
    case 'repeat': return f.min === 0 ? { ...first(f.content), nullable: true } : first(f.content);
    case 'tags_with_separator': return { ...tagsOf(f).map((t) => first({ ...t, type: 'tag' })).reduce(union, { ...EMPTY, nullable: false }), nullable: !f.at_least_one };
    case 'triggered_tags': case 'token_triggered_tags':
      if (f.at_least_one) return tagsOf(f).map((t) => first({ ...t, type: 'tag' })).reduce(union, { ...EMPTY, nullable: false });
      return ANY;
    default: return ANY; // any_text, json_schema, regex, dispatch, any_tokens, token_dispatch
  }
}

// What a format's text can end with: text (a string, JSON, free text) or
// only a token; and whether it can be empty (then what precedes it ends it).
const ENDS_TOKEN = { text: false, nullable: false };
const ENDS_TEXT = { text: true, nullable: false };
const lor = (a, b) => ({ text: a.text || b.text, nullable: a.nullable || b.nullable });

/** How the format's text can end. */
function last(f) {
  switch (f?.type) {
    case 'const_string': return f.value ? ENDS_TEXT : { text: false, nullable: true };
    case 'token': return ENDS_TOKEN;
    case 'tag': return isTokenFormat(f.end) ? ENDS_TOKEN : ENDS_TEXT;
    case 'sequence': {
      let acc = { text: false, nullable: true };
      for (const e of [...(f.elements ?? [])].reverse()) {
        if (!acc.nullable) break;
        const l = last(e);
        acc = { text: acc.text || l.text, nullable: l.nullable };
      }
      return acc;
    }
    case 'or': return (f.elements ?? []).map(last).reduce(lor, { text: false, nullable: false });
    case 'optional': case 'star': return { ...last(f.content), nullable: true };
    case 'plus': return last(f.content);
    case 'repeat': return f.min === 0 ? { ...last(f.content), nullable: true } : last(f.content);
    case 'tags_with_separator': return { text: tagsOf(f).some((t) => last({ ...t, type: 'tag' }).text), nullable: !f.at_least_one };
    // The token formats' free regions are whole tokens (checked where they are built).
    case 'any_tokens': return { text: false, nullable: true };
    case 'token_triggered_tags': return { text: tagsOf(f).some((t) => last({ ...t, type: 'tag' }).text), nullable: !f.at_least_one };
    case 'token_dispatch': return { text: rulesOf(f).some((r) => last(r[1]).text), nullable: true };
    default: return { text: true, nullable: true }; // any_text, json_schema, regex, triggered_tags, dispatch
  }
}

/** Whether element i of `els` follows a token boundary (`prev`: whether the sequence does). */
function prevAt(els, i, prev) {
  for (let j = i - 1; j >= 0; j--) {
    const l = last(els[j]);
    if (l.text) return false;
    if (!l.nullable) return true;
  }
  return prev;
}

/** The token specs a format names (token formats, token begins and ends, token_dispatch triggers). */
function namedTokens(f, out = []) {
  if (f === null || typeof f !== 'object' || Array.isArray(f)) return out;
  if (f.type === 'token') { out.push(f.token); return out; }
  if (isTokenFormat(f.begin)) out.push(f.begin.token);
  if (isTokenFormat(f.end)) out.push(f.end.token);
  if (f.type === 'token_dispatch') for (const r of rulesOf(f)) out.push(r[0]);
  for (const k of ['content']) namedTokens(f[k], out);
  for (const k of ['elements', 'tags']) if (Array.isArray(f[k])) for (const e of f[k]) namedTokens(e, out);
  if (f.type === 'dispatch' || f.type === 'token_dispatch') for (const r of rulesOf(f)) namedTokens(r[1], out);
  return out;
}

// ---- free text: no excluded string inside ------------------------------------

const cps = (s) => [...s];
const hex = (c) => {
  const n = c.codePointAt(0);
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : n < 0x10000 ? `\\u${n.toString(16).padStart(4, '0')}` : `\\U${n.toString(16).padStart(8, '0')}`;
};
/**
 * A character inside a Lark (Python re) class: ASCII punctuation escaped with
 * a backslash (`\-`; grammask's class parser reads an escaped `\x2d` between
 * two characters as a range), other characters as \x, \u or \U escapes.
 */
const classChar = (c) => (/[A-Za-z0-9 ]/.test(c) ? c : /[!-/:-@[-`{-~]/.test(c) ? `\\${c}` : hex(c));
/** A Lark string literal. */
export const lit = (s) => JSON.stringify(s);
/** A string as literal text inside a Lark (Python re) regex. */
const rxLit = (s) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&').replace(/\n/g, '\\n').replace(/\t/g, '\\t')
  .replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
const startsWithSpace = (s) => /^[ \t\n]/.test(s);
const isQwenXml = (f) => f !== null && typeof f === 'object' && (f.type === 'qwen_xml_parameter' || (f.type === 'json_schema' && f.style === 'qwen_xml'));

/** The Aho-Corasick automaton of `strings`: nodes { next: Map, fail, depth, out: [lengths] }. */
function automaton(strings) {
  const nodes = [{ next: new Map(), fail: 0, depth: 0, out: [] }];
  for (const s of strings) {
    let q = 0;
    for (const c of cps(s)) {
      let t = nodes[q].next.get(c);
      if (t === undefined) {
        t = nodes.length;
        nodes.push({ next: new Map(), fail: 0, depth: nodes[q].depth + 1, out: [] });
        nodes[q].next.set(c, t);
      }
      q = t;
    }
    nodes[q].out.push(nodes[q].depth);
  }
  const order = [...nodes[0].next.values()];
  for (let i = 0; i < order.length; i++) {
    const q = order[i];
    for (const [c, t] of nodes[q].next) {
      let f = nodes[q].fail;
      while (f && !nodes[f].next.has(c)) f = nodes[f].fail;
      const g = nodes[f].next.get(c);
      nodes[t].fail = g !== undefined && g !== t ? g : 0;
      nodes[t].out = [...nodes[t].out, ...nodes[nodes[t].fail].out];
      order.push(t);
    }
  }
  const step = (q, c) => {
    while (q && !nodes[q].next.has(c)) q = nodes[q].fail;
    return nodes[q].next.get(c) ?? 0;
  };
  return { nodes, step };
}

// ---- the generator -----------------------------------------------------------

class Gen {
  constructor(data, eos, format) {
    this.data = data;
    this.eos = new Set(eos ?? []);
    this.rules = [];
    this.n = 0;
    this.ends = []; // the ends of the enclosing tags, innermost last (xgrammar's end detection)
    this.regions = new Map(); // free-token regions built, by their allowed tokens
    // The tokens the format names: never text in the grammar (a token a
    // grammar names is matched by id only), so a free-token region lists
    // them, with the special tokens, beside its text.
    this.named = new Set();
    for (const spec of namedTokens(format)) {
      try { this.named.add(this.tokenId(spec, '')); } catch { /* reported where it is used */ }
    }
  }

  rule(prefix, body) {
    const name = `${prefix}${this.n++}`;
    this.rules.push(`${name}: ${body}`);
    return name;
  }

  /** The id of a token spec (an id, or the token's exact text). */
  tokenId(t, where) {
    if (typeof t === 'number') {
      if (!Number.isInteger(t) || t < 0 || t >= this.data.n) throw fail(`token id ${t} is not in the vocabulary (0..${this.data.n - 1})`, where);
      return t;
    }
    if (typeof t !== 'string' || !t) throw fail('a token is an id or the token\'s text', where);
    const id = tokenOf(this.data, t);
    if (id < 0) throw fail(`no token of the tokenizer is exactly ${JSON.stringify(t)}`, where);
    return id;
  }

  token(t, where) { return `<[${this.tokenId(t, where)}]>`; }

  /** A list of token specs (trigger_tokens, exclude_tokens) as ids. */
  tokenIds(list, name, where, nonEmpty) {
    if (list === undefined && !nonEmpty) return [];
    if (!Array.isArray(list) || (nonEmpty && list.length === 0)) throw fail(`${name} must be ${nonEmpty ? 'a non-empty' : 'an'} array of token ids or token texts`, where);
    return list.map((t, i) => this.tokenId(t, `${where}.${name}[${i}]`));
  }

  /**
   * Zero or more tokens, none of `excluded` (ids) and no EOS, as xgrammar's
   * exclude-token edges take them: text (tokens the grammar does not name)
   * and, by id, the special tokens and the named tokens not excluded. It must
   * start and end at token boundaries (`prev`: after a token or at the start;
   * `follow`: a token it excludes, or the end), so that its text is exactly
   * the text of the tokens it takes.
   */
  freeTokens(excluded, prev, follow, where, what) {
    if (!prev) throw fail(`${what} may come right after text (a string, JSON, a regex, free text): xgrammar's token formats start at a token boundary, which grammask's grammar cannot require after text; put a token before it`, where);
    if (follow.any || follow.strings.length) {
      throw fail(`${what} may be followed by ${follow.any ? 'text or more free tokens (free text, JSON, a regex, a token format that may start with any token)' : `text (${JSON.stringify(follow.strings)})`}: xgrammar's token formats end at a token boundary, which grammask's grammar cannot require before text, and two free regions in a row would be ambiguous; put a token after it (a tag whose end is a token), or make it the last element`, where);
    }
    for (const spec of follow.toks) {
      const id = this.tokenId(spec, where);
      if (!excluded.has(id) && !this.eos.has(id)) throw fail(`${what} may be followed by token ${id}, which it does not exclude: in xgrammar that token may also be inside it, so where it ends would be ambiguous; add it to its exclude_tokens`, where);
    }
    for (const id of excluded) {
      if (!isSet(this.data.special, id) && !this.named.has(id) && !this.eos.has(id)) {
        throw fail(`token ${id} (excluded or a trigger) is text (not a special token) that the format names nowhere else as a token: grammask cannot keep it out of this region only (a token is matched by id only if the grammar names it, and then everywhere)`, where);
      }
    }
    const allowed = [...new Set([...this.specials(), ...this.named])]
      .filter((id) => !excluded.has(id) && !this.eos.has(id) && this.data.offsets[id + 1] > this.data.offsets[id])
      .sort((a, b) => a - b);
    const key = allowed.join(',');
    let r = this.regions.get(key);
    if (!r) {
      r = this.rule('tok', ['/[\\s\\S]+/', ...allowed.map((id) => `<[${id}]>`)].join(' | '));
      this.regions.set(key, r);
    }
    return `${r}*`;
  }

  specials() {
    if (!this.specialIds) {
      this.specialIds = [];
      for (let id = 0; id < this.data.n; id++) if (isSet(this.data.special, id)) this.specialIds.push(id);
    }
    return this.specialIds;
  }

  /** The end token of the innermost enclosing tag, if it is a token (xgrammar's DetectEndTokenIds). */
  endToken() {
    const e = this.ends[this.ends.length - 1];
    return e && isTokenFormat(e.end) ? [this.tokenId(e.end.token, e.where)] : [];
  }

  /**
   * Free text that contains none of `excluded`, as a rule; `follows`: the
   * strings that can come right after it (each starts with an excluded one).
   */
  freeText(excluded, follows, where) {
    const strs = [...new Set(excluded.filter((s) => typeof s === 'string' && s))];
    if (strs.length === 0) return this.rule('text', '/[\\s\\S]+/?');
    const { nodes, step } = automaton(strs);
    const alphabet = [...new Set(strs.flatMap(cps))].sort();
    const firsts = [...nodes[0].next.keys()].sort();
    const ok = (q) => nodes[q].out.length === 0;
    // Text that ends in state q followed by s must meet its first excluded
    // string at s, not before (a string that overlaps itself: "aa" after "a").
    for (let q = 1; q < nodes.length; q++) {
      if (!ok(q)) continue;
      for (const s of follows) {
        let t = q, k = 0;
        for (const c of cps(s)) {
          t = step(t, c);
          k++;
          if (nodes[t].out.length) {
            if (nodes[t].out.some((len) => len > k)) {
              throw fail(`free text there may end so that ${JSON.stringify(s)} after it makes one of ${JSON.stringify(strs)} start inside the text: these strings overlap themselves, and where the text ends would be ambiguous`, where);
            }
            break;
          }
        }
      }
    }
    const id = this.n++;
    const name = (q) => `text${id}_${q}`;
    const run = `/[^${firsts.map(classChar).join('')}]+/`;
    const other = `/[^${alphabet.map(classChar).join('')}]/`;
    const used = new Set([0]);
    const todo = [0];
    const bodies = [];
    while (todo.length) {
      const q = todo.pop();
      const alts = q === 0 ? [`${run} ${name(0)}`] : [`${other} ${name(0)}`];
      for (const c of alphabet) {
        const t = step(q, c);
        if (!ok(t) || (q === 0 && t === 0)) continue;
        alts.push(`${lit(c)} ${name(t)}`);
        if (!used.has(t)) { used.add(t); todo.push(t); }
      }
      bodies.push(`${name(q)}: (${alts.join(' | ')})?`);
    }
    this.rules.push(...bodies);
    return name(0);
  }

  /**
   * The Lark expression of format `f` ('' for the empty text); `follow`: what
   * can come after it; `prev`: whether what comes before it ends at a token
   * boundary (a token, or the start of the output).
   */
  expr(f, follow, where, prev) {
    if (f === null || typeof f !== 'object' || Array.isArray(f)) throw fail('a format must be an object with a type', where);
    const type = f.type;
    if (REFUSED[type]) throw fail(`the format ${JSON.stringify(type)} is refused: ${REFUSED[type]}`, where);
    const known = FIELDS[type];
    if (!known) throw fail(`unknown format type ${JSON.stringify(type)} (known: ${Object.keys(FIELDS).join(', ')}; refused: ${Object.keys(REFUSED).join(', ')})`, where);
    for (const k of Object.keys(f)) {
      if (k === 'type' || known.includes(k)) continue;
      if (REFUSED_FIELDS[k]) throw fail(`${type}.${k} is refused: ${REFUSED_FIELDS[k]}`, where);
      throw fail(`${type} has no field ${JSON.stringify(k)} (its fields: ${known.join(', ')})`, where);
    }
    const at = (k) => `${where}.${k}`;
    switch (type) {
      case 'const_string':
        if (typeof f.value !== 'string') throw fail('const_string.value must be a string', where);
        return f.value ? lit(f.value) : '';
      case 'json_schema': case 'qwen_xml_parameter': {
        // qwen_xml_parameter is json_schema with style "qwen_xml" (xgrammar ignores its style).
        const style = type === 'qwen_xml_parameter' ? 'qwen_xml' : f.style ?? 'json';
        if (style !== 'json' && style !== 'qwen_xml') throw fail(`json_schema.style ${JSON.stringify(f.style)} is refused: only "json" and "qwen_xml" are supported`, where);
        if (f.any_order) throw fail(`${type}.any_order is refused: properties are in their declared order`, where);
        let s = f.json_schema;
        if (s === true) s = {};
        if (s === null || typeof s !== 'object' || Array.isArray(s)) throw fail(`${type}.json_schema must be a JSON Schema object (or true)`, where);
        if (style === 'json') return `%json ${JSON.stringify(s)}`;
        if (follow.any) throw fail(`${type} with style "qwen_xml" may be followed by free text, JSON or a regex: where its whitespace ends would be ambiguous; put a string or a token after it`, where);
        const sp = follow.strings.find(startsWithSpace);
        if (sp !== undefined && !this.qwenEnd) throw fail(`${type} with style "qwen_xml" may be followed by ${JSON.stringify(sp)}, which starts with whitespace: grammask can split its trailing whitespace from that only at the end of the tag it is the content of`, where);
        return this.qwenXml(s, where);
      }
      case 'regex': {
        if (typeof f.pattern !== 'string' || !f.pattern) throw fail('regex.pattern must be a non-empty string', where);
        let p = '';
        for (let i = 0; i < f.pattern.length; i++) {
          const c = f.pattern[i];
          if (c === '\\') { p += c + (f.pattern[++i] ?? ''); continue; }
          p += c === '/' ? '\\/' : c === '\n' ? '\\n' : c;
        }
        return `/${p}/`;
      }
      case 'any_text': {
        const ex = f.excludes ?? [];
        if (!Array.isArray(ex) || ex.some((s) => typeof s !== 'string')) throw fail('any_text.excludes must be an array of strings', where);
        return this.freeText([...ex, ...this.stops(follow, where)], follow.strings, where);
      }
      case 'sequence': {
        const els = f.elements;
        if (!Array.isArray(els) || els.length === 0) throw fail('sequence.elements must be a non-empty array', where);
        const parts = els.map((e, i) => {
          let fol = follow;
          for (let j = els.length - 1; j > i; j--) fol = then(first(els[j]), fol);
          return this.expr(e, fol, at(`elements[${i}]`), prevAt(els, i, prev));
        });
        return parts.filter(Boolean).join(' ');
      }
      case 'or': {
        const els = f.elements;
        if (!Array.isArray(els) || els.length === 0) throw fail('or.elements must be a non-empty array', where);
        const alts = els.map((e, i) => this.expr(e, follow, at(`elements[${i}]`), prev));
        const some = alts.filter(Boolean);
        if (some.length === 0) return '';
        const r = this.rule('or', some.join(' | '));
        return some.length < alts.length ? `${r}?` : r;
      }
      case 'optional': case 'star': case 'plus': case 'repeat': {
        const again = type === 'optional' || (type === 'repeat' && f.max === 1) ? follow : then(first(f.content), follow);
        const once = type === 'optional' || (type === 'repeat' && f.max === 1);
        const body = this.expr(f.content, again, at('content'), prev && (once || !last(f.content).text));
        if (!body) return '';
        const r = this.rule('item', body);
        if (type === 'optional') return `${r}?`;
        if (type === 'star') return `${r}*`;
        if (type === 'plus') return `${r}+`;
        const { min, max } = f;
        if (!Number.isInteger(min) || min < 0 || !Number.isInteger(max) || (max !== -1 && max < min)) throw fail('repeat needs integers 0 <= min <= max (max -1: no upper bound)', where);
        if (Math.max(min, max) > 1000) throw fail('repeat counts above 1000 are refused', where);
        const parts = Array(min).fill(r);
        if (max === -1) parts.push(`${r}*`);
        else {
          let tail = '';
          for (let k = max - min; k > 0; k--) tail = `(${r} ${tail})?`;
          if (tail) parts.push(tail);
        }
        return parts.join(' ');
      }
      case 'tag': return this.tag(f, where, prev);
      case 'token': return this.token(f.token, at('token'));
      case 'triggered_tags': return this.triggeredTags(f, follow, where);
      case 'dispatch': return this.dispatch(f, follow, where);
      case 'any_tokens': {
        const ex = new Set([...this.tokenIds(f.exclude_tokens, 'exclude_tokens', where), ...this.endToken()]);
        return this.freeTokens(ex, prev, follow, where, 'any_tokens');
      }
      case 'token_triggered_tags': return this.tokenTriggeredTags(f, follow, where, prev);
      case 'token_dispatch': return this.tokenDispatch(f, follow, where, prev);
      case 'tags_with_separator': {
        const tags = this.tagList(f, where);
        if (typeof f.separator !== 'string') throw fail('tags_with_separator.separator must be a string', where);
        const alts = tags.map((t, i) => this.tag(t, at(`tags[${i}]`), prev && !f.separator && !tags.some((u) => last(u).text)));
        const any = this.rule('tags', alts.join(' | '));
        if (f.stop_after_first) return f.at_least_one ? any : `${any}?`;
        const more = `(${f.separator ? `${lit(f.separator)} ` : ''}${any})*`;
        return f.at_least_one ? `${any} ${more}` : `(${any} ${more})?`;
      }
      default: throw fail(`unknown format type ${JSON.stringify(type)}`, where);
    }
  }

  /** The strings after which free text must stop: what follows it (it may not be "anything"). */
  stops(follow, where) {
    if (follow.any) throw fail('free text (any_text, or triggered_tags that may end with text) is followed by something that does not start with a fixed string (JSON, a regex, more free text): grammask cannot tell where the text ends; put a const_string or a tag after it, or make it the last element', where);
    return follow.strings;
  }

  tagList(f, where) {
    if (!Array.isArray(f.tags) || f.tags.length === 0) throw fail(`${f.type}.tags must be a non-empty array of tags`, where);
    return f.tags.map((t, i) => {
      if (t === null || typeof t !== 'object') throw fail('a tag is { begin, content, end }', `${where}.tags[${i}]`);
      if (t.type !== undefined && t.type !== 'tag') throw fail(`${f.type}.tags holds tags only, got ${JSON.stringify(t.type)}`, `${where}.tags[${i}]`);
      return { ...t, type: 'tag' };
    });
  }

  /** begin content end (begin/end: a string, a token format; end: also a list of strings). */
  tag(f, where, prev) {
    for (const k of Object.keys(f)) {
      if (k !== 'type' && !FIELDS.tag.includes(k)) throw fail(`tag has no field ${JSON.stringify(k)} (its fields: begin, content, end)`, where);
    }
    const edge = (x, k) => {
      if (typeof x === 'string') return x ? lit(x) : '';
      if (x !== null && typeof x === 'object' && x.type === 'token') return this.token(x.token, `${where}.${k}`);
      throw fail(`tag.${k} must be a string or { type: 'token', token }`, where);
    };
    let end, follow;
    // Content in the qwen_xml style ends with whitespace ([ \t\n]*): an end
    // string that starts with whitespace takes that run too (one regex, so
    // the longest match splits it where xgrammar's grammar can).
    const ends = [].concat(f.end);
    const qwenEnd = isQwenXml(f.content) && ends.length > 0 && ends.every((e) => typeof e === 'string' && e) && ends.some(startsWithSpace);
    if (qwenEnd) {
      end = `/[ \\t\\n]*(?:${ends.map(rxLit).join('|')})/`;
      follow = STR(ends);
    } else if (Array.isArray(f.end)) {
      if (f.end.length === 0 || f.end.some((s) => typeof s !== 'string' || !s)) throw fail('tag.end, a list, must hold non-empty strings', where);
      end = f.end.length === 1 ? lit(f.end[0]) : `(${f.end.map(lit).join(' | ')})`;
      follow = STR(f.end);
    } else {
      end = edge(f.end, 'end');
      follow = typeof f.end === 'string' ? (f.end ? STR([f.end]) : null) : isTokenFormat(f.end) ? TOK(f.end.token) : null;
    }
    if (f.content === undefined) throw fail('tag.content is missing', where);
    const contentPrev = isTokenFormat(f.begin) || (typeof f.begin === 'string' && f.begin ? false : prev);
    this.ends.push({ end: f.end, where: `${where}.end` });
    this.qwenEnd = qwenEnd;
    let content;
    try {
      content = this.expr(f.content, follow ?? { ...ANY, nullable: false }, `${where}.content`, contentPrev);
    } finally { this.ends.pop(); this.qwenEnd = false; }
    return [edge(f.begin, 'begin'), content, end].filter(Boolean).join(' ');
  }

  triggeredTags(f, follow, where) {
    const tags = this.tagList(f, where);
    const triggers = f.triggers;
    if (!Array.isArray(triggers) || triggers.length === 0 || triggers.some((s) => typeof s !== 'string' || !s)) throw fail('triggered_tags.triggers must be a non-empty array of non-empty strings', where);
    const ex = f.excludes ?? [];
    if (!Array.isArray(ex) || ex.some((s) => typeof s !== 'string')) throw fail('triggered_tags.excludes must be an array of strings', where);
    tags.forEach((t, i) => {
      if (typeof t.begin !== 'string') throw fail('tags in triggered_tags must have a string begin (a token begin: use a tag, or tags_with_separator)', `${where}.tags[${i}]`);
      const n = triggers.filter((tr) => t.begin.startsWith(tr)).length;
      if (n !== 1) throw fail(`the begin ${JSON.stringify(t.begin)} must start with exactly one trigger, it starts with ${n}`, `${where}.tags[${i}]`);
    });
    const alts = tags.map((t, i) => this.tag(t, `${where}.tags[${i}]`, false));
    const any = this.rule('tags', alts.join(' | '));
    if (f.at_least_one && f.stop_after_first) return any;
    const begins = tags.map((t) => t.begin);
    const text = this.freeText([...triggers, ...ex, ...this.stops(follow, where)], [...begins, ...follow.strings], where);
    const loop = f.stop_after_first ? `${text} ${any}?` : `${text} (${any} ${text})*`;
    return f.at_least_one ? `${any} ${loop}` : loop;
  }

  /**
   * xgrammar's qwen_xml style (Qwen3-Coder's arguments): the object's
   * properties, in their declared order (the required ones present), each
   * `<parameter=NAME>VALUE</parameter>`, whitespace ([ \n\t]*) before, between
   * and after them. A string is raw text without `</parameter>`; an enum or
   * const is its raw value (a string unquoted, else its JSON), and an integer,
   * number, boolean or null its JSON, with whitespace around. Only what this
   * reproduces exactly is read; other keywords are refused by name.
   */
  qwenXml(schema, where) {
    const bad = (msg) => fail(`json_schema with style "qwen_xml": ${msg}`, where);
    const ANNOTATIONS = ['title', 'description', '$schema', '$comment', 'examples', 'default'];
    const only = (o, keys, what) => {
      for (const k of Object.keys(o)) {
        if (!keys.includes(k) && !ANNOTATIONS.includes(k)) throw bad(`${what}: the keyword ${JSON.stringify(k)} is refused (supported: an object's properties, required and additionalProperties: false; a property's type string, integer (minimum, maximum), number, boolean or null, or enum / const)`);
      }
    };
    only(schema, ['type', 'properties', 'required', 'additionalProperties'], 'the schema');
    if (schema.type !== 'object' && !(schema.type === undefined && schema.properties !== undefined)) throw bad('the schema must be an object schema (type "object", or properties; xgrammar reads a schema with neither as any parameters)');
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) throw bad('additionalProperties is refused unless false (xgrammar\'s default in structural tags)');
    const props = schema.properties ?? {};
    if (props === null || typeof props !== 'object' || Array.isArray(props)) throw bad('properties must be an object');
    const required = schema.required ?? [];
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) throw bad('required must be an array of names');
    for (const r of required) if (!Object.hasOwn(props, r)) throw bad(`the required property ${JSON.stringify(r)} is not in properties`);
    const WS = '/[ \\t\\n]+/?';
    const value = (ps, name) => {
      const what = `property ${JSON.stringify(name)}`;
      if (ps === null || typeof ps !== 'object' || Array.isArray(ps)) throw bad(`${what}: its schema must be an object`);
      if (ps.enum !== undefined || ps.const !== undefined) {
        only(ps, ['enum', 'const', 'type'], what);
        if (ps.enum !== undefined && ps.const !== undefined) throw bad(`${what}: enum and const together are refused`);
        const vals = ps.const !== undefined ? [ps.const] : ps.enum;
        if (!Array.isArray(vals) || vals.length === 0) throw bad(`${what}: enum must be a non-empty array`);
        const texts = vals.map((v) => {
          if (v !== null && typeof v === 'object') throw bad(`${what}: object and array enum values are refused`);
          if (ps.type !== undefined && ps.type !== (v === null ? 'null' : Number.isInteger(v) && ps.type === 'integer' ? 'integer' : typeof v === 'number' ? 'number' : typeof v)) throw bad(`${what}: an enum value of another type than ${JSON.stringify(ps.type)} is refused`);
          const t = typeof v === 'string' ? v : JSON.stringify(v);
          if (!t || /^[ \t\n]|[ \t\n]$/.test(t) || t.includes('</parameter>')) throw bad(`${what}: the value ${JSON.stringify(v)} is refused (empty, with whitespace at an end, or holding </parameter>: where it starts or ends would be ambiguous)`);
          return t;
        });
        return `${WS} ${this.rule('xval', [...new Set(texts)].map(lit).join(' | '))} ${WS}`;
      }
      if (ps.type === 'string') {
        only(ps, ['type'], what);
        return this.freeText(['</parameter>'], ['</parameter>'], where);
      }
      if (ps.type === 'integer') {
        only(ps, ['type', 'minimum', 'maximum'], what);
        for (const k of ['minimum', 'maximum']) if (ps[k] !== undefined && !Number.isSafeInteger(ps[k])) throw bad(`${what}: ${k} must be an integer`);
        return `${WS} %json ${JSON.stringify(ps)} ${WS}`;
      }
      if (['number', 'boolean', 'null'].includes(ps.type)) {
        only(ps, ['type'], what);
        return `${WS} %json ${JSON.stringify({ type: ps.type })} ${WS}`;
      }
      throw bad(`${what}: ${ps.type === undefined ? 'a schema without a type' : `the type ${JSON.stringify(ps.type)}`} is refused (objects and arrays inside would be JSON with xgrammar's free whitespace, which grammask's JSON does not take)`);
    };
    const items = Object.entries(props).map(([name, ps]) => {
      const p = this.rule('xparam', `${lit(`<parameter=${name}>`)} ${value(ps, name)} ${lit('</parameter>')} ${WS}`);
      return required.includes(name) ? p : `${p}?`;
    });
    return [WS, ...items].join(' ');
  }

  /** xgrammar's dispatch rules: [[trigger, format], ...], for dispatch and token_dispatch. */
  dispatchRules(f, where, triggerOk) {
    if (!Array.isArray(f.rules) || f.rules.length === 0) throw fail(`${f.type}.rules must be a non-empty array of [trigger, format] pairs`, where);
    f.rules.forEach((r, i) => {
      if (!Array.isArray(r) || r.length !== 2) throw fail(`${f.type}.rules[${i}] must be a [trigger, format] pair`, where);
      triggerOk(r[0], `${where}.rules[${i}][0]`);
    });
    if (f.loop !== undefined && typeof f.loop !== 'boolean') throw fail(`${f.type}.loop must be a boolean`, where);
    return f.rules;
  }

  /**
   * dispatch: free text; at a trigger (the whole string), its format; then
   * free text again (loop, the default) or the end. The text contains no
   * trigger and none of `excludes`; as in xgrammar, nothing else (no end
   * detection), so what follows it must contain one of them, where grammask's
   * text must stop.
   */
  dispatch(f, follow, where) {
    const rules = this.dispatchRules(f, where, (t, at) => {
      if (typeof t !== 'string' || !t) throw fail('a dispatch trigger must be a non-empty string', at);
    });
    const triggers = rules.map((r) => r[0]);
    triggers.forEach((t, i) => {
      const other = triggers.findIndex((u, k) => k !== i && u.includes(t));
      if (other >= 0) throw fail(`the trigger ${JSON.stringify(t)} is inside the trigger ${JSON.stringify(triggers[other])}: which rule a text dispatches to would be ambiguous`, `${where}.rules[${i}][0]`);
    });
    const ex = f.excludes ?? [];
    if (!Array.isArray(ex) || ex.some((s) => typeof s !== 'string' || !s)) throw fail('dispatch.excludes must be an array of non-empty strings', where);
    const stop = [...triggers, ...ex];
    const fol = this.stops(follow, where);
    for (const s of fol) {
      if (!stop.some((e) => s.includes(e))) throw fail(`dispatch may be followed by ${JSON.stringify(s)}, which holds none of its triggers and excludes: xgrammar's dispatch does not stop there (its text may contain it, and where it ends would be ambiguous); add it to excludes`, where);
    }
    const loop = f.loop ?? true;
    const alts = rules.map((r, i) => {
      const body = this.expr(r[1], loop ? ANY : follow, `${where}.rules[${i}][1]`, false);
      return [lit(r[0]), body].filter(Boolean).join(' ');
    });
    const group = this.rule('rules', alts.join(' | '));
    const text = this.freeText([...stop, ...fol], [...triggers, ...fol], where);
    return loop ? `${text} (${group} ${text})*` : `${text} ${group}?`;
  }

  /**
   * token_triggered_tags: tokens (no trigger, no exclude_tokens, not the end
   * token of the enclosing tag); at a trigger token, one of the tags that
   * begin with it; then tokens again (or the end: stop_after_first).
   */
  tokenTriggeredTags(f, follow, where, prev) {
    const tags = this.tagList(f, where);
    const triggers = this.tokenIds(f.trigger_tokens, 'trigger_tokens', where, true);
    const ex = this.tokenIds(f.exclude_tokens, 'exclude_tokens', where);
    for (const k of ['at_least_one', 'stop_after_first']) if (f[k] !== undefined && typeof f[k] !== 'boolean') throw fail(`token_triggered_tags.${k} must be a boolean`, where);
    tags.forEach((t, i) => {
      const at = `${where}.tags[${i}]`;
      if (!isTokenFormat(t.begin)) throw fail('tags in token_triggered_tags must begin with a token ({ type: \'token\', token })', at);
      const id = this.tokenId(t.begin.token, `${at}.begin`);
      const n = triggers.filter((tr) => tr === id).length;
      if (n !== 1) throw fail(`the begin token ${id} must be exactly one of trigger_tokens, it is ${n}`, at);
    });
    const alts = tags.map((t, i) => this.tag(t, `${where}.tags[${i}]`, true));
    const any = this.rule('tags', alts.join(' | '));
    const alo = f.at_least_one === true, saf = f.stop_after_first === true;
    if (alo && saf) return any;
    const excluded = new Set([...triggers, ...ex, ...this.endToken()]);
    const afterTag = !tags.some((t) => last(t).text);
    if (saf) return `${this.freeTokens(excluded, prev, follow, where, 'token_triggered_tags')} ${any}?`;
    const r = this.freeTokens(excluded, (alo || prev) && afterTag, follow, where, afterTag ? 'token_triggered_tags' : 'token_triggered_tags (after a tag whose end is text)');
    return `${alo ? `${any} ` : ''}${r} (${any} ${r})*`;
  }

  /**
   * token_dispatch: tokens (no trigger, no exclude_tokens); at a trigger
   * token, its format; then tokens again (loop, the default) or the end. As
   * in xgrammar, the enclosing tag's end token is not excluded by itself.
   */
  tokenDispatch(f, follow, where, prev) {
    const rules = this.dispatchRules(f, where, (t, at) => this.tokenId(t, at));
    const triggers = rules.map((r, i) => this.tokenId(r[0], `${where}.rules[${i}][0]`));
    triggers.forEach((t, i) => {
      if (triggers.indexOf(t) !== i) throw fail(`the trigger token ${t} is in two rules`, `${where}.rules[${i}][0]`);
    });
    const ex = this.tokenIds(f.exclude_tokens, 'exclude_tokens', where);
    const loop = f.loop ?? true;
    const alts = rules.map((r, i) => [`<[${triggers[i]}]>`, this.expr(r[1], loop ? ANY : follow, `${where}.rules[${i}][1]`, true)].filter(Boolean).join(' '));
    const group = this.rule('rules', alts.join(' | '));
    const excluded = new Set([...triggers, ...ex]);
    if (!loop) return `${this.freeTokens(excluded, prev, follow, where, 'token_dispatch')} ${group}?`;
    const afterRule = !rules.some((r) => last(r[1]).text);
    const r = this.freeTokens(excluded, prev && afterRule, follow, where, afterRule ? 'token_dispatch' : 'token_dispatch (after a rule whose format ends with text)');
    return `${r} (${group} ${r})*`;
  }
}

/**
 * The Lark grammar of a structural-tag response format for a vocabulary's
 * token data: { grammar, format } (format: the format object read).
 */
export function structuralTagGrammar(rf, data, eos) {
  const format = structuralTagFormat(rf);
  const g = new Gen(data, eos, format);
  const body = g.expr(format, EMPTY, 'format', true);
  return { grammar: [`start: ${body}`, ...g.rules].join('\n') + '\n', format };
}
