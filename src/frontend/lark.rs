//! Lark front end: grammar text → normalized [`Cfg`].
//!
//! Stages:
//! 1. `syntax` lexes and parses the Lark grammar language into statements;
//! 2. the *builder* (this file) collects definitions, resolving `%import`s the
//!    way Lark does: every name of an imported grammar other than the imported
//!    ones is *mangled* (`common__X`, `_common__X` for `_X`, `sibling__rule`),
//!    unreferenced definitions of the imported grammar are dropped, and
//!    `%ignore`/`%indent` of imported grammars are skipped;
//! 3. `normalize` turns terminal definitions into one regex each (references
//!    inlined, Python regexes translated by the regex layer's Python dialect) and expands the EBNF
//!    of rules exactly like Lark's `EBNF_to_BNF` + `SimplifyRule_Visitor`, so
//!    LALR conflicts match Lark's LALR:
//!    - `[x]`, `x?`, `(a|b)` are distributed inline into alternatives;
//!    - `x+` becomes `__R_plus_N: x | __R_plus_N x` (R = the rule being
//!      expanded, N a global counter), `x*` becomes `(__R_star_N)?` with the
//!      same helper shape; identical operands share one helper;
//!    - `x~n..m` is inline alternatives for m < 50, Lark's factorized helper
//!      rules otherwise;
//!    - anonymous literals become terminals named like Lark (`"("` → `LPAR`,
//!      `"def"` → `DEF`, otherwise `__ANON_n`), reusing a named terminal whose
//!      definition is exactly that literal;
//!    - templates are instantiated per distinct argument list as `name{a,b}`.
//!
//!    Only rules reachable from the start rule are kept; only terminals they
//!    use, `%ignore`d ones and the `%indent` ones.
//!
//! Terminals are built exactly as Lark's `TerminalTreeToPattern` builds them
//! (one Python regex string per terminal: parts joined without parentheses,
//! so `/a|b/ "c"` is `a|bc`; alternatives sorted longest first; flags as
//! scoped groups), then translated to regex-syntax by the regex layer (`regex::python`); Lark's
//! lexer order ([`crate::grammar::LarkOrder`]) comes from the same string
//! (`regex::python::width`).
//!
//! Deviations from Lark: duplicate alternatives produced by optionals are
//! merged instead of rejected; lookaround and backreferences are rejected
//! (our lexer is a DFA).

mod json_embed;
mod normalize;
pub(crate) mod syntax;

use crate::hash::FxMap as HashMap;
use std::path::Path;
use std::rc::Rc;

use crate::grammar::{Cfg, Span};
use crate::error::Result;
use crate::err;
use syntax::{Alt, Atom, Def as SynDef, Expansions, Pos, Stmt, Value};

/// The bundled `common.lark` (`%import common.NAME`).
pub const COMMON_LARK: &str = include_str!("lark/common.lark");
/// The bundled `unicode.lark` (`%import unicode.NAME`).
pub const UNICODE_LARK: &str = include_str!("lark/unicode.lark");

/// Compiles the JSON Schema of a `%json` embedding into a grammar whose
/// terminal and nonterminal names start with the given prefix. The caller
/// passes it in, as it passes the `%import` resolver, so the Lark front end
/// does not depend on the schema front end
/// ([`crate::constraint::embedded_schema`] is the schema front end's).
pub type SchemaCompiler = dyn Fn(&serde_json::Value, &str) -> crate::Result<Cfg>;

