//! Grammar generation: conjunction lists → LALR(1) rules.
//!
//! A value position is a list `L` of conjunctions (their union) and a target:
//! `Any` (the value satisfies some member) or `Exact(S)` (it satisfies exactly
//! the members in `S`; used inside products, see below). Objects and arrays
//! are right-linear chains over the *product* of the members' automata
//! (declared keys in schema order, then extra keys; item positions), carrying
//! the target to the closing bracket, where the state decides: so a union of
//! objects is parsed deterministically and nothing is reduced before the
//! bracket closes. Where the members disagree on a property's schema, the
//! value is split into disjoint atoms by the exact set of members it
//! satisfies. Scalars of a union are one terminal (disjoint by construction).

use crate::hash::FxMap as HashMap;
use std::rc::Rc;

use super::ir::{ConjId, Ir, Loc, Merged, Set, T_ARR, T_OBJ};
use crate::regex::lang;
use super::json_text;
use super::scalar::{cnf_union, scalar_lang, ScalarLang};
use super::Whitespace;
use crate::grammar::{Cfg, LexerMode, NonterminalDef, Rule, Span, Symbol, TerminalDef, TerminalPattern};
use crate::ids::{NonterminalId, TerminalId};
use crate::{err, Result};

/// Limits (documented in [`crate::limits`]).
pub const MAX_NONTERMINALS: usize = crate::limits::Limits::DEFAULT.max_schema_nonterminals;
pub const MAX_RULES: usize = crate::limits::Limits::DEFAULT.max_schema_rules;
pub const MAX_UNROLL: u64 = crate::limits::Limits::DEFAULT.max_unroll as u64;
pub const MAX_OVERLAP: usize = crate::limits::Limits::DEFAULT.max_overlapping_alternatives;
pub const MAX_KEY_PATTERNS: usize = crate::limits::Limits::DEFAULT.max_pattern_properties;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Any,
    Exact(u64),
    /// The set of members it satisfies is one of these (sorted): a
    /// `not`/`if`/`oneOf` condition ([`super::ir::Logic`]).
    In(Rc<[u64]>),
}

impl Target {
    fn accepts(&self, acc: u64) -> bool {
        match self {
            Target::Any => acc != 0,
            Target::Exact(s) => acc == *s,
            Target::In(m) => m.binary_search(&acc).is_ok(),
        }
    }
    /// Whether the members in `alive` can still meet it.
    fn feasible(&self, alive: u64) -> bool {
        match self {
            Target::Any => true,
            Target::Exact(t) => t & !alive == 0,
            Target::In(m) => m.iter().any(|x| x & !alive == 0),
        }
    }
    /// Whether it is a non-monotone condition: a member that fails may
    /// make the value valid, so a member must not fail by key order alone.
    fn negates(&self, n: usize) -> bool {
        match self {
            Target::In(m) => m.iter().any(|&x| (0..n).any(|i| m.binary_search(&(x | 1 << i)).is_err())),
            _ => false,
        }
    }
}


type List = Rc<[ConjId]>;

/// The member states after one more property/item: member `i` moves to its
/// `nexts` state when it survives the value (bit `i` of `surv`), else drops
/// out; `None` when an `Exact` target loses a member it needs.
fn next_states<T: Copy>(len: usize, nexts: &[(usize, T)], surv: u64, target: &Target) -> Option<Vec<Option<T>>> {
    let mut st = vec![None; len];
    for &(i, n) in nexts {
        if surv >> i & 1 == 1 {
            st[i] = Some(n);
        }
    }
    let alive = (0..len).fold(0u64, |a, i| if st[i].is_some() { a | 1 << i } else { a });
    target.feasible(alive).then_some(st)
}

/// A member's place in an object: (next declared key, properties so far
/// (capped), dependency bits: the keys still owed (low 32) and the keys now
/// forbidden (high 32), by [`ObjInfo::dep_bit`]).
type ObjSt = (u32, u32, u64);

/// Why a member fails at a key ([`Gen::obj_step`]).
const FAILS: u8 = 0;
const DOOMED: u8 = 1;
const ORDER: u8 = 2;

/// Most keys one object's `dependentRequired`/`dependencies` may involve.
pub const MAX_DEP_KEYS: usize = 32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Top,
    /// `bool`: strict (a member fails by its value, never by key order:
    /// inside a `not`/`if`/`oneOf` condition).
    Val(List, Target, bool),
    Obj { list: List, st: Vec<Option<ObjSt>>, target: Target, first: bool, strict: bool },
    Arr { list: List, st: Vec<Option<u64>>, target: Target, first: bool, strict: bool },
}

/// Structural terminals.
struct Structs {
    open_o: TerminalId,
    close_o: TerminalId,
    open_a: TerminalId,
    close_a: TerminalId,
    comma: TerminalId,
    colon: TerminalId,
    /// Flexible: `{ }` / `[ ]` as one lexeme, leading/trailing whitespace.
    empty_o: Option<TerminalId>,
    empty_a: Option<TerminalId>,
    lead: Option<TerminalId>,
    trail: Option<TerminalId>,
}

/// Separators and whitespace (from [`Whitespace`] or `x-guidance`).
#[derive(Clone, Debug)]
pub struct Layout {
    pub ws: Whitespace,
    pub item_sep: Option<String>,
    pub key_sep: Option<String>,
}

struct ObjInfo {
    keys: Vec<String>,
    /// req[j]: keys[j] is required.
    req: Vec<bool>,
    /// req_from[j]: a required key among keys[j..].
    req_from: Vec<bool>,
    min: u64,
    max: Option<u64>,
    cap: u32,
    /// Dependencies (`dependentRequired`, array `dependencies`): the bit of
    /// each key position that takes part (≤ [`MAX_DEP_KEYS`]).
    dep_bit: Vec<Option<u8>>,
    /// need[j]: the bits of the keys that key j requires and that come
    /// after it (the earlier ones forbid j when skipped, see `trig`).
    need: Vec<u64>,
    /// trig[j]: the bits of the keys after j that require key j (skipping j
    /// forbids them).
    trig: Vec<u64>,
    /// excl[j]: the bits of the keys after j that key j excludes or that
    /// exclude it (its presence forbids them).
    excl: Vec<u64>,
    /// after[j]: the bits of the keys at positions > j.
    after: Vec<u64>,
    /// banned[j]: key j may not occur (it excludes itself: a `false`
    /// dependent schema).
    banned: Vec<bool>,
}

/// A member's place in an array: the item position (capped, low 16 bits)
/// and, 16 bits each above it, how many items matched each `contains`
/// (capped).
struct ArrInfo {
    min: u64,
    max: Option<u64>,
    cap: u32,
    /// (schema, minContains, maxContains, count cap), ≤ [`MAX_CONTAINS`].
    contains: Vec<(Loc, u64, Option<u64>, u64)>,
}

/// Most `contains` one array's conjunction may hold.
const MAX_CONTAINS: usize = 3;

/// The property names a conjunction allows (`propertyNames`), as a
/// language over quoted JSON strings.
#[derive(PartialEq)]
enum Names {
    Any,
    None,
    /// Regexes that must all match, and the pointer (messages).
    Lang(Vec<String>, String),
}

enum Kind {
    Declared(u32),
    Extra,
}

struct KeyClass {
    term: TerminalId,
    /// Per member of the list: how the key is read and its value schema
    /// (`None`: not allowed there).
    per: Vec<Option<(Kind, Set)>>,
    /// The key, where the class is one declared key.
    key: Option<String>,
}

