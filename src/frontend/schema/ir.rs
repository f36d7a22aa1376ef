//! Schema normalization: the raw schema (JSON) → *conjunctions* of schema
//! nodes, merged into per-type constraints ([`Merged`]).
//!
//! A node is a subschema (by JSON pointer) or a constant (from `enum` /
//! `const`). A conjunction is a set of nodes that a value must all satisfy:
//! `allOf` members and `$ref` targets join the set; `anyOf`/`oneOf` are
//! distributed into a union of conjunctions (DNF, [`Ir::dnf`]). Child schemas
//! (properties, items) are sets of nodes too, so `allOf` of two objects merges
//! their property schemas lazily, which also makes recursion terminate.

use crate::hash::FxMap as HashMap;

use serde_json::Value;

use super::numbers::{Bounds, Dec};
use super::SchemaOptions;
use crate::{err, Result};

pub type Loc = u32;
pub type ConjId = u32;

/// Type bits.
pub const T_NULL: u8 = 1;
pub const T_BOOL: u8 = 2;
pub const T_INT: u8 = 4;
/// Non-integer numbers (`number` = T_INT | T_FRAC).
pub const T_FRAC: u8 = 8;
pub const T_STR: u8 = 16;
pub const T_ARR: u8 = 32;
pub const T_OBJ: u8 = 64;
pub const T_ALL: u8 = 127;

/// Schema draft, from `$schema` (default 2020-12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Draft {
    D4,
    D6,
    D7,
    D2019,
    D2020,
}

#[derive(Clone, Debug)]
pub enum Node<'a> {
    /// `sc`: its dynamic scope ([`Ir::enter`]).
    Schema { v: &'a Value, ptr: String, sc: u32 },
    /// A constant value (from `const` / `enum`).
    Const { v: &'a Value, ptr: String },
    False { ptr: String },
    /// An object that has property `key` (the condition of a dependent schema).
    Has { key: &'a str, ptr: String },
}

/// A set of nodes (distinct): all must hold. Empty = `true`. Ordered: the
/// order of the nodes is the order of their declared keys (see [`Ir::close`]).
pub type Set = Vec<Loc>;

/// One object constraint part (of one conjunct).
#[derive(Clone, Debug, Default)]
pub struct ObjPart {
    pub props: Vec<(String, Loc)>,
    pub patterns: Vec<(String, Loc)>,
    /// `None` = any value (`true`).
    pub additional: Option<Loc>,
}

#[derive(Clone, Debug, Default)]
pub struct ArrPart {
    pub prefix: Vec<Loc>,
    /// `None` = any value.
    pub rest: Option<Loc>,
}

/// A conjunction's constraints, merged.
#[derive(Clone, Debug)]
pub struct Merged<'a> {
    pub types: u8,
    /// Intersection of the `enum`/`const` sets (None: no enum).
    pub consts: Option<Vec<&'a Value>>,
    pub bounds: Bounds,
    pub multiple_of: Vec<(Dec, String)>,
    pub min_len: u64,
    pub max_len: Option<u64>,
    /// (ECMA pattern, pointer)
    pub patterns: Vec<(String, String)>,
    /// (format value regex, pointer)
    pub formats: Vec<(String, String)>,
    pub arr: Vec<ArrPart>,
    pub min_items: u64,
    pub max_items: Option<u64>,
    pub obj: Vec<ObjPart>,
    pub required: Vec<String>,
    pub min_props: u64,
    pub max_props: Option<u64>,
    /// A structured (object/array) constant is in the conjunction: objects
    /// and arrays are allowed although `consts` is set.
    pub struct_const: bool,
    /// Presence rules of `dependentRequired`, `dependentSchemas` and
    /// `dependencies`: (trigger key, keys it requires, keys it excludes,
    /// pointer). A trigger that excludes itself may not occur (`false`).
    pub dep_required: Vec<(String, Vec<String>, Vec<String>, String)>,
    /// `propertyNames` schemas (other than `true`/`{}`/`false`), with pointers.
    pub prop_names: Vec<(Loc, String)>,
    /// `contains` schemas: (schema, minContains, maxContains, pointer).
    pub contains: Vec<(Loc, u64, Option<u64>, String)>,
    /// Pointer of the first node (messages).
    pub ptr: String,
    /// Unsupported keywords that only constrain some types (keyword,
    /// pointer, the types it constrains): refused once the merged types show
    /// such values can occur (see [`Ir::merged`]).
    pub pending: Vec<(&'static str, String, u8)>,
}

impl Merged<'_> {
    /// The types a value of this conjunction may have, `enum`/`const` taken
    /// into account (structured enum values count: they become alternatives).
    pub fn eff_types(&self) -> u8 {
        self.types_with(true)
    }
    /// The types the generator produces for this conjunction itself
    /// (structured enum values only through their own const alternatives).
    pub fn gen_types(&self) -> u8 {
        self.types_with(self.struct_const)
    }
    fn types_with(&self, structs: bool) -> u8 {
        match &self.consts {
            None => self.types,
            Some(c) => {
                let mut t = 0;
                for v in c {
                    t |= match v {
                        Value::Null => T_NULL,
                        Value::Bool(_) => T_BOOL,
                        Value::Number(_) => T_INT | T_FRAC,
                        Value::String(_) => T_STR,
                        Value::Array(_) if structs => T_ARR,
                        Value::Object(_) if structs => T_OBJ,
                        _ => 0,
                    };
                }
                if self.struct_const {
                    t |= T_ARR | T_OBJ;
                }
                self.types & t
            }
        }
    }
    pub fn unsat(&self) -> bool {
        self.eff_types() == 0
            || self.max_len.is_some_and(|m| m < self.min_len)
            || self.max_items.is_some_and(|m| m < self.min_items)
            || self.max_props.is_some_and(|m| m < self.min_props)
            || self.consts.as_ref().is_some_and(|c| c.is_empty())
    }
}

/// Keywords that are annotations or containers: ignored.
const IGNORED: &[&str] = &[
    "title", "description", "default", "examples", "$comment", "$schema", "$id", "id", "$anchor", "$dynamicAnchor",
    "$recursiveAnchor", "$defs", "definitions", "deprecated", "readOnly", "writeOnly", "contentMediaType",
    "contentEncoding", "contentSchema", "$vocabulary", "format", "nullable", "discriminator",
];

/// Where [`Ir::index`] is: at a schema (or an array of schemas), at an
/// object whose values are schemas (`properties`, `$defs`, ...), or
/// elsewhere (an unknown keyword's value: an `$id` there is no resource).
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    Schema,
    Map,
    Other,
}

impl At {
    /// Where the value of keyword `k` of a schema is.
    fn of_keyword(k: &str) -> At {
        match k {
            "not" | "if" | "then" | "else" | "items" | "additionalItems" | "additionalProperties" | "contains" | "propertyNames"
            | "unevaluatedProperties" | "unevaluatedItems" | "contentSchema" | "allOf" | "anyOf" | "oneOf" | "prefixItems" => At::Schema,
            "$defs" | "definitions" | "properties" | "patternProperties" | "dependentSchemas" | "dependencies" => At::Map,
            _ => At::Other,
        }
    }
}

/// Known keywords that change validity and are not enforced.
const UNSUPPORTED: &[&str] = &["dependentSchemas", "dependentRequired", "dependencies", "propertyNames"];

/// Most dynamic scopes (bindings of `$dynamicAnchor`/`$recursiveAnchor`
/// names, see [`Ir::enter`]) one schema may specialise its subschemas by.
pub const MAX_SCOPES: usize = 256;

/// Limits (documented in docs/structured-output.md).
pub const MAX_NODES: usize = crate::limits::Limits::DEFAULT.max_schema_nodes;
pub const MAX_CONJS: usize = crate::limits::Limits::DEFAULT.max_schema_conjunctions;
pub const MAX_DNF: usize = crate::limits::Limits::DEFAULT.max_any_of_alternatives;
/// Deepest schema nesting and `anyOf`/`oneOf` nesting.
const MAX_DEPTH: usize = crate::limits::Limits::DEFAULT.max_schema_depth;
const MAX_ANY_OF_DEPTH: usize = crate::limits::Limits::DEFAULT.max_any_of_depth;
pub const MAX_ENUM: usize = crate::limits::Limits::DEFAULT.max_enum_values;