/// Load a grammar file; `%import .sibling.NAME` resolves relative to the file's directory,
/// `%import common.NAME` from the bundled common.lark (include_str!); `%json` through `json`.
pub fn load_grammar_file(path: &Path, start: Option<&str>, json: &SchemaCompiler) -> crate::Result<Cfg> {
    let text = std::fs::read_to_string(path).map_err(|e| err!(Io, "cannot read grammar {}: {e}", path.display()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let resolve = move |module: &str| -> Option<String> {
        let mut p = dir.clone();
        for part in module.split('.') {
            p.push(part);
        }
        p.set_extension("lark");
        std::fs::read_to_string(p).ok()
    };
    parse_grammar(&text, &path.display().to_string(), start, &resolve, json)
}

/// Parse grammar text. `file_name` is used in error messages. `resolve(module_path)` returns the text of an
/// imported sibling grammar (module path like "sibling" or "sub.mod"), or None. `json` compiles the
/// schemas of `%json` embeddings.
pub fn parse_grammar(
    text: &str,
    file_name: &str,
    start: Option<&str>,
    resolve: &dyn Fn(&str) -> Option<String>,
    json: &SchemaCompiler,
) -> crate::Result<Cfg> {
    // `%json {schema}` (json_embed.rs): placeholders now, the schemas merged after normalizing.
    let (text, embedded) = json_embed::extract(text, file_name)?;
    let text = text.as_str();
    let mut b = Builder::new(file_name, resolve);
    b.load(text, file_name, &[], None)?;
    // Default start: the rule `start` if there is one, else the first rule
    // written in the main file (documented in README).
    let start = match start {
        Some(s) => s.to_string(),
        None if b.index.contains_key("start") => "start".to_string(),
        None => b
            .defs
            .iter()
            .find(|d| matches!(&d.kind, DefKind::Rule { params, .. } if params.is_empty()) && &*d.file == file_name)
            .map_or_else(|| "start".to_string(), |d| d.name.clone()),
    };
    let cfg = normalize::normalize(b, &start)?;
    json_embed::merge(cfg, &embedded, file_name, json)
}

/// Sets a Lark grammar's lexer mode (the `--lexer` / `lexer` option, which
/// overrides `%lexer`). Contextual lexing lexes only the terminals the parser
/// can accept, so a grammar with `%reject`ed terminals (pattern terminals no
/// rule uses, not ignored) is refused in that mode rather than silently
/// losing them.
pub fn set_lexer(cfg: &mut Cfg, mode: crate::grammar::LexerMode) -> crate::Result<()> {
    if mode == crate::grammar::LexerMode::Contextual {
        let mut used = vec![false; cfg.terminals.len()];
        for r in &cfg.rules {
            for s in &r.rhs {
                if let crate::grammar::Symbol::T(t) = s {
                    used[t.index()] = true;
                }
            }
        }
        if let Some(ind) = &cfg.indent {
            for t in [ind.newline, ind.indent, ind.dedent] {
                used[t.index()] = true;
            }
        }
        let rejected: Vec<&str> = cfg
            .terminals
            .iter()
            .zip(&used)
            .filter(|(t, u)| !**u && !t.ignored && t.is_lexed())
            .map(|(t, _)| t.name.as_str())
            .collect();
        if !rejected.is_empty() {
            return Err(err!(
                Grammar,
                "the contextual lexer cannot lex the %reject'ed terminal(s) {} (it lexes only the terminals the parser can accept); use lexer 'longest' or 'basic'",
                rejected.join(", ")
            ));
        }
    }
    cfg.lexer = mode;
    Ok(())
}

/// What a definition is.
#[derive(Clone, Debug)]
pub(crate) enum DefKind {
    /// `priority`: Lark's rule priority (`rule.N:`), `None` when not given.
    Rule { params: Vec<String>, body: Expansions, priority: Option<i32> },
    /// `body == None`: `%declare`d.
    Term { priority: i32, body: Option<Expansions> },
    DeclaredRule,
}

#[derive(Clone, Debug)]
pub(crate) struct Definition {
    pub name: String,
    pub kind: DefKind,
    /// The file it was written in (for spans of positions in its body).
    pub file: Rc<str>,
    pub pos: Pos,
    /// Imported only because another imported terminal refers to it: usable in
    /// terminal definitions, but not a terminal of its own.
    pub inline_only: bool,
}

impl Definition {
    pub fn span(&self) -> Span {
        span(&self.file, self.pos)
    }
    pub fn is_term(&self) -> bool {
        matches!(self.kind, DefKind::Term { .. })
    }
}

pub(crate) fn span(file: &str, p: Pos) -> Span {
    Span { file: file.to_string(), line: p.line, col: p.col }
}

/// Name mangling for imported grammars (Lark's `_get_mangle`).
struct Mangle {
    prefix: String,
    /// Name → index into `alias_names` (a map type the crate has already).
    aliases: HashMap<String, usize>,
    alias_names: Vec<String>,
    base: Option<Rc<Mangle>>,
}

impl Mangle {
    fn apply(&self, s: &str) -> String {
        let r = match self.aliases.get(s) {
            Some(&a) => self.alias_names[a].clone(),
            None => match s.strip_prefix('_') {
                Some(rest) => format!("_{}__{}", self.prefix, rest),
                None => format!("{}__{}", self.prefix, s),
            },
        };
        match &self.base {
            Some(b) => b.apply(&r),
            None => r,
        }
    }
}

fn mangle_value(v: &mut Value, m: &Mangle) {
    match v {
        Value::Term(n, _) | Value::Rule(n, _) => *n = m.apply(n),
        Value::Template { name, args, .. } => {
            *name = m.apply(name);
            args.iter_mut().for_each(|a| mangle_value(a, m));
        }
        Value::Str { .. } | Value::Regex { .. } | Value::Range { .. } | Value::Special { .. } => {}
    }
}

fn mangle_body(body: &mut Expansions, m: &Mangle) {
    for alt in body {
        for e in &mut alt.items {
            match &mut e.atom {
                Atom::Group(b) | Atom::Maybe(b) => mangle_body(b, m),
                Atom::Value(v) => mangle_value(v, m),
            }
        }
    }
}

/// Calls `f` on every value of `body` (recursively into groups, not into template args).
pub(crate) fn for_each_value<'b>(body: &'b Expansions, f: &mut dyn FnMut(&'b Value)) {
    for alt in body {
        for e in &alt.items {
            match &e.atom {
                Atom::Group(b) | Atom::Maybe(b) => for_each_value(b, f),
                Atom::Value(v) => f(v),
            }
        }
    }
}

/// Names referenced by a value (template usages include their arguments).
fn value_names<'b>(v: &'b Value, out: &mut Vec<&'b str>) {
    match v {
        Value::Term(n, _) | Value::Rule(n, _) => out.push(n),
        Value::Template { name, args, .. } => {
            out.push(name);
            args.iter().for_each(|a| value_names(a, out));
        }
        _ => {}
    }
}

pub(crate) struct Builder<'a> {
    pub defs: Vec<Definition>,
    pub index: HashMap<String, usize>,
    /// `%ignore`d terminal names, with where the directive was.
    pub ignore: Vec<(String, Span)>,
    /// `%indent` names with positions, and the directive's span.
    pub indent: Option<(Vec<(String, Span)>, Span)>,
    /// `%lexer` of the root grammar, and where it was given.
    pub lexer: Option<(crate::grammar::LexerMode, Span)>,
    /// `%parser earley` of the root grammar, and where it was given.
    pub earley: Option<Span>,
    /// `%reject`ed terminal names of the root grammar, with their positions.
    pub reject: Vec<(String, Span)>,
    root_file: String,
    resolve: &'a dyn Fn(&str) -> Option<String>,
    /// Modules being imported (cycle detection).
    stack: Vec<String>,
}

