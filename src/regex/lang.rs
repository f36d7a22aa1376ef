//! Language operations shared by the front ends, on regex-syntax text and
//! HIR (no dialect of its own):
//! - [`parse_hir`]: regex-syntax text → HIR;
//! - [`search_language`] / [`fullmatch_language`]: anchors resolved, giving a
//!   HIR without look-around whose language is the strings the pattern
//!   *finds a match in* (JSON Schema's search semantics) or fully matches
//!   (`re.fullmatch`);
//! - [`Dfa`], [`matches_empty`] and [`set_nonempty`]: full-match tests and
//!   emptiness of intersections/differences (the `Set` terminals), used to
//!   prune;
//! - [`escape`] / `push_literal`: a literal as regex-syntax text.

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look, Repetition};

/// Pushes `c` as a literal that is safe anywhere (inside or outside a set).
pub(crate) fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_punctuation() {
        if c == '<' || c == '>' {
            out.push(c);
        } else {
            out.push('\\');
            out.push(c);
        }
    } else if c.is_whitespace() || c.is_control() {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// A literal string as a regex (regex-syntax, every character escaped as needed).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        push_literal(&mut out, c);
    }
    out
}

fn parse_raw(re: &str) -> Result<Hir, regex_syntax::Error> {
    regex_syntax::ParserBuilder::new().nest_limit(200).build().parse(re)
}

/// Parses regex-syntax text into a HIR (Unicode, UTF-8).
pub fn parse_hir(re: &str) -> Result<Hir, String> {
    parse_raw(re).map_err(|e| e.to_string())
}

/// What a regex-syntax error is (e.g. "unclosed group") and its column.
pub(crate) fn kind_at(e: &regex_syntax::Error) -> (String, Option<usize>) {
    match e {
        regex_syntax::Error::Parse(a) => (a.kind().to_string(), Some(a.span().start.column)),
        regex_syntax::Error::Translate(h) => (h.kind().to_string(), Some(h.span().start.column)),
        _ => (e.to_string(), None),
    }
}