/// Whether a `oneOf` of several branches (`owner`: the node holding it) may
/// be expanded like `anyOf` (its branches are provably disjoint); otherwise
/// it is enforced by its boolean condition ([`Ir::logic`]). The proof lives
/// outside the builder ([`super::disjoint::one_of_disjoint`]); the caller
/// of [`Ir::new`] passes it in.
pub type OneOfPolicy = fn(&mut Ir<'_>, Loc, &[Loc]) -> Result<bool>;

/// Most atoms (conjunctions) one value's `not`/`if`/`oneOf` condition may
/// combine (its truth table has 2^n rows).
pub const MAX_LOGIC_ATOMS: usize = 10;
/// Most formula nodes built for one schema's `not`/`if`/`oneOf` conditions.
const MAX_LOGIC_WORK: usize = 4096;

/// A boolean condition over conjunctions (atoms): what `not`,
/// `if`/`then`/`else` and a `oneOf` not proved disjoint say.
#[derive(Clone, Debug)]
pub enum F {
    Atom(ConjId),
    Not(Box<F>),
    And(Vec<F>),
    Or(Vec<F>),
    /// Exactly one holds.
    One(Vec<F>),
}

impl F {
    fn atoms(&self, out: &mut Vec<ConjId>) {
        match self {
            F::Atom(c) => {
                if !out.contains(c) {
                    out.push(*c)
                }
            }
            F::Not(f) => f.atoms(out),
            F::And(v) | F::Or(v) | F::One(v) => v.iter().for_each(|f| f.atoms(out)),
        }
    }
    /// Its value where exactly the atoms of `atoms` in `mask` hold.
    fn eval(&self, atoms: &[ConjId], mask: u64) -> bool {
        match self {
            F::Atom(c) => atoms.iter().position(|a| a == c).is_some_and(|i| mask >> i & 1 == 1),
            F::Not(f) => !f.eval(atoms, mask),
            F::And(v) => v.iter().all(|f| f.eval(atoms, mask)),
            F::Or(v) => v.iter().any(|f| f.eval(atoms, mask)),
            F::One(v) => v.iter().filter(|f| f.eval(atoms, mask)).count() == 1,
        }
    }
}

/// What a value must satisfy, over conjunctions: `masks: None`, some of
/// `atoms` (a union); else exactly the atoms of one of `masks` hold (a
/// truth table: bit i = `atoms[i]`); `mono`: the table is monotone.
#[derive(Debug)]
pub struct Logic {
    pub atoms: Vec<ConjId>,
    pub masks: Option<std::rc::Rc<[u64]>>,
    pub mono: bool,
}

pub struct Ir<'a> {
    pub root: &'a Value,
    pub draft: Draft,
    pub opts: SchemaOptions,
    pub nodes: Vec<Node<'a>>,
    /// (schema address, dynamic scope) → node; constants and `Has` nodes: scope `u32::MAX`.
    node_ids: HashMap<(usize, u32), Loc>,
    conjs: Vec<Set>,
    conj_ids: HashMap<Set, ConjId>,
    merged: Vec<Option<std::rc::Rc<Merged<'a>>>>,
    /// Set → index into `dnf_list` (the map type of `conj_ids`).
    dnf_memo: HashMap<Set, u32>,
    dnf_list: Vec<std::rc::Rc<Vec<ConjId>>>,
    pub warnings: Vec<String>,
    /// Schema resources by absolute URI (no fragment): the root, embedded
    /// resources (`$id`), registry documents and metaschemas once indexed.
    resources: HashMap<String, &'a Value>,
    /// "resource URI#name" → subschema: `$anchor`, `$dynamicAnchor`, and
    /// `$id`/`id` with a plain-name fragment (draft-07 and older).
    anchors: HashMap<String, &'a Value>,
    /// The base URI in effect at each schema object (its own `$id` applied).
    bases: HashMap<usize, String>,
    /// Resource URI → the schema whose `$schema` sets its draft, where that
    /// is not the root's draft.
    dialects: HashMap<String, &'a Value>,
    /// The caller's registry (`refs`): URI (no fragment) → document, and
    /// whether it is indexed yet.
    registry: Vec<(String, &'a Value, bool)>,
    pointers: HashMap<usize, String>,
    pub false_loc: Loc,
    /// Value-level search DFAs of patternProperties patterns.
    /// Pattern → index into `dfa_list` (a map type the crate has already).
    key_dfas: HashMap<String, usize>,
    dfa_list: Vec<crate::regex::lang::Dfa>,
    one_of: OneOfPolicy,
    /// Per node: 0 not asked, 1 its oneOf is not expanded (or being
    /// proved), 2 expanded like anyOf (proved disjoint).
    one_of_ok: Vec<u8>,
    /// Set → index into `logic_list` (the map type of `dnf_memo`).
    logic_memo: HashMap<Set, u32>,
    logic_list: Vec<std::rc::Rc<Logic>>,
    logic_work: usize,
    /// The schema or its registry names `unevaluatedProperties`/`unevaluatedItems`
    /// somewhere: an `anyOf` expands into the sets of its branches that
    /// evaluate, a `oneOf` that does is expanded too ([`Ir::uneval`]).
    uneval: bool,
    /// The dynamic anchors: (resource URI, `$dynamicAnchor` name, its
    /// schema) in 2020-12; (URI, "", the resource) for `$recursiveAnchor:
    /// true` in 2019-09.
    dyn_anchors: Vec<(String, &'a str, &'a Value)>,
    /// The dynamic scopes: per anchor name, the schema of the outermost
    /// resource entered so far that declares it (0: none).
    scopes: Vec<Vec<(&'a str, &'a Value)>>,
}

fn escape_ptr(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

impl<'a> Ir<'a> {
    /// `refs`: the registry of remote schemas (URI → schema) that `$ref`
    /// may name besides the built-in metaschemas; nothing is fetched.
    pub fn new(root: &'a Value, refs: &'a [(String, Value)], opts: SchemaOptions, one_of: OneOfPolicy) -> Result<Ir<'a>> {
        let draft = draft_of_schema(root).unwrap_or(Draft::D2020);
        let mut ir = Ir {
            root,
            draft,
            opts,
            nodes: Vec::new(),
            node_ids: HashMap::default(),
            conjs: Vec::new(),
            conj_ids: HashMap::default(),
            merged: Vec::new(),
            dnf_memo: HashMap::default(),
            dnf_list: Vec::new(),
            warnings: Vec::new(),
            resources: HashMap::default(),
            anchors: HashMap::default(),
            bases: HashMap::default(),
            dialects: HashMap::default(),
            registry: Vec::new(),
            pointers: HashMap::default(),
            false_loc: 0,
            key_dfas: HashMap::default(),
            dfa_list: Vec::new(),
            one_of,
            one_of_ok: Vec::new(),
            logic_memo: HashMap::default(),
            logic_list: Vec::new(),
            logic_work: 0,
            uneval: mentions_uneval(root, 0) || refs.iter().any(|(_, v)| mentions_uneval(v, 0)),
            dyn_anchors: Vec::new(),
            scopes: vec![Vec::new()],
        };
        ir.false_loc = ir.nodes.len() as Loc;
        ir.nodes.push(Node::False { ptr: "#".into() });
        for (k, v) in refs {
            let (u, f) = split_frag(k);
            if !f.is_empty() {
                return Err(err!(Schema, "JSON Schema: refs key {k:?} has a fragment"));
            }
            ir.registry.push((u.to_string(), v, false));
        }
        ir.resources.insert(String::new(), root);
        ir.index(root, "#".to_string(), 0, "", None, At::Schema)?;
        Ok(ir)
    }

    /// Indexes a remote document (registry or metaschema) as resource `uri`.
    fn index_doc(&mut self, uri: &str, doc: &'a Value) -> Result<()> {
        self.resources.entry(uri.to_string()).or_insert(doc);
        self.index(doc, format!("{uri}#"), 0, uri, None, At::Schema)
    }

    /// Makes resource `uri` known: from the registry, else the built-in
    /// metaschemas, else (embedded resources) by indexing every registry
    /// document. False if none has it.
    fn load(&mut self, uri: &str) -> Result<bool> {
        if self.resources.contains_key(uri) {
            return Ok(true);
        }
        if let Some(i) = self.registry.iter().position(|(u, _, done)| u == uri && !done) {
            self.registry[i].2 = true;
            let doc = self.registry[i].1;
            self.index_doc(uri, doc)?;
            return Ok(true);
        }
        if let Some(doc) = super::metaschemas::get(uri) {
            self.index_doc(uri, doc)?;
            return Ok(true);
        }
        for i in 0..self.registry.len() {
            if !self.registry[i].2 {
                self.registry[i].2 = true;
                let (u, doc, _) = self.registry[i].clone();
                self.index_doc(&u, doc)?;
            }
        }
        Ok(self.resources.contains_key(uri))
    }

    /// Records the pointer and base URI of every subschema-like value, the
    /// resources (`$id`) and the anchors: these only where a schema is
    /// expected (`at`), not inside unknown keywords or constants.
    /// `dialect`: the schema whose `$schema` sets the draft here (None: the root's).
    fn index(&mut self, v: &'a Value, ptr: String, depth: usize, base: &str, dialect: Option<&'a Value>, at: At) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(err!(Limit, "JSON Schema: nesting deeper than {MAX_DEPTH} levels at {ptr}"));
        }
        if self.pointers.len() > MAX_NODES {
            return Err(err!(Limit, "JSON Schema: more than {MAX_NODES} subschemas"));
        }
        let addr = v as *const Value as usize;
        self.pointers.entry(addr).or_insert_with(|| ptr.clone());
        match v {
            Value::Object(m) => {
                let mut base = base.to_string();
                let mut dialect = dialect;
                if depth == 0 && m.contains_key("$schema") {
                    dialect = Some(v);
                }
                let draft = dialect.and_then(draft_of_schema).unwrap_or(self.draft);
                // An `$id` beside `$ref` is ignored before 2019-09; `id` is draft-04's.
                let id = if at != At::Schema || (draft <= Draft::D7 && m.contains_key("$ref")) {
                    None
                } else if draft == Draft::D4 {
                    m.get("id").or_else(|| m.get("$id"))
                } else {
                    m.get("$id")
                };
                let mut res = depth == 0;
                if let Some(Value::String(id)) = id {
                    let full = resolve_uri(&base, id);
                    let (u, f) = split_frag(&full);
                    if u != base {
                        res = true;
                        base = u.to_string();
                        self.resources.entry(base.clone()).or_insert(v);
                        // An embedded resource may declare its own draft.
                        if m.contains_key("$schema") {
                            dialect = Some(v);
                        }
                    }
                    if !f.is_empty() && !f.starts_with('/') && draft <= Draft::D7 {
                        self.anchors.entry(format!("{base}#{}", percent_decode(f))).or_insert(v);
                    }
                }
                for key in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(a)) = m.get(key).filter(|_| at == At::Schema) {
                        self.anchors.entry(format!("{base}#{a}")).or_insert(v);
                        if key == "$dynamicAnchor" && draft >= Draft::D2020 && !a.is_empty() {
                            self.dyn_anchors.push((base.clone(), a, v));
                        }
                    }
                }
                if res && draft == Draft::D2019 && at == At::Schema && m.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
                    self.dyn_anchors.push((base.clone(), "", v));
                }
                self.bases.entry(addr).or_insert_with(|| base.clone());
                if let Some(d) = dialect.filter(|d| draft_of_schema(d) != Some(self.draft)) {
                    self.dialects.entry(base.clone()).or_insert(d);
                }
                for (k, c) in m {
                    // Do not descend into constants.
                    if k == "const" || k == "enum" || k == "default" || k == "examples" {
                        continue;
                    }
                    let under = match at {
                        At::Schema => At::of_keyword(k),
                        At::Map => At::Schema,
                        At::Other => At::Other,
                    };
                    self.index(c, format!("{ptr}/{}", escape_ptr(k)), depth + 1, &base, dialect, under)?;
                }
            }
            Value::Array(a) => {
                // `allOf: [...]`, `items: [...]`: schemas; anything else: not.
                let under = if at == At::Schema { At::Schema } else { At::Other };
                for (i, c) in a.iter().enumerate() {
                    self.index(c, format!("{ptr}/{i}"), depth + 1, base, dialect, under)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The draft of a schema object: its resource's `$schema`, else the root's.
    fn draft_at(&self, v: &Value) -> Draft {
        self.bases.get(&(v as *const Value as usize)).and_then(|b| self.dialects.get(b)).and_then(|d| draft_of_schema(d)).unwrap_or(self.draft)
    }

    fn ptr_of(&self, v: &Value) -> String {
        self.pointers.get(&(v as *const Value as usize)).cloned().unwrap_or_else(|| "#".into())
    }

    /// The node of a subschema value evaluated first (the root).
    pub fn schema_loc(&mut self, v: &'a Value) -> Result<Loc> {
        self.loc_in(0, v)
    }

    /// The node of subschema `v` evaluated from node `from` (in its dynamic scope).
    fn sub(&mut self, from: Loc, v: &'a Value) -> Result<Loc> {
        let sc = match self.nodes[from as usize] {
            Node::Schema { sc, .. } => sc,
            _ => 0,
        };
        self.loc_in(sc, v)
    }

    /// The dynamic scope `sc` once `v`'s resource is entered: the dynamic
    /// anchors it declares bind their names where not bound yet (the
    /// outermost resource wins: JSON Schema core 2020-12 §8.2.3.2, 2019-09
    /// §8.2.4.2). Subschemas are specialised by the binding, so
    /// `$dynamicRef`/`$recursiveRef` resolve statically and recursion stays finite.
    fn enter(&mut self, sc: u32, v: &'a Value) -> Result<u32> {
        if self.dyn_anchors.is_empty() || !v.is_object() {
            return Ok(0);
        }
        let Some(base) = self.bases.get(&(v as *const Value as usize)) else { return Ok(sc) };
        let mut s = self.scopes[sc as usize].clone();
        for &(ref b, n, a) in &self.dyn_anchors {
            if b == base && !s.iter().any(|&(m, _)| m == n) {
                s.push((n, a));
            }
        }
        // The same binding (in any order).
        let same = |x: &Vec<(&str, &Value)>| x.len() == s.len() && s.iter().all(|&(_, a)| x.iter().any(|&(_, b)| std::ptr::eq(a, b)));
        if let Some(i) = self.scopes.iter().position(same) {
            return Ok(i as u32);
        }
        if self.scopes.len() >= MAX_SCOPES {
            return Err(err!(Limit, "JSON Schema: more than {MAX_SCOPES} dynamic scopes ($dynamicAnchor/$recursiveAnchor bindings) at {}", self.ptr_of(v)));
        }
        let id = self.scopes.len() as u32;
        self.scopes.push(s);
        Ok(id)
    }

    fn loc_in(&mut self, sc: u32, v: &'a Value) -> Result<Loc> {
        let sc = self.enter(sc, v)?;
        let key = (v as *const Value as usize, sc);
        if let Some(&l) = self.node_ids.get(&key) {
            return Ok(l);
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(err!(Limit, "JSON Schema: more than {MAX_NODES} schema nodes"));
        }
        let ptr = self.ptr_of(v);
        let l = self.nodes.len() as Loc;
        match v {
            Value::Bool(false) => self.nodes.push(Node::False { ptr }),
            Value::Bool(true) | Value::Object(_) => self.nodes.push(Node::Schema { v, ptr, sc }),
            _ => return Err(err!(Schema, "JSON Schema: invalid schema at {ptr}: expected an object or a boolean, found {}", kind(v))),
        }
        self.node_ids.insert(key, l);
        Ok(l)
    }

    pub fn const_loc(&mut self, v: &'a Value, ptr: String) -> Loc {
        let key = (v as *const Value as usize, u32::MAX);
        if let Some(&l) = self.node_ids.get(&key) {
            return l;
        }
        let l = self.nodes.len() as Loc;
        self.nodes.push(Node::Const { v, ptr });
        self.node_ids.insert(key, l);
        l
    }

    pub fn ptr(&self, l: Loc) -> &str {
        match &self.nodes[l as usize] {
            Node::Schema { ptr, .. } | Node::Const { ptr, .. } | Node::False { ptr } | Node::Has { ptr, .. } => ptr,
        }
    }

    /// An unsupported keyword: error, or (lenient) a warning.
    fn unsupported(&mut self, what: &str, ptr: &str) -> Result<()> {
        if self.opts.lenient {
            self.warnings.push(format!("ignored {what} at {ptr}"));
            Ok(())
        } else {
            Err(err!(Schema, "JSON Schema: unsupported keyword `{what}` at {ptr} (it changes which values are valid and is not enforced; the lenient option ignores it)"))
        }
    }

    /// Resolves a `$ref` (`r`, held by schema object `holder`, at `ptr`)
    /// against the base URI in effect there: a resource of this document,
    /// of the registry or a built-in metaschema, then the fragment (JSON
    /// pointer or anchor) in it.
    fn resolve_ref(&mut self, r: &str, holder: &Value, ptr: &str) -> Result<&'a Value> {
        let base = self.bases.get(&(holder as *const Value as usize)).cloned().unwrap_or_default();
        let full = resolve_uri(&base, r);
        let (uri, frag) = split_frag(&full);
        if !self.load(uri)? {
            return Err(err!(
                Schema,
                "JSON Schema: remote `$ref` at {ptr}: {uri:?} is not built in: give it in refs (JS) or --ref URI=FILE (CLI); nothing is fetched"
            ));
        }
        let doc = self.resources[uri];
        let decoded = percent_decode(frag);
        let target = if decoded.is_empty() {
            Some(doc)
        } else if let Some(p) = decoded.strip_prefix('/') {
            let mut cur = doc;
            let mut ok = true;
            for tok in p.split('/') {
                let tok = tok.replace("~1", "/").replace("~0", "~");
                let next = match cur {
                    Value::Object(m) => m.get(&tok),
                    Value::Array(a) => tok.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                };
                match next {
                    Some(n) => cur = n,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            ok.then_some(cur)
        } else {
            self.anchors.get(&format!("{uri}#{decoded}")).copied()
        };
        target.ok_or_else(|| err!(Schema, "JSON Schema: unresolvable $ref {r:?} at {ptr}"))
    }

    /// The node that `$ref`, `$dynamicRef` (2020-12) or `$recursiveRef`
    /// (2019-09) `kw` = `r` of node `l` (schema `holder`, at `ptr`) applies;
    /// None where `kw` is no keyword of the draft. A dynamic reference whose
    /// initial target declares the dynamic anchor it names (`$recursiveAnchor:
    /// true`) goes to the binding of that name in `l`'s dynamic scope.
    fn ref_loc(&mut self, l: Loc, kw: &str, r: &Value, holder: &'a Value, ptr: &str) -> Result<Option<Loc>> {
        let d = self.draft_at(holder);
        if kw == "$dynamicRef" && d < Draft::D2020 || kw == "$recursiveRef" && d != Draft::D2019 {
            return Ok(None);
        }
        let Some(r) = r.as_str() else { return Err(err!(Schema, "JSON Schema: {kw} at {ptr} must be a string")) };
        let kp = format!("{ptr}/{kw}");
        let mut t = self.resolve_ref(r, holder, &kp)?;
        let name = percent_decode(split_frag(r).1);
        let name = match kw {
            "$dynamicRef" if !name.is_empty() && t.get("$dynamicAnchor").and_then(Value::as_str) == Some(&name) => Some(name.as_str()),
            "$recursiveRef" if t.get("$recursiveAnchor") == Some(&Value::Bool(true)) => Some(""),
            _ => None,
        };
        if let (Some(n), Node::Schema { sc, .. }) = (name, &self.nodes[l as usize]) {
            if let Some(&(_, b)) = self.scopes[*sc as usize].iter().find(|(m, _)| *m == n) {
                t = b;
            }
        }
        self.sub(l, t).map(Some).map_err(|e| crate::Error::new(e.kind(), format!("JSON Schema: {kw} {r:?} at {kp}: {}", e.message())))
    }

    /// The closure of `roots` under `allOf`, `$ref` and the `anyOf`/`oneOf`
    /// branches in `chosen` ((owner, keyword, branch)), in key order: the
    /// order in which the nodes' declared properties come, llguidance's rule
    /// (docs/structured-output.md, "Key order"). Depth-first from the roots
    /// in order; a node's keywords in the order they appear in it, where its
    /// own `properties` place the node itself (first, without `properties`)
    /// and `$ref`, `allOf` members and chosen branches place theirs. A node
    /// reached again keeps its first place.
    fn close(&mut self, roots: &[Loc], chosen: &[(Loc, &'static str, Loc)]) -> Result<Set> {
        // Work: a node to visit, or EMIT | node to place.
        const EMIT: Loc = 1 << 31;
        let mut out: Vec<Loc> = Vec::new();
        let mut stack: Vec<Loc> = roots.to_vec();
        stack.reverse();
        let mut acts: Vec<Loc> = Vec::new();
        let mut seen = crate::hash::FxSet::default();
        while let Some(l) = stack.pop() {
            if l & EMIT != 0 {
                out.push(l & !EMIT);
                continue;
            }
            if !seen.insert(l) {
                continue;
            }
            if seen.len() > MAX_NODES {
                return Err(err!(Limit, "JSON Schema: allOf/$ref closure too large"));
            }
            let Node::Schema { v: holder @ Value::Object(m), ptr, .. } = self.nodes[l as usize].clone() else {
                out.push(l);
                continue;
            };
            // Siblings of $ref are ignored before 2019-09.
            let ref_only = m.contains_key("$ref") && self.draft_at(holder) <= Draft::D7;
            acts.clear();
            if ref_only || !m.contains_key("properties") {
                acts.push(l | EMIT);
            }
            for (k, v) in m {
                match k.as_str() {
                    "properties" if !ref_only => acts.push(l | EMIT),
                    "$ref" | "$dynamicRef" | "$recursiveRef" => acts.extend(self.ref_loc(l, k, v, holder, &ptr)?),
                    _ if ref_only => {}
                    "allOf" => {
                        let Some(list) = v.as_array().filter(|l| !l.is_empty()) else {
                            return Err(err!(Schema, "JSON Schema: allOf at {ptr} must be a non-empty array"));
                        };
                        for s in list {
                            acts.push(self.sub(l, s)?);
                        }
                    }
                    "anyOf" | "oneOf" | "if" => {
                        for &(o, kw, b) in chosen {
                            if o == l && kw == k {
                                acts.push(b);
                            }
                        }
                    }
                    _ => {}
                }
            }
            while let Some(a) = acts.pop() {
                stack.push(a);
            }
        }
        Ok(out)
    }

    fn is_ref_only(&self, l: Loc) -> bool {
        matches!(&self.nodes[l as usize], Node::Schema { v: v @ Value::Object(m), .. } if m.contains_key("$ref") && self.draft_at(v) <= Draft::D7)
    }

    /// anyOf / oneOf groups of the nodes of a closed set: (owner, keyword, branches).
    fn groups(&mut self, set: &[Loc]) -> Result<Vec<(Loc, &'static str, Vec<Loc>)>> {
        let mut out = Vec::new();
        for &l in set {
            if self.is_ref_only(l) {
                continue;
            }
            let Node::Schema { v: Value::Object(m), ptr, .. } = self.nodes[l as usize].clone() else { continue };
            for kw in ["anyOf", "oneOf"] {
                if let Some(a) = m.get(kw) {
                    let Some(list) = a.as_array().filter(|l| !l.is_empty()) else {
                        return Err(err!(Schema, "JSON Schema: {kw} at {ptr} must be a non-empty array"));
                    };
                    let mut br = Vec::new();
                    for s in list {
                        br.push(self.sub(l, s)?);
                    }
                    // Not proved disjoint: enforced by `logic`; under `unevaluated*`, its
                    // branches that evaluate are also expanded (each value satisfies one).
                    if kw == "oneOf" && br.len() > 1 && !self.one_of_expands(l, &br)? && !(self.uneval && self.evaluates(&br)?) {
                        continue;
                    }
                    out.push((l, kw, br));
                }
            }
            if let Some(br) = self.if_group(l)? {
                out.push((l, "if", br.to_vec()));
            }
        }
        Ok(out)
    }

    /// The union of conjunctions (DNF) equivalent to the set of nodes.
    pub fn dnf(&mut self, set: &[Loc]) -> Result<std::rc::Rc<Vec<ConjId>>> {
        if let Some(&d) = self.dnf_memo.get(set) {
            return Ok(self.dnf_list[d as usize].clone());
        }
        let closed = self.close(set, &[])?;
        let mut out = Vec::new();
        let mut chosen = Vec::new();
        self.dnf_rec(set, closed, &mut chosen, &mut out, 0)?;
        out.sort_unstable();
        out.dedup();
        let rc = std::rc::Rc::new(out);
        self.dnf_memo.insert(set.to_vec(), self.dnf_list.len() as u32);
        self.dnf_list.push(rc.clone());
        Ok(rc)
    }

    /// Whether the `oneOf` of `owner` is expanded like `anyOf` (memoized; a
    /// cycle back to it while proving counts as not proved).
    fn one_of_expands(&mut self, owner: Loc, branches: &[Loc]) -> Result<bool> {
        let i = owner as usize;
        if self.one_of_ok.len() <= i {
            self.one_of_ok.resize(i + 1, 0);
        }
        if self.one_of_ok[i] != 0 {
            return Ok(self.one_of_ok[i] == 2);
        }
        self.one_of_ok[i] = 1;
        let policy = self.one_of;
        let b = policy(self, owner, branches)?;
        self.one_of_ok[i] = 1 + b as u8;
        Ok(b)
    }

    /// What a value of the set must satisfy: its DNF, and the conditions of
    /// `not`, `if`/`then`/`else` and the `oneOf`s not expanded, as a truth
    /// table over the conjunctions involved ([`Logic`]).
    pub fn logic(&mut self, set: &[Loc]) -> Result<std::rc::Rc<Logic>> {
        if let Some(&l) = self.logic_memo.get(set) {
            return Ok(self.logic_list[l as usize].clone());
        }
        let d = self.dnf(set)?;
        let mut plain = true;
        for &c in d.iter() {
            for l in self.conjs[c as usize].clone() {
                plain &= self.items(l, 0)?.is_empty();
            }
        }
        let lg = if plain {
            Logic { atoms: d.to_vec(), masks: None, mono: true }
        } else {
            let f = self.form(set, 0)?;
            let mut atoms = Vec::new();
            f.atoms(&mut atoms);
            atoms.sort_unstable();
            if atoms.len() > MAX_LOGIC_ATOMS {
                let ptr = set.first().map(|&l| self.ptr(l).to_string()).unwrap_or_default();
                return Err(err!(Limit, "JSON Schema: not/if/oneOf at {ptr} combine more than {MAX_LOGIC_ATOMS} alternatives"));
            }
            let masks: Vec<u64> = (0..1u64 << atoms.len()).filter(|&m| f.eval(&atoms, m)).collect();
            let mono = masks.iter().all(|&m| (0..atoms.len()).all(|i| masks.binary_search(&(m | 1 << i)).is_ok()));
            // Rows no value can have (the atoms it satisfies share no type).
            let mut types = Vec::new();
            for &c in &atoms {
                types.push(self.merged(c)?.eff_types());
            }
            let masks: Vec<u64> = masks.into_iter().filter(|&m| (0..atoms.len()).filter(|i| m >> i & 1 == 1).fold(T_ALL, |t, i| t & types[i]) != 0).collect();
            Logic { atoms, masks: Some(masks.into()), mono }
        };
        let rc = std::rc::Rc::new(lg);
        self.logic_memo.insert(set.to_vec(), self.logic_list.len() as u32);
        self.logic_list.push(rc.clone());
        Ok(rc)
    }

    /// The formula of a set: some conjunction of its DNF, with the
    /// conditions its nodes add.
    fn form(&mut self, set: &[Loc], depth: usize) -> Result<F> {
        self.logic_work += 1;
        if depth > MAX_ANY_OF_DEPTH || self.logic_work > MAX_LOGIC_WORK {
            let ptr = set.first().map(|&l| self.ptr(l).to_string()).unwrap_or_default();
            return Err(err!(Limit, "JSON Schema: not/if/oneOf at {ptr} nest more than {MAX_ANY_OF_DEPTH} deep or are too many"));
        }
        let d = self.dnf(set)?;
        let mut alts = Vec::new();
        for &c in d.iter() {
            // The atom: the nodes that constrain by themselves (applicators
            // and annotations dropped), so equal conjunctions meet.
            // Under `unevaluated*` all stay: which branches a conjunction holds decides what is evaluated.
            let own: Set = self.conjs[c as usize].clone().into_iter().filter(|&l| self.uneval || !self.only_applies(l)).collect();
            let mut parts = vec![F::Atom(self.conj(own)?)];
            for l in self.conjs[c as usize].clone() {
                parts.extend(self.items(l, depth + 1)?);
                // An `if` group's alternative without the `if` schema: it fails.
                if let Some([i, ..]) = self.if_group(l)? {
                    if !self.conjs[c as usize].contains(&i) {
                        parts.push(F::Not(Box::new(self.form(&[i], depth + 1)?)));
                    }
                }
            }
            alts.push(F::And(parts));
        }
        Ok(F::Or(alts))
    }

    /// Whether node `l` only applies other schemas or annotates (it
    /// constrains nothing by its own keywords).
    fn only_applies(&self, l: Loc) -> bool {
        const APPLY: &[&str] = &[
            "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$dynamicRef", "$recursiveRef", "$defs", "definitions", "title", "description",
            "$comment", "$schema", "$id", "$anchor", "examples", "default",
        ];
        match &self.nodes[l as usize] {
            Node::Schema { v: Value::Bool(true), .. } => true,
            Node::Schema { v: Value::Object(m), .. } => self.is_ref_only(l) || m.keys().all(|k| APPLY.contains(&k.as_str())),
            _ => false,
        }
    }

    /// The conditions node `l` adds: `not`, `if`/`then`/`else` (draft-07
    /// and later), a `oneOf` not expanded. `depth` 0: only whether any.
    fn items(&mut self, l: Loc, depth: usize) -> Result<Vec<F>> {
        let mut out = Vec::new();
        if self.is_ref_only(l) {
            return Ok(out);
        }
        let Node::Schema { v: v @ Value::Object(m), .. } = self.nodes[l as usize].clone() else { return Ok(out) };
        let sub = |ir: &mut Self, s: &'a Value| -> Result<F> {
            if depth == 0 {
                return Ok(F::Or(Vec::new()));
            }
            let n = ir.sub(l, s)?;
            ir.form(&[n], depth)
        };
        if let Some(n) = m.get("not") {
            out.push(F::Not(Box::new(sub(self, n)?)));
        }
        if let Some(i) = m.get("if").filter(|_| self.draft_at(v) >= Draft::D7) {
            let (t, e) = (m.get("then"), m.get("else"));
            if t.is_some() || e.is_some() {
                let fi = sub(self, i)?;
                let yes = match t {
                    Some(t) => F::And(vec![fi.clone(), sub(self, t)?]),
                    None => fi.clone(),
                };
                let no = match e {
                    Some(e) => F::And(vec![F::Not(Box::new(fi)), sub(self, e)?]),
                    None => F::Not(Box::new(fi)),
                };
                out.push(F::Or(vec![yes, no]));
            }
        }
        // A dependent schema that says more than which keys occur: the
        // object has the key ⇒ the schema holds.
        for kw in ["dependentSchemas", "dependencies"] {
            if kw == "dependentSchemas" && self.draft_at(v) <= Draft::D7 {
                continue;
            }
            for (key, d) in m.get(kw).and_then(Value::as_object).into_iter().flatten() {
                if d.as_object().is_some_and(|o| presence_rule(o).is_none()) {
                    let has = if depth == 0 { F::Or(Vec::new()) } else { F::Atom(self.has_conj(key, d)?) };
                    out.push(F::Or(vec![F::Not(Box::new(has)), sub(self, d)?]));
                }
            }
        }
        if let Some(Value::Array(list)) = m.get("oneOf") {
            if list.len() > 1 {
                let mut br = Vec::new();
                for s in list {
                    br.push(self.sub(l, s)?);
                }
                if !self.one_of_expands(l, &br)? {
                    let mut fs = Vec::new();
                    for s in list {
                        fs.push(sub(self, s)?);
                    }
                    out.push(F::One(fs));
                }
            }
        }
        Ok(out)
    }

    /// The conjunction "an object that has `key`" (`d`: its dependent schema).
    fn has_conj(&mut self, key: &'a String, d: &'a Value) -> Result<ConjId> {
        let id = (key as *const String as usize, u32::MAX);
        let l = match self.node_ids.get(&id) {
            Some(&l) => l,
            None => {
                let l = self.nodes.len() as Loc;
                self.nodes.push(Node::Has { key, ptr: self.ptr_of(d) });
                self.node_ids.insert(id, l);
                l
            }
        };
        self.conj(vec![l])
    }

    /// `set`: the closure of `roots` with the branches `chosen` so far.
    fn dnf_rec(&mut self, roots: &[Loc], set: Set, chosen: &mut Vec<(Loc, &'static str, Loc)>, out: &mut Vec<ConjId>, depth: usize) -> Result<()> {
        if depth > MAX_ANY_OF_DEPTH {
            return Err(err!(Limit, "JSON Schema: anyOf/oneOf nested more than {MAX_ANY_OF_DEPTH} deep"));
        }
        let groups = self.groups(&set)?;
        let next = groups.into_iter().find(|(o, k, _)| !chosen.iter().any(|(o2, k2, _)| o2 == o && k2 == k));
        match next {
            None => {
                let c = self.conj(set.clone())?;
                let m = self.merged(c)?;
                if m.unsat() {
                    return Ok(());
                }
                // Structured values of an enum become alternatives of their own.
                let structs: Vec<&'a Value> = match (&m.consts, m.struct_const) {
                    (Some(cs), false) => cs.iter().copied().filter(|v| v.is_object() || v.is_array()).collect(),
                    _ => Vec::new(),
                };
                if m.gen_types() != 0 {
                    out.push(c);
                }
                for (i, v) in structs.into_iter().enumerate() {
                    let l = self.const_loc(v, format!("{}/enum/{i}", m.ptr));
                    let mut s = set.clone();
                    s.push(l);
                    let c2 = self.conj(s)?;
                    if !self.merged(c2)?.unsat() {
                        out.push(c2);
                    }
                }
                Ok(())
            }
            Some((owner, kw, branches)) => {
                for alt in self.alternatives(owner, kw, branches)? {
                    let n0 = chosen.len();
                    for &b in &alt {
                        chosen.push((owner, kw, b));
                    }
                    let s = self.close(roots, chosen)?;
                    // Prune unsatisfiable partial conjunctions early.
                    let c = self.conj(s.clone())?;
                    if !self.merged(c)?.unsat() {
                        self.dnf_rec(roots, s, chosen, out, depth + 1)?;
                    }
                    chosen.truncate(n0);
                    if out.len() > MAX_DNF {
                        return Err(err!(Limit, "JSON Schema: anyOf/oneOf at {} expands into more than {MAX_DNF} alternatives", self.ptr(owner)));
                    }
                }
                Ok(())
            }
        }
    }

    /// The conjunction of an ordered set of distinct nodes (its order is the
    /// key order).
    pub fn conj(&mut self, set: Set) -> Result<ConjId> {
        if let Some(&c) = self.conj_ids.get(&set) {
            return Ok(c);
        }
        if self.conjs.len() >= MAX_CONJS {
            return Err(err!(Limit, "JSON Schema: more than {MAX_CONJS} distinct subschema combinations"));
        }
        let c = self.conjs.len() as ConjId;
        self.conjs.push(set.clone());
        self.conj_ids.insert(set, c);
        self.merged.push(None);
        Ok(c)
    }

    pub fn conj_set(&self, c: ConjId) -> &[Loc] {
        &self.conjs[c as usize]
    }

    pub fn merged(&mut self, c: ConjId) -> Result<std::rc::Rc<Merged<'a>>> {
        if let Some(m) = &self.merged[c as usize] {
            return Ok(m.clone());
        }
        let set = self.conjs[c as usize].clone();
        let mut m = Merged {
            types: T_ALL,
            consts: None,
            bounds: Bounds::default(),
            multiple_of: Vec::new(),
            min_len: 0,
            max_len: None,
            patterns: Vec::new(),
            formats: Vec::new(),
            arr: Vec::new(),
            min_items: 0,
            max_items: None,
            obj: Vec::new(),
            required: Vec::new(),
            min_props: 0,
            max_props: None,
            struct_const: false,
            dep_required: Vec::new(),
            prop_names: Vec::new(),
            contains: Vec::new(),
            ptr: set.iter().min().map(|&l| self.ptr(l).to_string()).unwrap_or_else(|| "#".into()),
            pending: Vec::new(),
        };
        for &l in &set {
            self.merge_node(&mut m, l)?;
        }
        if self.uneval {
            for &l in &set {
                self.uneval(&mut m, l, &set)?;
            }
        }
        // Type-specific keywords that are not enforced: harmless when no
        // value they constrain can occur (`uniqueItems` also when at most one
        // item can occur); otherwise refused (or, lenient, listed).
        for (kw, ptr, bits) in std::mem::take(&mut m.pending) {
            let mut live = m.eff_types() & bits != 0;
            if kw == "uniqueItems" && m.max_items.is_some_and(|n| n <= 1) {
                live = false;
            }
            if live {
                self.unsupported(kw, &ptr)?;
            }
        }
        let rc = std::rc::Rc::new(m);
        self.merged[c as usize] = Some(rc.clone());
        Ok(rc)
    }

    fn merge_node(&mut self, m: &mut Merged<'a>, l: Loc) -> Result<()> {
        match self.nodes[l as usize].clone() {
            Node::False { .. } => m.types = 0,
            Node::Const { v, ptr } => self.merge_const(m, v, &ptr),
            Node::Has { key, .. } => {
                m.types &= T_OBJ;
                if !m.required.iter().any(|r| r == key) {
                    m.required.push(key.to_string());
                }
            }
            Node::Schema { v: Value::Bool(_), .. } => {}
            Node::Schema { v: sv @ Value::Object(o), ptr, .. } => {
                let draft = self.draft_at(sv);
                if draft <= Draft::D7 && o.contains_key("$ref") {
                    return Ok(()); // the target is in the set; siblings ignored
                }
                self.merge_object(m, l, o, &ptr, draft)?;
            }
            Node::Schema { .. } => {}
        }
        Ok(())
    }

    fn merge_const(&mut self, m: &mut Merged<'a>, v: &'a Value, ptr: &str) {
        match v {
            Value::Null => m.types &= T_NULL,
            Value::Bool(_) => m.types &= T_BOOL,
            Value::Number(_) | Value::String(_) => {
                m.types &= match v {
                    Value::String(_) => T_STR,
                    Value::Number(n) if Dec::from_json(n).is_some_and(|d| d.is_integer()) => T_INT | T_FRAC,
                    _ => T_INT | T_FRAC,
                };
                intersect_consts(m, vec![v]);
            }
            Value::Array(a) => {
                m.types &= T_ARR;
                m.struct_const = true;
                let prefix = a.iter().enumerate().map(|(i, x)| self.const_loc(x, format!("{ptr}/{i}"))).collect();
                m.arr.push(ArrPart { prefix, rest: Some(self.false_loc) });
                m.min_items = m.min_items.max(a.len() as u64);
                m.max_items = Some(m.max_items.map_or(a.len() as u64, |x| x.min(a.len() as u64)));
            }
            Value::Object(o) => {
                m.types &= T_OBJ;
                m.struct_const = true;
                let mut props = Vec::new();
                for (k, x) in o {
                    props.push((k.clone(), self.const_loc(x, format!("{ptr}/{}", escape_ptr(k)))));
                    if !m.required.contains(k) {
                        m.required.push(k.clone());
                    }
                }
                m.obj.push(ObjPart { props, patterns: Vec::new(), additional: Some(self.false_loc) });
            }
        }
        if matches!(v, Value::Null | Value::Bool(_)) {
            intersect_consts(m, vec![v]);
        }
    }

    fn merge_object(&mut self, m: &mut Merged<'a>, l: Loc, o: &'a serde_json::Map<String, Value>, ptr: &str, draft: Draft) -> Result<()> {
        let p = |k: &str| format!("{ptr}/{k}");
        for (k, v) in o {
            let kp = p(&escape_ptr(k));
            match k.as_str() {
                "type" => {
                    let mut bits = 0u8;
                    let names: Vec<&Value> = match v {
                        Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    for n in names {
                        bits |= match n.as_str() {
                            Some("null") => T_NULL,
                            Some("boolean") => T_BOOL,
                            Some("integer") => T_INT,
                            Some("number") => T_INT | T_FRAC,
                            Some("string") => T_STR,
                            Some("array") => T_ARR,
                            Some("object") => T_OBJ,
                            Some("any") if draft <= Draft::D4 => T_ALL,
                            _ => return Err(err!(Schema, "JSON Schema: invalid `type` at {kp}: {v}")),
                        };
                    }
                    m.types &= bits;
                }
                "enum" => {
                    let Some(a) = v.as_array() else { return Err(err!(Schema, "JSON Schema: `enum` at {kp} must be an array")) };
                    if a.len() > MAX_ENUM {
                        return Err(err!(Limit, "JSON Schema: `enum` at {kp} has more than {MAX_ENUM} values"));
                    }
                    // Structured values become const alternatives: handled by the generator
                    // through `consts` (scalars) and const nodes (objects/arrays).
                    intersect_consts(m, a.iter().collect());
                }
                "const" => intersect_consts(m, vec![v]),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    if let Value::Bool(_) = v {
                        if draft > Draft::D4 {
                            return Err(err!(Schema, "JSON Schema: `{k}` at {kp} must be a number"));
                        }
                        continue; // draft-04 modifier: read with minimum/maximum
                    }
                    let Some(d) = v.as_number().and_then(Dec::from_json) else {
                        return Err(err!(Schema, "JSON Schema: `{k}` at {kp} must be a number"));
                    };
                    let excl_d4 = |name: &str| o.get(name).and_then(|b| b.as_bool()).unwrap_or(false);
                    match k.as_str() {
                        "minimum" => tighten_lo(&mut m.bounds, d, draft <= Draft::D4 && excl_d4("exclusiveMinimum")),
                        "maximum" => tighten_hi(&mut m.bounds, d, draft <= Draft::D4 && excl_d4("exclusiveMaximum")),
                        "exclusiveMinimum" => tighten_lo(&mut m.bounds, d, true),
                        _ => tighten_hi(&mut m.bounds, d, true),
                    }
                }
                "multipleOf" => {
                    let Some(d) = v.as_number().and_then(Dec::from_json).filter(|d| !d.neg && d.mag.int != "0" || !d.mag.frac.is_empty()) else {
                        return Err(err!(Schema, "JSON Schema: `multipleOf` at {kp} must be a number > 0"));
                    };
                    if !m.multiple_of.iter().any(|(x, _)| *x == d) {
                        m.multiple_of.push((d, kp));
                    }
                }
                "minContains" | "maxContains" if draft < Draft::D2019 => {}
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" | "minContains" | "maxContains" => {
                    let Some(n) = as_count(v) else {
                        return Err(err!(Schema, "JSON Schema: `{k}` at {kp} must be a non-negative integer"));
                    };
                    match k.as_str() {
                        "minLength" => m.min_len = m.min_len.max(n),
                        "maxLength" => m.max_len = Some(m.max_len.map_or(n, |x| x.min(n))),
                        "minItems" => m.min_items = m.min_items.max(n),
                        "maxItems" => m.max_items = Some(m.max_items.map_or(n, |x| x.min(n))),
                        "minProperties" => m.min_props = m.min_props.max(n),
                        "minContains" | "maxContains" => {}
                        _ => m.max_props = Some(m.max_props.map_or(n, |x| x.min(n))),
                    }
                }
                "pattern" => {
                    let Some(s) = v.as_str() else { return Err(err!(Schema, "JSON Schema: `pattern` at {kp} must be a string")) };
                    m.patterns.push((s.to_string(), kp));
                }
                "format" => {
                    if let Some(f) = v.as_str() {
                        match super::formats::format_regex(f) {
                            Some(r) => m.formats.push((r, kp)),
                            None => {
                                let w = format!("format {f:?} at {kp} is not enforced (annotation)");
                                if !self.warnings.contains(&w) {
                                    self.warnings.push(w);
                                }
                            }
                        }
                    }
                }
                "required" => {
                    let Some(a) = v.as_array() else {
                        if v.is_boolean() && draft <= Draft::D4 {
                            continue;
                        }
                        return Err(err!(Schema, "JSON Schema: `required` at {kp} must be an array of strings"));
                    };
                    for r in a {
                        let Some(r) = r.as_str() else { return Err(err!(Schema, "JSON Schema: `required` at {kp} must be an array of strings")) };
                        if !m.required.iter().any(|x| x == r) {
                            m.required.push(r.to_string());
                        }
                    }
                }
                "properties" | "patternProperties" | "additionalProperties" => {}
                "items" | "prefixItems" | "additionalItems" => {}
                "uniqueItems" => {
                    if v.as_bool() == Some(true) {
                        m.pending.push(("uniqueItems", kp, T_ARR));
                    }
                }
                // Keywords of later drafts are unknown (annotations) before them.
                "propertyNames" if draft <= Draft::D4 => {}
                "dependentRequired" | "dependentSchemas" if draft <= Draft::D7 => {}
                "contains" if draft >= Draft::D6 => {
                    // (minContains/maxContains are checked as counts below.)
                    let n = |c: &str| o.get(c).filter(|_| draft >= Draft::D2019).and_then(as_count);
                    let (lo, hi) = (n("minContains").unwrap_or(1), n("maxContains"));
                    // minContains 0 without maxContains: always true.
                    if lo > 0 || hi.is_some() {
                        let c = self.sub(l, v)?;
                        m.contains.push((c, lo, hi, kp));
                    }
                }
                "contains" => {}
                // `false`: no property name is valid, so only the empty object.
                "propertyNames" if v == &Value::Bool(false) => m.max_props = Some(0),
                "propertyNames" if v.as_object().is_some_and(|o| !o.is_empty()) => {
                    let c = self.sub(l, v)?;
                    m.prop_names.push((c, kp));
                }
                "propertyNames" => {}
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    if let Err(at) = dep_rules(k, v, &kp, m) {
                        return Err(err!(Schema, "JSON Schema: malformed `{k}` at {at}"));
                    }
                }
                "allOf" | "anyOf" | "oneOf" | "$ref" | "$dynamicRef" | "$recursiveRef" | "not" | "if" | "then" | "else" => {}
                k if UNSUPPORTED.contains(&k) => self.unsupported(k, &kp)?,
                k if IGNORED.contains(&k) => {}
                _ => {} // unknown keywords are annotations
            }
        }
        // Objects.
        let has_obj = ["properties", "patternProperties", "additionalProperties"].iter().any(|k| o.contains_key(*k));
        if has_obj {
            let mut part = ObjPart::default();
            if let Some(ps) = o.get("properties") {
                let Some(ps) = ps.as_object() else { return Err(err!(Schema, "JSON Schema: `properties` at {ptr}/properties must be an object")) };
                for (k, s) in ps {
                    part.props.push((k.clone(), self.sub(l, s)?));
                }
            }
            if let Some(ps) = o.get("patternProperties") {
                let Some(ps) = ps.as_object() else {
                    return Err(err!(Schema, "JSON Schema: `patternProperties` at {ptr}/patternProperties must be an object"));
                };
                for (k, s) in ps {
                    part.patterns.push((k.clone(), self.sub(l, s)?));
                }
            }
            if let Some(a) = o.get("additionalProperties") {
                let c = self.sub(l, a)?;
                part.additional = if matches!(a, Value::Bool(true)) { None } else { Some(c) };
            }
            m.obj.push(part);
        }
        // Arrays.
        let (prefix_v, rest_v) = match (o.get("prefixItems"), o.get("items"), o.get("additionalItems")) {
            // prefixItems is a 2020-12 keyword.
            (Some(p), items, _) if draft >= Draft::D2020 => (Some(p), items),
            (_, Some(Value::Array(_)), add) => (o.get("items"), add),
            (_, items, _) => (None, items),
        };
        if prefix_v.is_some() || rest_v.is_some() {
            let mut part = ArrPart::default();
            if let Some(p) = prefix_v {
                let Some(list) = p.as_array() else { return Err(err!(Schema, "JSON Schema: `prefixItems` at {ptr} must be an array")) };
                for s in list {
                    part.prefix.push(self.sub(l, s)?);
                }
            }
            if let Some(r) = rest_v {
                let c = self.sub(l, r)?;
                part.rest = if matches!(r, Value::Bool(true)) { None } else { Some(c) };
            }
            m.arr.push(part);
        }
        Ok(())
    }
}