/// The members of a strict object ([`Gen::strict_infos`]): one key order
/// for all (the schema's rank), each member's rules over it.
struct Strict {
    keys: Vec<String>,
    infos: Vec<Option<Rc<ObjInfo>>>,
}

pub struct Gen<'a, 'i> {
    ir: &'i mut Ir<'a>,
    terms: Vec<TerminalDef>,
    term_ids: HashMap<(bool, Vec<String>, Vec<String>), TerminalId>,
    nts: Vec<NonterminalDef>,
    rules: Vec<Rule>,
    memo: HashMap<Key, NonterminalId>,
    work: Vec<(Key, NonterminalId)>,
    s: Option<Structs>,
    scalar: Dense<ScalarLang>,
    nonempty: HashMap<(Vec<String>, Vec<String>), bool>,
    obj_info: Dense<ObjInfo>,
    arr_info: Dense<ArrInfo>,
    names: Dense<Names>,
    /// Key classes per conjunction list: an index into `class_lists` (the
    /// map type the IR's conjunction interning has already).
    classes: HashMap<Vec<ConjId>, u32>,
    class_lists: Vec<Rc<Vec<KeyClass>>>,
    /// Prefix of every name (so grammars can be merged).
    prefix: String,
    /// Strict members per conjunction list: an index into `strict_lists`.
    strict: HashMap<Vec<ConjId>, u32>,
    strict_lists: Vec<Rc<Strict>>,
    /// The schema's key order ([`super::key_rank`]), once needed.
    rank: Option<HashMap<String, usize>>,
}

/// A memo per conjunction: conjunction ids are dense, so a vector (less
/// wasm than a map per value type).
struct Dense<X>(Vec<Option<Rc<X>>>);

impl<X> Dense<X> {
    fn get(&self, c: &ConjId) -> Option<&Rc<X>> {
        self.0.get(*c as usize)?.as_ref()
    }
    fn insert(&mut self, c: ConjId, x: Rc<X>) {
        let i = c as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i] = Some(x);
    }
}

fn bits(n: usize) -> impl Iterator<Item = u64> {
    1..(1u64 << n)
}

impl<'a, 'i> Gen<'a, 'i> {
    pub fn new(ir: &'i mut Ir<'a>, layout: &Layout, prefix: &str) -> Result<Self> {
        let mut g = Gen {
            ir,
            terms: Vec::new(),
            term_ids: HashMap::default(),
            nts: Vec::new(),
            rules: Vec::new(),
            memo: HashMap::default(),
            work: Vec::new(),
            s: None,
            scalar: Dense(Vec::new()),
            nonempty: HashMap::default(),
            obj_info: Dense(Vec::new()),
            arr_info: Dense(Vec::new()),
            names: Dense(Vec::new()),
            classes: HashMap::default(),
            class_lists: Vec::new(),
            prefix: prefix.to_string(),
            strict: HashMap::default(),
            strict_lists: Vec::new(),
            rank: None,
        };
        let lit = |g: &mut Self, t: &str| g.literal(t);
        let s = match (layout.ws, &layout.item_sep, &layout.key_sep) {
            (Whitespace::Flexible { max_run }, _, _) => {
                let ws = format!("[ \\t\\n\\r]{{0,{max_run}}}");
                let ws1 = format!("[ \\t\\n\\r]{{1,{max_run}}}");
                let set = |g: &mut Self, r: String, name: &str| g.set_term(vec![r], vec![], name);
                Structs {
                    open_o: set(&mut g, format!(r"\{{{ws}"), "LBRACE"),
                    close_o: set(&mut g, format!(r"{ws}\}}"), "RBRACE"),
                    open_a: set(&mut g, format!(r"\[{ws}"), "LSQB"),
                    close_a: set(&mut g, format!(r"{ws}\]"), "RSQB"),
                    comma: set(&mut g, format!(r"{ws},{ws}"), "COMMA"),
                    colon: set(&mut g, format!(r"{ws}:{ws}"), "COLON"),
                    empty_o: Some(set(&mut g, format!(r"\{{{ws}\}}"), "EMPTY_OBJECT")),
                    empty_a: Some(set(&mut g, format!(r"\[{ws}\]"), "EMPTY_ARRAY")),
                    lead: Some(set(&mut g, ws1.clone(), "LEADING_WS")),
                    trail: Some(set(&mut g, ws1, "TRAILING_WS")),
                }
            }
            (ws, isep, ksep) => {
                let (c, k) = match ws {
                    Whitespace::Compact => (lit(&mut g, ","), lit(&mut g, ":")),
                    Whitespace::Spaced => (lit(&mut g, ", "), lit(&mut g, ": ")),
                    _ => (g.set_term(vec![", ?".into()], vec![], "COMMA"), g.set_term(vec![": ?".into()], vec![], "COLON")),
                };
                Structs {
                    open_o: lit(&mut g, "{"),
                    close_o: lit(&mut g, "}"),
                    open_a: lit(&mut g, "["),
                    close_a: lit(&mut g, "]"),
                    comma: isep.as_ref().map(|s| lit(&mut g, s)).unwrap_or(c),
                    colon: ksep.as_ref().map(|s| lit(&mut g, s)).unwrap_or(k),
                    empty_o: None,
                    empty_a: None,
                    lead: None,
                    trail: None,
                }
            }
        };
        g.s = Some(s);
        Ok(g)
    }

    fn st(&self) -> &Structs {
        self.s.as_ref().expect("structs")
    }

    fn literal(&mut self, text: &str) -> TerminalId {
        let key = (true, vec![text.to_string()], vec![]);
        if let Some(&t) = self.term_ids.get(&key) {
            return t;
        }
        let id = TerminalId::new(self.terms.len());
        let name = format!("__{}L{}", self.prefix, self.terms.len());
        self.terms.push(TerminalDef::new(
            name,
            TerminalPattern::Literal { text: text.to_string(), case_insensitive: false, regex: lang::escape(text) },
        ));
        self.term_ids.insert(key, id);
        id
    }

    fn set_term(&mut self, all: Vec<String>, none: Vec<String>, name: &str) -> TerminalId {
        let key = (false, all.clone(), none.clone());
        if let Some(&t) = self.term_ids.get(&key) {
            return t;
        }
        let id = TerminalId::new(self.terms.len());
        let name = format!("{}{}_{}", self.prefix, name, self.terms.len());
        self.terms.push(TerminalDef::new(name, TerminalPattern::Set { all, none }));
        self.term_ids.insert(key, id);
        id
    }

    fn nonempty(&mut self, all: &[String], none: &[String]) -> Result<bool> {
        let key = (all.to_vec(), none.to_vec());
        if let Some(&b) = self.nonempty.get(&key) {
            return Ok(b);
        }
        let b = lang::set_nonempty(all, none).map_err(|e| err!(Limit, "JSON Schema: {e}"))?;
        self.nonempty.insert(key, b);
        Ok(b)
    }

    fn nt(&mut self, key: Key) -> Result<NonterminalId> {
        if let Some(&n) = self.memo.get(&key) {
            return Ok(n);
        }
        if self.nts.len() >= MAX_NONTERMINALS {
            return Err(err!(Limit, "JSON Schema: the grammar needs more than {MAX_NONTERMINALS} nonterminals"));
        }
        let id = NonterminalId::new(self.nts.len());
        let name = match &key {
            Key::Top => format!("{}start", self.prefix),
            Key::Val(..) => format!("{}value_{}", self.prefix, id.0),
            Key::Obj { .. } => format!("{}object_{}", self.prefix, id.0),
            Key::Arr { .. } => format!("{}array_{}", self.prefix, id.0),
        };
        self.nts.push(NonterminalDef { name, span: Span::default() });
        self.memo.insert(key.clone(), id);
        self.work.push((key, id));
        Ok(id)
    }