/// Parses `re`, the regex-syntax translation of the user's pattern `src`.
/// An error says what is wrong, and where in `src` when regex-syntax finds
/// the same error there; never the translation (`\d` alone is ~100 ranges).
pub fn parse_translated(src: &str, re: &str) -> Result<Hir, String> {
    parse_raw(re).map_err(|e| {
        let (kind, _) = kind_at(&e);
        match parse_raw(src).err().map(|e| kind_at(&e)) {
            Some((k, Some(col))) if k == kind => format!("{kind} at column {col}"),
            _ => kind,
        }
    })
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
/// `.*` added where the pattern is not anchored; anchors resolved
/// (lookaround compiled away, see [`super::look`]).
pub fn search_language(h: &Hir) -> Result<Hir, String> {
    if super::look::has(h) {
        return super::look::language(h, true);
    }
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
    if super::look::has(h) {
        return super::look::language(h, false);
    }
    let vs = variants(h)?;
    let alts: Vec<Hir> = vs.into_iter().map(|v| v.body).collect();
    Ok(if alts.is_empty() { Hir::fail() } else { Hir::alternation(alts) })
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
    nonempty: crate::hash::FxMap<(Vec<String>, Vec<String>), bool>,
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
    /// The states from which a full match is still reachable (computed on first use).
    productive: std::cell::OnceCell<Vec<bool>>,
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
        Ok(Dfa { dfa, start, productive: Default::default() })
    }
    fn accepting(&self, s: StateID) -> bool {
        self.dfa.is_match_state(self.dfa.next_eoi_state(s))
    }
    fn dead(&self, s: StateID) -> bool {
        self.dfa.is_dead_state(s) || self.dfa.is_quit_state(s)
    }
    /// A full match is reachable from `s` (not only not dead: a dense DFA
    /// reports a match one byte late, so the byte after a match leads to a
    /// live state even when nothing can match any more).
    fn is_productive(&self, s: StateID) -> bool {
        // Sets of states as `Vec<bool>` by state id, the reverse edges in a
        // map type the crate already instantiates (wasm size).
        fn mark(v: &mut Vec<bool>, i: usize) -> bool {
            if i >= v.len() {
                v.resize(i + 1, false);
            }
            !std::mem::replace(&mut v[i], true)
        }
        self.productive
            .get_or_init(|| {
                let mut states = vec![self.start];
                let mut seen = Vec::new();
                mark(&mut seen, self.start.as_usize());
                let mut rev: crate::hash::FxMap<u32, Vec<u32>> = Default::default();
                let mut i = 0;
                while i < states.len() {
                    let q = states[i];
                    i += 1;
                    for b in 0..=255u8 {
                        let t = self.dfa.next_state(q, b);
                        if self.dead(t) {
                            continue;
                        }
                        rev.entry(t.as_u32()).or_default().push(q.as_u32());
                        if mark(&mut seen, t.as_usize()) {
                            states.push(t);
                        }
                    }
                }
                let mut prod = Vec::new();
                let mut work: Vec<u32> = Vec::new();
                for &q in &states {
                    if self.accepting(q) && mark(&mut prod, q.as_usize()) {
                        work.push(q.as_u32());
                    }
                }
                while let Some(t) = work.pop() {
                    for &q in rev.get(&t).map(|v| v.as_slice()).unwrap_or(&[]) {
                        if mark(&mut prod, q as usize) {
                            work.push(q);
                        }
                    }
                }
                prod
            })
            .get(s.as_usize())
            .copied()
            .unwrap_or(false)
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
    // Breadth first: a shortest string of the set is found after the states
    // up to its length (`format: uri` with `maxLength: 200`: the front end
    // in 17 ms, where depth first went down strings of every length up to
    // 200 first: 764 ms); depth first, within the same budget, where
    // breadth first runs over (a long shortest string behind many short
    // dead ends). Either way the answer is exact.
    let search = |bfs: bool| -> Result<bool, String> {
        let mut seen = crate::hash::FxSet::default();
        seen.insert(start.clone());
        // Breadth first: a queue, `stack[head..]`.
        let (mut stack, mut head) = (vec![(start.clone(), 0usize)], 0);
        while let Some(((ps, ns), depth)) = match bfs {
            true => stack.get_mut(head).map(|e| (std::mem::take(&mut e.0), e.1)).inspect(|_| head += 1),
            false => stack.pop(),
        } {
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
    };
    search(true).or_else(|_| search(false))
}

/// The bytes that can begin a non-empty string of `re`'s language.
pub fn first_bytes(re: &str) -> Result<[bool; 256], String> {
    let d = Dfa::cached(re)?;
    let mut out = [false; 256];
    for b in 0..=255u8 {
        out[b as usize] = d.is_productive(d.dfa.next_state(d.start, b));
    }
    Ok(out)
}

/// The bytes `b` such that some non-empty string `a` of `a_re` followed by
/// `b` is a prefix of a string of `c_re` (the longer lexemes of `c_re` that
/// begin with a lexeme of `a_re`, by the byte after it). `Err` when a
/// regex does not compile or the product exceeds the search budget.
pub fn extension_bytes(a_re: &str, c_re: &str) -> Result<[bool; 256], String> {
    let (a, c) = (Dfa::cached(a_re)?, Dfa::cached(c_re)?);
    let mut out = [false; 256];
    // Seen pairs: `a` state → `c` state * 2 + moved (a map type the crate
    // already instantiates: wasm size).
    let mut seen: crate::hash::FxMap<u32, Vec<u32>> = Default::default();
    let mut insert = |x: StateID, y: StateID, moved: bool| {
        let v = seen.entry(x.as_u32()).or_default();
        let k = y.as_u32() * 2 + moved as u32;
        let new = !v.contains(&k);
        if new {
            v.push(k);
        }
        new
    };
    let mut n = 1usize;
    let mut stack = vec![(a.start, c.start, false)];
    insert(a.start, c.start, false);
    while let Some((sa, sc, moved)) = stack.pop() {
        if moved && a.accepting(sa) {
            for b in 0..=255u8 {
                if c.is_productive(c.dfa.next_state(sc, b)) {
                    out[b as usize] = true;
                }
            }
        }
        for b in 0..=255u8 {
            let (ta, tc) = (a.dfa.next_state(sa, b), c.dfa.next_state(sc, b));
            if a.dead(ta) || c.dead(tc) {
                continue;
            }
            if insert(ta, tc, true) {
                n += 1;
                if n > PRODUCT_LIMIT {
                    return Err("the product of two terminals is too large to check".into());
                }
                stack.push((ta, tc, true));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_emptiness() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(set_nonempty(&s(&["a+", "a{3}"]), &[]).unwrap());
        assert!(!set_nonempty(&s(&["a+", "b+"]), &[]).unwrap());
        assert!(!set_nonempty(&s(&["a"]), &s(&["a|b"])).unwrap());
        assert!(set_nonempty(&s(&["[ab]"]), &s(&["a"])).unwrap());
    }

    #[test]
    fn extensions() {
        let e = extension_bytes("[0-9]+", "[0-9]+(\\.[0-9]+)?").unwrap();
        assert!(e[b'5' as usize] && e[b'.' as usize] && !e[b'x' as usize]);
        let e = extension_bytes("a", "b").unwrap();
        assert!(e.iter().all(|&x| !x));
        let f = first_bytes("[a-c]|\\x{E9}").unwrap();
        assert!(f[b'a' as usize] && f[0xC3] && !f[b'd' as usize]);
    }
}
