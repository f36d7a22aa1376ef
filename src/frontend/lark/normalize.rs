//! Normalization: definitions → [`Cfg`] (terminal regexes, EBNF → BNF).
//!
//! Glossary (Lark `load_grammar.py` → here):
//! - `TerminalTreeToPattern` → [`Norm::term_pat`] / [`Norm::value_pat`] ([`Pat`] ≈ `PatternStr`/`PatternRE`);
//! - `PrepareAnonTerminals` → [`Norm::anon_terminal`] (`term_reverse`, `term_set`, `__ANON_%d`);
//! - `ApplyTemplates` → template [`Job`]s named `name{arg,..}`;
//! - `EBNF_to_BNF` (+ `rules_cache`, `_add_recurse_rule`, `_generate_repeats`) → [`Norm::expr`],
//!   [`Norm::recurse_rule`], [`Norm::repeats`];
//! - `SimplifyRule_Visitor` (distribution of nested alternatives) → [`product`] over [`Alts`].

use crate::hash::{FxMap as HashMap, FxSet as HashSet};
use std::collections::VecDeque;

use crate::regex::python as pyregex;
use crate::regex::python::width::{self as srewidth, re_escape, MAXWIDTH};
use super::syntax::{Alt, Atom, Expansions, Expr, Op, Pos, Value};
use super::{span, Builder, DefKind, Definition};
use crate::error::Result;
use crate::err;
use crate::grammar::{Cfg, IndentConfig, LarkOrder, Lookahead, NonterminalDef, Rule, Span, Symbol, TerminalDef, TerminalPattern};
use crate::ids::{NonterminalId, TerminalId};

/// Lark's `_TERMINAL_NAMES`: names for anonymous punctuation literals.
const TERMINAL_NAMES: &[(&str, &str)] = &[
    (".", "DOT"), (",", "COMMA"), (":", "COLON"), (";", "SEMICOLON"), ("+", "PLUS"), ("-", "MINUS"), ("*", "STAR"),
    ("/", "SLASH"), ("\\", "BACKSLASH"), ("|", "VBAR"), ("?", "QMARK"), ("!", "BANG"), ("@", "AT"), ("#", "HASH"),
    ("$", "DOLLAR"), ("%", "PERCENT"), ("^", "CIRCUMFLEX"), ("&", "AMPERSAND"), ("_", "UNDERSCORE"), ("<", "LESSTHAN"),
    (">", "MORETHAN"), ("=", "EQUAL"), ("\"", "DBLQUOTE"), ("'", "QUOTE"), ("`", "BACKQUOTE"), ("~", "TILDE"),
    ("(", "LPAR"), (")", "RPAR"), ("{", "LBRACE"), ("}", "RBRACE"), ("[", "LSQB"), ("]", "RSQB"), ("\n", "NEWLINE"),
    ("\r\n", "CRLF"), ("\t", "TAB"), (" ", "SPACE"),
];

/// The lexer mode of a Lark grammar without `%lexer`: Lark's default for
/// `parser='lalr'`, the contextual lexer.
pub(crate) const DEFAULT_LEXER: crate::grammar::LexerMode = crate::grammar::LexerMode::Contextual;

/// Lark's `REPEAT_BREAK_THRESHOLD` and `SMALL_FACTOR_THRESHOLD`.
const REPEAT_BREAK_THRESHOLD: u32 = 50;
const SMALL_FACTOR_THRESHOLD: u32 = 5;
/// Most alternatives one rule may expand to, and most template instances.
const MAX_ALTS: usize = crate::limits::Limits::DEFAULT.max_rule_alternatives;
const MAX_INSTANCES: usize = crate::limits::Limits::DEFAULT.max_template_instances;
/// Deepest chain of terminal references.
const MAX_TERM_DEPTH: usize = crate::limits::Limits::DEFAULT.max_terminal_depth;

/// A terminal pattern exactly as Lark builds it (`PatternStr` / `PatternRE`):
/// the pattern's `value` (Python regex text for `re`, the literal for a
/// string) and its flags (sorted). Equality is Lark's (`type, value, flags`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Pat {
    re: bool,
    value: String,
    flags: String,
}

impl Pat {
    fn string(text: String, flags: &str) -> Pat {
        Pat { re: false, value: text, flags: sorted_flags(flags) }
    }
    fn regex(value: String, flags: &str) -> Pat {
        Pat { re: true, value, flags: sorted_flags(flags) }
    }
    /// Lark's `to_regexp()`: the Python regex (flags as scoped groups).
    fn to_regexp(&self) -> String {
        let mut v = if self.re { self.value.clone() } else { re_escape(&self.value) };
        for f in self.flags.chars() {
            v = format!("(?{f}:{v})");
        }
        v
    }
    fn is_empty_string(&self) -> bool {
        !self.re && self.value.is_empty()
    }
}

fn sorted_flags(f: &str) -> String {
    let mut v: Vec<char> = f.chars().collect();
    crate::sort::sort_cold(&mut v);
    v.dedup();
    v.into_iter().collect()
}

/// Lark's `is_id_start(value[0]) and is_id_continue(value)` (categories of
/// `lark.utils._ID_START` / `_ID_CONTINUE`, or `_`).
fn lark_identifier(text: &str) -> bool {
    thread_local! {
        static CLASSES: Option<(regex_syntax::hir::ClassUnicode, regex_syntax::hir::ClassUnicode)> = {
            let class = |p: &str| match regex_syntax::Parser::new().parse(p).ok()?.into_kind() {
                regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(c)) => Some(c),
                _ => None,
            };
            Some((class(r"[_\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Mn}\p{Mc}\p{Pc}]")?, class(r"[_\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Mn}\p{Mc}\p{Pc}\p{Nd}\p{Nl}]")?))
        };
    }
    let within = |c: &regex_syntax::hir::ClassUnicode, ch: char| c.ranges().iter().any(|r| r.start() <= ch && ch <= r.end());
    CLASSES.with(|cl| {
        let Some((start, cont)) = cl else { return false };
        let mut chars = text.chars();
        chars.next().is_some_and(|c| within(start, c)) && chars.all(|c| within(cont, c))
    })
}