impl<'a> Ir<'a> {
    /// Does the ECMA `pattern` find a match in `key`?
    pub fn pattern_matches(&mut self, pattern: &str, key: &str, ptr: &str) -> Result<bool> {
        if !self.key_dfas.contains_key(pattern) {
            let h = crate::regex::ecma::ecma_to_hir(pattern)
                .and_then(|h| crate::regex::lang::search_language(&h))
                .map_err(|e| err!(Regex, "JSON Schema: pattern {pattern:?} at {ptr}: {e}"))?;
            let d = crate::regex::lang::Dfa::from_hir(&h).map_err(|e| err!(Limit, "JSON Schema: pattern {pattern:?} at {ptr}: {e}"))?;
            self.key_dfas.insert(pattern.to_string(), self.dfa_list.len());
            self.dfa_list.push(d);
        }
        Ok(self.dfa_list[self.key_dfas[pattern]].full_match(key.as_bytes()))
    }

    /// The schema (set of nodes) of property `key` in an object part: the
    /// declared schema and every matching pattern's, else the additional one.
    pub fn part_key_value(&mut self, part: &ObjPart, key: &str) -> Result<Set> {
        let mut out = Vec::new();
        let mut hit = false;
        for (k, l) in &part.props {
            if k == key {
                out.push(*l);
                hit = true;
            }
        }
        for (p, l) in &part.patterns {
            let ptr = self.ptr(*l).to_string();
            if self.pattern_matches(p, key, &ptr)? {
                out.push(*l);
                hit = true;
            }
        }
        if !hit {
            out.extend(part.additional);
        }
        Ok(out)
    }

