//! Regexes for the schema and regex front ends:
//! - [`ecma_to_hir`]: an ECMA-262 `pattern` (JSON Schema) → regex-syntax HIR;
//! - [`search_language`] / [`fullmatch_language`]: anchors resolved, giving a
//!   HIR without look-around whose language is the strings the pattern
//!   *finds a match in* (JSON Schema's search semantics) or fully matches;
//! - [`json_encode`]: a regex over string *values* → a regex over their JSON
//!   text under canonical minimal escaping (see [`CHAR`]);
//! - [`Dfa`] and [`set_nonempty`]: full-match tests and emptiness of
//!   intersections/differences (the `Set` terminals), used to prune.

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look, Repetition};

use crate::grammar::lark::pyregex::push_literal;

/// One canonical JSON string character (the text of one character of a
/// string value): any character but `"`, `\` and U+0000–U+001F, or the
/// escapes `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, or `\u00XX` (lowercase
/// hex) for the other control characters.
pub const CHAR: &str = r#"(?:[^"\\\x00-\x1f]|\\["\\bfnrt]|\\u00(?:0[0-7bef]|1[0-9a-f]))"#;

/// Any JSON string (every escape RFC 8259 allows).
pub const ANY_STRING: &str = r#""(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#;

/// Canonical minimal JSON escaping of a string value (with the quotes).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A literal string as a regex (regex-syntax, every character escaped as needed).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        push_literal(&mut out, c);
    }
    out
}

/// ECMA-262 `\s`.
const ECMA_WS: &str = r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

fn hex(chars: &[char], i: &mut usize, n: usize) -> Result<u32, String> {
    if *i + n > chars.len() || !chars[*i..*i + n].iter().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("expected {n} hex digits"));
    }
    let s: String = chars[*i..*i + n].iter().collect();
    *i += n;
    Ok(u32::from_str_radix(&s, 16).unwrap_or(0))
}

/// `\u` escape (after the `u`): `HHHH`, a surrogate pair `HHHH\uHHHH`, or `{H...}`.
fn unicode_escape(chars: &[char], i: &mut usize) -> Result<char, String> {
    if chars.get(*i) == Some(&'{') {
        *i += 1;
        let s = *i;
        while *i < chars.len() && chars[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        if chars.get(*i) != Some(&'}') || *i == s {
            return Err("bad \\u{...} escape".into());
        }
        let v = u32::from_str_radix(&chars[s..*i].iter().collect::<String>(), 16).map_err(|e| e.to_string())?;
        *i += 1;
        return char::from_u32(v).ok_or_else(|| format!("\\u{{{v:x}}} is not a Unicode scalar value"));
    }
    let hi = hex(chars, i, 4)?;
    if (0xD800..0xDC00).contains(&hi) && chars.get(*i) == Some(&'\\') && chars.get(*i + 1) == Some(&'u') {
        let mut j = *i + 2;
        if let Ok(lo) = hex(chars, &mut j, 4) {
            if (0xDC00..0xE000).contains(&lo) {
                *i = j;
                return Ok(char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)).unwrap_or('\u{FFFD}'));
            }
        }
    }
    char::from_u32(hi).ok_or_else(|| format!("lone surrogate \\u{hi:04X} is not supported"))
}

/// A class escape (`\d` ...) as the *body* of a regex-syntax class.
fn class_escape(e: char) -> Option<(&'static str, bool)> {
    Some(match e {
        'd' => ("0-9", false),
        'D' => ("0-9", true),
        'w' => ("A-Za-z0-9_", false),
        'W' => ("A-Za-z0-9_", true),
        's' => (ECMA_WS, false),
        'S' => (ECMA_WS, true),
        _ => return None,
    })
}

/// A character escape valid both inside and outside classes (after the `\`).
fn char_escape(chars: &[char], i: &mut usize, e: char) -> Result<Option<char>, String> {
    Ok(Some(match e {
        't' => '\t',
        'n' => '\n',
        'v' => '\x0b',
        'f' => '\x0c',
        'r' => '\r',
        '0' if !chars.get(*i).is_some_and(|c| c.is_ascii_digit()) => '\0',
        'c' => match chars.get(*i) {
            Some(c) if c.is_ascii_alphabetic() => {
                *i += 1;
                char::from_u32(*c as u32 % 32).unwrap_or('\0')
            }
            _ => return Err("bad \\c escape".into()),
        },
        'x' => char::from_u32(hex(chars, i, 2)?).unwrap_or('\0'),
        'u' => unicode_escape(chars, i)?,
        _ => return Ok(None),
    }))
}