/// Whether a regex (regex-syntax dialect) matches the empty string; `None`
/// when it does not compile to a DFA.
fn matches_empty(regex: &str) -> Option<bool> {
    use regex_automata::dfa::{dense, Automaton};
    let dfa = dense::Builder::new()
        .configure(dense::Config::new().start_kind(regex_automata::dfa::StartKind::Anchored))
        .build(&format!("^(?:{regex})$"))
        .ok()?;
    let input = regex_automata::Input::new("").anchored(regex_automata::Anchored::Yes);
    dfa.try_search_fwd(&input).ok().map(|m| m.is_some())
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Sym {
    T(String),
    N(String),
}

type Alts = Vec<Vec<Sym>>;

struct TermEntry {
    name: String,
    /// `None`: `%declare`d.
    pat: Option<Pat>,
    priority: i32,
    span: Span,
}

/// A rule (or template instance) waiting to be expanded.
struct Job {
    name: String,
    def: usize,
    params: HashMap<String, Sym>,
}

#[derive(PartialEq, Eq, Hash)]
enum HelperKey {
    Recurse(Alts),
    Repeat { a: u32, b: u32, target: Alts, atom: Alts, opt: bool },
}

struct Norm<'b> {
    defs: &'b [Definition],
    index: &'b HashMap<String, usize>,
    /// Per definition, its terminal pattern once computed.
    pats: Vec<Option<Pat>>,
    /// Lark's `(min_width, max_width)` per `to_regexp()`.
    /// Pattern → index into `width_list` (a map type the crate has already).
    widths: HashMap<String, usize>,
    width_list: Vec<(u128, u128)>,
    in_progress: Vec<usize>,
    terms: Vec<TermEntry>,
    term_idx: HashMap<String, usize>,
    term_reverse: HashMap<Pat, usize>,
    anon: usize,
    /// (name, alternatives, span, Lark rule priority); helpers have no priority (0), as in Lark.
    rules: Vec<(String, Alts, Span, i32)>,
    helpers: Vec<(String, Alts, Span, i32)>,
    cache: HashMap<HelperKey, String>,
    helper_n: usize,
    instances: HashSet<String>,
    queue: VecDeque<Job>,
    /// Per job: symbols of literal values and template usages, and expansions of
    /// operator expressions, computed in Lark's transformer order ([`lark_call_order`]).
    /// (Keyed by address, into `syms` / `exprs`: one map type for both.)
    sym_memo: HashMap<usize, usize>,
    expr_memo: HashMap<usize, usize>,
    syms: Vec<Sym>,
    exprs: Vec<Alts>,
    /// The rule being expanded (prefix of helper names) and its span.
    prefix: String,
    cur_span: Span,
}

/// Cartesian product (leftmost factor varies slowest, as Lark distributes).
fn product(acc: &Alts, next: &Alts, rule: &str) -> Result<Alts> {
    if acc.len().saturating_mul(next.len()) > MAX_ALTS {
        return Err(err!(Limit, "rule '{rule}' expands to more than {MAX_ALTS} alternatives (too many nested optionals or repeats)"));
    }
    let mut out = Vec::with_capacity(acc.len() * next.len());
    for a in acc {
        for b in next {
            let mut v = a.clone();
            v.extend(b.iter().cloned());
            out.push(v);
        }
    }
    Ok(out)
}

fn dedup(alts: Alts) -> Alts {
    let mut seen = HashSet::default();
    alts.into_iter().filter(|a| seen.insert(a.clone())).collect()
}

/// Lark's `small_factors`: `n = (((1*a1+b1)*a2+b2)...)`, all `a+b <= max`.
pub(crate) fn small_factors(n: u32, max: u32) -> Vec<(u32, u32)> {
    if n <= max {
        return vec![(n, 0)];
    }
    for a in (2..=max).rev() {
        let (r, b) = (n / a, n % a);
        if a + b <= max {
            let mut v = small_factors(r, max);
            v.push((a, b));
            return v;
        }
    }
    vec![(n, 0)] // unreachable for max >= 3 (b < a <= max, and a = 2 gives b <= 1)
}

impl<'b> Norm<'b> {
    fn def_span(&self, d: usize, p: Pos) -> Span {
        span(&self.defs[d].file, p)
    }

    // ---------------------------------------------------------------- terminals

    /// Lark's `(min_width, max_width)` of a pattern (see [`srewidth`]).
    fn widths(&mut self, p: &Pat) -> (u128, u128) {
        if !p.re {
            let n = p.value.chars().count() as u128;
            return (n, n);
        }
        let re = p.to_regexp();
        if let Some(&i) = self.widths.get(&re) {
            return self.width_list[i];
        }
        let w = match srewidth::width(&re) {
            srewidth::Width::Exact(a, b) => (a, b),
            srewidth::Width::Fallback => {
                // Lark: `regex.compile(p).match('')` decides the minimum.
                let empty = pyregex::translate(&re, false).ok().filter(|t| t.unsupported.is_empty()).and_then(|t| {
                    matches_empty(&t.regex)
                });
                (if empty == Some(true) { 0 } else { 1 }, MAXWIDTH)
            }
        };
        self.widths.insert(re, self.width_list.len());
        self.width_list.push(w);
        w
    }

    /// The pattern of terminal definition `d` (memoized; detects recursion).
    fn term_pat(&mut self, d: usize) -> Result<Pat> {
        if let Some(Some(p)) = self.pats.get(d) {
            return Ok(p.clone());
        }
        let def = &self.defs[d];
        if self.in_progress.contains(&d) {
            return Err(err!(Grammar, "{}: recursion in terminal '{}' (recursion is only allowed in rules, not terminals)", def.span(), def.name));
        }
        if self.in_progress.len() > MAX_TERM_DEPTH {
            return Err(err!(Limit, "{}: terminal references nested deeper than {MAX_TERM_DEPTH}", def.span()));
        }
        let DefKind::Term { body: Some(body), .. } = &def.kind else {
            return Err(err!(Grammar, "{}: '{}' is not a terminal with a definition", def.span(), def.name));
        };
        self.in_progress.push(d);
        let r = self.body_pat(d, body);
        self.in_progress.pop();
        let p = r?;
        if p.is_empty_string() {
            return Err(err!(Grammar, "{}: terminal '{}' is empty (terminals must match at least one character)", def.span(), def.name));
        }
        self.pats[d] = Some(p.clone());
        Ok(p)
    }