impl<'a> Builder<'a> {
    fn new(root_file: &str, resolve: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Builder { defs: Vec::new(), index: HashMap::default(), ignore: Vec::new(), indent: None, lexer: None, earley: None, reject: Vec::new(), root_file: root_file.to_string(), resolve, stack: Vec::new() }
    }

    fn define(&mut self, d: Definition, overriding: bool) -> Result<()> {
        if let Some(&i) = self.index.get(&d.name) {
            let old = &self.defs[i];
            if !overriding {
                let what = if d.is_term() { "terminal" } else { "rule" };
                if matches!(old.kind, DefKind::Term { body: None, .. } | DefKind::DeclaredRule) {
                    return Err(err!(Grammar, "{}: {what} '{}' is %declare'd (at {}) and also defined here", d.span(), d.name, old.span()));
                }
                return Err(err!(Grammar, "{}: {what} '{}' is defined more than once (first defined at {})", d.span(), d.name, old.span()));
            }
            if old.is_term() != d.is_term() {
                return Err(err!(Grammar, "{}: %override of '{}' changes it between rule and terminal", d.span(), d.name));
            }
            self.defs[i] = d;
            return Ok(());
        }
        if overriding {
            return Err(err!(Grammar, "{}: cannot %override '{}': it is not defined", d.span(), d.name));
        }
        self.index.insert(d.name.clone(), self.defs.len());
        self.defs.push(d);
        Ok(())
    }