/// Translates an ECMA-262 regex (as used by JSON Schema's `pattern` and
/// `patternProperties`, Unicode mode, no flags) into regex-syntax text.
/// Unsupported: backreferences, look-around, `\b`/`\B` (reported when the
/// anchors are resolved), `\k<name>`.
pub fn ecma_to_regex(src: &str) -> Result<String, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '\\' => {
                let Some(&e) = chars.get(i) else { return Err("pattern ends with a lone backslash".into()) };
                i += 1;
                if let Some((body, neg)) = class_escape(e) {
                    out.push_str(if neg { "[^" } else { "[" });
                    out.push_str(body);
                    out.push(']');
                } else if let Some(ch) = char_escape(&chars, &mut i, e)? {
                    push_literal(&mut out, ch);
                } else {
                    match e {
                        'b' | 'B' => {
                            out.push('\\');
                            out.push(e);
                        }
                        'p' | 'P' => {
                            out.push('\\');
                            out.push(e);
                            if chars.get(i) != Some(&'{') {
                                return Err("\\p must be followed by {...}".into());
                            }
                            while i < chars.len() {
                                let c = chars[i];
                                i += 1;
                                out.push(c);
                                if c == '}' {
                                    break;
                                }
                            }
                        }
                        '1'..='9' => return Err(format!("backreference \\{e} is not supported")),
                        'k' => return Err("named backreference \\k<...> is not supported".into()),
                        e if e.is_ascii_alphanumeric() => return Err(format!("unknown escape \\{e}")),
                        e => push_literal(&mut out, e),
                    }
                }
            }
            '[' => {
                let neg = chars.get(i) == Some(&'^');
                if neg {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                    // `[]` matches nothing, `[^]` any character.
                    out.push_str(if neg { r"[\s\S]" } else { r"[^\s\S]" });
                    continue;
                }
                out.push_str(if neg { "[^" } else { "[" });
                // Items: a char (with escapes) or a class escape; ranges a-b.
                enum It {
                    C(char),
                    K(&'static str, bool),
                }
                let item = |i: &mut usize| -> Result<It, String> {
                    let c = chars[*i];
                    *i += 1;
                    if c != '\\' {
                        return Ok(It::C(c));
                    }
                    let Some(&e) = chars.get(*i) else { return Err("unterminated character class".into()) };
                    *i += 1;
                    if let Some((b, n)) = class_escape(e) {
                        return Ok(It::K(b, n));
                    }
                    if e == 'b' {
                        return Ok(It::C('\x08'));
                    }
                    if e == 'p' || e == 'P' {
                        return Err("\\p{...} inside a character class is not supported".into());
                    }
                    if let Some(ch) = char_escape(&chars, i, e)? {
                        return Ok(It::C(ch));
                    }
                    if e.is_ascii_alphanumeric() {
                        return Err(format!("unknown escape \\{e} in a character class"));
                    }
                    Ok(It::C(e))
                };
                let push = |out: &mut String, it: &It| match it {
                    It::C(c) => push_literal(out, *c),
                    It::K(b, false) => out.push_str(b),
                    It::K(b, true) => {
                        out.push_str("[^");
                        out.push_str(b);
                        out.push(']');
                    }
                };
                loop {
                    let Some(&c) = chars.get(i) else { return Err("unterminated character class".into()) };
                    if c == ']' {
                        i += 1;
                        break;
                    }
                    let lo = item(&mut i)?;
                    if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&c| c != ']') {
                        i += 1;
                        let hi = item(&mut i)?;
                        match (&lo, &hi) {
                            (It::C(a), It::C(b)) if a <= b => {
                                push_literal(&mut out, *a);
                                out.push('-');
                                push_literal(&mut out, *b);
                            }
                            (It::C(_), It::C(_)) => return Err("character class range out of order".into()),
                            _ => return Err("a class escape cannot be a range end".into()),
                        }
                    } else {
                        push(&mut out, &lo);
                    }
                }
                out.push(']');
            }
            '(' if chars.get(i) == Some(&'?') => {
                match (chars.get(i + 1), chars.get(i + 2)) {
                    (Some(':'), _) => {
                        i += 2;
                        out.push_str("(?:");
                    }
                    (Some('='), _) | (Some('!'), _) => return Err("lookahead (?= / (?! is not supported".into()),
                    (Some('<'), Some('=')) | (Some('<'), Some('!')) => {
                        return Err("lookbehind (?<= / (?<! is not supported".into())
                    }
                    (Some('<'), _) => {
                        i += 2;
                        while i < chars.len() && chars[i] != '>' {
                            i += 1;
                        }
                        if i >= chars.len() {
                            return Err("unterminated group name".into());
                        }
                        i += 1;
                        out.push_str("(?:");
                    }
                    _ => return Err("unsupported group syntax (?...".into()),
                }
            }
            '{' => {
                // A quantifier {n}, {n,}, {n,m}; otherwise a literal brace (Annex B).
                let mut j = i;
                let d0 = j;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                let ok = j > d0 && {
                    if chars.get(j) == Some(&',') {
                        j += 1;
                        while j < chars.len() && chars[j].is_ascii_digit() {
                            j += 1;
                        }
                    }
                    chars.get(j) == Some(&'}')
                };
                if ok {
                    out.push('{');
                    out.extend(&chars[i..=j]);
                    i = j + 1;
                } else {
                    out.push_str("\\{");
                }
            }
            '}' => out.push_str("\\}"),
            ']' => out.push_str("\\]"),
            '.' => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            '#' | '&' | '~' | '-' | ' ' => push_literal(&mut out, c),
            c if c.is_whitespace() || c.is_control() => push_literal(&mut out, c),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Parses regex-syntax text into a HIR (Unicode, UTF-8).