    /// `TerminalTreeToPattern.expansions` / `.expansion`.
    fn body_pat(&mut self, d: usize, body: &Expansions) -> Result<Pat> {
        let mut alts = Vec::with_capacity(body.len());
        for Alt { items, alias } in body {
            if alias.is_some() {
                let p = items.first().map_or(self.defs[d].pos, |e| e.pos);
                return Err(err!(Grammar, "{}: aliases (->) are not allowed in terminals (in '{}')", self.def_span(d, p), self.defs[d].name));
            }
            let mut parts = Vec::with_capacity(items.len());
            for e in items {
                parts.push(self.expr_pat(d, e)?);
            }
            alts.push(match parts.len() {
                0 => Pat::string(String::new(), ""),
                1 => parts.pop().unwrap_or_else(|| unreachable!()),
                _ => Pat::regex(parts.iter().map(|p| p.to_regexp()).collect(), ""),
            });
        }
        if alts.len() == 1 {
            return Ok(alts.pop().unwrap_or_else(|| unreachable!()));
        }
        // Longest options first (a stable sort, as Python's).
        let mut keyed: Vec<((u128, u128, usize), Pat)> = Vec::with_capacity(alts.len());
        for p in alts {
            let (mn, mx) = self.widths(&p);
            keyed.push(((mx, mn, p.value.chars().count()), p));
        }
        let order = crate::sort::order_by(keyed.len(), &mut |a, b| keyed[b].0.cmp(&keyed[a].0));
        let re = order.iter().map(|&i| keyed[i as usize].1.to_regexp()).collect::<Vec<_>>().join("|");
        Ok(Pat::regex(format!("(?:{re})"), ""))
    }

    /// `TerminalTreeToPattern.expr` / `.maybe`.
    fn expr_pat(&mut self, d: usize, e: &Expr) -> Result<Pat> {
        let inner = match &e.atom {
            Atom::Value(v) => self.value_pat(d, v)?,
            Atom::Group(b) => self.body_pat(d, b)?,
            Atom::Maybe(b) => {
                let p = self.body_pat(d, b)?;
                return Ok(Pat::regex(format!("(?:{})?", p.to_regexp()), &p.flags));
            }
        };
        let op = match e.op {
            Op::None => return Ok(inner),
            Op::Opt => "?".to_string(),
            Op::Star => "*".to_string(),
            Op::Plus => "+".to_string(),
            Op::Repeat(a, b, true) => format!("{{{a},{b}}}"),
            Op::Repeat(a, _, false) => format!("{{{a}}}"),
        };
        Ok(Pat::regex(format!("(?:{}){op}", inner.to_regexp()), &inner.flags))
    }

    /// A value inside terminal definition `d` (or, for literals, inside a rule of file `d`).
    fn value_pat(&mut self, d: usize, v: &Value) -> Result<Pat> {
        let sp = |s: &Self, p: Pos| s.def_span(d, p);
        Ok(match v {
            Value::Str { text, ci, pos } => {
                if text.is_empty() {
                    return Err(err!(Grammar, "{}: empty string literal (terminals must match at least one character)", sp(self, *pos)));
                }
                Pat::string(text.clone(), if *ci { "i" } else { "" })
            }
            Value::Regex { src, flags, pos } => {
                if flags.contains('l') {
                    return Err(err!(Grammar, "{}: the regex flag `l` (locale) is not supported", sp(self, *pos)));
                }
                let value = pyregex::lark_eval_escaping(src).map_err(|e| err!(Regex, "{}: bad regex literal /{src}/: {e}", sp(self, *pos)))?;
                if value.is_empty() {
                    return Err(err!(Grammar, "{}: empty regex literal (terminals must match at least one character)", sp(self, *pos)));
                }
                // Check the regex on its own, so that errors point at it.
                pyregex::translate(&value, flags.contains('x')).map_err(|e| err!(Regex, "{}: cannot translate regex /{src}/: {e}", sp(self, *pos)))?;
                Pat::regex(value, flags)
            }
            Value::Range { lo_raw, hi_raw, .. } => Pat::regex(format!("[{lo_raw}-{hi_raw}]"), ""),
            Value::Term(n, pos) => match self.index.get(n).copied() {
                Some(t) if matches!(self.defs[t].kind, DefKind::Term { body: Some(_), .. }) => self.term_pat(t)?,
                Some(t) if self.defs[t].is_term() => {
                    return Err(err!(Grammar, "{}: terminal '{n}' is %declare'd and cannot be used inside terminal '{}'", sp(self, *pos), self.defs[d].name))
                }
                _ => return Err(err!(Grammar, "{}: undefined terminal '{n}' (used in terminal '{}')", sp(self, *pos), self.defs[d].name)),
            },
            Value::Rule(n, pos) | Value::Template { name: n, pos, .. } => {
                return Err(err!(Grammar, "{}: rules are not allowed inside terminals ('{n}' in terminal '{}')", sp(self, *pos), self.defs[d].name))
            }
            Value::Special { name, pos } => {
                return Err(err!(Grammar, "{}: token {name} is matched by its id, so it can stand only in rules, not inside terminal '{}'", sp(self, *pos), self.defs[d].name))
            }
        })
    }

    /// Lark's `PrepareAnonTerminals.pattern`: the terminal for a literal used in a rule.
    fn anon_terminal(&mut self, p: Pat, span: Span) -> String {
        if let Some(&i) = self.term_reverse.get(&p) {
            return self.terms[i].name.clone();
        }
        let mut name = None;
        if !p.re {
            let text = &p.value;
            name = TERMINAL_NAMES.iter().find(|(t, _)| t == text).map(|(_, n)| n.to_string());
            if name.is_none() && lark_identifier(text) && !self.term_idx.contains_key(&text.to_uppercase()) {
                name = Some(text.to_uppercase());
            }
            if name.as_ref().is_some_and(|n| self.term_idx.contains_key(n)) {
                name = None;
            }
        }
        let name = name.unwrap_or_else(|| {
            let mut n;
            loop {
                n = format!("__ANON_{}", self.anon);
                self.anon += 1;
                if !self.term_idx.contains_key(&n) {
                    break n;
                }
            }
        });
        let i = self.terms.len();
        self.term_reverse.insert(p.clone(), i);
        self.term_idx.insert(name.clone(), i);
        self.terms.push(TermEntry { name: name.clone(), pat: Some(p), priority: 0, span });
        name
    }