    fn extend(&mut self, d: Definition) -> Result<()> {
        let Some(&i) = self.index.get(&d.name) else {
            return Err(err!(Grammar, "{}: cannot %extend '{}': it is not defined", d.span(), d.name));
        };
        let old = &mut self.defs[i];
        let (new_body, ok) = match (&d.kind, &mut old.kind) {
            (DefKind::Rule { params: p1, body, .. }, DefKind::Rule { params: p2, .. }) => (body.clone(), p1 == p2),
            (DefKind::Term { body: Some(body), .. }, DefKind::Term { body: Some(_), .. }) => (body.clone(), true),
            _ => (Vec::new(), false),
        };
        if !ok {
            return Err(err!(Grammar, "{}: cannot %extend '{}': kind, template parameters or %declare differ from its definition at {}", d.span(), d.name, old.span()));
        }
        match &mut old.kind {
            DefKind::Rule { body, .. } | DefKind::Term { body: Some(body), .. } => {
                let old_body = std::mem::take(body);
                *body = new_body.into_iter().chain(old_body).collect();
            }
            _ => {}
        }
        Ok(())
    }

    fn convert_def(d: SynDef, file: &Rc<str>, m: Option<&Mangle>) -> Definition {
        let (name, kind, pos) = match d {
            SynDef::Rule { name, params, body, pos, priority } => (name, DefKind::Rule { params, body, priority }, pos),
            SynDef::Term { name, priority, body, pos } => (name, DefKind::Term { priority, body: Some(body) }, pos),
        };
        let mut def = Definition { name, kind, file: file.clone(), pos, inline_only: false };
        if let Some(m) = m {
            def.name = m.apply(&def.name);
            match &mut def.kind {
                DefKind::Rule { params, body, .. } => {
                    params.iter_mut().for_each(|p| *p = m.apply(p));
                    mangle_body(body, m);
                }
                DefKind::Term { body: Some(body), .. } => mangle_body(body, m),
                _ => {}
            }
        }
        def
    }

