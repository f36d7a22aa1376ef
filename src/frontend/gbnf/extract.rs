//! Lexer extraction: character-level rules → a grammar over terminals that
//! grammask's lexer (global maximal munch, `LexerMode::LongestAll`) splits
//! exactly as the character-level grammar does.
//!
//! 1. A rule is *regular* when no rule it reaches (itself included) is
//!    recursive. Every regular expression node (a rule reference, a group, a
//!    repetition, a literal, a class) becomes one terminal: its language as a
//!    regex over the shared regex layer, minus the empty string (a nullable
//!    node becomes an optional terminal). The rest stays nonterminals: `x*`
//!    a left-recursive helper, `x{m,n}` `m` copies and a chain of optionals,
//!    `(a | b)` a helper with one production per alternative.
//! 2. The terminals must be such that maximal munch is exact:
//!    - *disjoint*: no string is a lexeme of two terminals (else the
//!      non-single-character ones are split, below);
//!    - *self-delimiting*: for every terminal `A`, no terminal `C` has a
//!      string `a·x` (`a` a string of `A`, `x` non-empty) whose `x` starts
//!      with a byte that can follow `A` in the grammar (`FOLLOW(A)`'s first
//!      bytes): else at such a place the lexer would take the longer lexeme
//!      where the grammar ends `A` (`C` is split).
//!
//!    Under these two conditions the longest lexeme at every lexeme start is
//!    exactly the grammar's next terminal, so the lexed language is the
//!    character-level language (see docs/gbnf.md for the argument).
//! 3. *Splitting* a terminal lowers its node structurally instead (one level
//!    finer: a literal into its characters, a group into its parts, ...), and
//!    the checks run again; single-character terminals that overlap are
//!    replaced by the atoms of their character sets (each class becomes a
//!    helper over disjoint atoms). In the limit every terminal is one
//!    character, where both conditions hold, so the loop ends.
//!
//! Whether the result is LALR(1) is the parser's question (the caller).

use super::syntax::{Expr, Grammar, Ranges};
use crate::grammar::{Cfg, ConflictPolicy, LexerMode, NonterminalDef, Rule, Span, Symbol, TerminalDef, TerminalPattern};
use crate::ids::{NonterminalId, TerminalId};
use crate::regex::lang as rx;
use crate::{err, Result};
use crate::hash::FxMap;

/// Longest regex text made into one terminal (longer nodes stay structural).
const MAX_REGEX: usize = 20_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sym {
    T(usize),
    N(usize),
}

struct Term {
    name: String,
    regex: String,
    lit: Option<String>,
    /// The character set, when every string of the terminal is one character.
    chars: Option<Ranges>,
    span: Span,
}

/// The regex of a set of characters (regex-syntax text).
fn class_regex(r: &Ranges) -> String {
    let mut s = String::from("[");
    for &(a, b) in r {
        if a == b {
            s.push_str(&format!("\\x{{{a:X}}}"));
        } else {
            s.push_str(&format!("\\x{{{a:X}}}-\\x{{{b:X}}}"));
        }
    }
    s.push(']');
    s
}

/// A character set as GBNF writes it, for names in messages.
fn class_name(r: &Ranges) -> String {
    let ch = |c: u32| match char::from_u32(c) {
        Some(c) if c.is_ascii_graphic() && !matches!(c, '\\' | ']' | '-' | '^' | '[') => c.to_string(),
        _ if c <= 0xFFFF => format!("\\u{c:04X}"),
        _ => format!("\\U{c:08X}"),
    };
    let mut s = String::from("[");
    for (i, &(a, b)) in r.iter().enumerate() {
        if i == 8 {
            s.push_str("...");
            break;
        }
        s.push_str(&ch(a));
        if b != a {
            s.push('-');
            s.push_str(&ch(b));
        }
    }
    s.push(']');
    s
}

fn lit_regex(cs: &[char]) -> String {
    if cs.is_empty() {
        return "(?:)".into();
    }
    let mut s = String::new();
    for &c in cs {
        crate::regex::lang::push_literal(&mut s, c);
    }
    s
}

fn contains(r: &Ranges, c: u32) -> bool {
    let i = r.partition_point(|&(_, b)| b < c);
    i < r.len() && r[i].0 <= c
}

fn rx_err(e: String) -> crate::Error {
    err!(Limit, "grammar: {e}")
}