    // ---------------------------------------------------------------- rules

    fn alts(&mut self, j: &Job, body: &Expansions) -> Result<Alts> {
        let mut out = Vec::new();
        for alt in body {
            let mut acc: Alts = vec![vec![]];
            for e in &alt.items {
                let x = self.expr(j, e)?;
                acc = product(&acc, &x, &self.prefix)?;
            }
            out.extend(acc);
            if out.len() > MAX_ALTS {
                return Err(err!(Limit, "rule '{}' expands to more than {MAX_ALTS} alternatives", self.prefix));
            }
        }
        Ok(dedup(out))
    }

    fn expr(&mut self, j: &Job, e: &Expr) -> Result<Alts> {
        if let Some(&i) = self.expr_memo.get(&(e as *const Expr as usize)) {
            return Ok(self.exprs[i].clone());
        }
        let base = match &e.atom {
            Atom::Value(v) => vec![vec![self.sym(j, v)?]],
            Atom::Group(b) => self.alts(j, b)?,
            Atom::Maybe(b) => {
                let mut a = self.alts(j, b)?;
                a.push(vec![]);
                dedup(a)
            }
        };
        Ok(match e.op {
            Op::None => base,
            Op::Opt => {
                let mut a = base;
                a.push(vec![]);
                dedup(a)
            }
            Op::Plus => vec![vec![Sym::N(self.recurse_rule("plus", base))]],
            Op::Star => vec![vec![Sym::N(self.recurse_rule("star", base))], vec![]],
            Op::Repeat(mn, mx, _) => self.repeats(base, mn, mx)?,
        })
    }

    /// `_add_recurse_rule`: `N: x | N x`, shared between identical operands.
    fn recurse_rule(&mut self, kind: &str, base: Alts) -> String {
        let key = HelperKey::Recurse(base.clone());
        if let Some(n) = self.cache.get(&key) {
            return n.clone();
        }
        let name = format!("__{}_{kind}_{}", self.prefix, self.helper_n);
        self.helper_n += 1;
        let mut alts = base.clone();
        alts.extend(base.iter().map(|a| std::iter::once(Sym::N(name.clone())).chain(a.iter().cloned()).collect()));
        self.helpers.push((name.clone(), dedup(alts), self.cur_span.clone(), 0));
        self.cache.insert(key, name.clone());
        name
    }

    fn seq(&self, parts: &[&Alts]) -> Result<Alts> {
        let mut acc: Alts = vec![vec![]];
        for p in parts {
            acc = product(&acc, p, &self.prefix)?;
        }
        Ok(acc)
    }

    /// `_add_repeat_rule` / `_add_repeat_opt_rule`.
    fn repeat_rule(&mut self, a: u32, b: u32, target: &Alts, target_opt: Option<&Alts>, atom: &Alts) -> Result<Alts> {
        let key = HelperKey::Repeat { a, b, target: target.clone(), atom: atom.clone(), opt: target_opt.is_some() };
        if let Some(n) = self.cache.get(&key) {
            return Ok(vec![vec![Sym::N(n.clone())]]);
        }
        let opt = if target_opt.is_some() { "_opt" } else { "" };
        let name = format!("__{}_repeat_a{a}_b{b}{opt}_{}", self.prefix, self.helper_n);
        self.helper_n += 1;
        let mut alts = Vec::new();
        match target_opt {
            None => {
                let parts: Vec<&Alts> = std::iter::repeat(target).take(a as usize).chain(std::iter::repeat(atom).take(b as usize)).collect();
                alts.extend(self.seq(&parts)?);
            }
            Some(topt) => {
                for i in 0..a as usize {
                    let parts: Vec<&Alts> = std::iter::repeat(target).take(i).chain(std::iter::once(topt)).collect();
                    alts.extend(self.seq(&parts)?);
                }
                for i in 0..b as usize {
                    let parts: Vec<&Alts> = std::iter::repeat(target).take(a as usize).chain(std::iter::repeat(atom).take(i)).collect();
                    alts.extend(self.seq(&parts)?);
                }
            }
        }
        self.helpers.push((name.clone(), dedup(alts), self.cur_span.clone(), 0));
        self.cache.insert(key, name.clone());
        Ok(vec![vec![Sym::N(name)]])
    }

    /// `_generate_repeats`: `rule ~ mn..mx`.
    fn repeats(&mut self, rule: Alts, mn: u32, mx: u32) -> Result<Alts> {
        if mx < REPEAT_BREAK_THRESHOLD {
            let mut out = Vec::new();
            for n in mn..=mx {
                let parts: Vec<&Alts> = std::iter::repeat(&rule).take(n as usize).collect();
                out.extend(self.seq(&parts)?);
                if out.len() > MAX_ALTS {
                    return Err(err!(Limit, "rule '{}' expands to more than {MAX_ALTS} alternatives", self.prefix));
                }
            }
            return Ok(dedup(out));
        }
        let mut mn_target = rule.clone();
        for (a, b) in small_factors(mn, SMALL_FACTOR_THRESHOLD) {
            mn_target = self.repeat_rule(a, b, &mn_target, None, &rule)?;
        }
        if mx == mn {
            return Ok(mn_target);
        }
        let diff = (mx - mn).checked_add(1).ok_or_else(|| err!(Limit, "repeat count {mx} is too large"))?;
        let factors = small_factors(diff, SMALL_FACTOR_THRESHOLD);
        let mut diff_target = rule.clone();
        let mut diff_opt: Alts = vec![vec![]];
        let (last, init) = factors.split_last().unwrap_or((&(1, 0), &[]));
        for &(a, b) in init {
            diff_opt = self.repeat_rule(a, b, &diff_target, Some(&diff_opt), &rule)?;
            diff_target = self.repeat_rule(a, b, &diff_target, None, &rule)?;
        }
        diff_opt = self.repeat_rule(last.0, last.1, &diff_target, Some(&diff_opt), &rule)?;
        self.seq(&[&mn_target, &diff_opt])
    }