pub fn parse_hir(re: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new().nest_limit(200).build().parse(re).map_err(|e| e.to_string())
}

/// An ECMA-262 pattern as a HIR (anchors still in it).
pub fn ecma_to_hir(src: &str) -> Result<Hir, String> {
    let re = ecma_to_regex(src)?;
    parse_hir(&re).map_err(|e| format!("cannot translate the pattern: {e}"))
}

/// One way to match: anchored at the start / the end, and the body.
struct Variant {
    start: bool,
    end: bool,
    body: Hir,
}

const MAX_VARIANTS: usize = crate::limits::Limits::DEFAULT.max_anchored_alternatives;

fn variants(h: &Hir) -> Result<Vec<Variant>, String> {
    Ok(match h.kind() {
        _ if h.properties().look_set().is_empty() => vec![Variant { start: false, end: false, body: h.clone() }],
        HirKind::Look(Look::Start) => vec![Variant { start: true, end: false, body: Hir::empty() }],
        HirKind::Look(Look::End) => vec![Variant { start: false, end: true, body: Hir::empty() }],
        HirKind::Look(l) => return Err(format!("the assertion {l:?} (\\b, \\B, multi-line anchors) is not supported")),
        HirKind::Capture(c) => variants(&c.sub)?,
        HirKind::Repetition(r) => {
            if r.min == 1 && r.max == Some(1) {
                variants(&r.sub)?
            } else if r.min == 0 && r.max == Some(1) {
                let mut v = variants(&r.sub)?;
                v.push(Variant { start: false, end: false, body: Hir::empty() });
                v
            } else {
                return Err("an anchor (^ or $) inside a repetition is not supported".into());
            }
        }
        HirKind::Alternation(subs) => {
            let mut out = Vec::new();
            for s in subs {
                out.extend(variants(s)?);
            }
            out
        }
        HirKind::Concat(subs) => {
            let mut acc = vec![Variant { start: false, end: false, body: Hir::empty() }];
            for s in subs {
                let next = variants(s)?;
                let mut out = Vec::new();
                for x in &acc {
                    for y in &next {
                        let x_empty_only = x.body.properties().maximum_len() == Some(0);
                        let y_empty_only = y.body.properties().maximum_len() == Some(0);
                        let x_nullable = x.body.properties().minimum_len() == Some(0);
                        let y_nullable = y.body.properties().minimum_len() == Some(0);
                        if x.end {
                            // Nothing can follow the end: y must match the empty string.
                            if !y_nullable || (y.start && !x_empty_only && !x_nullable) {
                                continue;
                            }
                            if y.start && !x_empty_only {
                                // x must be empty too (at position 0), whole match is empty.
                                out.push(Variant { start: true, end: true, body: Hir::empty() });
                            } else {
                                out.push(Variant { start: x.start || y.start, end: true, body: x.body.clone() });
                            }
                        } else if y.start {
                            // y is at position 0: x must match the empty string.
                            if x_empty_only {
                                out.push(Variant { start: true, end: y.end, body: y.body.clone() });
                            } else if x_nullable {
                                out.push(Variant { start: true, end: y.end, body: y.body.clone() });
                            }
                        } else {
                            let _ = y_empty_only;
                            out.push(Variant { start: x.start, end: y.end, body: Hir::concat(vec![x.body.clone(), y.body.clone()]) });
                        }
                        if out.len() > MAX_VARIANTS {
                            return Err("too many anchored alternatives".into());
                        }
                    }
                }
                acc = out;
            }
            acc
        }
        _ => return Err("unsupported regex construct".into()),
    })
}