    fn rule(&mut self, lhs: NonterminalId, rhs: Vec<Symbol>) -> Result<()> {
        if self.rules.len() >= MAX_RULES {
            return Err(err!(Limit, "JSON Schema: the grammar needs more than {MAX_RULES} rules"));
        }
        self.rules.push(Rule::new(lhs, rhs, Span::default()));
        Ok(())
    }

    fn merged(&mut self, c: ConjId) -> Result<Rc<Merged<'a>>> {
        self.ir.merged(c)
    }

    fn scalar_of(&mut self, c: ConjId) -> Result<Rc<ScalarLang>> {
        if let Some(s) = self.scalar.get(&c) {
            return Ok(s.clone());
        }
        let s = Rc::new(scalar_lang(self.ir, c)?);
        self.scalar.insert(c, s.clone());
        Ok(s)
    }

    fn dnf(&mut self, s: &Set) -> Result<List> {
        let d = self.ir.dnf(s)?;
        Ok(Rc::from(d.as_slice()))
    }

    /// The members and target of a value of set `s` ([`Ir::logic`]).
    fn logic(&mut self, s: &Set) -> Result<(List, Target)> {
        let lg = self.ir.logic(s)?;
        let t = match &lg.masks {
            None => Target::Any,
            Some(m) => Target::In(m.clone()),
        };
        Ok((Rc::from(lg.atoms.as_slice()), t))
    }

    /// Builds the grammar of `root` (a set of nodes).
    pub fn run(mut self, root: &Set) -> Result<Cfg> {
        let (list, target) = self.logic(root)?;
        let top = self.nt(Key::Top)?;
        let v = self.nt(Key::Val(list, target, false))?;
        let (lead, trail) = (self.st().lead, self.st().trail);
        let mut alts = vec![vec![Symbol::N(v)]];
        if let (Some(l), Some(t)) = (lead, trail) {
            alts = vec![
                vec![Symbol::N(v)],
                vec![Symbol::T(l), Symbol::N(v)],
                vec![Symbol::N(v), Symbol::T(t)],
                vec![Symbol::T(l), Symbol::N(v), Symbol::T(t)],
            ];
        }
        for a in alts {
            self.rule(top, a)?;
        }
        while let Some((key, id)) = self.work.pop() {
            match key {
                Key::Top => {}
                Key::Val(list, target, strict) => self.expand_val(id, &list, &target, strict)?,
                Key::Obj { list, st, target, first, strict } => self.expand_obj(id, &list, &st, &target, first, strict)?,
                Key::Arr { list, st, target, first, strict } => self.expand_arr(id, &list, &st, &target, first, strict)?,
            }
        }
        self.finish(top)
    }

    fn expand_val(&mut self, id: NonterminalId, list: &List, target: &Target, strict: bool) -> Result<()> {
        // Scalars.
        let terms = match target {
            Target::In(m) => {
                // The members whose failing some row needs.
                let neg = (0..list.len()).filter(|&i| m.iter().any(|&s| s >> i & 1 == 0 && m.binary_search(&(s | 1 << i)).is_err())).fold(0u64, |a, i| a | 1 << i);
                let mut v = Vec::new();
                for &s in m.iter() {
                    v.extend(self.exact_term(list, s, true, neg)?);
                }
                v
            }
            _ => self.scalar_term(list, target)?.into_iter().collect(),
        };
        for t in terms {
            self.rule(id, vec![Symbol::T(t)])?;
        }
        let mut types = Vec::new();
        for &c in list.iter() {
            types.push(self.merged(c)?.gen_types());
        }
        let admits = |bit: u8| -> Option<Vec<bool>> {
            let v: Vec<bool> = types.iter().map(|t| t & bit != 0).collect();
            let ok = v.iter().enumerate().fold(0u64, |a, (i, &b)| if b { a | 1 << i } else { a });
            match target {
                Target::Any => v.iter().any(|&b| b).then_some(v),
                t => t.feasible(ok).then_some(v),
            }
        };
        if let Some(v) = admits(T_OBJ) {
            let st: Vec<Option<ObjSt>> = v.iter().map(|&b| b.then_some((0, 0, 0))).collect();
            if let Some(e) = self.st().empty_o {
                if self.obj_accepts(list, &st, target, strict || target.negates(list.len()))? {
                    self.rule(id, vec![Symbol::T(e)])?;
                }
            }
            let body = self.nt(Key::Obj { list: list.clone(), st, target: target.clone(), first: true, strict })?;
            let open = self.st().open_o;
            self.rule(id, vec![Symbol::T(open), Symbol::N(body)])?;
        }
        if let Some(v) = admits(T_ARR) {
            let st: Vec<Option<u64>> = v.iter().map(|&b| b.then_some(0)).collect();
            if let Some(e) = self.st().empty_a {
                if self.arr_accepts(list, &st, target)? {
                    self.rule(id, vec![Symbol::T(e)])?;
                }
            }
            let body = self.nt(Key::Arr { list: list.clone(), st, target: target.clone(), first: true, strict })?;
            let open = self.st().open_a;
            self.rule(id, vec![Symbol::T(open), Symbol::N(body)])?;
        }
        Ok(())
    }

    /// The scalar terminal of a value position (`None`: no scalar).
    fn scalar_term(&mut self, list: &List, target: &Target) -> Result<Option<TerminalId>> {
        let mut langs = Vec::new();
        for &c in list.iter() {
            langs.push(self.scalar_of(c)?);
        }
        match target {
            Target::Any => {
                let ls: Vec<&ScalarLang> = langs.iter().map(|l| l.as_ref()).filter(|l| !l.is_empty()).collect();
                if ls.is_empty() {
                    return Ok(None);
                }
                // Finite: literal texts.
                if ls.iter().all(|l| l.literals().is_some()) {
                    let mut texts: Vec<String> = ls.iter().flat_map(|l| l.literals().unwrap_or_default()).collect();
                    crate::sort::sort_cold(&mut texts);
                    texts.dedup();
                    if texts.len() == 1 {
                        return Ok(Some(self.literal(&texts[0])));
                    }
                    let alt = format!("(?:{})", texts.iter().map(|t| lang::escape(t)).collect::<Vec<_>>().join("|"));
                    return Ok(Some(self.set_term(vec![alt], vec![], "SCALAR")));
                }
                let mut domains: Vec<Vec<String>> = Vec::new();
                let lits: Vec<(&str, bool)> = vec![("null", ls.iter().any(|l| l.null)), ("true", ls.iter().any(|l| l.t)), ("false", ls.iter().any(|l| l.f))];
                for (t, on) in lits {
                    if on {
                        domains.push(vec![t.to_string()]);
                    }
                }
                let nums: Vec<&Vec<String>> = ls.iter().filter_map(|l| l.num.as_ref()).collect();
                if !nums.is_empty() {
                    let u = cnf_union(&nums, super::numbers::ANY_NUMBER, 32)
                        .ok_or_else(|| err!(Limit, "JSON Schema: union of number constraints too large at {}", self.ptr_of(list)))?;
                    domains.push(u);
                }
                let strs: Vec<&Vec<String>> = ls.iter().filter_map(|l| l.str.as_ref()).collect();
                if !strs.is_empty() {
                    let u = cnf_union(&strs, json_text::ANY_STRING, 32)
                        .ok_or_else(|| err!(Limit, "JSON Schema: union of string constraints too large at {}", self.ptr_of(list)))?;
                    domains.push(u);
                }
                let all = pad(&domains);
                let known = [json_text::ANY_STRING, super::numbers::ANY_NUMBER, super::numbers::ANY_INTEGER, "null", "true", "false"];
                if domains.iter().any(|d| d.len() > 1 || !known.contains(&d[0].as_str())) && !self.nonempty(&all, &[])? {
                    return Ok(None);
                }
                Ok(Some(self.set_term(all, vec![], "SCALAR")))
            }
            Target::Exact(s) => self.exact_term(list, *s, false, 0),
            Target::In(_) => Ok(None),
        }
    }

    /// The scalar terminal of the values that satisfy exactly the members
    /// in `s` (`canon`: where some member is complemented, only canonical
    /// texts, so a text outside a member's language is a value outside it;
    /// `neg`: the members a row needs failed, which may not hold a format).
    fn exact_term(&mut self, list: &List, s: u64, canon: bool, neg: u64) -> Result<Option<TerminalId>> {
        let mut langs = Vec::new();
        for &c in list.iter() {
            langs.push(self.scalar_of(c)?);
        }
        let ins: Vec<&ScalarLang> = (0..list.len()).filter(|i| s >> i & 1 == 1).map(|i| langs[i].as_ref()).collect();
        let outs: Vec<&ScalarLang> = (0..list.len()).filter(|i| s >> i & 1 == 0).map(|i| langs[i].as_ref()).collect();
        let mut domains: Vec<Vec<String>> = Vec::new();
        for (t, f) in [("null", (|l: &ScalarLang| l.null) as fn(&ScalarLang) -> bool), ("true", |l| l.t), ("false", |l| l.f)] {
            if ins.iter().all(|l| f(l)) && !outs.iter().any(|l| f(l)) {
                domains.push(vec![t.to_string()]);
            }
        }
        let mut none = Vec::new();
        for get in 0..2 {
            let pick = |l: &ScalarLang| if get == 0 { l.num.clone() } else { l.str.clone() };
            let mut inter: Vec<String> = Vec::new();
            let mut ok = true;
            for l in &ins {
                match pick(l) {
                    Some(v) => {
                        for r in v {
                            if !inter.contains(&r) {
                                inter.push(r);
                            }
                        }
                    }
                    None => ok = false,
                }
            }
            if ins.is_empty() {
                inter.push(if get == 0 { super::numbers::ANY_NUMBER } else { json_text::ANY_STRING }.to_string());
            }
            if !ok || inter.is_empty() {
                continue;
            }
            let mut negated = false;
            for (i, l) in (0..list.len()).filter(|i| s >> i & 1 == 0).zip(&outs) {
                if let Some(v) = pick(l) {
                    if neg >> i & 1 == 1 && get == 1 {
                        Self::no_format(&*self.merged(list[i])?, "")?;
                    }
                    none.push(conj_regex(&v).map_err(|e| err!(Limit, "JSON Schema: the complement at {}: {e}", self.ptr_of(list)))?);
                    negated = true;
                }
            }
            if canon && negated {
                inter.push(if get == 0 { CANON_NUMBER.to_string() } else { format!("\"{}*\"", json_text::CHAR) });
            }
            domains.push(inter);
        }
        if domains.is_empty() {
            return Ok(None);
        }
        let all = pad(&domains);
        if !self.nonempty(&all, &none)? {
            return Ok(None);
        }
        Ok(Some(self.set_term(all, none, "SCALAR")))
    }

    /// A `format` may not be complemented: grammask's format regexes are
    /// stricter than some validators' checks, so a string outside one may
    /// still be valid under it. `names`: the keyword holding it.
    fn no_format(m: &Merged<'_>, names: &str) -> Result<()> {
        match m.formats.first() {
            Some((_, ptr)) => Err(err!(Schema, "JSON Schema: unsupported keyword `format` at {ptr}{names} under not/if/oneOf: a format is not complemented (its check may be stricter than a validator's)")),
            None => Ok(()),
        }
    }

    fn ptr_of(&self, list: &List) -> String {
        list.first().map(|&c| self.ir.conj_set(c).iter().min().map(|&l| self.ir.ptr(l).to_string()).unwrap_or_else(|| "#".into())).unwrap_or_else(|| "#".into())
    }

    fn obj_info(&mut self, c: ConjId) -> Result<Rc<ObjInfo>> {
        if let Some(i) = self.obj_info.get(&c) {
            return Ok(i.clone());
        }
        let info = Rc::new(self.build_obj_info(c, None)?);
        self.obj_info.insert(c, info.clone());
        Ok(info)
    }

    /// The members of a strict object: every key declared by one, in the
    /// schema's key order, and each member's rules over that order (so a
    /// member fails by what the object holds, never by its key order).
    fn strict_infos(&mut self, list: &List) -> Result<Rc<Strict>> {
        if let Some(&k) = self.strict.get(&list[..]) {
            return Ok(self.strict_lists[k as usize].clone());
        }
        let mut keys: Vec<String> = Vec::new();
        for &c in list.iter() {
            if self.merged(c)?.gen_types() & T_OBJ != 0 {
                for k in &self.obj_info(c)?.keys {
                    if !keys.contains(k) {
                        keys.push(k.clone());
                    }
                }
            }
        }
        let root = self.ir.root;
        let rank = self.rank.get_or_insert_with(|| super::rank_of(root));
        let order = crate::sort::order_by(keys.len(), &mut |a, b| {
            let r = |k: &String| rank.get(k).copied().unwrap_or(usize::MAX);
            r(&keys[a]).cmp(&r(&keys[b]))
        });
        let keys: Vec<String> = order.iter().map(|&i| keys[i as usize].clone()).collect();
        let mut infos = Vec::new();
        for &c in list.iter() {
            infos.push(if self.merged(c)?.gen_types() & T_OBJ != 0 { Some(Rc::new(self.build_obj_info(c, Some(&keys))?)) } else { None });
        }
        let s = Rc::new(Strict { keys, infos });
        self.strict.insert(list.to_vec(), self.strict_lists.len() as u32);
        self.strict_lists.push(s.clone());
        Ok(s)
    }

    /// The object rules of conjunction `c`, over its own key order or `order`.
    fn build_obj_info(&mut self, c: ConjId, order: Option<&[String]>) -> Result<ObjInfo> {
        let m = self.merged(c)?;
        let mut keys: Vec<String> = Vec::new();
        for part in &m.obj {
            for (k, _) in &part.props {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        for r in &m.required {
            if !keys.contains(r) {
                keys.push(r.clone());
            }
        }
        // Keys named by dependencies only: after those, in order of mention
        // (trigger, excluded, required: `key_rank`'s order).
        for (a, need, excl, _) in &m.dep_required {
            for k in std::iter::once(a).chain(excl).chain(need) {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        if let Some(o) = order {
            keys = o.to_vec();
        }
        let n = keys.len();
        let mut dep_bit: Vec<Option<u8>> = vec![None; n];
        let mut need = vec![0u64; n];
        let mut trig = vec![0u64; n];
        let mut excl = vec![0u64; n];
        let mut banned = vec![false; n];
        let pos = |k: &String| keys.iter().position(|x| x == k).unwrap_or(0);
        let mut nbits = 0usize;
        for (a, needs, excls, ptr) in &m.dep_required {
            let ja = pos(a);
            for (b, excluded) in needs.iter().map(|b| (b, false)).chain(excls.iter().map(|b| (b, true))) {
                let jb = pos(b);
                if jb == ja {
                    banned[ja] |= excluded;
                    continue;
                }
                for j in [ja, jb] {
                    if dep_bit[j].is_none() {
                        if nbits == MAX_DEP_KEYS {
                            return Err(err!(Limit, "JSON Schema: dependencies at {ptr} involve more than {MAX_DEP_KEYS} keys of one object"));
                        }
                        dep_bit[j] = Some(nbits as u8);
                        nbits += 1;
                    }
                }
                let (ba, bb) = (dep_bit[ja].unwrap_or(0), dep_bit[jb].unwrap_or(0));
                match (excluded, jb > ja) {
                    (false, true) => need[ja] |= 1 << bb,
                    (false, false) => trig[jb] |= 1 << ba,
                    // Either key present forbids the later one.
                    (true, true) => excl[ja] |= 1 << bb,
                    (true, false) => excl[jb] |= 1 << ba,
                }
            }
        }
        let mut after = vec![0u64; n + 1];
        for j in (0..n).rev() {
            after[j] = after[j + 1] | dep_bit.get(j + 1).copied().flatten().map_or(0, |b| 1 << b);
        }
        let mut req_from = vec![false; n + 1];
        for j in (0..n).rev() {
            req_from[j] = req_from[j + 1] || m.required.contains(&keys[j]);
        }
        let cap = m.min_props.max(m.max_props.unwrap_or(0));
        if cap > MAX_UNROLL {
            return Err(err!(Limit, "JSON Schema: minProperties/maxProperties {cap} at {} exceeds the limit of {MAX_UNROLL}", m.ptr));
        }
        let req = keys.iter().map(|k| m.required.contains(k)).collect();
        Ok(ObjInfo { keys, req, req_from, min: m.min_props, max: m.max_props, cap: cap as u32, dep_bit, need, trig, excl, after, banned })
    }

    fn arr_info(&mut self, c: ConjId) -> Result<Rc<ArrInfo>> {
        if let Some(i) = self.arr_info.get(&c) {
            return Ok(i.clone());
        }
        let m = self.merged(c)?;
        let prefix = m.arr.iter().map(|p| p.prefix.len() as u64).max().unwrap_or(0);
        let cap = match m.max_items {
            Some(x) => x,
            None => prefix.max(m.min_items),
        };
        if cap > MAX_UNROLL {
            return Err(err!(Limit, "JSON Schema: minItems/maxItems/prefixItems {cap} at {} exceeds the limit of {MAX_UNROLL}", m.ptr));
        }
        let mut contains = Vec::new();
        for (l, lo, hi, ptr) in &m.contains {
            let cap = hi.unwrap_or(*lo);
            if cap > MAX_UNROLL || contains.len() == MAX_CONTAINS {
                return Err(err!(Limit, "JSON Schema: contains at {ptr}: a count over {MAX_UNROLL} or over {MAX_CONTAINS} per array"));
            }
            contains.push((*l, *lo, *hi, cap));
        }
        let info = Rc::new(ArrInfo { min: m.min_items, max: m.max_items, cap: cap as u32, contains });
        self.arr_info.insert(c, info.clone());
        Ok(info)
    }

    /// The member's state after a key; `Err`: it fails, by
    /// [`FAILS`] (for sure), [`DOOMED`] (a key it needs did not come
    /// before: for sure in a strict object, where the order is fixed) or
    /// [`ORDER`] (a key out of order or repeated: unknown).
    fn obj_step(info: &ObjInfo, (j, cnt, dep): ObjSt, kind: &Kind) -> std::result::Result<ObjSt, u8> {
        if info.max.is_some_and(|m| cnt as u64 + 1 > m) {
            return Err(FAILS);
        }
        let cnt2 = (cnt + 1).min(info.cap);
        let n = info.keys.len() as u32;
        // Dependencies: the keys skipped must not be owed; skipping one
        // forbids the later keys that require it.
        let (mut owed, mut forb) = (dep & 0xffff_ffff, dep >> 32);
        let skip = |to: u32, owed: u64, forb: &mut u64| -> bool {
            for x in j..to.min(n) {
                if let Some(b) = info.dep_bit[x as usize] {
                    if owed >> b & 1 == 1 {
                        return false;
                    }
                    *forb |= info.trig[x as usize];
                }
            }
            true
        };
        match *kind {
            Kind::Declared(jj) => {
                if jj < j || j >= n {
                    return Err(ORDER);
                }
                if info.banned[jj as usize] {
                    return Err(FAILS);
                }
                if (j..jj).any(|x| info.req[x as usize]) || !skip(jj, owed, &mut forb) {
                    return Err(DOOMED);
                }
                if let Some(b) = info.dep_bit[jj as usize] {
                    if forb >> b & 1 == 1 {
                        return Err(DOOMED);
                    }
                    owed = (owed & !(1 << b)) | info.need[jj as usize];
                    forb |= info.excl[jj as usize];
                }
                let keep = info.after[jj as usize];
                Ok((jj + 1, cnt2, (owed & keep) | (forb & keep) << 32))
            }
            Kind::Extra => (!info.req_from[j as usize] && (j >= n || skip(n, owed, &mut forb)) && owed == 0).then_some((n, cnt2, 0)).ok_or(DOOMED),
        }
    }

    fn obj_accepts(&mut self, list: &List, st: &[Option<ObjSt>], target: &Target, strict: bool) -> Result<bool> {
        let si = if strict { Some(self.strict_infos(list)?) } else { None };
        let mut acc = 0u64;
        for (i, s) in st.iter().enumerate() {
            if let Some((j, cnt, dep)) = *s {
                let info = match &si {
                    Some(si) => si.infos[i].clone().ok_or_else(|| err!(Schema, "JSON Schema: strict object member without objects"))?,
                    None => self.obj_info(list[i])?,
                };
                if !info.req_from[j as usize] && cnt as u64 >= info.min && dep & 0xffff_ffff == 0 {
                    acc |= 1 << i;
                }
            }
        }
        Ok(target.accepts(acc))
    }

    fn arr_accepts(&mut self, list: &List, st: &[Option<u64>], target: &Target) -> Result<bool> {
        let mut acc = 0u64;
        for (i, s) in st.iter().enumerate() {
            if let Some(p) = *s {
                let info = self.arr_info(list[i])?;
                if p & 0xffff >= info.min && info.contains.iter().enumerate().all(|(k, c)| p >> (16 * k + 16) & 0xffff >= c.1) {
                    acc |= 1 << i;
                }
            }
        }
        Ok(target.accepts(acc))
    }

    /// The `propertyNames` language of conjunction `c`.
    #[inline(never)]
    fn names_of(&mut self, c: ConjId) -> Result<Rc<Names>> {
        if let Some(n) = self.names.get(&c) {
            return Ok(n.clone());
        }
        let m = self.merged(c)?;
        let n = if m.prop_names.is_empty() {
            Names::Any
        } else {
            let set: Set = super::ir::dedup_ordered(m.prop_names.iter().map(|(l, _)| *l).collect());
            let ptr = m.prop_names[0].1.clone();
            if self.ir.logic(&set)?.masks.is_some() {
                return Err(err!(Schema, "JSON Schema: unsupported keyword `not`/`if`/`oneOf` inside `propertyNames` at {ptr}"));
            }
            let d = self.dnf(&set)?;
            let mut strs = Vec::new();
            for &c2 in d.iter() {
                if let Some(v) = self.scalar_of(c2)?.str.clone() {
                    strs.push(v);
                }
            }
            if strs.is_empty() {
                Names::None
            } else {
                let refs: Vec<&Vec<String>> = strs.iter().collect();
                let u = cnf_union(&refs, json_text::ANY_STRING, 32)
                    .ok_or_else(|| err!(Limit, "JSON Schema: union of string constraints too large at {ptr}"))?;
                if u.len() == 1 && u[0] == json_text::ANY_STRING {
                    Names::Any
                } else {
                    Names::Lang(u, ptr)
                }
            }
        };
        let rc = Rc::new(n);
        self.names.insert(c, rc.clone());
        Ok(rc)
    }

    /// Whether `propertyNames` allows `key`.
    #[inline(never)]
    fn name_ok(names: &Names, key: &str) -> Result<bool> {
        Ok(match names {
            Names::Any => true,
            Names::None => false,
            Names::Lang(l, ptr) => {
                let q = json_text::quote(key);
                for r in l {
                    let d = lang::Dfa::cached(r).map_err(|e| err!(Limit, "JSON Schema: propertyNames at {ptr}: {e}"))?;
                    if !d.full_match(q.as_bytes()) {
                        return Ok(false);
                    }
                }
                true
            }
        })
    }

    /// The key classes of an object product over `list`.
    fn key_classes(&mut self, list: &List) -> Result<Rc<Vec<KeyClass>>> {
        if let Some(&k) = self.classes.get(&list[..]) {
            return Ok(self.class_lists[k as usize].clone());
        }
        let mut ms = Vec::new();
        let mut infos = Vec::new();
        let mut names = Vec::new();
        for &c in list.iter() {
            let m = self.merged(c)?;
            let obj = m.gen_types() & T_OBJ != 0;
            infos.push(if obj { Some(self.obj_info(c)?) } else { None });
            names.push(if obj { self.names_of(c)? } else { Rc::new(Names::Any) });
            ms.push(m);
        }
        // The distinct `propertyNames` languages: one more dimension each
        // for the keys that are not declared.
        let mut langs: Vec<(&Vec<String>, &String)> = Vec::new();
        let mut lang_of: Vec<Option<usize>> = Vec::new();
        for (i, n) in names.iter().enumerate() {
            lang_of.push(match n.as_ref() {
                Names::Lang(l, p) if infos[i].is_some() => Some(match langs.iter().position(|(x, _)| *x == l) {
                    Some(k) => k,
                    None => {
                        langs.push((l, p));
                        langs.len() - 1
                    }
                }),
                _ => None,
            });
        }
        let mut lits: Vec<String> = Vec::new();
        let mut patterns: Vec<(String, String)> = Vec::new();
        for (i, m) in ms.iter().enumerate() {
            if let Some(info) = &infos[i] {
                for k in &info.keys {
                    if !lits.contains(k) {
                        lits.push(k.clone());
                    }
                }
                for part in &m.obj {
                    for (p, l) in &part.patterns {
                        if !patterns.iter().any(|(q, _)| q == p) {
                            patterns.push((p.clone(), self.ir.ptr(*l).to_string()));
                        }
                    }
                }
            }
        }
        let mut out = Vec::new();
        for k in &lits {
            let mut per = Vec::new();
            for (i, m) in ms.iter().enumerate() {
                per.push(match &infos[i] {
                    None => None,
                    Some(_) if !Self::name_ok(&names[i], k)? => None,
                    Some(info) => {
                        let v = self.ir.key_value(m, k)?;
                        if self.ir.is_false(&v) {
                            None
                        } else {
                            let kind = match info.keys.iter().position(|x| x == k) {
                                Some(j) => Kind::Declared(j as u32),
                                None => Kind::Extra,
                            };
                            Some((kind, v))
                        }
                    }
                });
            }
            // Kept when no member takes the key: a `not` may want it.
            let term = self.literal(&json_text::quote(k));
            out.push(KeyClass { term, per, key: Some(k.clone()) });
        }
        // Keys that are not declared anywhere: classified by the patterns they match.
        if patterns.len() > MAX_KEY_PATTERNS {
            return Err(err!(Limit, "JSON Schema: more than {MAX_KEY_PATTERNS} distinct patternProperties in one object at {}", self.ptr_of(list)));
        }
        let mut pat_rx = Vec::new();
        for (p, ptr) in &patterns {
            pat_rx.push(json_text::pattern_string_regex(p).map_err(|e| err!(Regex, "JSON Schema: patternProperties {p:?} at {ptr}: {e}"))?);
        }
        let any_key = format!("\"{}*\"", json_text::CHAR);
        let lit_alt = (!lits.is_empty()).then(|| format!("(?:{})", lits.iter().map(|k| lang::escape(&json_text::quote(k))).collect::<Vec<_>>().join("|")));
        let np = patterns.len();
        for sub in 0..(1u64 << (np + langs.len())) {
            let mut per = Vec::new();
            for (i, m) in ms.iter().enumerate() {
                per.push(match &infos[i] {
                    None => None,
                    Some(_) if *names[i] == Names::None => None,
                    Some(_) if lang_of[i].is_some_and(|k| sub >> (np + k) & 1 == 0) => None,
                    Some(_) => {
                        let mut v: Vec<Loc> = Vec::new();
                        for part in &m.obj {
                            let hits: Vec<Loc> = part
                                .patterns
                                .iter()
                                .filter(|(p, _)| patterns.iter().position(|(q, _)| q == p).is_some_and(|pi| sub >> pi & 1 == 1))
                                .map(|(_, l)| *l)
                                .collect();
                            if hits.is_empty() {
                                v.extend(part.additional);
                            } else {
                                v.extend(hits);
                            }
                        }
                        let v = super::ir::dedup_ordered(v);
                        (!self.ir.is_false(&v)).then_some((Kind::Extra, v))
                    }
                });
            }
            let mut all = vec![any_key.clone()];
            let mut none: Vec<String> = lit_alt.iter().cloned().collect();
            for (pi, r) in pat_rx.iter().enumerate() {
                if sub >> pi & 1 == 1 {
                    all.push(r.clone());
                } else {
                    none.push(r.clone());
                }
            }
            for (k, (l, ptr)) in langs.iter().enumerate() {
                if sub >> (np + k) & 1 == 1 {
                    all.extend(l.iter().cloned());
                } else {
                    none.push(conj_regex(l).map_err(|e| err!(Limit, "JSON Schema: propertyNames at {ptr}: {e}"))?);
                }
            }
            if (sub != 0 || !none.is_empty() && np > 0 || !langs.is_empty()) && !self.nonempty(&all, &none)? {
                continue;
            }
            let term = self.set_term(all, none, "KEY");
            out.push(KeyClass { term, per, key: None });
        }
        let rc = Rc::new(out);
        self.classes.insert(list.to_vec(), self.class_lists.len() as u32);
        self.class_lists.push(rc.clone());
        Ok(rc)
    }

    /// The value alternatives after a key/item: (value nonterminal, survivors).
    /// `cands`: (member index, value schema).
    fn value_alts(&mut self, list: &List, cands: &[(usize, Set)], target: &Target, strict: bool) -> Result<Vec<(NonterminalId, u64)>> {
        let mut lgs = Vec::new();
        for (_, v) in cands {
            lgs.push(self.ir.logic(v)?);
        }
        if strict || matches!(target, Target::In(_)) || lgs.iter().any(|l| l.masks.is_some()) {
            // By truth table: the values of each set of atoms, grouped by the
            // members they leave (none included: a condition may want that).
            let inner = strict || target.negates(list.len()) || lgs.iter().any(|l| !l.mono);
            let mut lx: Vec<ConjId> = Vec::new();
            for l in &lgs {
                for c in &l.atoms {
                    if !lx.contains(c) {
                        lx.push(*c);
                    }
                }
            }
            lx.sort_unstable();
            if lx.len() > super::ir::MAX_LOGIC_ATOMS {
                return Err(err!(Limit, "JSON Schema: not/if/oneOf at {}: more than {} alternatives for one property or item", self.ptr_of(list), super::ir::MAX_LOGIC_ATOMS));
            }
            let mut groups: Vec<(u64, Vec<u64>)> = Vec::new();
            for s in 0..1u64 << lx.len() {
                let mut surv = 0u64;
                for (k, (i, _)) in cands.iter().enumerate() {
                    let lg = &lgs[k];
                    let sk = lg.atoms.iter().enumerate().fold(0u64, |a, (p, c)| {
                        let at = lx.iter().position(|x| x == c).unwrap_or(0);
                        a | (s >> at & 1) << p
                    });
                    if lg.masks.as_ref().map_or(sk != 0, |m| m.binary_search(&sk).is_ok()) {
                        surv |= 1 << i;
                    }
                }
                match groups.iter_mut().find(|g| g.0 == surv) {
                    Some(g) => g.1.push(s),
                    None => groups.push((surv, vec![s])),
                }
            }
            let lx: List = Rc::from(lx.as_slice());
            let mut out = Vec::new();
            // Only values after which the target can still be met (every
            // member failed: only for a condition); the bits from
            // `list.len()` on are `contains` schemas.
            let real = cands.iter().filter(|c| c.0 < list.len()).fold(0u64, |a, c| a | 1 << c.0);
            for (surv, masks) in groups {
                if !target.feasible(surv & real) || surv & real == 0 && !matches!(target, Target::In(_)) {
                    continue;
                }
                out.push((self.nt(Key::Val(lx.clone(), Target::In(masks.into()), inner))?, surv));
            }
            return Ok(out);
        }
        let first = &cands[0].1;
        if cands.iter().all(|(_, v)| v == first) {
            let l = self.dnf(first)?;
            let all: u64 = cands.iter().fold(0, |a, (i, _)| a | 1 << i);
            return Ok(vec![(self.nt(Key::Val(l, Target::Any, false))?, all)]);
        }
        let mut dnfs = Vec::new();
        let mut lx: Vec<ConjId> = Vec::new();
        for (_, v) in cands {
            let d = self.dnf(v)?;
            for &c in d.iter() {
                if !lx.contains(&c) {
                    lx.push(c);
                }
            }
            dnfs.push(d);
        }
        lx.sort_unstable();
        if lx.len() > MAX_OVERLAP {
            return Err(err!(
                Schema,
                "JSON Schema: unsupported keyword `anyOf` at {}: more than {MAX_OVERLAP} overlapping alternatives for one property or item",
                self.ptr_of(list)
            ));
        }
        let lx: List = Rc::from(lx.as_slice());
        let mut out = Vec::new();
        for s in bits(lx.len()) {
            let mut surv = 0u64;
            for (k, (i, _)) in cands.iter().enumerate() {
                if dnfs[k].iter().any(|c| lx.iter().position(|x| x == c).is_some_and(|p| s >> p & 1 == 1)) {
                    surv |= 1 << i;
                }
            }
            if surv == 0 {
                continue;
            }
            out.push((self.nt(Key::Val(lx.clone(), Target::Exact(s), false))?, surv));
        }
        Ok(out)
    }

    /// The value alternatives of a key/item no member takes: any value,
    /// where the target is met with every member failed (`not`).
    fn none_alts(&mut self, target: &Target) -> Result<Vec<(NonterminalId, u64)>> {
        if !matches!(target, Target::In(_)) || !target.feasible(0) {
            return Ok(Vec::new());
        }
        let (l, t) = self.logic(&Vec::new())?;
        Ok(vec![(self.nt(Key::Val(l, t, false))?, 0)])
    }

    fn expand_obj(&mut self, id: NonterminalId, list: &List, st: &[Option<ObjSt>], target: &Target, first: bool, strict: bool) -> Result<()> {
        let (close, comma, colon) = (self.st().close_o, self.st().comma, self.st().colon);
        if (!first || self.st().empty_o.is_none()) && self.obj_accepts(list, st, target, strict || target.negates(list.len()))? {
            self.rule(id, vec![Symbol::T(close)])?;
        }
        // Strict (inside a condition, where a member that fails may make the
        // value valid): the members share one key order, and a key out of
        // it ends the path, so no member fails by key order alone.
        let fixed = strict || target.negates(list.len());
        let si = if fixed { Some(self.strict_infos(list)?) } else { None };
        let classes = self.key_classes(list)?;
        'classes: for cl in classes.iter() {
            let mut cands = Vec::new();
            let mut nexts = Vec::new();
            for (i, s) in st.iter().enumerate() {
                let (Some(s), Some((kind, v))) = (*s, &cl.per[i]) else { continue };
                let step = match &si {
                    Some(si) => {
                        let info = si.infos[i].clone().ok_or_else(|| err!(Schema, "JSON Schema: strict object member without objects"))?;
                        let m = self.merged(list[i])?;
                        for (l, p) in &m.prop_names {
                            for &c in self.ir.dnf(&[*l])?.iter() {
                                Self::no_format(&*self.merged(c)?, &format!(" (propertyNames at {p})"))?;
                            }
                        }
                        let p = cl.key.as_ref().and_then(|k| si.keys.iter().position(|x| x == k));
                        Self::obj_step(&info, s, &p.map_or(Kind::Extra, |p| Kind::Declared(p as u32)))
                    }
                    None => Self::obj_step(&*self.obj_info(list[i])?, s, kind),
                };
                match step {
                    Ok(n) => {
                        cands.push((i, v.clone()));
                        nexts.push((i, n));
                    }
                    Err(ORDER) if fixed => continue 'classes,
                    Err(_) => {}
                }
            }
            let alts = if cands.is_empty() { self.none_alts(target)? } else { self.value_alts(list, &cands, target, strict)? };
            for (vnt, surv) in alts {
                let Some(st2) = next_states(st.len(), &nexts, surv, target) else { continue };
                let rest = self.nt(Key::Obj { list: list.clone(), st: st2, target: target.clone(), first: false, strict })?;
                let mut rhs = Vec::new();
                if !first {
                    rhs.push(Symbol::T(comma));
                }
                rhs.extend([Symbol::T(cl.term), Symbol::T(colon), Symbol::N(vnt), Symbol::N(rest)]);
                self.rule(id, rhs)?;
            }
        }
        Ok(())
    }

    fn expand_arr(&mut self, id: NonterminalId, list: &List, st: &[Option<u64>], target: &Target, first: bool, strict: bool) -> Result<()> {
        let (close, comma) = (self.st().close_a, self.st().comma);
        if (!first || self.st().empty_a.is_none()) && self.arr_accepts(list, st, target)? {
            self.rule(id, vec![Symbol::T(close)])?;
        }
        let mut cands = Vec::new();
        let mut nexts = Vec::new();
        // `contains` schemas: one more candidate each (bit `list.len()` on),
        // whose survival says the item matches it; (member, counter, bit).
        let mut counts = Vec::new();
        for (i, s) in st.iter().enumerate() {
            let Some(s) = *s else { continue };
            let p = s & 0xffff;
            let info = self.arr_info(list[i])?;
            if info.max.is_some_and(|m| p >= m) {
                continue;
            }
            let m = self.merged(list[i])?;
            let v = self.ir.item_value(&m, p as usize);
            if self.ir.is_false(&v) {
                continue;
            }
            cands.push((i, v));
            nexts.push((i, s & !0xffff | (p + 1).min(info.cap as u64)));
            for (k, c) in info.contains.iter().enumerate() {
                counts.push((i, k, c.2, c.3, list.len() + counts.len()));
            }
        }
        if counts.last().is_some_and(|c| c.4 >= 64) {
            return Err(err!(Limit, "JSON Schema: contains at {}: over 64 alternatives", self.ptr_of(list)));
        }
        for &(i, k, _, _, bit) in &counts {
            let l = self.arr_info(list[i])?.contains[k].0;
            cands.push((bit, vec![l]));
        }
        let alts = if cands.is_empty() { self.none_alts(target)? } else { self.value_alts(list, &cands, target, strict || !counts.is_empty())? };
        for (vnt, surv) in alts {
            // Count the matches; a member past its maxContains fails.
            let mut nexts = nexts.clone();
            for &(i, k, hi, cap, bit) in &counts {
                if surv >> bit & 1 == 1 {
                    let Some(e) = nexts.iter_mut().find(|e| e.0 == i) else { continue };
                    let sh = 16 * k + 16;
                    let c = (e.1 >> sh & 0xffff) + 1;
                    e.1 = if hi.is_some_and(|h| c > h) { u64::MAX } else { e.1 & !(0xffff << sh) | c.min(cap) << sh };
                }
            }
            nexts.retain(|e| e.1 != u64::MAX);
            let Some(st2) = next_states(st.len(), &nexts, surv, target) else { continue };
            let rest = self.nt(Key::Arr { list: list.clone(), st: st2, target: target.clone(), first: false, strict })?;
            let mut rhs = Vec::new();
            if !first {
                rhs.push(Symbol::T(comma));
            }
            rhs.extend([Symbol::N(vnt), Symbol::N(rest)]);
            self.rule(id, rhs)?;
        }
        Ok(())
    }

    /// Removes unproductive and unreachable symbols; renumbers.
    fn finish(self, top: NonterminalId) -> Result<Cfg> {
        let nn = self.nts.len();
        let mut productive = vec![false; nn];
        loop {
            let mut changed = false;
            for r in &self.rules {
                if !productive[r.lhs.index()] && r.rhs.iter().all(|s| match s {
                    Symbol::T(_) => true,
                    Symbol::N(n) => productive[n.index()],
                }) {
                    productive[r.lhs.index()] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        if !productive[top.index()] {
            return Err(err!(Schema, "JSON Schema: the schema is unsatisfiable (no value is valid)"));
        }
        let good = |r: &Rule| {
            productive[r.lhs.index()]
                && r.rhs.iter().all(|s| match s {
                    Symbol::T(_) => true,
                    Symbol::N(n) => productive[n.index()],
                })
        };
        let rules: Vec<&Rule> = self.rules.iter().filter(|r| good(r)).collect();
        // Reachability.
        let mut by_lhs: Vec<Vec<&Rule>> = vec![Vec::new(); nn];
        for r in &rules {
            by_lhs[r.lhs.index()].push(r);
        }
        let mut reach = vec![false; nn];
        let mut stack = vec![top];
        reach[top.index()] = true;
        let mut used_t = vec![false; self.terms.len()];
        while let Some(n) = stack.pop() {
            for r in &by_lhs[n.index()] {
                for s in &r.rhs {
                    match *s {
                        Symbol::T(t) => used_t[t.index()] = true,
                        Symbol::N(m) => {
                            if !reach[m.index()] {
                                reach[m.index()] = true;
                                stack.push(m);
                            }
                        }
                    }
                }
            }
        }
        let mut nt_map = vec![None; nn];
        let mut nonterminals = Vec::new();
        // start first
        let mut order: Vec<usize> = vec![top.index()];
        order.extend((0..nn).filter(|&i| i != top.index() && reach[i]));
        for i in order {
            nt_map[i] = Some(NonterminalId::new(nonterminals.len()));
            nonterminals.push(self.nts[i].clone());
        }
        let mut t_map = vec![None; self.terms.len()];
        let mut terminals = Vec::new();
        for (i, t) in self.terms.iter().enumerate() {
            if used_t[i] {
                t_map[i] = Some(TerminalId::new(terminals.len()));
                terminals.push(t.clone());
            }
        }
        let mut out_rules = Vec::new();
        for r in rules {
            let Some(lhs) = nt_map[r.lhs.index()] else { continue };
            let rhs = r
                .rhs
                .iter()
                .map(|s| match *s {
                    Symbol::T(t) => Symbol::T(t_map[t.index()].expect("used terminal")),
                    Symbol::N(n) => Symbol::N(nt_map[n.index()].expect("reachable")),
                })
                .collect();
            out_rules.push(Rule::new(lhs, rhs, Span::default()));
        }
        // Start rules first (stable order otherwise).
        let (mut start, rest): (Vec<Rule>, Vec<Rule>) = out_rules.into_iter().partition(|r| r.lhs.0 == 0);
        start.extend(rest);
        let out_rules = start;
        Ok(Cfg {
            terminals,
            nonterminals,
            rules: out_rules,
            start: NonterminalId::new(0),
            indent: None,
            lexer: LexerMode::LongestAll,
            conflicts: Default::default(),
        })
    }
}

/// Numbers as written canonically (no exponent, no trailing fraction
/// zero, no `-0`): one text per value.
const CANON_NUMBER: &str = r"0|-?[1-9][0-9]*|-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9]";

/// The intersection of full-match regexes as one regex (by lookahead,
/// compiled away exactly by the regex layer).
fn conj_regex(list: &[String]) -> std::result::Result<String, String> {
    if list.len() == 1 {
        return Ok(list[0].clone());
    }
    let mut t = String::new();
    for (i, r) in list[..list.len() - 1].iter().enumerate() {
        t.push_str(&crate::regex::look::open('a', i));
        t.push_str(&format!("(?:{r})$)"));
    }
    t.push_str(&format!("(?:{})", list[list.len() - 1]));
    let h = lang::parse_hir(&t)?;
    Ok(crate::regex::look::language(&h, false)?.to_string())
}

/// Pads per-domain intersection lists into one intersection over the union
/// of the (disjoint) domains: the k-th regex is the alternation of every
/// domain's k-th regex (or its first when it has fewer).
fn pad(domains: &[Vec<String>]) -> Vec<String> {
    let n = domains.iter().map(|d| d.len()).max().unwrap_or(0);
    (0..n)
        .map(|k| {
            let alts: Vec<&str> = domains.iter().map(|d| d.get(k).unwrap_or(&d[0]).as_str()).collect();
            if alts.len() == 1 {
                alts[0].to_string()
            } else {
                format!("(?:{})", alts.join("|"))
            }
        })
        .collect()
}
