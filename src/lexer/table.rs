//! One terminal as a byte-level DFA table (feature `compiler`): what the
//! lexer automaton builder and the reference lexer both run.
//!
//! A [`Table`] has states `0..n`, a transition per (state, byte) (`NONE` =
//! dead: no accepting state is reachable any more) and `accept[s]`: a match
//! of the terminal ends after the bytes that led to `s`.
//! - Literals and `Regex` terminals: the anchored **leftmost-first** DFA of
//!   regex-automata (Python `re.match` semantics: a match ends at an
//!   accepting position, and the terminal's match is the last one before the
//!   table dies);
//! - [`TerminalPattern::Set`] terminals: the product of the **all-matches**
//!   DFAs of its `all` and `none` regexes, with a fresh start state so the
//!   empty string is never in the set.
//!
//! Look-around assertions are rejected, and so are literal/regex terminals
//! that match the empty string.
//!
//! Compiled tables are kept in a per-thread cache keyed by the pattern
//! (regex and match kind, or a `Set`'s regex lists), bounded in size: the
//! per-request compiles of JSON Schemas and regexes repeat the same
//! terminals (JSON strings, numbers, keys, formats), and a table depends on
//! nothing but its pattern.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

use super::NONE;
use crate::err;
use crate::grammar::{Cfg, TerminalDef, TerminalPattern};
use crate::ids::TerminalId;
use crate::Result;

/// Size limits for one regex's NFA / DFA construction (bytes).
const NFA_SIZE_LIMIT: usize = 64 << 20;
const DFA_SIZE_LIMIT: usize = 256 << 20;
/// Most states of a [`TerminalPattern::Set`] product table.
const MAX_PRODUCT_STATES: usize = 1 << 18;

/// Most `u32` words (transitions) the table cache keeps before it starts over.
const CACHE_WORDS: usize = 4 << 20;

#[derive(Clone, PartialEq, Eq, Hash)]
enum CacheKey {
    /// A regex and whether it is compiled with all-matches semantics.
    Regex(String, bool),
    Set(Vec<String>, Vec<String>),
}

#[derive(Default)]
struct TableCache {
    map: HashMap<CacheKey, Rc<Table>>,
    words: usize,
}

thread_local! {
    static CACHE: RefCell<TableCache> = RefCell::new(TableCache::default());
}

/// The cached table for `key`, else `make()`'s (kept when it succeeds).
fn cached(key: CacheKey, make: impl FnOnce() -> Result<Table>) -> Result<Rc<Table>> {
    if let Some(t) = CACHE.with(|c| c.borrow().map.get(&key).cloned()) {
        return Ok(t);
    }
    let t = Rc::new(make()?);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        let w = t.next.len() + t.accept.len() / 4 + 16;
        if c.words + w > CACHE_WORDS {
            c.map.clear();
            c.words = 0;
        }
        if w <= CACHE_WORDS / 4 {
            c.words += w;
            c.map.insert(key, t.clone());
        }
    });
    Ok(t)
}

/// One terminal's DFA (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct Table {
    /// `NONE` when the terminal matches nothing at all.
    pub start: u32,
    /// `state * width + byte-or-class` → state or `NONE`.
    pub next: Vec<u32>,
    pub width: usize,
    pub accept: Vec<bool>,
}

/// "terminal NAME (at file:line:col)" for messages.
pub(crate) fn describe(def: &TerminalDef) -> String {
    if def.span.file.is_empty() && def.span.line == 0 {
        format!("terminal {}", def.name)
    } else {
        format!("terminal {} (at {})", def.name, def.span)
    }
}

/// An anchored regex-automata DFA and its start state.
struct Dfa {
    dfa: dense::DFA<Vec<u32>>,
    start: StateID,
}

impl Dfa {
    fn accepting_here(&self, s: StateID) -> bool {
        self.dfa.is_match_state(self.dfa.next_eoi_state(s))
    }
}