    fn sym(&mut self, j: &Job, v: &Value) -> Result<Sym> {
        if let Some(&i) = self.sym_memo.get(&(v as *const Value as usize)) {
            return Ok(self.syms[i].clone());
        }
        let d = j.def;
        match v {
            Value::Term(n, pos) => match self.term_idx.get(n) {
                Some(_) => Ok(Sym::T(n.clone())),
                None => Err(err!(Grammar, "{}: undefined terminal '{n}' (used in rule '{}')", self.def_span(d, *pos), self.defs[d].name)),
            },
            Value::Rule(n, pos) => {
                if let Some(s) = j.params.get(n) {
                    return Ok(s.clone());
                }
                match self.index.get(n).map(|&i| &self.defs[i].kind) {
                    Some(DefKind::Rule { params, .. }) if params.is_empty() => Ok(Sym::N(n.clone())),
                    Some(DefKind::DeclaredRule) => Ok(Sym::N(n.clone())),
                    Some(DefKind::Rule { params, .. }) => Err(err!(
                        Grammar,
                        "{}: template '{n}' used without arguments (it takes {})",
                        self.def_span(d, *pos),
                        params.len()
                    )),
                    _ => Err(err!(Grammar, "{}: undefined rule '{n}' (used in rule '{}')", self.def_span(d, *pos), self.defs[d].name)),
                }
            }
            Value::Template { name, args, pos } => {
                let at = self.def_span(d, *pos);
                if j.params.contains_key(name) {
                    return Err(err!(Grammar, "{at}: template parameter '{name}' cannot be used as a template"));
                }
                let Some(&t) = self.index.get(name) else {
                    return Err(err!(Grammar, "{at}: undefined template '{name}' (used in rule '{}')", self.defs[d].name));
                };
                let DefKind::Rule { params, .. } = &self.defs[t].kind else {
                    return Err(err!(Grammar, "{at}: '{name}' is not a template"));
                };
                if params.len() != args.len() {
                    let what = if params.is_empty() { "is not a template (it takes no arguments)".to_string() } else { format!("expects {} argument(s), got {}", params.len(), args.len()) };
                    return Err(err!(Grammar, "{at}: template '{name}' {what}"));
                }
                let params = params.clone();
                let mut syms = Vec::with_capacity(args.len());
                for a in args {
                    syms.push(self.sym(j, a)?);
                }
                let inst = format!("{name}{{{}}}", syms.iter().map(|s| match s { Sym::T(n) | Sym::N(n) => n.as_str() }).collect::<Vec<_>>().join(","));
                if self.instances.insert(inst.clone()) {
                    if self.instances.len() > MAX_INSTANCES {
                        return Err(err!(Limit, "{at}: more than {MAX_INSTANCES} template instances (recursive template?)"));
                    }
                    self.queue.push_back(Job { name: inst.clone(), def: t, params: params.into_iter().zip(syms).collect() });
                }
                Ok(Sym::N(inst))
            }
            Value::Str { pos, .. } | Value::Regex { pos, .. } | Value::Range { pos, .. } => {
                let p = self.value_pat(d, v)?;
                Ok(Sym::T(self.anon_terminal(p, self.def_span(d, *pos))))
            }
            // A token: a terminal named as written, without a pattern.
            Value::Special { name, pos } => {
                if !self.term_idx.contains_key(name) {
                    self.term_idx.insert(name.clone(), self.terms.len());
                    self.terms.push(TermEntry { name: name.clone(), pat: None, priority: 0, span: self.def_span(d, *pos) });
                }
                Ok(Sym::T(name.clone()))
            }
        }
    }
}