/// What stays the same over the splitting rounds.
struct Shared<'g> {
    g: &'g Grammar,
    regular: Vec<bool>,
    /// Regex of each node by address (`""`: not regular or too long).
    /// (The maps are of key and value types the crate already instantiates,
    /// sets are maps to 0: wasm size.)
    memo: FxMap<usize, String>,
    /// Regexes that must not be terminals.
    broken: FxMap<String, usize>,
    /// First bytes (key: the regex) and extension bytes (key: `a \0 c`), by index into `bytes`.
    byte_ix: FxMap<String, usize>,
    bytes: Vec<[bool; 256]>,
}

fn addr(e: &Expr) -> usize {
    e as *const Expr as usize
}

impl<'g> Shared<'g> {
    fn regex_of(&mut self, e: &'g Expr) -> Option<String> {
        if let Some(r) = self.memo.get(&addr(e)) {
            return Some(r.clone()).filter(|r| !r.is_empty());
        }
        let r = self.compute_regex(e).filter(|r| r.len() <= MAX_REGEX);
        // Through `entry`, which the crate already instantiates for this map type (wasm size).
        *self.memo.entry(addr(e)).or_default() = r.clone().unwrap_or_default();
        r
    }
    fn compute_regex(&mut self, e: &'g Expr) -> Option<String> {
        Some(match e {
            Expr::Lit(cs) => lit_regex(cs),
            Expr::Class(r) => class_regex(r),
            Expr::Ref(i) => {
                if !self.regular[*i] {
                    return None;
                }
                let g = self.g;
                self.regex_of(&g.rules[*i].body)?
            }
            Expr::Seq(xs) => {
                let mut s = String::new();
                for x in xs {
                    s.push_str(&format!("(?:{})", self.regex_of(x)?));
                }
                if s.is_empty() {
                    "(?:)".into()
                } else {
                    s
                }
            }
            Expr::Alt(xs) => {
                let mut parts = Vec::new();
                for x in xs {
                    parts.push(self.regex_of(x)?);
                }
                format!("(?:{})", parts.join("|"))
            }
            Expr::Rep(x, m, n) => {
                let inner = self.regex_of(x)?;
                match n {
                    Some(n) if n == m => format!("(?:{inner}){{{m}}}"),
                    Some(n) => format!("(?:{inner}){{{m},{n}}}"),
                    None => format!("(?:{inner}){{{m},}}"),
                }
            }
        })
    }
    fn charset_of(&self, e: &Expr) -> Option<Ranges> {
        match e {
            Expr::Class(r) => Some(r.clone()),
            Expr::Lit(cs) if cs.len() == 1 => Some(vec![(cs[0] as u32, cs[0] as u32)]),
            Expr::Ref(i) if self.regular[*i] => self.charset_of(&self.g.rules[*i].body),
            Expr::Alt(xs) => {
                let mut all = Vec::new();
                for x in xs {
                    all.extend(self.charset_of(x)?);
                }
                Some(super::syntax::normalize(all))
            }
            Expr::Rep(x, 1, Some(1)) => self.charset_of(x),
            _ => None,
        }
    }
    fn lit_of(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Lit(cs) if !cs.is_empty() => Some(cs.iter().collect()),
            Expr::Ref(i) if self.regular[*i] => self.lit_of(&self.g.rules[*i].body),
            _ => None,
        }
    }
    fn cached(&mut self, key: String, f: impl FnOnce() -> std::result::Result<[bool; 256], String>) -> Result<[bool; 256]> {
        if let Some(&i) = self.byte_ix.get(&key) {
            return Ok(self.bytes[i]);
        }
        let v = f().map_err(rx_err)?;
        self.byte_ix.insert(key, self.bytes.len());
        self.bytes.push(v);
        Ok(v)
    }
    fn first_bytes(&mut self, re: &str) -> Result<[bool; 256]> {
        self.cached(re.to_string(), || rx::first_bytes(re))
    }
    fn extension(&mut self, a: &str, c: &str) -> Result<[bool; 256]> {
        self.cached(format!("{a}\0{c}"), || rx::extension_bytes(a, c))
    }
}

/// One lowering of the grammar under the current splits.
struct Pass<'s, 'g> {
    sh: &'s mut Shared<'g>,
    terms: Vec<Term>,
    term_ix: FxMap<String, usize>,
    nts: Vec<(String, Span)>,
    prods: Vec<(usize, Vec<Sym>)>,
    /// Productions seen, as text (`lhs:rhs`).
    prod_set: FxMap<String, usize>,
    rule_nt: Vec<Option<usize>>,
    /// Helper nonterminals by `kind:address:count`.
    helper: FxMap<String, usize>,
    n: usize,
}