fn compile_regex(re: &str, kind: MatchKind, who: &dyn Fn() -> String) -> Result<Dfa> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(re)
        .map_err(|e| err!(Regex, "{}: invalid regex /{re}/: {e}", who()))?;
    if !hir.properties().look_set().is_empty() {
        return Err(err!(
            Grammar,
            "{}: regex /{re}/ uses a look-around or anchor assertion (^, $, \\A, \\z, \\b, \\B, ...), \
             which terminal regexes do not support",
            who()
        ));
    }
    let nfa = thompson::Compiler::new()
        .configure(thompson::Config::new().nfa_size_limit(Some(NFA_SIZE_LIMIT)))
        .build_from_hir(&hir)
        .map_err(|e| err!(Regex, "{}: cannot compile regex /{re}/: {e}", who()))?;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(kind)
                .start_kind(StartKind::Anchored)
                .minimize(true)
                .determinize_size_limit(Some(DFA_SIZE_LIMIT))
                .dfa_size_limit(Some(DFA_SIZE_LIMIT)),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| err!(Regex, "{}: cannot build a DFA for /{re}/: {e}", who()))?;
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .map_err(|e| err!(Regex, "{}: no anchored start state for /{re}/: {e}", who()))?;
    Ok(Dfa { dfa, start })
}

impl Table {
    /// BFS over all bytes from the anchored start, then prune.
    fn from_dfa(d: &Dfa) -> Table {
        let mut ids = HashMap::new();
        let mut order = vec![d.start];
        ids.insert(d.start, 0u32);
        let mut next = Vec::new();
        let mut i = 0;
        while i < order.len() {
            let s = order[i];
            i += 1;
            for b in 0..=255u8 {
                let n = d.dfa.next_state(s, b);
                if d.dfa.is_dead_state(n) || d.dfa.is_quit_state(n) {
                    next.push(NONE);
                    continue;
                }
                let len = order.len() as u32;
                let id = *ids.entry(n).or_insert_with(|| {
                    order.push(n);
                    len
                });
                next.push(id);
            }
        }
        let accept: Vec<bool> = order.iter().map(|&s| d.accepting_here(s)).collect();
        Table::pruned(0, next, accept)
    }