/// A node of Lark's tree of a rule body (`expansions`, `alias`, `expansion`,
/// `expr` with an operator, `maybe`, `pattern` for a literal, `template_usage`).
#[derive(Clone, Copy)]
enum Node<'e> {
    Expansions(&'e Expansions),
    Alias(&'e Alt),
    Expansion(&'e Alt),
    Expr(&'e Expr),
    Maybe(&'e Expansions),
    Pattern(&'e Value),
    Template(&'e Value),
}

fn value_node(v: &Value) -> Option<Node<'_>> {
    match v {
        Value::Str { .. } | Value::Regex { .. } | Value::Range { .. } => Some(Node::Pattern(v)),
        Value::Template { .. } => Some(Node::Template(v)),
        Value::Term(..) | Value::Rule(..) | Value::Special { .. } => None,
    }
}

fn atom_node(a: &Atom) -> Option<Node<'_>> {
    match a {
        Atom::Group(b) => Some(Node::Expansions(b)),
        Atom::Maybe(b) => Some(Node::Maybe(b)),
        Atom::Value(v) => value_node(v),
    }
}

fn children<'e>(n: Node<'e>) -> Vec<Node<'e>> {
    match n {
        Node::Expansions(b) => b.iter().map(|a| if a.alias.is_some() { Node::Alias(a) } else { Node::Expansion(a) }).collect(),
        Node::Alias(a) => vec![Node::Expansion(a)],
        Node::Expansion(a) => a.items.iter().filter_map(|e| if e.op != Op::None { Some(Node::Expr(e)) } else { atom_node(&e.atom) }).collect(),
        Node::Expr(e) => atom_node(&e.atom).into_iter().collect(),
        Node::Maybe(b) => vec![Node::Expansions(b)],
        Node::Pattern(_) => vec![],
        Node::Template(v) => match v {
            Value::Template { args, .. } => args.iter().filter_map(value_node).collect(),
            _ => vec![],
        },
    }
}

/// The order in which Lark's `Transformer_InPlace` calls its callbacks on
/// the nodes of a rule tree: `Tree.iter_subtrees()` (a breadth-first walk
/// taking children right to left, reversed) gives the parents; each parent's
/// children are transformed left to right.
fn lark_call_order(body: &Expansions) -> Vec<Node<'_>> {
    let mut queue = vec![Node::Expansions(body)];
    let mut k = 0;
    while k < queue.len() {
        let mut c = children(queue[k]);
        c.reverse();
        queue.extend(c);
        k += 1;
    }
    queue.iter().rev().flat_map(|&p| children(p)).collect()
}

/// Upfront checks over all rule definitions (Lark's `GrammarBuilder.validate`).
fn validate(b: &Builder) -> Result<()> {
    for d in b.defs.iter().filter(|d| !d.inline_only) {
        let DefKind::Rule { params, body, .. } = &d.kind else { continue };
        for (i, p) in params.iter().enumerate() {
            if params[..i].contains(p) {
                return Err(err!(Grammar, "{}: duplicate template parameter '{p}' in '{}'", d.span(), d.name));
            }
            if b.index.contains_key(p) {
                return Err(err!(Grammar, "{}: template parameter '{p}' of '{}' clashes with a rule of that name", d.span(), d.name));
            }
        }
        let mut res = Ok(());
        super::for_each_value(body, &mut |v| {
            if res.is_ok() {
                res = check_value(b, d, params, v);
            }
        });
        res?;
    }
    Ok(())
}

fn check_value(b: &Builder, d: &Definition, params: &[String], v: &Value) -> Result<()> {
    let at = |p: Pos| span(&d.file, p);
    let lookup = |n: &str| b.index.get(n).map(|&i| &b.defs[i]).filter(|x| !x.inline_only);
    match v {
        Value::Term(n, pos) => match lookup(n) {
            Some(x) if x.is_term() => Ok(()),
            _ => Err(err!(Grammar, "{}: undefined terminal '{n}' (used in rule '{}')", at(*pos), d.name)),
        },
        Value::Rule(n, pos) => {
            if params.contains(n) {
                return Ok(());
            }
            match lookup(n).map(|x| &x.kind) {
                Some(DefKind::Rule { params: p, .. }) if !p.is_empty() => {
                    Err(err!(Grammar, "{}: template '{n}' used without arguments (it takes {})", at(*pos), p.len()))
                }
                Some(DefKind::Rule { .. } | DefKind::DeclaredRule) => Ok(()),
                _ => Err(err!(Grammar, "{}: undefined rule '{n}' (used in rule '{}')", at(*pos), d.name)),
            }
        }
        Value::Template { name, args, pos } => {
            if params.contains(name) {
                return Err(err!(Grammar, "{}: template parameter '{name}' cannot be used as a template", at(*pos)));
            }
            match lookup(name).map(|x| &x.kind) {
                Some(DefKind::Rule { params: p, .. }) if p.len() == args.len() => {}
                Some(DefKind::Rule { params: p, .. }) if p.is_empty() => {
                    return Err(err!(Grammar, "{}: '{name}' is not a template (it takes no arguments)", at(*pos)))
                }
                Some(DefKind::Rule { params: p, .. }) => {
                    return Err(err!(Grammar, "{}: template '{name}' expects {} argument(s), got {}", at(*pos), p.len(), args.len()))
                }
                _ => return Err(err!(Grammar, "{}: undefined template '{name}' (used in rule '{}')", at(*pos), d.name)),
            }
            args.iter().try_for_each(|a| check_value(b, d, params, a))
        }
        Value::Str { text, pos, .. } if text.is_empty() => {
            Err(err!(Grammar, "{}: empty string literal (terminals must match at least one character)", at(*pos)))
        }
        _ => Ok(()),
    }
}

pub(crate) fn normalize(b: Builder, start: &str) -> Result<Cfg> {
    validate(&b)?;
    for (n, sp) in &b.ignore {
        if !b.index.get(n).is_some_and(|&i| b.defs[i].is_term() && !b.defs[i].inline_only) {
            return Err(err!(Grammar, "{sp}: %ignore of undefined terminal '{n}'"));
        }
    }
    let mut nm = Norm {
        defs: &b.defs,
        index: &b.index,
        pats: std::iter::repeat_with(|| None).take(b.defs.len()).collect(),
        widths: HashMap::default(),
        width_list: Vec::new(),
        in_progress: Vec::new(),
        terms: Vec::new(),
        term_idx: HashMap::default(),
        term_reverse: HashMap::default(),
        anon: 0,
        rules: Vec::new(),
        helpers: Vec::new(),
        cache: HashMap::default(),
        helper_n: 0,
        instances: HashSet::default(),
        queue: VecDeque::new(),
        sym_memo: HashMap::default(),
        expr_memo: HashMap::default(),
        syms: Vec::new(),
        exprs: Vec::new(),
        prefix: String::new(),
        cur_span: Span::default(),
    };
    // Terminals, in definition order (Lark compiles all of them).
    for (i, d) in b.defs.iter().enumerate() {
        let DefKind::Term { priority, body } = &d.kind else { continue };
        if d.inline_only {
            continue;
        }
        let pat = match body {
            Some(_) => Some(nm.term_pat(i)?),
            None => None,
        };
        let t = nm.terms.len();
        if let Some(p) = &pat {
            nm.term_reverse.insert(p.clone(), t);
        }
        nm.term_idx.insert(d.name.clone(), t);
        nm.terms.push(TermEntry { name: d.name.clone(), pat, priority: *priority, span: d.span() });
    }
    // Rules: definitions in order, then template instances as they appear.
    for (i, d) in b.defs.iter().enumerate() {
        if let DefKind::Rule { params, .. } = &d.kind {
            if params.is_empty() && !d.inline_only {
                nm.queue.push_back(Job { name: d.name.clone(), def: i, params: HashMap::default() });
            }
        }
    }
    while let Some(j) = nm.queue.pop_front() {
        let DefKind::Rule { body, priority, .. } = &b.defs[j.def].kind else { continue };
        nm.prefix = j.name.clone();
        nm.cur_span = b.defs[j.def].span();
        // Lark's passes over the rule tree, each in its transformer order:
        // anonymous terminals, then template instances, then EBNF helpers.
        nm.sym_memo.clear();
        nm.expr_memo.clear();
        nm.syms.clear();
        nm.exprs.clear();
        let calls = lark_call_order(body);
        for pass in 0..3 {
            for n in &calls {
                match (pass, n) {
                    (0, Node::Pattern(v)) | (1, Node::Template(v)) => {
                        let s = nm.sym(&j, v)?;
                        nm.sym_memo.insert(*v as *const Value as usize, nm.syms.len());
                        nm.syms.push(s);
                    }
                    (2, Node::Expr(e)) => {
                        let a = nm.expr(&j, e)?;
                        nm.expr_memo.insert(*e as *const Expr as usize, nm.exprs.len());
                        nm.exprs.push(a);
                    }
                    _ => {}
                }
            }
        }
        let alts = nm.alts(&j, body)?;
        nm.rules.push((j.name, alts, b.defs[j.def].span(), priority.unwrap_or(0)));
    }
    let mut all_rules = std::mem::take(&mut nm.rules);
    all_rules.append(&mut nm.helpers);

    // Reachability from the start rule.
    let by_name: HashMap<&str, usize> = all_rules.iter().enumerate().map(|(i, r)| (r.0.as_str(), i)).collect();
    // Name maps share one value type (an index), so one map instantiation.
    let declared_rules: HashMap<&str, usize> = b
        .defs
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.kind, DefKind::DeclaredRule) && !d.inline_only)
        .map(|(i, d)| (d.name.as_str(), i))
        .collect();
    if !by_name.contains_key(start) && !declared_rules.contains_key(start) {
        let hint = match b.index.get(start).map(|&i| &b.defs[i]) {
            Some(d) if d.is_term() => format!(" ('{start}' is a terminal)"),
            Some(d) => format!(" ('{start}' at {} is a template)", d.span()),
            None => String::new(),
        };
        return Err(err!(Grammar, "start rule '{start}' is not defined{hint}"));
    }
    let mut reach: HashSet<&str> = HashSet::default();
    let mut work = vec![start];
    while let Some(n) = work.pop() {
        if !reach.insert(n) {
            continue;
        }
        if let Some(&i) = by_name.get(n) {
            for alt in &all_rules[i].1 {
                for s in alt {
                    if let Sym::N(m) = s {
                        work.push(m);
                    }
                }
            }
        }
    }
    // `%reject <token>`: the token is named (so never text) and no rule takes it.
    for (n, sp) in &b.reject {
        if crate::grammar::is_special_name(n) && !nm.term_idx.contains_key(n) {
            nm.term_idx.insert(n.clone(), nm.terms.len());
            nm.terms.push(TermEntry { name: n.clone(), pat: None, priority: 0, span: sp.clone() });
        }
    }
    // Terminals kept: used by kept rules, %ignore'd, %indent'ed.
    let mut used: HashSet<&str> = HashSet::default();
    for r in all_rules.iter().filter(|r| reach.contains(r.0.as_str())) {
        for alt in &r.1 {
            for s in alt {
                if let Sym::T(t) = s {
                    used.insert(t);
                }
            }
        }
    }
    let ignored: HashSet<&str> = b.ignore.iter().map(|(n, _)| n.as_str()).collect();
    // `%reject`ed terminals: lexed, used by no rule (so never accepted).
    for (n, sp) in &b.reject {
        if crate::grammar::is_special_name(n) {
            if used.contains(n.as_str()) {
                return Err(err!(Grammar, "{sp}: %reject of token {n}, which a rule takes"));
            }
            continue;
        }
        if !b.index.get(n).is_some_and(|&i| matches!(&b.defs[i].kind, DefKind::Term { body: Some(_), .. }) && !b.defs[i].inline_only) {
            return Err(err!(Grammar, "{sp}: %reject of undefined terminal '{n}' (it needs a pattern)"));
        }
        if used.contains(n.as_str()) || ignored.contains(n.as_str()) {
            let what = if ignored.contains(n.as_str()) { "%ignore'd" } else { "used by a rule" };
            return Err(err!(Grammar, "{sp}: %reject of terminal '{n}', which is {what}; a rejected terminal must not be accepted anywhere"));
        }
        if let Some((names, _)) = &b.indent {
            if names.iter().any(|(m, _)| m == n) {
                return Err(err!(Grammar, "{sp}: %reject of terminal '{n}', which is an %indent terminal"));
            }
        }
    }
    if let Some((name, sp)) = b.reject.iter().find(|(n, _)| !crate::grammar::is_special_name(n)) {
        if b.lexer.as_ref().map_or(DEFAULT_LEXER, |(m, _)| *m) == crate::grammar::LexerMode::Contextual {
            return Err(err!(Grammar, "{sp}: %reject of '{name}' needs a global lexer (%lexer longest or basic): the contextual lexer lexes only the terminals the parser can accept"));
        }
    }
    used.extend(b.reject.iter().map(|(n, _)| n.as_str()));
    used.extend(ignored.iter().copied());
    if let Some((names, _)) = &b.indent {
        used.extend(names.iter().map(|(n, _)| n.as_str()));
    }

    // Translate every kept terminal's Python regex; lookaround / backreferences:
    // one error listing every offending terminal.
    let mut translated: HashMap<&str, usize> = HashMap::default();
    let mut translations: Vec<(String, Vec<Lookahead>)> = Vec::new();
    let mut bad: Vec<String> = Vec::new();
    let terms = std::mem::take(&mut nm.terms);
    for t in terms.iter().filter(|t| used.contains(t.name.as_str())) {
        let Some(p) = t.pat.as_ref().filter(|p| p.re) else { continue };
        let tr = pyregex::translate(&p.to_regexp(), false)
            .map_err(|e| err!(Regex, "{}: terminal '{}': cannot translate its regex /{}/: {e}", t.span, t.name, p.to_regexp()))?;
        let mut what: Vec<&str> = Vec::new();
        for u in &tr.unsupported {
            if !what.contains(&u.as_str()) {
                what.push(u);
            }
        }
        if !what.is_empty() {
            bad.push(format!("  {}: {} uses {}", t.span, t.name, what.join(", ")));
        }
        translated.insert(&t.name, translations.len());
        translations.push((tr.regex, tr.lookaheads));
    }
    if !bad.is_empty() {
        return Err(err!(
            Grammar,
            "{}: {} terminal(s) use lookaround or backreferences, which terminals do not support yet (see docs/lark.md); rewrite them without:\n{}",
            b.root_file,
            bad.len(),
            bad.join("\n")
        ));
    }

    // Assemble.
    let mut terminals = Vec::new();
    let mut tid: HashMap<&str, usize> = HashMap::default();
    let parser = || regex_syntax::ParserBuilder::new().utf8(false).build();
    for t in terms.iter().filter(|t| used.contains(t.name.as_str())) {
        let (pattern, lark) = match &t.pat {
            None if crate::grammar::is_special_name(&t.name) => (TerminalPattern::Special, None),
            None => (TerminalPattern::Declared, None),
            Some(p) => {
                let (_, max) = nm.widths(p);
                let max_width = match max {
                    MAXWIDTH => u64::MAX,
                    m if m >= u64::MAX as u128 => {
                        return Err(err!(Limit, "{}: terminal '{}' has a maximum width of 2^64-1 characters, which grammask cannot order like Lark", t.span, t.name))
                    }
                    m => m as u64,
                };
                let order = LarkOrder { max_width, pattern_len: p.value.chars().count(), flags: p.flags.chars().collect() };
                let pattern = if p.re {
                    let (r, lookaheads) = &translations[translated[t.name.as_str()]];
                    // The error names the user's pattern, never the translation.
                    parser().parse(r).map_err(|e| err!(Regex, "{}: terminal '{}' has an invalid regex /{}/: {}", t.span, t.name, p.value, crate::regex::lang::kind_at(&e).0))?;
                    TerminalPattern::Regex { regex: r.clone(), lookaheads: lookaheads.clone() }
                } else {
                    let ci = p.flags.contains('i');
                    let esc = regex_syntax::escape(&p.value);
                    TerminalPattern::Literal { text: p.value.clone(), case_insensitive: ci, regex: if ci { format!("(?i:{esc})") } else { esc } }
                };
                (pattern, Some(order))
            }
        };
        tid.insert(&t.name, terminals.len());
        terminals.push(TerminalDef { name: t.name.clone(), pattern, priority: t.priority, ignored: ignored.contains(t.name.as_str()), span: t.span.clone(), lark });
    }
    let mut nonterminals = Vec::new();
    let mut nid: HashMap<&str, usize> = HashMap::default();
    for r in all_rules.iter().filter(|r| reach.contains(r.0.as_str())) {
        nid.insert(&r.0, nonterminals.len());
        nonterminals.push(NonterminalDef { name: r.0.clone(), span: r.2.clone() });
    }
    for (n, &d) in &declared_rules {
        if reach.contains(n) && !nid.contains_key(n) {
            nid.insert(n, nonterminals.len());
            nonterminals.push(NonterminalDef { name: n.to_string(), span: b.defs[d].span() });
        }
    }
    let mut rules = Vec::new();
    for r in all_rules.iter().filter(|r| reach.contains(r.0.as_str())) {
        for alt in &r.1 {
            let rhs = alt
                .iter()
                .map(|s| match s {
                    Sym::T(t) => tid.get(t.as_str()).map(|&i| Symbol::T(TerminalId::new(i))),
                    Sym::N(n) => nid.get(n.as_str()).map(|&i| Symbol::N(NonterminalId::new(i))),
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| err!(Grammar, "{}: internal error: unresolved symbol in rule '{}'", r.2, r.0))?;
            rules.push(Rule { lhs: NonterminalId::new(nid[r.0.as_str()]), rhs, span: r.2.clone(), priority: r.3 });
        }
    }
    let indent = match &b.indent {
        None => None,
        Some((names, at)) => {
            let get = |k: usize, declared: bool| -> Result<TerminalId> {
                let (n, sp) = &names[k];
                let id = tid.get(n.as_str()).map(|&i| TerminalId::new(i)).ok_or_else(|| err!(Grammar, "{sp}: %indent names undefined terminal '{n}'"))?;
                let is_decl = matches!(terminals[id.index()].pattern, TerminalPattern::Declared);
                match (declared, is_decl) {
                    (true, false) => Err(err!(Grammar, "{sp}: %indent: '{n}' must be %declare'd (the indentation layer produces it), but it is defined")),
                    (false, true) => Err(err!(Grammar, "{sp}: %indent: newline terminal '{n}' must be defined with a pattern, not %declare'd")),
                    _ => Ok(id),
                }
            };
            let (newline, ind, ded) = (get(0, false)?, get(1, true)?, get(2, true)?);
            if ind == ded {
                return Err(err!(Grammar, "{at}: %indent: INDENT and DEDENT must be different terminals"));
            }
            let with_text = |set: &[&str]| -> Vec<TerminalId> {
                terminals.iter().enumerate().filter(|(_, t)| t.literal_text().is_some_and(|x| set.contains(&x))).map(|(i, _)| TerminalId::new(i)).collect()
            };
            Some(IndentConfig { newline, indent: ind, dedent: ded, open: with_text(&["(", "[", "{"]), close: with_text(&[")", "]", "}"]) })
        }
    };
    let start_id = nid.get(start).map(|&i| NonterminalId::new(i)).ok_or_else(|| err!(Grammar, "start rule '{start}' is not defined"))?;
    // The lexer mode: `%lexer`, else the front end's default.
    let lexer = b.lexer.as_ref().map_or(DEFAULT_LEXER, |(m, _)| *m);
    let mut cfg = Cfg { terminals, nonterminals, rules, start: start_id, indent, lexer, conflicts: crate::grammar::ConflictPolicy::Lark };
    if let Some(sp) = &b.earley {
        // Lark's Earley parser: the grammar's whole context-free language.
        // Its default (dynamic) lexer lets the parser choose lexemes, which a
        // longest-match lexer cannot follow: only `lexer='basic'` is exact.
        if lexer == crate::grammar::LexerMode::Contextual || cfg.indent.is_some() {
            return Err(err!(Grammar, "{sp}: %parser earley needs `%lexer basic` (Lark's parser='earley', lexer='basic') or `%lexer longest`, and no %indent: Lark's dynamic Earley lexer is not supported"));
        }
        // Conflict-free LALR(1) tables parse exactly that language: used when
        // they exist, else the general parser (the caller decides, with the
        // tables: `crate::constraint::parse_lark`).
        cfg.conflicts = crate::grammar::ConflictPolicy::Strict;
    }
    Ok(cfg)
}