impl<'s, 'g> Pass<'s, 'g> {
    fn span(&self, ctx: usize) -> Span {
        self.sh.g.rules[ctx].span.clone()
    }
    fn nt(&mut self, name: String, ctx: usize) -> usize {
        self.nts.push((name, self.span(ctx)));
        self.nts.len() - 1
    }
    fn prod(&mut self, lhs: usize, rhs: Vec<Sym>) {
        let mut key = format!("{lhs}:");
        for s in &rhs {
            match s {
                Sym::T(t) => key.push_str(&format!("t{t} ")),
                Sym::N(n) => key.push_str(&format!("n{n} ")),
            }
        }
        if self.prod_set.insert(key, 0).is_none() {
            self.prods.push((lhs, rhs));
        }
    }
    fn term(&mut self, regex: String, lit: Option<String>, chars: Option<Ranges>, name: Option<String>, ctx: usize) -> usize {
        if let Some(&t) = self.term_ix.get(&regex) {
            if self.terms[t].chars.is_none() {
                self.terms[t].chars = chars;
            }
            return t;
        }
        self.n += 1;
        let name = match (name, &lit, &chars) {
            (Some(n), _, _) => n,
            (None, Some(_), _) => format!("__LIT{}", self.n),
            (None, None, Some(r)) => class_name(r),
            _ => format!("{}__{}", self.sh.g.rules[ctx].name, self.n),
        };
        self.terms.push(Term { name, regex: regex.clone(), lit, chars, span: self.span(ctx) });
        self.term_ix.insert(regex, self.terms.len() - 1);
        self.terms.len() - 1
    }

    /// A regular node kept whole: its terminal (optional when nullable), or
    /// nothing when its language is only the empty string.
    fn whole(&mut self, e: &'g Expr, re: String, name: Option<String>, ctx: usize) -> Result<Option<Sym>> {
        let empty = rx::matches_empty(&re).map_err(rx_err)?;
        let nonempty = rx::set_nonempty(std::slice::from_ref(&re), &[]).map_err(rx_err)?;
        if !nonempty {
            return Ok(None);
        }
        let (lit, chars) = (self.sh.lit_of(e), self.sh.charset_of(e));
        let t = self.term(re, lit, chars, name, ctx);
        if !empty {
            return Ok(Some(Sym::T(t)));
        }
        let key = format!("o:{t}");
        if let Some(&n) = self.helper.get(&key) {
            return Ok(Some(Sym::N(n)));
        }
        let n = self.nt(format!("{}?", self.terms[t].name), ctx);
        self.helper.insert(key, n);
        self.prod(n, vec![]);
        self.prod(n, vec![Sym::T(t)]);
        Ok(Some(Sym::N(n)))
    }

    fn rule(&mut self, i: usize) -> Result<usize> {
        if let Some(n) = self.rule_nt[i] {
            return Ok(n);
        }
        let name = self.sh.g.rules[i].name.clone();
        let n = self.nt(name.clone(), i);
        self.rule_nt[i] = Some(n);
        let g = self.sh.g;
        let body = &g.rules[i].body;
        let whole = match self.sh.regex_of(body) {
            Some(re) if !self.sh.broken.contains_key(&re) => {
                match (rx::matches_empty(&re), rx::set_nonempty(std::slice::from_ref(&re), &[])) {
                    (Ok(e), Ok(n)) => Some((re, e, n)),
                    // Too large as one automaton: lowered structurally instead.
                    _ => {
                        self.sh.broken.insert(re, 0);
                        None
                    }
                }
            }
            _ => None,
        };
        match whole {
            Some((re, empty, nonempty)) => {
                if nonempty {
                    let (lit, chars) = (self.sh.lit_of(body), self.sh.charset_of(body));
                    let t = self.term(re, lit, chars, Some(name), i);
                    self.prod(n, vec![Sym::T(t)]);
                }
                if empty {
                    self.prod(n, vec![]);
                }
            }
            _ => match body {
                Expr::Alt(xs) => {
                    for x in xs {
                        let mut out = Vec::new();
                        self.lower(x, i, &mut out)?;
                        self.prod(n, out);
                    }
                }
                _ => {
                    let mut out = Vec::new();
                    self.lower(body, i, &mut out)?;
                    self.prod(n, out);
                }
            },
        }
        Ok(n)
    }