    /// Keeps the states from which an accepting state is reachable
    /// (co-accessible), renumbered in order; `start` may become `NONE`.
    fn pruned(start: u32, next: Vec<u32>, accept: Vec<bool>) -> Table {
        let n = accept.len();
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..n {
            for &t in &next[s * 256..(s + 1) * 256] {
                if t != NONE {
                    preds[t as usize].push(s as u32);
                }
            }
        }
        let mut live = accept.clone();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
        while let Some(s) = stack.pop() {
            for &p in &preds[s as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        let mut remap = vec![NONE; n];
        let mut k = 0;
        for s in 0..n {
            if live[s] {
                remap[s] = k;
                k += 1;
            }
        }
        let mut table = Table { start: remap[start as usize], next: Vec::new(), width: 256, accept: Vec::new() };
        for s in (0..n).filter(|&s| live[s]) {
            table.accept.push(accept[s]);
            table.next.extend(next[s * 256..(s + 1) * 256].iter().map(|&t| if t == NONE { NONE } else { remap[t as usize] }));
        }
        table
    }

    /// The product table of a [`TerminalPattern::Set`]: accepting where every
    /// `all` table accepts and no `none` table does; a fresh, non-accepting
    /// start state excludes the empty string.
    fn product(all: &[Rc<Table>], none: &[Rc<Table>], who: &dyn Fn() -> String) -> Result<Table> {
        if all.iter().any(|t| t.start == NONE) {
            return Ok(Table { start: NONE, next: Vec::new(), width: 256, accept: Vec::new() });
        }
        // Key: [is_start, all states..., none states (NONE = dead)...].
        let start_key: Vec<u32> =
            std::iter::once(1).chain(all.iter().map(|t| t.start)).chain(none.iter().map(|t| t.start)).collect();
        let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut keys = vec![start_key.clone()];
        ids.insert(start_key, 0);
        let (mut next, mut accept) = (Vec::new(), Vec::new());
        let mut key = Vec::with_capacity(1 + all.len() + none.len());
        let mut i = 0;
        while i < keys.len() {
            let k = keys[i].clone();
            i += 1;
            let comps = &k[1..];
            let acc = k[0] == 0
                && all.iter().zip(comps).all(|(t, &s)| t.accept[s as usize])
                && none.iter().zip(&comps[all.len()..]).all(|(t, &s)| s == NONE || !t.accept[s as usize]);
            accept.push(acc);
            'bytes: for b in 0..256usize {
                key.clear();
                key.push(0);
                for (t, &s) in all.iter().zip(comps) {
                    let n = t.next[s as usize * 256 + b];
                    if n == NONE {
                        next.push(NONE);
                        continue 'bytes;
                    }
                    key.push(n);
                }
                for (t, &s) in none.iter().zip(&comps[all.len()..]) {
                    key.push(if s == NONE { NONE } else { t.next[s as usize * 256 + b] });
                }
                let len = keys.len() as u32;
                let id = match ids.get(&key) {
                    Some(&id) => id,
                    None => {
                        if keys.len() >= MAX_PRODUCT_STATES {
                            return Err(err!(Limit, "{}: the set's automaton has over {MAX_PRODUCT_STATES} states", who()));
                        }
                        ids.insert(key.clone(), len);
                        keys.push(key.clone());
                        len
                    }
                };
                next.push(id);
            }
        }
        Ok(Table::pruned(0, next, accept))
    }

    pub fn n_states(&self) -> usize {
        self.accept.len()
    }

    /// Re-index the columns by byte class.
    pub fn compress(&mut self, classes: &[u8; 256], n_classes: usize) {
        let mut next = vec![NONE; self.n_states() * n_classes];
        for s in 0..self.n_states() {
            for b in 0..256 {
                next[s * n_classes + classes[b] as usize] = self.next[s * 256 + b];
            }
        }
        self.next = next;
        self.width = n_classes;
    }

    /// Length of the terminal's match at `text[pos..]` (0: none): the last
    /// accepting offset before the table dies. Only on uncompressed tables.
    pub fn match_len(&self, text: &[u8], pos: usize) -> usize {
        debug_assert_eq!(self.width, 256);
        let (mut s, mut best) = (self.start, 0);
        if s == NONE {
            return 0;
        }
        for p in pos..text.len() {
            s = self.next[s as usize * 256 + text[p] as usize];
            if s == NONE {
                break;
            }
            if self.accept[s as usize] {
                best = p + 1 - pos;
            }
        }
        best
    }

    /// Does the terminal's leftmost-first match on `text` cover all of it
    /// (Python `re.match(r, text).group(0) == text`)?
    pub fn matches_whole(&self, text: &[u8]) -> bool {
        !text.is_empty() && self.match_len(text, 0) == text.len()
    }
}

/// Compiles terminal `t`; `Ok(None)` for `%declare`d terminals. Rejects
/// invalid regexes ([`crate::ErrorKind::Regex`]), look-around assertions and
/// literal/regex terminals that match the empty string
/// ([`crate::ErrorKind::Grammar`]).
pub(crate) fn compile_terminal(cfg: &Cfg, t: TerminalId) -> Result<Option<Table>> {
    let def = cfg.terminal(t);
    let who = || describe(def);
    match &def.pattern {
        TerminalPattern::Declared => Ok(None),
        TerminalPattern::Literal { regex, .. } | TerminalPattern::Regex { regex } => {
            let t = cached(CacheKey::Regex(regex.clone(), false), || {
                let d = compile_regex(regex, MatchKind::LeftmostFirst, &who)?;
                if d.accepting_here(d.start) {
                    return Err(err!(Grammar, "{}: regex /{regex}/ matches the empty string", who()));
                }
                Ok(Table::from_dfa(&d))
            })?;
            Ok(Some((*t).clone()))
        }
        TerminalPattern::Set { all, none } => {
            if all.is_empty() {
                return Err(err!(Grammar, "{}: a set terminal needs at least one regex", who()));
            }
            let t = cached(CacheKey::Set(all.clone(), none.clone()), || {
                let tables = |rs: &[String]| -> Result<Vec<Rc<Table>>> {
                    rs.iter()
                        .map(|r| {
                            cached(CacheKey::Regex(r.clone(), true), || {
                                compile_regex(r, MatchKind::All, &who).map(|d| Table::from_dfa(&d))
                            })
                        })
                        .collect()
                };
                Table::product(&tables(all)?, &tables(none)?, &who)
            })?;
            Ok(Some((*t).clone()))
        }
    }
}

/// Every terminal's table, indexed by terminal id (`None`: not lexed).
pub(crate) fn compile_all(cfg: &Cfg) -> Result<Vec<Option<Table>>> {
    (0..cfg.terminals.len()).map(|i| compile_terminal(cfg, TerminalId::new(i))).collect()
}