fn any_char() -> Hir {
    Hir::class(Class::Unicode(ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)])))
}

fn star(h: Hir) -> Hir {
    Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(h) })
}

/// The strings in which `h` finds a match (JSON Schema `pattern` semantics):
/// `.*` added where the pattern is not anchored; anchors resolved.
pub fn search_language(h: &Hir) -> Result<Hir, String> {
    let vs = variants(h)?;
    let alts: Vec<Hir> = vs
        .into_iter()
        .map(|v| {
            let mut parts = Vec::new();
            if !v.start {
                parts.push(star(any_char()));
            }
            parts.push(v.body);
            if !v.end {
                parts.push(star(any_char()));
            }
            Hir::concat(parts)
        })
        .collect();
    Ok(if alts.is_empty() { Hir::fail() } else { Hir::alternation(alts) })
}

/// The strings `h` matches completely (`re.fullmatch`): leading `^`/`\A` and
/// trailing `$`/`\z` are no-ops, anchors elsewhere must be satisfiable.
pub fn fullmatch_language(h: &Hir) -> Result<Hir, String> {
    let vs = variants(h)?;
    let alts: Vec<Hir> = vs.into_iter().map(|v| v.body).collect();
    Ok(if alts.is_empty() { Hir::fail() } else { Hir::alternation(alts) })
}

/// The JSON text of one character under canonical escaping, as a HIR.
fn encoded_char(c: char) -> Hir {
    let q = quote(&c.to_string());
    Hir::literal(q[1..q.len() - 1].as_bytes().to_vec())
}

/// A regex over string values → a regex over their JSON text (without the
/// quotes), canonical escaping.
pub fn json_encode(h: &Hir) -> Result<Hir, String> {
    Ok(match h.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => {
            let s = std::str::from_utf8(&l.0).map_err(|_| "a byte-level regex literal is not supported".to_string())?;
            Hir::concat(s.chars().map(encoded_char).collect())
        }
        HirKind::Class(Class::Unicode(c)) => {
            // Plain characters stay a class; the escaped ones become alternatives.
            let mut special = ClassUnicode::new([ClassUnicodeRange::new('\0', '\x1f'), ClassUnicodeRange::new('"', '"'), ClassUnicodeRange::new('\\', '\\')]);
            let mut plain = c.clone();
            plain.difference(&special);
            special.intersect(c);
            let mut alts = Vec::new();
            if plain.ranges().first().is_some() {
                alts.push(Hir::class(Class::Unicode(plain)));
            }
            for r in special.ranges() {
                for ch in r.start()..=r.end() {
                    alts.push(encoded_char(ch));
                }
            }
            if alts.is_empty() {
                Hir::fail()
            } else {
                Hir::alternation(alts)
            }
        }
        HirKind::Class(Class::Bytes(b)) if b.ranges().is_empty() => Hir::fail(),
        HirKind::Class(Class::Bytes(_)) => return Err("a byte-level class is not supported".into()),
        HirKind::Look(_) => return Err("an assertion is not supported here".into()),
        HirKind::Repetition(r) => Hir::repetition(Repetition { min: r.min, max: r.max, greedy: r.greedy, sub: Box::new(json_encode(&r.sub)?) }),
        HirKind::Capture(c) => json_encode(&c.sub)?,
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(json_encode).collect::<Result<_, _>>()?),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(json_encode).collect::<Result<_, _>>()?),
    })
}

/// `"` + the JSON text of the strings of `values` + `"`, as regex-syntax text.
pub fn quoted_regex(values: &Hir) -> Result<String, String> {
    let enc = json_encode(values)?;
    Ok(format!("\"(?:{enc})\""))
}

/// A JSON Schema `pattern` → the regex over JSON string texts (quotes included)
/// whose values contain a match.
pub fn pattern_string_regex(pattern: &str) -> Result<String, String> {
    let h = ecma_to_hir(pattern)?;
    let s = search_language(&h)?;
    quoted_regex(&s)
}

/// Does this regex (no look-around) match the empty string?
pub fn matches_empty(re: &str) -> Result<bool, String> {
    Ok(Dfa::cached(re)?.full_match(b""))
}