    fn lower(&mut self, e: &'g Expr, ctx: usize, out: &mut Vec<Sym>) -> Result<()> {
        if let Some(re) = self.sh.regex_of(e) {
            if !self.sh.broken.contains_key(&re) {
                let name = match e {
                    Expr::Ref(i) => Some(self.sh.g.rules[*i].name.clone()),
                    _ => None,
                };
                match self.whole(e, re.clone(), name, ctx) {
                    Ok(s) => {
                        out.extend(s);
                        return Ok(());
                    }
                    // Too large as one automaton: lowered structurally instead.
                    Err(err) if err.kind() == crate::ErrorKind::Limit => {
                        self.sh.broken.insert(re, 0);
                    }
                    Err(err) => return Err(err),
                }
            }
        }
        match e {
            Expr::Lit(cs) => {
                for &c in cs {
                    let t = self.term(lit_regex(&[c]), Some(c.to_string()), Some(vec![(c as u32, c as u32)]), None, ctx);
                    out.push(Sym::T(t));
                }
            }
            Expr::Class(r) => {
                let t = self.term(class_regex(r), None, Some(r.clone()), None, ctx);
                out.push(Sym::T(t));
            }
            Expr::Ref(i) => out.push(Sym::N(self.rule(*i)?)),
            Expr::Seq(xs) => {
                for x in xs {
                    self.lower(x, ctx, out)?;
                }
            }
            Expr::Alt(xs) => {
                let key = format!("a:{}", addr(e));
                let n = match self.helper.get(&key) {
                    Some(&n) => n,
                    None => {
                        let n = self.nt(format!("{}__alt{}", self.sh.g.rules[ctx].name, self.nts.len()), ctx);
                        self.helper.insert(key, n);
                        for x in xs {
                            let mut o = Vec::new();
                            self.lower(x, ctx, &mut o)?;
                            self.prod(n, o);
                        }
                        n
                    }
                };
                out.push(Sym::N(n));
            }
            Expr::Rep(x, m, max) => {
                for _ in 0..*m {
                    self.lower(x, ctx, out)?;
                }
                match max {
                    None => {
                        let key = format!("s:{}", addr(x));
                        let n = match self.helper.get(&key) {
                            Some(&n) => n,
                            None => {
                                let n = self.nt(format!("{}__star{}", self.sh.g.rules[ctx].name, self.nts.len()), ctx);
                                self.helper.insert(key, n);
                                let mut o = vec![Sym::N(n)];
                                self.lower(x, ctx, &mut o)?;
                                self.prod(n, vec![]);
                                self.prod(n, o);
                                n
                            }
                        };
                        out.push(Sym::N(n));
                    }
                    Some(k) if k > m => out.push(Sym::N(self.opt_chain(x, k - m, ctx)?)),
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    /// `x{0,k}`: `O_k -> ε | x O_{k-1}`.
    fn opt_chain(&mut self, x: &'g Expr, k: u32, ctx: usize) -> Result<usize> {
        let key = format!("c:{}:{k}", addr(x));
        if let Some(&n) = self.helper.get(&key) {
            return Ok(n);
        }
        let n = self.nt(format!("{}__opt{}", self.sh.g.rules[ctx].name, self.nts.len()), ctx);
        self.helper.insert(key, n);
        let mut o = Vec::new();
        self.lower(x, ctx, &mut o)?;
        if k > 1 {
            o.push(Sym::N(self.opt_chain(x, k - 1, ctx)?));
        }
        self.prod(n, vec![]);
        self.prod(n, o);
        Ok(n)
    }

    /// Replaces overlapping single-character terminals by disjoint atoms.
    fn partition(&mut self) {
        // Loops, not iterator chains: each chain is its own code (wasm size).
        let mut cs: Vec<usize> = Vec::new();
        for t in 0..self.terms.len() {
            if self.terms[t].chars.is_some() {
                cs.push(t);
            }
        }
        let mut overl = Vec::new();
        for (i, &a) in cs.iter().enumerate() {
            let ra = self.terms[a].chars.as_ref().unwrap();
            let hit = cs.iter().enumerate().any(|(j, &b)| {
                j != i && {
                    let rb = self.terms[b].chars.as_ref().unwrap();
                    ra.iter().any(|&(x, y)| rb.iter().any(|&(p, q)| x <= q && p <= y))
                }
            });
            if hit {
                overl.push(a);
            }
        }
        if overl.is_empty() {
            return;
        }
        let mut points = Vec::new();
        for &t in &overl {
            for &(a, b) in self.terms[t].chars.as_ref().unwrap() {
                points.push(a);
                points.push(b + 1);
            }
        }
        points.sort_unstable();
        points.dedup();
        let mut atoms: Vec<(Vec<usize>, Ranges)> = Vec::new();
        let mut by_sig: FxMap<String, usize> = FxMap::default();
        for w in points.windows(2) {
            let (lo, hi) = (w[0], w[1] - 1);
            let mut sig: Vec<usize> = Vec::new();
            for &t in &overl {
                if contains(self.terms[t].chars.as_ref().unwrap(), lo) {
                    sig.push(t);
                }
            }
            if sig.is_empty() {
                continue;
            }
            let key = format!("{sig:?}");
            let k = match by_sig.get(&key) {
                Some(&k) => k,
                None => {
                    by_sig.insert(key, atoms.len());
                    atoms.push((sig, Vec::new()));
                    atoms.len() - 1
                }
            };
            atoms[k].1.push((lo, hi));
        }
        let mut atom_terms: Vec<usize> = Vec::new();
        for (_, r) in &atoms {
            let r = super::syntax::normalize(r.clone());
            let re = class_regex(&r);
            if let Some(&t) = self.term_ix.get(&re) {
                atom_terms.push(t);
                continue;
            }
            let lit = if r.len() == 1 && r[0].0 == r[0].1 { char::from_u32(r[0].0).map(|c| c.to_string()) } else { None };
            self.terms.push(Term { name: class_name(&r), regex: re.clone(), lit, chars: Some(r), span: Span::default() });
            self.term_ix.insert(re, self.terms.len() - 1);
            atom_terms.push(self.terms.len() - 1);
        }
        let mut repl: Vec<Option<Sym>> = vec![None; self.terms.len()];
        for &t in &overl {
            let mut mine: Vec<usize> = Vec::new();
            for (k, (sig, _)) in atoms.iter().enumerate() {
                if sig.contains(&t) {
                    mine.push(atom_terms[k]);
                }
            }
            if mine.len() == 1 {
                repl[t] = Some(Sym::T(mine[0]));
            } else {
                let span = self.terms[t].span.clone();
                self.nts.push((self.terms[t].name.clone(), span));
                let n = self.nts.len() - 1;
                for a in mine {
                    self.prod(n, vec![Sym::T(a)]);
                }
                repl[t] = Some(Sym::N(n));
            }
        }
        for (_, rhs) in self.prods.iter_mut() {
            for s in rhs.iter_mut() {
                if let Sym::T(t) = s {
                    if let Some(Some(r)) = repl.get(*t) {
                        *s = *r;
                    }
                }
            }
        }
    }

    fn used_terms(&self) -> Vec<usize> {
        let mut u = vec![false; self.terms.len()];
        for (_, rhs) in &self.prods {
            for s in rhs {
                if let Sym::T(t) = s {
                    u[*t] = true;
                }
            }
        }
        let mut out = Vec::new();
        for t in 0..self.terms.len() {
            if u[t] {
                out.push(t);
            }
        }
        out
    }

    /// The terminals that can follow each terminal (FOLLOW sets, as
    /// `[terminal][terminal]` booleans).
    fn follows(&self) -> Vec<Vec<bool>> {
        let (nn, nt) = (self.nts.len(), self.terms.len());
        let mut nullable = vec![false; nn];
        let mut first = vec![vec![false; nt]; nn];
        let or = |dst: &mut Vec<bool>, src: &[bool]| {
            let mut ch = false;
            for (d, &s) in dst.iter_mut().zip(src) {
                if s && !*d {
                    *d = true;
                    ch = true;
                }
            }
            ch
        };
        let mut changed = true;
        while changed {
            changed = false;
            for (lhs, rhs) in &self.prods {
                let mut all_null = true;
                for s in rhs {
                    match *s {
                        Sym::T(t) => {
                            changed |= !std::mem::replace(&mut first[*lhs][t], true);
                            all_null = false;
                        }
                        Sym::N(m) => {
                            let add = first[m].clone();
                            changed |= or(&mut first[*lhs], &add);
                            all_null &= nullable[m];
                        }
                    }
                    if !all_null {
                        break;
                    }
                }
                if all_null && !nullable[*lhs] {
                    nullable[*lhs] = true;
                    changed = true;
                }
            }
        }
        let mut follow_n = vec![vec![false; nt]; nn];
        let mut follow_t = vec![vec![false; nt]; nt];
        changed = true;
        while changed {
            changed = false;
            for (lhs, rhs) in &self.prods {
                // Right to left, with the FIRST of the suffix (and FOLLOW(lhs) while it is nullable).
                let mut trailer = follow_n[*lhs].clone();
                for s in rhs.iter().rev() {
                    match *s {
                        Sym::T(t) => {
                            changed |= or(&mut follow_t[t], &trailer);
                            trailer = vec![false; nt];
                            trailer[t] = true;
                        }
                        Sym::N(m) => {
                            changed |= or(&mut follow_n[m], &trailer);
                            if nullable[m] {
                                or(&mut trailer, &first[m]);
                            } else {
                                trailer = first[m].clone();
                            }
                        }
                    }
                }
            }
        }
        follow_t
    }
}

/// Lowers a parsed grammar with start rule `root` into a [`Cfg`] whose
/// maximal-munch lexing is exact (see the module doc).
pub(crate) fn extract(g: &Grammar, root: usize) -> Result<Cfg> {
    let n = g.rules.len();
    // Rules that reach a cycle are not regular.
    let mut refs: Vec<Vec<usize>> = Vec::new();
    for r in &g.rules {
        let mut v = Vec::new();
        collect_refs(&r.body, &mut v);
        refs.push(v);
    }
    let mut on_cycle = vec![false; n];
    for s in 0..n {
        let mut seen = vec![false; n];
        let mut stack = refs[s].clone();
        while let Some(x) = stack.pop() {
            if x == s {
                on_cycle[s] = true;
                break;
            }
            if !std::mem::replace(&mut seen[x], true) {
                stack.extend(refs[x].iter().copied());
            }
        }
    }
    let mut regular = vec![true; n];
    for s in 0..n {
        let mut seen = vec![false; n];
        let mut stack = vec![s];
        while let Some(x) = stack.pop() {
            if on_cycle[x] {
                regular[s] = false;
                break;
            }
            if !std::mem::replace(&mut seen[x], true) {
                stack.extend(refs[x].iter().copied());
            }
        }
    }
    let mut sh = Shared { g, regular, memo: FxMap::default(), broken: FxMap::default(), byte_ix: FxMap::default(), bytes: Vec::new() };
    let rounds = 4 * count_nodes(g) + 16;
    for _ in 0..rounds {
        let mut p = Pass {
            sh: &mut sh,
            terms: Vec::new(),
            term_ix: FxMap::default(),
            nts: Vec::new(),
            prods: Vec::new(),
            prod_set: FxMap::default(),
            rule_nt: vec![None; n],
            helper: FxMap::default(),
            n: 0,
        };
        let start = p.rule(root)?;
        let mut split: Vec<String> = Vec::new();
        // Disjointness of the terminals that are not single characters.
        let used = p.used_terms();
        for (i, &a) in used.iter().enumerate() {
            for &b in &used[i + 1..] {
                let (ta, tb) = (&p.terms[a], &p.terms[b]);
                if ta.chars.is_some() && tb.chars.is_some() {
                    continue;
                }
                let (ra, rb) = (ta.regex.clone(), tb.regex.clone());
                let (fa, fb) = (p.sh.first_bytes(&ra)?, p.sh.first_bytes(&rb)?);
                if !(0..256).any(|k| fa[k] && fb[k]) {
                    continue;
                }
                if rx::set_nonempty(&[ra.clone(), rb.clone()], &[]).map_err(rx_err)? {
                    for (t, r) in [(a, ra), (b, rb)] {
                        if p.terms[t].chars.is_none() {
                            split.push(r);
                        }
                    }
                }
            }
        }
        if split.is_empty() {
            p.partition();
            let used = p.used_terms();
            let follow = p.follows();
            for &a in &used {
                let mut ff = [false; 256];
                for b in 0..follow[a].len() {
                    if !follow[a][b] {
                        continue;
                    }
                    let f = p.sh.first_bytes(&p.terms[b].regex.clone())?;
                    for k in 0..256 {
                        ff[k] |= f[k];
                    }
                }
                if !ff.iter().any(|&x| x) {
                    continue;
                }
                let ra = p.terms[a].regex.clone();
                let fa = p.sh.first_bytes(&ra)?;
                for &c in &used {
                    if p.terms[c].chars.is_some() {
                        continue;
                    }
                    let rc = p.terms[c].regex.clone();
                    let fc = p.sh.first_bytes(&rc)?;
                    if !(0..256).any(|k| fa[k] && fc[k]) {
                        continue;
                    }
                    let e = p.sh.extension(&ra, &rc)?;
                    if (0..256).any(|k| e[k] && ff[k]) {
                        split.push(rc);
                    }
                }
            }
        }
        if split.is_empty() {
            return Ok(emit(p, start));
        }
        let before = sh.broken.len();
        for r in split {
            sh.broken.insert(r, 0);
        }
        if sh.broken.len() == before {
            break;
        }
    }
    Err(err!(Grammar, "grammar: lexer extraction did not settle (please report this grammar)"))
}

fn collect_refs(e: &Expr, out: &mut Vec<usize>) {
    match e {
        Expr::Ref(i) => out.push(*i),
        Expr::Seq(xs) | Expr::Alt(xs) => xs.iter().for_each(|x| collect_refs(x, out)),
        Expr::Rep(x, _, _) => collect_refs(x, out),
        Expr::Lit(_) | Expr::Class(_) => {}
    }
}

fn count_nodes(g: &Grammar) -> usize {
    fn c(e: &Expr) -> usize {
        1 + match e {
            Expr::Seq(xs) | Expr::Alt(xs) => xs.iter().map(c).sum(),
            Expr::Rep(x, _, _) => c(x),
            _ => 0,
        }
    }
    g.rules.iter().map(|r| c(&r.body)).sum()
}

/// The final grammar: only the terminals used and the nonterminals reachable.
fn emit(p: Pass<'_, '_>, start: usize) -> Cfg {
    let mut reach = vec![false; p.nts.len()];
    let mut stack = vec![start];
    reach[start] = true;
    let mut by_lhs: Vec<Vec<usize>> = vec![Vec::new(); p.nts.len()];
    for (k, (lhs, _)) in p.prods.iter().enumerate() {
        by_lhs[*lhs].push(k);
    }
    while let Some(x) = stack.pop() {
        for &k in &by_lhs[x] {
            for s in &p.prods[k].1 {
                if let Sym::N(m) = *s {
                    if !std::mem::replace(&mut reach[m], true) {
                        stack.push(m);
                    }
                }
            }
        }
    }
    let mut nt_id = vec![usize::MAX; p.nts.len()];
    let mut nonterminals = Vec::new();
    for (i, (name, span)) in p.nts.iter().enumerate() {
        if reach[i] {
            nt_id[i] = nonterminals.len();
            nonterminals.push(NonterminalDef { name: name.clone(), span: span.clone() });
        }
    }
    let mut t_id = vec![usize::MAX; p.terms.len()];
    let mut terminals = Vec::new();
    let mut rules = Vec::new();
    for (lhs, rhs) in &p.prods {
        if !reach[*lhs] {
            continue;
        }
        let mut out = Vec::with_capacity(rhs.len());
        for s in rhs {
            out.push(match *s {
                Sym::N(m) => Symbol::N(NonterminalId::new(nt_id[m])),
                Sym::T(t) => {
                    if t_id[t] == usize::MAX {
                        t_id[t] = terminals.len();
                        let tm = &p.terms[t];
                        let pattern = match &tm.lit {
                            Some(text) => TerminalPattern::Literal { text: text.clone(), case_insensitive: false, regex: tm.regex.clone() },
                            None => TerminalPattern::Set { all: vec![tm.regex.clone()], none: vec![] },
                        };
                        let mut def = TerminalDef::new(tm.name.clone(), pattern);
                        def.span = tm.span.clone();
                        terminals.push(def);
                    }
                    Symbol::T(TerminalId::new(t_id[t]))
                }
            });
        }
        let span = p.nts[*lhs].1.clone();
        rules.push(Rule::new(NonterminalId::new(nt_id[*lhs]), out, span));
    }
    Cfg {
        terminals,
        nonterminals,
        rules,
        start: NonterminalId::new(nt_id[start]),
        indent: None,
        lexer: LexerMode::LongestAll,
        conflicts: ConflictPolicy::Strict,
    }
}