    /// The schema of property `key` of a conjunction (all parts).
    pub fn key_value(&mut self, m: &Merged<'a>, key: &str) -> Result<Set> {
        let mut out = Vec::new();
        for part in &m.obj {
            out.extend(self.part_key_value(part, key)?);
        }
        Ok(dedup_ordered(out))
    }

    /// The schema of array item `i` of a conjunction.
    pub fn item_value(&self, m: &Merged<'a>, i: usize) -> Set {
        dedup_ordered(m.arr.iter().filter_map(|p| p.prefix.get(i).copied().or(p.rest)).collect())
    }

    /// Whether a set contains `false`.
    pub fn is_false(&self, s: &[Loc]) -> bool {
        s.contains(&self.false_loc)
    }
}

impl<'a> Ir<'a> {
    /// The alternatives of an `anyOf`/`oneOf` in the DNF: each branch; under
    /// `unevaluated*`, an `anyOf` also every set of its branches that evaluate
    /// (what a value satisfies decides what is evaluated; a set is exact
    /// because evaluating more only relaxes `unevaluated*`).
    fn alternatives(&mut self, owner: Loc, kw: &str, branches: Vec<Loc>) -> Result<Vec<Vec<Loc>>> {
        if kw == "if" {
            return Ok(vec![vec![branches[0], branches[1]], vec![branches[2]]]);
        }
        let (mut out, mut ev) = (Vec::new(), Vec::new());
        for &b in &branches {
            if kw == "anyOf" && self.uneval && self.evaluates(&[b])? {
                ev.push(b);
            } else {
                out.push(vec![b]);
            }
        }
        if ev.len() > MAX_DNF.ilog2() as usize {
            return Err(err!(Limit, "JSON Schema: anyOf/oneOf at {} expands into more than {MAX_DNF} alternatives", self.ptr(owner)));
        }
        for s in 1..1u32 << ev.len() {
            let mut alt = Vec::new();
            for (i, &b) in ev.iter().enumerate() {
                if s >> i & 1 == 1 {
                    alt.push(b);
                }
            }
            out.push(alt);
        }
        Ok(out)
    }