/// Most DFA bytes [`Dfa::cached`] keeps, and most [`set_nonempty`] answers.
const DFA_CACHE_BYTES: usize = 32 << 20;
const NONEMPTY_CACHE: usize = 1 << 14;

struct RxCache {
    /// DFAs by pattern, bounded in bytes.
    dfas: crate::cache::Bounded<String, std::rc::Rc<Dfa>>,
    nonempty: std::collections::HashMap<(Vec<String>, Vec<String>), bool>,
}

thread_local! {
    /// Per-thread caches of the schema front end's regex checks: compiled
    /// DFAs by regex and emptiness answers by regex lists (bounded; they
    /// depend on nothing but the regexes, and per-request compiles repeat them).
    static RX_CACHE: std::cell::RefCell<RxCache> = std::cell::RefCell::new(RxCache { dfas: crate::cache::Bounded::new(DFA_CACHE_BYTES), nonempty: Default::default() });
}

const DFA_LIMIT: usize = crate::limits::Limits::DEFAULT.max_regex_dfa_bytes;

/// An anchored DFA for full-match tests.
pub struct Dfa {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

impl Dfa {
    /// [`Dfa::new`], through a bounded per-thread cache.
    pub fn cached(re: &str) -> Result<std::rc::Rc<Dfa>, String> {
        if let Some(d) = RX_CACHE.with(|c| c.borrow().dfas.get(re)) {
            return Ok(d);
        }
        let d = std::rc::Rc::new(Dfa::new(re)?);
        let bytes = d.dfa.memory_usage() + re.len() + 64;
        RX_CACHE.with(|c| c.borrow_mut().dfas.insert(re.to_string(), d.clone(), bytes));
        Ok(d)
    }
    pub fn new(re: &str) -> Result<Dfa, String> {
        let hir = parse_hir(re)?;
        Self::from_hir(&hir)
    }
    pub fn from_hir(hir: &Hir) -> Result<Dfa, String> {
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().nfa_size_limit(Some(DFA_LIMIT)))
            .build_from_hir(hir)
            .map_err(|e| e.to_string())?;
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Anchored)
                    .determinize_size_limit(Some(DFA_LIMIT))
                    .dfa_size_limit(Some(DFA_LIMIT)),
            )
            .build_from_nfa(&nfa)
            .map_err(|e| format!("regex too large: {e}"))?;
        let start = dfa.start_state(&start::Config::new().anchored(Anchored::Yes)).map_err(|e| e.to_string())?;
        Ok(Dfa { dfa, start })
    }
    fn accepting(&self, s: StateID) -> bool {
        self.dfa.is_match_state(self.dfa.next_eoi_state(s))
    }
    fn dead(&self, s: StateID) -> bool {
        self.dfa.is_dead_state(s) || self.dfa.is_quit_state(s)
    }
    pub fn runner(&self) -> Runner<'_> {
        Runner { d: self, s: self.start }
    }
    pub fn full_match(&self, text: &[u8]) -> bool {
        let mut s = self.start;
        for &b in text {
            s = self.dfa.next_state(s, b);
            if self.dead(s) {
                return false;
            }
        }
        self.accepting(s)
    }
}

/// A DFA run, byte by byte.
pub struct Runner<'d> {
    d: &'d Dfa,
    s: StateID,
}

impl Runner<'_> {
    /// Feeds a byte; false once no match is possible.
    pub fn step(&mut self, b: u8) -> bool {
        self.s = self.d.dfa.next_state(self.s, b);
        !self.d.dead(self.s)
    }
    /// The bytes fed so far are a full match.
    pub fn accepting(&self) -> bool {
        self.d.accepting(self.s)
    }
}

/// Product search budget for [`set_nonempty`] (states).
const PRODUCT_LIMIT: usize = crate::limits::Limits::DEFAULT.max_regex_product_states;

/// Whether some non-empty string is matched fully by every regex of `all`
/// and by none of `none` (the language of a `Set` terminal). `Err` when a
/// regex does not compile or the product exceeds the search budget.
pub fn set_nonempty(all: &[String], none: &[String]) -> Result<bool, String> {
    let key = (all.to_vec(), none.to_vec());
    if let Some(b) = RX_CACHE.with(|c| c.borrow().nonempty.get(&key).copied()) {
        return Ok(b);
    }
    let b = set_nonempty_uncached(all, none)?;
    RX_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.nonempty.len() >= NONEMPTY_CACHE {
            c.nonempty.clear();
        }
        c.nonempty.insert(key, b);
    });
    Ok(b)
}