    /// Loads one grammar. `module` is its module path (empty for the root);
    /// `mangle` is `None` for the root grammar.
    fn load(&mut self, text: &str, file: &str, module: &[String], mangle: Option<Rc<Mangle>>) -> Result<()> {
        let stmts = syntax::parse(text, file)?;
        let file: Rc<str> = Rc::from(file);
        // Imports first (grouped by path, in order of first appearance), as Lark does.
        type ImportGroup = ((bool, Vec<String>), Vec<(String, String, Pos)>, Pos);
        let mut imports: Vec<ImportGroup> = Vec::new();
        for s in &stmts {
            if let Stmt::Import { relative, path, names, pos } = s {
                let key = (*relative, path.clone());
                match imports.iter_mut().find(|(k, _, _)| *k == key) {
                    Some((_, ns, _)) => ns.extend(names.iter().cloned()),
                    None => imports.push((key, names.clone(), *pos)),
                }
            }
        }
        for ((relative, path), names, pos) in imports {
            self.import(relative, &path, &names, module, mangle.clone(), &span(&file, pos))?;
        }
        let m = mangle.as_deref();
        for s in stmts {
            match s {
                Stmt::Def(d) => self.define(Self::convert_def(d, &file, m), false)?,
                Stmt::Override(d) => self.define(Self::convert_def(d, &file, m), true)?,
                Stmt::Extend(d) => self.extend(Self::convert_def(d, &file, m))?,
                Stmt::Declare(names) => {
                    for (n, pos) in names {
                        let is_term = n.trim_start_matches('_').starts_with(|c: char| c.is_ascii_uppercase());
                        let name = m.map_or(n.clone(), |m| m.apply(&n));
                        let kind = if is_term { DefKind::Term { priority: 0, body: None } } else { DefKind::DeclaredRule };
                        self.define(Definition { name, kind, file: file.clone(), pos, inline_only: false }, false)?;
                    }
                }
                Stmt::Ignore { body, pos } if m.is_none() => {
                    if let [Alt { items, .. }] = body.as_slice() {
                        if let [syntax::Expr { atom: Atom::Value(Value::Term(n, npos)), op: syntax::Op::None, .. }] = items.as_slice() {
                            self.ignore.push((n.clone(), span(&file, *npos)));
                            continue;
                        }
                    }
                    let name = format!("__IGNORE_{}", self.ignore.len());
                    self.ignore.push((name.clone(), span(&file, pos)));
                    let d = Definition { name, kind: DefKind::Term { priority: 0, body: Some(body) }, file: file.clone(), pos, inline_only: false };
                    self.define(d, false)?;
                }
                Stmt::Indent { names, pos } if m.is_none() => {
                    if let Some((_, prev)) = &self.indent {
                        return Err(err!(Grammar, "{}: %indent given twice (first at {prev})", span(&file, pos)));
                    }
                    self.indent = Some((names.into_iter().map(|(n, p)| (n, span(&file, p))).collect(), span(&file, pos)));
                }
                Stmt::Lexer { mode, pos } if m.is_none() => {
                    if let Some((_, prev)) = &self.lexer {
                        return Err(err!(Grammar, "{}: %lexer given twice (first at {prev})", span(&file, pos)));
                    }
                    self.lexer = Some((mode, span(&file, pos)));
                }
                Stmt::Parser { earley, pos } if m.is_none() => {
                    if earley {
                        self.earley = Some(span(&file, pos));
                    }
                }
                Stmt::Reject { names, .. } if m.is_none() => {
                    self.reject.extend(names.into_iter().map(|(n, p)| (n, span(&file, p))));
                }
                Stmt::Ignore { .. } | Stmt::Indent { .. } | Stmt::Import { .. } | Stmt::Lexer { .. } | Stmt::Parser { .. } | Stmt::Reject { .. } => {}
            }
        }
        Ok(())
    }