    /// Under `unevaluated*`, an `if` of node `l` (draft-07 and later) whose
    /// `if`/`then`/`else` evaluate: [if, then, else] (`l` for one absent),
    /// distributed into the alternatives [if, then] and [else]; [`Ir::form`]
    /// adds to the second that `if` fails, `items` the condition itself.
    fn if_group(&mut self, l: Loc) -> Result<Option<[Loc; 3]>> {
        let Some((v, m)) = self.schema_obj(l) else { return Ok(None) };
        let Some(i) = m.get("if").filter(|_| self.uneval && !self.is_ref_only(l) && self.draft_at(v) >= Draft::D7) else { return Ok(None) };
        let mut g = [self.sub(l, i)?, l, l];
        for (j, k) in [(1, "then"), (2, "else")] {
            if let Some(s) = m.get(k) {
                g[j] = self.sub(l, s)?;
            }
        }
        Ok(self.evaluates(&g)?.then_some(g))
    }

    /// A schema object node: its value and map.
    fn schema_obj(&self, l: Loc) -> Option<(&'a Value, &'a serde_json::Map<String, Value>)> {
        match self.nodes[l as usize] {
            Node::Schema { v: v @ Value::Object(o), .. } => Some((v, o)),
            _ => None,
        }
    }

    /// The subschemas in place of `roots`, theirs included: `$ref` targets,
    /// `allOf` members and, with `set`, the `anyOf`/`oneOf` branches and the
    /// `if` group members in it ([`Ir::if_group`]); without, every `anyOf`/`oneOf`
    /// branch and `if`/`then`/`else`. `not` is not in place; dependent schemas
    /// are not either ([`Ir::uneval`] refuses those that evaluate).
    #[inline(never)]
    fn in_place(&mut self, roots: &[Loc], set: Option<&[Loc]>) -> Result<Vec<Loc>> {
        let mut out: Vec<Loc> = Vec::new();
        let mut seen = crate::hash::FxSet::default();
        let mut stack = roots.to_vec();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            out.push(x);
            let Some((xv, o)) = self.schema_obj(x) else { continue };
            let ref_only = self.is_ref_only(x);
            for (k, c) in o {
                let list: &'a [Value] = match (k.as_str(), c) {
                    ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(_)) => {
                        let at = self.ptr(x).to_string();
                        stack.extend(self.ref_loc(x, k, c, xv, &at)?);
                        continue;
                    }
                    _ if ref_only => continue,
                    ("allOf" | "anyOf" | "oneOf", Value::Array(a)) => a,
                    ("if" | "then" | "else", _) if set.is_none() => std::slice::from_ref(c),
                    _ => continue,
                };
                for s in list.iter().filter(|s| s.is_object()) {
                    let b = self.sub(x, s)?;
                    if k == "allOf" || set.is_none_or(|st| st.contains(&b)) {
                        stack.push(b);
                    }
                }
            }
            if let Some(st) = set {
                if let Some([i, t, e]) = self.if_group(x)? {
                    for b in if st.contains(&i) { [i, t] } else { [e, e] } {
                        if st.contains(&b) {
                            stack.push(b);
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Whether the subschemas `roots` evaluate properties or items: theirs or
    /// those of their applicators in place (`not` aside); a dependent schema
    /// counts (so [`Ir::uneval`] sees it, and refuses it if it evaluates).
    fn evaluates(&mut self, roots: &[Loc]) -> Result<bool> {
        const EVAL: &[&str] = &[
            "properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "prefixItems", "items", "additionalItems",
            "contains", "unevaluatedItems", "dependentSchemas", "dependencies",
        ];
        let all = self.in_place(roots, None)?;
        Ok(all.iter().any(|&x| matches!(&self.nodes[x as usize], Node::Schema { v: Value::Object(o), .. } if o.keys().any(|k| EVAL.contains(&k.as_str())))))
    }

    /// `unevaluatedProperties`/`unevaluatedItems` of node `n` (2019-09 and
    /// later) in conjunction `set`: a part that gives the keys (items) that
    /// no applicator in place of `n` evaluates its schema. What is evaluated:
    /// `properties`, `patternProperties`, `additionalProperties` (items:
    /// `prefixItems`, `items`, `additionalItems`, as `merge_object` reads them)
    /// and nested `unevaluated*` of the subschemas in place ([`Ir::in_place`]:
    /// the `anyOf`/`oneOf` branches in `set` are those a value of the
    /// conjunction satisfies, see [`Ir::alternatives`]). Dependent schemas
    /// that evaluate (and for items `contains`) are refused.
    #[inline(never)]
    fn uneval(&mut self, m: &mut Merged<'a>, n: Loc, set: &[Loc]) -> Result<()> {
        let Some((nv, no)) = self.schema_obj(n) else { return Ok(()) };
        let (up, ui) = (no.get("unevaluatedProperties"), no.get("unevaluatedItems"));
        if up.is_none() && ui.is_none() || self.draft_at(nv) < Draft::D2019 || self.is_ref_only(n) {
            return Ok(());
        }
        let (mut props, mut pats, mut all_p) = (Vec::new(), Vec::new(), false);
        let (mut pre, mut all_i, mut pre_at): (&[Value], bool, Loc) = (&[], false, n);
        let mut why = None;
        for x in self.in_place(&[n], Some(set))? {
            let Some((xv, o)) = self.schema_obj(x) else { continue };
            if self.is_ref_only(x) {
                continue;
            }
            let d20 = self.draft_at(xv) >= Draft::D2020 && o.contains_key("prefixItems");
            let arr_items = matches!(o.get("items"), Some(Value::Array(_))) && !d20;
            for (k, c) in o {
                match (k.as_str(), c) {
                    ("properties" | "patternProperties", Value::Object(ps)) => {
                        for (name, s) in ps {
                            let l = self.sub(x, s)?;
                            if k == "properties" { &mut props } else { &mut pats }.push((name.clone(), l));
                        }
                    }
                    ("additionalProperties", _) => all_p = true,
                    ("unevaluatedProperties", _) if x != n => all_p = true,
                    ("prefixItems", Value::Array(p)) | ("items", Value::Array(p)) if (if k == "items" { arr_items } else { d20 }) && p.len() > pre.len() => (pre, pre_at) = (p, x),
                    ("items", _) if !arr_items => all_i = true,
                    ("additionalItems", _) if arr_items => all_i = true,
                    ("unevaluatedItems", _) if x != n => all_i = true,
                    ("contains", _) if ui.is_some() => why = Some(("unevaluatedItems", "what a `contains` in place evaluates is not tracked")),
                    ("dependentSchemas" | "dependencies", Value::Object(d)) => {
                        for s in d.values().filter(|s| s.is_object()) {
                            let l = self.sub(x, s)?;
                            if self.evaluates(&[l])? {
                                why = Some((if up.is_some() { "unevaluatedProperties" } else { "unevaluatedItems" }, "what a dependent schema in place evaluates is not tracked"));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some((kw, reason)) = why {
            // Strict: an error; lenient: ignored (listed).
            let at = format!("{}/{kw} ({reason})", self.ptr(n));
            return self.unsupported(kw, &at);
        }
        if let Some(s) = up.filter(|s| !all_p && !matches!(s, Value::Bool(true))) {
            m.obj.push(ObjPart { props, patterns: pats, additional: Some(self.sub(n, s)?) });
        }
        if let Some(s) = ui.filter(|s| !all_i && !matches!(s, Value::Bool(true))) {
            let mut prefix = Vec::new();
            for p in pre {
                prefix.push(self.sub(pre_at, p)?);
            }
            m.arr.push(ArrPart { prefix, rest: Some(self.sub(n, s)?) });
        }
        Ok(())
    }
}

/// Whether a schema names `unevaluatedProperties`/`unevaluatedItems` (deeper
/// than the schema depth limit: assumed so).
fn mentions_uneval(v: &Value, depth: usize) -> bool {
    match v {
        _ if depth > MAX_DEPTH => true,
        Value::Object(m) => m.iter().any(|(k, c)| k.starts_with("unevaluated") || mentions_uneval(c, depth + 1)),
        Value::Array(a) => a.iter().any(|c| mentions_uneval(c, depth + 1)),
        _ => false,
    }
}

/// The set without repeats, each node at its first place (the parts'
/// order: the key order of merged objects).
pub fn dedup_ordered(set: Set) -> Set {
    let mut seen = crate::hash::FxSet::default();
    let mut out = Vec::new();
    for l in set {
        if seen.insert(l) {
            out.push(l);
        }
    }
    out
}

/// The presence rules of a `dependentRequired` / `dependentSchemas` /
/// `dependencies` value `v` (at `kp`) into `m`; other dependent schemas are
/// conditions ([`Ir::items`]). Err: the pointer of a malformed part.
#[inline(never)]
fn dep_rules(k: &str, v: &Value, kp: &str, m: &mut Merged<'_>) -> std::result::Result<(), String> {
    let map = v.as_object().ok_or_else(|| kp.to_string())?;
    for (key, d) in map {
        let dp = format!("{kp}/{}", escape_ptr(key));
        let (need, excl) = match d {
            Value::Array(a) if k != "dependentSchemas" => {
                let need = a.iter().map(|r| r.as_str().map(String::from)).collect::<Option<Vec<_>>>().ok_or_else(|| dp.clone())?;
                (need, Vec::new())
            }
            _ if k == "dependentRequired" => return Err(dp),
            Value::Bool(b) => (Vec::new(), if *b { Vec::new() } else { vec![key.clone()] }),
            Value::Object(o) => match presence_rule(o) {
                Some((_, _, true)) => (Vec::new(), vec![key.clone()]),
                Some((need, excl, false)) => (need, excl),
                // Enforced as a condition ([`Ir::items`]).
                None => continue,
            },
            _ => return Err(dp),
        };
        if !need.is_empty() || !excl.is_empty() {
            m.dep_required.push((key.clone(), need, excl, dp));
        }
    }
    Ok(())
}

/// A dependent schema that only says which keys occur: `required` names,
/// `properties` that are `false` (excluded) or `true`/`{}`, a `type`,
/// annotations. (required, excluded, whether the type excludes objects, so
/// the trigger may not occur); `None` for any other schema.
fn presence_rule(o: &serde_json::Map<String, Value>) -> Option<(Vec<String>, Vec<String>, bool)> {
    const NOTES: &[&str] = &["title", "description", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly"];
    let (mut need, mut excl) = (Vec::new(), Vec::new());
    let mut never = false;
    for (k, v) in o {
        match k.as_str() {
            "required" => {
                for r in v.as_array()? {
                    need.push(r.as_str()?.to_string());
                }
            }
            "properties" => {
                for (p, s) in v.as_object()? {
                    match s {
                        Value::Bool(false) => excl.push(p.clone()),
                        Value::Bool(true) => {}
                        Value::Object(x) if x.keys().all(|a| NOTES.contains(&a.as_str())) => {}
                        _ => return None,
                    }
                }
            }
            "type" => {
                let obj = match v {
                    Value::String(t) => t == "object",
                    Value::Array(a) => a.iter().any(|t| t == "object"),
                    _ => return None,
                };
                never |= !obj;
            }
            k if NOTES.contains(&k) => {}
            _ => return None,
        }
    }
    Some((need, excl, never))
}

fn as_count(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64()?;
    (f >= 0.0 && f.fract() == 0.0).then(|| if f > u64::MAX as f64 { u64::MAX } else { f as u64 })
}

fn tighten_lo(b: &mut Bounds, d: Dec, excl: bool) {
    let better = match &b.lo {
        None => true,
        Some((cur, cx)) => match d.cmp(cur) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => excl && !cx,
            _ => false,
        },
    };
    if better {
        b.lo = Some((d, excl));
    }
}

fn tighten_hi(b: &mut Bounds, d: Dec, excl: bool) {
    let better = match &b.hi {
        None => true,
        Some((cur, cx)) => match d.cmp(cur) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Equal => excl && !cx,
            _ => false,
        },
    };
    if better {
        b.hi = Some((d, excl));
    }
}

/// JSON equality (numbers by value).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (Dec::from_json(x), Dec::from_json(y)) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w))),
        _ => a == b,
    }
}

fn intersect_consts<'a>(m: &mut Merged<'a>, vals: Vec<&'a Value>) {
    let mut vals2: Vec<&'a Value> = Vec::new();
    for v in vals {
        if !vals2.iter().any(|w| json_eq(v, w)) {
            vals2.push(v);
        }
    }
    m.consts = Some(match m.consts.take() {
        None => vals2,
        Some(cur) => cur.into_iter().filter(|v| vals2.iter().any(|w| json_eq(v, w))).collect(),
    });
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The draft a schema's `$schema` names (None: no `$schema`).
fn draft_of_schema(v: &Value) -> Option<Draft> {
    let s = v.get("$schema")?.as_str()?;
    Some(if s.contains("draft-04") {
        Draft::D4
    } else if s.contains("draft-06") {
        Draft::D6
    } else if s.contains("draft-07") {
        Draft::D7
    } else if s.contains("2019-09") {
        Draft::D2019
    } else {
        Draft::D2020
    })
}

/// A URI split at its first `#`: (before, fragment).
fn split_frag(u: &str) -> (&str, &str) {
    u.split_once('#').unwrap_or((u, ""))
}

/// The parts of a URI reference (RFC 3986 §3): scheme, authority, path,
/// query, fragment.
fn uri_parts(u: &str) -> (Option<&str>, Option<&str>, &str, Option<&str>, Option<&str>) {
    let (u, frag) = match u.split_once('#') {
        Some((a, f)) => (a, Some(f)),
        None => (u, None),
    };
    let (u, query) = match u.split_once('?') {
        Some((a, q)) => (a, Some(q)),
        None => (u, None),
    };
    let (scheme, rest) = match u.find(':') {
        Some(i) if i > 0
            && u.as_bytes()[0].is_ascii_alphabetic()
            && u[..i].bytes().all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c)) =>
        {
            (Some(&u[..i]), &u[i + 1..])
        }
        _ => (None, u),
    };
    let (auth, path) = match rest.strip_prefix("//") {
        Some(r) => {
            let i = r.find('/').unwrap_or(r.len());
            (Some(&r[..i]), &r[i..])
        }
        None => (None, rest),
    };
    (scheme, auth, path, query, frag)
}

/// RFC 3986 §5.2.4.
fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut input = path;
    let abs = path.starts_with('/');
    if abs {
        input = &input[1..];
    }
    let segs: Vec<&str> = input.split('/').collect();
    let n = segs.len();
    for (i, s) in segs.iter().enumerate() {
        let last = i + 1 == n;
        match *s {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let j = out.join("/");
    if abs {
        format!("/{j}")
    } else {
        j
    }
}

/// Resolves the URI reference `r` against `base` (RFC 3986 §5.2.2).
pub(crate) fn resolve_uri(base: &str, r: &str) -> String {
    let (rs, ra, rp, rq, rf) = uri_parts(r);
    let (bs, ba, bp, bq, _) = uri_parts(base);
    let (s, a, p, q) = if rs.is_some() {
        (rs, ra, remove_dots(rp), rq)
    } else if ra.is_some() {
        (bs, ra, remove_dots(rp), rq)
    } else if rp.is_empty() {
        (bs, ba, bp.to_string(), rq.or(bq))
    } else if rp.starts_with('/') {
        (bs, ba, remove_dots(rp), rq)
    } else {
        let merged = if ba.is_some() && bp.is_empty() {
            format!("/{rp}")
        } else {
            match bp.rfind('/') {
                Some(i) => format!("{}{rp}", &bp[..=i]),
                None => rp.to_string(),
            }
        };
        (bs, ba, remove_dots(&merged), rq)
    };
    let mut out = String::new();
    if let Some(s) = s {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = a {
        out.push_str("//");
        out.push_str(a);
    }
    out.push_str(&p);
    if let Some(q) = q {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = rf {
        out.push('#');
        out.push_str(f);
    }
    out
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() + 0 && i + 2 <= b.len() - 1 {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