fn set_nonempty_uncached(all: &[String], none: &[String]) -> Result<bool, String> {
    let a: Vec<std::rc::Rc<Dfa>> = all.iter().map(|r| Dfa::cached(r)).collect::<Result<_, _>>()?;
    let n: Vec<std::rc::Rc<Dfa>> = none.iter().map(|r| Dfa::cached(r)).collect::<Result<_, _>>()?;
    if a.is_empty() {
        return Err("a Set needs at least one positive regex".into());
    }
    // State: the positive states (never dead) and the negative ones (dead = None).
    type St = (Vec<StateID>, Vec<Option<StateID>>);
    let start: St = (a.iter().map(|d| d.start).collect(), n.iter().map(|d| Some(d.start)).collect());
    let mut seen = std::collections::HashSet::new();
    seen.insert(start.clone());
    let mut stack = vec![(start, 0usize)];
    while let Some(((ps, ns), depth)) = stack.pop() {
        if depth > 0
            && ps.iter().zip(&a).all(|(&s, d)| d.accepting(s))
            && ns.iter().zip(&n).all(|(s, d)| s.is_none_or(|s| !d.accepting(s)))
        {
            return Ok(true);
        }
        'bytes: for b in 0..=255u8 {
            let mut p2 = Vec::with_capacity(ps.len());
            for (&s, d) in ps.iter().zip(&a) {
                let t = d.dfa.next_state(s, b);
                if d.dead(t) {
                    continue 'bytes;
                }
                p2.push(t);
            }
            let n2: Vec<Option<StateID>> = ns
                .iter()
                .zip(&n)
                .map(|(s, d)| s.and_then(|s| Some(d.dfa.next_state(s, b)).filter(|&t| !d.dead(t))))
                .collect();
            let st = (p2, n2);
            if seen.insert(st.clone()) {
                if seen.len() > PRODUCT_LIMIT {
                    return Err("the intersection of the string constraints is too large to check".into());
                }
                stack.push((st, depth + 1));
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(re: &str, s: &str) -> bool {
        Dfa::new(re).unwrap().full_match(s.as_bytes())
    }

    #[test]
    fn search_semantics() {
        let r = pattern_string_regex("^a+$").unwrap();
        assert!(full(&r, "\"aaa\""));
        assert!(!full(&r, "\"aab\""));
        let r = pattern_string_regex("b").unwrap();
        assert!(full(&r, "\"abc\""));
        assert!(!full(&r, "\"ac\""));
        let r = pattern_string_regex("^x|y$").unwrap();
        assert!(full(&r, "\"x1\""));
        assert!(full(&r, "\"1y\""));
        assert!(!full(&r, "\"1x\""));
        let r = pattern_string_regex("a$b").unwrap();
        assert!(!full(&r, "\"ab\""));
        let r = pattern_string_regex("\\d").unwrap();
        assert!(!full(&r, "\"\u{0664}\""), "ECMA \\d is ASCII");
        let r = pattern_string_regex("^\\p{L}+$").unwrap();
        assert!(full(&r, "\"é\""));
        assert!(pattern_string_regex("a\\1").is_err());
        assert!(pattern_string_regex("(?=a)").is_err());
        assert!(pattern_string_regex("\\bfoo").is_err());
        assert!(pattern_string_regex("[").is_err());
    }

    #[test]
    fn escaping() {
        let r = pattern_string_regex("^\"\\\\\\n$").unwrap();
        assert!(full(&r, r#""\"\\\n""#));
        assert!(!full(&r, "\"\"\\\n\""));
        let r = pattern_string_regex("^.$").unwrap();
        assert!(full(&r, r#""\u001f""#));
        assert!(!full(&r, r#""\u001F""#), "canonical escapes are lowercase");
        assert!(!full(&r, r#""\n""#), "ECMA . excludes line terminators");
        assert_eq!(quote("a\"\u{1}"), r#""a\"\u0001""#);
        assert!(full(CHAR, "\\u001f") && full(CHAR, "\\t") && !full(CHAR, "\\u0009"));
    }

    #[test]
    fn set_emptiness() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(set_nonempty(&s(&["a+", "a{3}"]), &[]).unwrap());
        assert!(!set_nonempty(&s(&["a+", "b+"]), &[]).unwrap());
        assert!(!set_nonempty(&s(&["a"]), &s(&["a|b"])).unwrap());
        assert!(set_nonempty(&s(&["[ab]"]), &s(&["a"])).unwrap());
    }
}