    fn import(&mut self, relative: bool, path: &[String], names: &[(String, String, Pos)], module: &[String], base: Option<Rc<Mangle>>, at: &Span) -> Result<()> {
        let dotted = path.join(".");
        let shown = if relative { format!(".{dotted}") } else { dotted.clone() };
        // Module path of the imported grammar, and its text.
        let (full, file_name, text): (Vec<String>, String, String) = if relative {
            let mut full: Vec<String> = module.iter().take(module.len().saturating_sub(1)).cloned().collect();
            full.extend(path.iter().cloned());
            let key = full.join(".");
            let mut fname = Path::new(&self.root_file).parent().map(Path::to_path_buf).unwrap_or_default();
            full.iter().for_each(|p| fname.push(p));
            fname.set_extension("lark");
            match (self.resolve)(&key) {
                Some(t) => (full, fname.display().to_string(), t),
                None => return Err(err!(Grammar, "{at}: cannot import '{shown}': grammar file {} not found", fname.display())),
            }
        } else if let Some(text) = (self.resolve)(&dotted).filter(|_| dotted != "common" && dotted != "unicode") {
            // Lark tries the importing grammar's import paths before its standard library.
            let mut fname = Path::new(&self.root_file).parent().map(Path::to_path_buf).unwrap_or_default();
            path.iter().for_each(|p| fname.push(p));
            fname.set_extension("lark");
            (path.to_vec(), fname.display().to_string(), text)
        } else if dotted == "common" {
            (vec!["common".into()], "common.lark".into(), COMMON_LARK.to_string())
        } else if dotted == "unicode" {
            (vec!["unicode".into()], "unicode.lark".into(), UNICODE_LARK.to_string())
        } else {
            return Err(err!(
                Grammar,
                "{at}: cannot import '{shown}': grammask bundles Lark's standard grammars 'common' and 'unicode'; import grammar files next to this one with a relative import (`%import .{dotted}.NAME`)"
            ));
        };
        let key = full.join(".");
        if self.stack.contains(&key) || self.stack.len() > 32 {
            return Err(err!(Grammar, "{at}: import cycle: {} -> {key}", self.stack.join(" -> ")));
        }
        let aliases: HashMap<String, usize> = names.iter().enumerate().map(|(i, (n, _, _))| (n.clone(), i)).collect();
        let alias_names = names.iter().map(|(_, a, _)| a.clone()).collect();
        let mangle = Rc::new(Mangle { prefix: path.join("__"), aliases, alias_names, base });
        let mut sub = Builder::new(&self.root_file, self.resolve);
        sub.stack = self.stack.clone();
        sub.stack.push(key);
        sub.load(&text, &file_name, &full, Some(mangle.clone()))?;
        // Keep what the imported names need (Lark's `_remove_unused`).
        let mut full_set: Vec<bool> = vec![false; sub.defs.len()];
        let mut work: Vec<usize> = Vec::new();
        for (n, _, npos) in names {
            let target = mangle.apply(n);
            match sub.index.get(&target) {
                Some(&i) => work.push(i),
                None => return Err(err!(Grammar, "{}: cannot import '{n}': it is not defined in {file_name}", span(&at.file, *npos))),
            }
        }
        while let Some(i) = work.pop() {
            if std::mem::replace(&mut full_set[i], true) {
                continue;
            }
            if let DefKind::Rule { params, body, .. } = &sub.defs[i].kind {
                let mut refs = Vec::new();
                for_each_value(body, &mut |v| value_names(v, &mut refs));
                work.extend(refs.into_iter().filter(|r| !params.iter().any(|p| p == r)).filter_map(|r| sub.index.get(r).copied()));
            }
        }
        let mut keep: Vec<Option<bool>> = full_set.iter().map(|&f| f.then_some(false)).collect();
        let mut work: Vec<usize> = (0..sub.defs.len()).filter(|&i| full_set[i]).collect();
        while let Some(i) = work.pop() {
            if let DefKind::Term { body: Some(body), .. } = &sub.defs[i].kind {
                let mut refs = Vec::new();
                for_each_value(body, &mut |v| value_names(v, &mut refs));
                for r in refs {
                    if let Some(&j) = sub.index.get(r) {
                        if keep[j].is_none() {
                            keep[j] = Some(true);
                            work.push(j);
                        }
                    }
                }
            }
        }
        for (d, k) in sub.defs.into_iter().zip(keep) {
            let Some(inline_only) = k else { continue };
            if self.index.contains_key(&d.name) {
                return Err(err!(Grammar, "{at}: cannot import '{}' from {file_name}: a symbol of that name is already defined", d.name));
            }
            self.index.insert(d.name.clone(), self.defs.len());
            self.defs.push(Definition { inline_only: inline_only || d.inline_only, ..d });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
