//! Lexer and recursive-descent parser for the Lark grammar language → [`Stmt`]s.
//!
//! Line structure follows Lark: a definition ends at a newline unless the next
//! non-blank, non-comment line starts with `|` (an alternative continues) or
//! the line ends with `\`. Comments are `//` and `#` to the end of the line.
//! Every error is `ErrorKind::GrammarSyntax` and names `file:line:col` of the
//! offending token and what was expected there.

use crate::regex::python as pyregex;
use crate::error::Result;
use crate::err;

/// 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub(crate) struct Pos {
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Term(String, Pos),
    Rule(String, Pos),
    /// Escapes already evaluated.
    Str { text: String, ci: bool, pos: Pos },
    /// Raw Python regex text between the slashes.
    Regex { src: String, flags: String, pos: Pos },
    /// `lo_raw`/`hi_raw`: the text between the quotes, unevaluated (Lark builds `[lo_raw-hi_raw]`).
    Range { lo: char, hi: char, lo_raw: String, hi_raw: String, pos: Pos },
    Template { name: String, args: Vec<Value>, pos: Pos },
    /// A token named by its text (`<|im_end|>`) or id (`<[151645]>`), in a rule.
    Special { name: String, pos: Pos },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Atom {
    Group(Expansions),
    Maybe(Expansions),
    Value(Value),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    None,
    Opt,
    Star,
    Plus,
    /// `~n` (`ranged` false) or `~a..b`: Lark writes `{n}` or `{a,b}` in terminals.
    Repeat(u32, u32, bool),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Expr {
    pub atom: Atom,
    pub op: Op,
    pub pos: Pos,
}

/// One alternative; the alias (`-> name`) only shapes trees and is dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Alt {
    pub items: Vec<Expr>,
    pub alias: Option<String>,
}

pub(crate) type Expansions = Vec<Alt>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Def {
    Rule { name: String, params: Vec<String>, body: Expansions, pos: Pos, priority: Option<i32> },
    Term { name: String, priority: i32, body: Expansions, pos: Pos },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stmt {
    Def(Def),
    Override(Def),
    Extend(Def),
    Ignore { body: Expansions, pos: Pos },
    Declare(Vec<(String, Pos)>),
    /// `names`: (name in the imported grammar, local name).
    Import { relative: bool, path: Vec<String>, names: Vec<(String, String, Pos)>, pos: Pos },
    Indent { names: Vec<(String, Pos)>, pos: Pos },
    /// `%lexer contextual|basic|longest` (a grammask extension).
    Lexer { mode: crate::grammar::LexerMode, pos: Pos },
    /// `%parser lalr|earley` (a grammask extension): Lark's `parser=` option.
    Parser { earley: bool, pos: Pos },
    /// `%reject NAME+` (a grammask extension): terminals that are lexed although
    /// no rule uses them, so that a text with such a lexeme is refused.
    Reject { names: Vec<(String, Pos)>, pos: Pos },
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Rule(String),
    Term(String),
    Str { text: String, ci: bool, raw: String },
    Regex { src: String, flags: String },
    Special(String),
    Number(String),
    Directive(String),
    Punct(&'static str),
    Newline,
    Eof,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Rule(n) => format!("rule name '{n}'"),
        Tok::Term(n) => format!("terminal name '{n}'"),
        Tok::Str { .. } => "a string literal".into(),
        Tok::Regex { .. } => "a regex literal".into(),
        Tok::Special(n) => format!("token {n}"),
        Tok::Number(n) => format!("number {n}"),
        Tok::Directive(d) => format!("'%{d}'"),
        Tok::Punct(p) => format!("'{p}'"),
        Tok::Newline => "end of line".into(),
        Tok::Eof => "end of file".into(),
    }
}

/// Maximum nesting of `(`/`[`/`{` (keeps recursion bounded on hostile input).
const MAX_DEPTH: usize = crate::limits::Limits::DEFAULT.max_grammar_nesting;

struct Lexer<'a> {
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    file: &'a str,
}

impl<'a> Lexer<'a> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn pos(&self) -> Pos {
        Pos { line: self.line, col: self.col }
    }
    fn err(&self, pos: Pos, msg: impl std::fmt::Display) -> crate::Error {
        err!(GrammarSyntax, "{}:{}:{}: {}", self.file, pos.line, pos.col, msg)
    }

    /// Skips spaces, comments and `\`-newline continuations (not newlines).
    fn skip_inline(&mut self) {
        loop {
            match self.peek(0) {
                Some(' ' | '\t' | '\r' | '\x0c') => {
                    self.bump();
                }
                Some('/') if self.peek(1) == Some('/') => self.skip_comment(),
                Some('#') => self.skip_comment(),
                Some('\\') => {
                    let mut k = 1;
                    while self.peek(k) == Some(' ') || self.peek(k) == Some('\r') {
                        k += 1;
                    }
                    if self.peek(k) != Some('\n') {
                        return;
                    }
                    for _ in 0..=k {
                        self.bump();
                    }
                }
                _ => return,
            }
        }
    }
    fn skip_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.bump();
        }
    }

    fn tokenize(mut self) -> Result<Vec<(Tok, Pos)>> {
        let mut toks: Vec<(Tok, Pos)> = Vec::new();
        loop {
            self.skip_inline();
            let pos = self.pos();
            let Some(c) = self.peek(0) else {
                toks.push((Tok::Eof, pos));
                return Ok(toks);
            };
            let tok = match c {
                '\n' => {
                    // Collapse blank lines and comment lines; a following `|` continues the definition.
                    while self.peek(0) == Some('\n') {
                        self.bump();
                        self.skip_inline();
                    }
                    if self.peek(0) == Some('|') {
                        continue;
                    }
                    if matches!(toks.last(), Some((Tok::Newline, _)) | None) {
                        continue;
                    }
                    Tok::Newline
                }
                '"' => self.string(pos)?,
                '/' => self.regex(pos)?,
                '<' => self.special(pos)?,
                '%' => {
                    self.bump();
                    let name = self.ident();
                    if name.is_empty() {
                        return Err(self.err(pos, "expected a directive name after '%'"));
                    }
                    Tok::Directive(name)
                }
                c if c.is_ascii_digit() || (c == '-' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) => {
                    let mut s = String::new();
                    s.push(self.bump().unwrap_or('0'));
                    while self.peek(0).is_some_and(|d| d.is_ascii_digit()) {
                        s.push(self.bump().unwrap_or('0'));
                    }
                    Tok::Number(s)
                }
                c if c == '_' || c.is_ascii_alphabetic() => {
                    let name = self.ident();
                    classify_name(&name).ok_or_else(|| {
                        self.err(
                            pos,
                            format!(
                                "invalid name '{name}': rule names are lowercase (`_?[a-z][_a-z0-9]*`), \
                                 terminal names uppercase (`_?[A-Z][_A-Z0-9]*`)"
                            ),
                        )
                    })?
                }
                _ => {
                    const PUNCT: [&str; 16] = ["->", "..", ":", "|", "(", ")", "[", "]", "{", "}", ",", ".", "~", "+", "*", "?"];
                    let p = PUNCT.iter().find(|p| p.chars().enumerate().all(|(k, pc)| self.peek(k) == Some(pc)));
                    match p {
                        Some(p) => {
                            for _ in 0..p.len() {
                                self.bump();
                            }
                            Tok::Punct(p)
                        }
                        None if c == '!' => {
                            self.bump();
                            Tok::Punct("!")
                        }
                        None => return Err(self.err(pos, format!("unexpected character {c:?}"))),
                    }
                }
            };
            toks.push((tok, pos));
        }
    }

    fn ident(&mut self) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek(0).filter(|c| *c == '_' || c.is_ascii_alphanumeric()) {
            s.push(c);
            self.bump();
        }
        s
    }

    fn string(&mut self, pos: Pos) -> Result<Tok> {
        self.bump();
        let mut raw = String::new();
        loop {
            match self.peek(0) {
                None | Some('\n') => return Err(self.err(pos, "unterminated string literal (expected a closing '\"' on the same line)")),
                Some('"') => {
                    self.bump();
                    break;
                }
                Some('\\') if matches!(self.peek(1), Some('"' | '\\')) => {
                    raw.push('\\');
                    self.bump();
                    raw.push(self.bump().unwrap_or('\\'));
                }
                Some(c) => {
                    raw.push(c);
                    self.bump();
                }
            }
        }
        let ci = self.peek(0) == Some('i') && !self.peek(1).is_some_and(|c| c == '_' || c.is_ascii_alphanumeric());
        if ci {
            self.bump();
        }
        let text = pyregex::eval_string(&raw).map_err(|e| self.err(pos, format!("bad string literal: {e}")))?;
        Ok(Tok::Str { text, ci, raw })
    }

    /// `<...>`: a token by text (`<|im_end|>`, no spaces) or id (`<[151645]>`).
    fn special(&mut self, pos: Pos) -> Result<Tok> {
        let mut name = String::new();
        while let Some(c) = self.peek(0).filter(|c| !c.is_whitespace()) {
            name.push(c);
            self.bump();
            if c == '>' && name.len() > 2 {
                break;
            }
        }
        if !name.ends_with('>') || name.len() < 3 {
            return Err(self.err(pos, format!("unterminated token name {name:?} (expected `<text>` such as `<|im_end|>`, or `<[id]>`)")));
        }
        if let Some(id) = name.strip_prefix("<[").and_then(|n| n.strip_suffix("]>")) {
            if id.is_empty() || id.len() > 9 || !id.bytes().all(|b| b.is_ascii_digit()) {
                return Err(self.err(pos, format!("bad token id in {name} (expected `<[` digits `]>`)")));
            }
        }
        Ok(Tok::Special(name))
    }

    fn regex(&mut self, pos: Pos) -> Result<Tok> {
        self.bump();
        let mut src = String::new();
        loop {
            match self.peek(0) {
                None => return Err(self.err(pos, "unterminated regex literal (expected a closing '/')")),
                Some('/') => {
                    self.bump();
                    break;
                }
                Some('\\') if matches!(self.peek(1), Some('/' | '\\')) => {
                    src.push('\\');
                    self.bump();
                    src.push(self.bump().unwrap_or('\\'));
                }
                Some(c) => {
                    src.push(c);
                    self.bump();
                }
            }
        }
        let mut flags = String::new();
        while let Some(f) = self.peek(0).filter(|f| "imslux".contains(*f)) {
            flags.push(f);
            self.bump();
        }
        if src.contains('\n') && !flags.contains('x') {
            return Err(self.err(pos, "newlines are only allowed in regexes with the `x` (verbose) flag"));
        }
        Ok(Tok::Regex { src, flags })
    }
}

fn classify_name(n: &str) -> Option<Tok> {
    let body = n.strip_prefix('_').unwrap_or(n);
    let mut cs = body.chars();
    let first = cs.next()?;
    if first.is_ascii_lowercase() && cs.clone().all(|c| c == '_' || c.is_ascii_lowercase() || c.is_ascii_digit()) {
        Some(Tok::Rule(n.to_string()))
    } else if first.is_ascii_uppercase() && cs.all(|c| c == '_' || c.is_ascii_uppercase() || c.is_ascii_digit()) {
        Some(Tok::Term(n.to_string()))
    } else {
        None
    }
}

struct Parser<'a> {
    toks: Vec<(Tok, Pos)>,
    i: usize,
    file: &'a str,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].0
    }
    fn pos(&self) -> Pos {
        self.toks[self.i.min(self.toks.len() - 1)].1
    }
    fn next(&mut self) -> (Tok, Pos) {
        let t = self.toks[self.i.min(self.toks.len() - 1)].clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn err_here(&self, expected: impl std::fmt::Display) -> crate::Error {
        let pos = self.pos();
        err!(GrammarSyntax, "{}:{}:{}: expected {}, found {}", self.file, pos.line, pos.col, expected, describe(self.peek()))
    }
    fn err_at(&self, pos: Pos, msg: impl std::fmt::Display) -> crate::Error {
        err!(GrammarSyntax, "{}:{}:{}: {}", self.file, pos.line, pos.col, msg)
    }
    fn expect(&mut self, p: &str, context: &str) -> Result<()> {
        if self.is(p) {
            self.next();
            Ok(())
        } else {
            Err(self.err_here(format!("'{p}' {context}")))
        }
    }
    fn end_of_statement(&mut self, what: &str) -> Result<()> {
        match self.peek() {
            Tok::Newline => {
                self.next();
                Ok(())
            }
            Tok::Eof => Ok(()),
            Tok::Punct(p @ (")" | "]")) => {
                let open = if *p == ")" { "(" } else { "[" };
                Err(self.err_at(self.pos(), format!("unmatched '{p}' (no '{open}' is open) in {what}")))
            }
            _ => Err(self.err_here(format!("end of line after {what}"))),
        }
    }

    fn file(&mut self) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Eof => return Ok(out),
                Tok::Newline => {
                    self.next();
                }
                Tok::Directive(d) => out.push(self.directive(&d)?),
                _ => out.push(Stmt::Def(self.definition()?)),
            }
        }
    }

    fn priority(&mut self) -> Result<Option<i32>> {
        if !self.is(".") {
            return Ok(None);
        }
        self.next();
        if self.is("+") {
            self.next();
        }
        let pos = self.pos();
        match self.next().0 {
            Tok::Number(n) => {
                let v: i32 = n.parse().map_err(|_| self.err_at(pos, format!("priority {n} is out of range")))?;
                Ok(Some(v))
            }
            t => Err(self.err_at(pos, format!("expected a priority number after '.', found {}", describe(&t)))),
        }
    }

    fn definition(&mut self) -> Result<Def> {
        // Rule modifiers `?`, `!`, `?!`, `!?` only shape trees.
        let mut nmods = 0;
        while (self.is("?") || self.is("!")) && nmods < 2 {
            self.next();
            nmods += 1;
        }
        let pos = self.pos();
        match self.next().0 {
            Tok::Rule(name) => {
                let mut params = Vec::new();
                if self.is("{") {
                    self.next();
                    loop {
                        let ppos = self.pos();
                        match self.next().0 {
                            Tok::Rule(p) => params.push(p),
                            t => return Err(self.err_at(ppos, format!("expected a template parameter (a rule name) in '{name}{{...}}', found {}", describe(&t)))),
                        }
                        if self.is(",") {
                            self.next();
                        } else {
                            self.expect("}", &format!("to close the parameters of template '{name}'"))?;
                            break;
                        }
                    }
                }
                let priority = self.priority()?;
                self.expect(":", &format!("after rule name '{name}'"))?;
                let body = self.expansions()?;
                self.end_of_statement(&format!("the definition of rule '{name}'"))?;
                Ok(Def::Rule { name, params, body, pos, priority })
            }
            Tok::Term(name) => {
                if nmods > 0 {
                    return Err(self.err_at(pos, format!("rule modifiers ('?', '!') cannot be applied to terminal '{name}'")));
                }
                let priority = self.priority()?.unwrap_or(0);
                self.expect(":", &format!("after terminal name '{name}'"))?;
                let body = self.expansions()?;
                self.end_of_statement(&format!("the definition of terminal '{name}'"))?;
                Ok(Def::Term { name, priority, body, pos })
            }
            t => Err(self.err_at(pos, format!("expected a rule or terminal definition or a %directive, found {}", describe(&t)))),
        }
    }

    fn directive(&mut self, d: &str) -> Result<Stmt> {
        let dpos = self.pos();
        self.next();
        match d {
            "ignore" => {
                let body = self.expansions()?;
                if body.len() == 1 && body[0].items.is_empty() {
                    return Err(self.err_here("a terminal, string or regex after %ignore"));
                }
                self.end_of_statement("%ignore")?;
                Ok(Stmt::Ignore { body, pos: dpos })
            }
            "declare" => {
                let mut names = Vec::new();
                loop {
                    let pos = self.pos();
                    match self.peek().clone() {
                        Tok::Term(n) | Tok::Rule(n) => {
                            self.next();
                            names.push((n, pos));
                        }
                        Tok::Newline | Tok::Eof if !names.is_empty() => break,
                        _ => return Err(self.err_here("a terminal or rule name after %declare")),
                    }
                }
                self.end_of_statement("%declare")?;
                Ok(Stmt::Declare(names))
            }
            "indent" => {
                let mut names = Vec::new();
                for what in ["the newline terminal", "the INDENT terminal", "the DEDENT terminal"] {
                    let pos = self.pos();
                    match self.peek().clone() {
                        Tok::Term(n) => {
                            self.next();
                            names.push((n, pos));
                        }
                        _ => return Err(self.err_here(format!("{what} (%indent NEWLINE INDENT DEDENT)"))),
                    }
                }
                self.end_of_statement("%indent NEWLINE INDENT DEDENT")?;
                Ok(Stmt::Indent { names, pos: dpos })
            }
            "reject" => {
                let mut names = Vec::new();
                loop {
                    let pos = self.pos();
                    match self.peek().clone() {
                        Tok::Term(n) | Tok::Special(n) => {
                            self.next();
                            names.push((n, pos));
                        }
                        Tok::Newline | Tok::Eof if !names.is_empty() => break,
                        _ => return Err(self.err_here("a terminal name or a token (<...>) after %reject")),
                    }
                }
                self.end_of_statement("%reject")?;
                Ok(Stmt::Reject { names, pos: dpos })
            }
            "override" | "extend" => {
                let def = self.definition()?;
                Ok(if d == "override" { Stmt::Override(def) } else { Stmt::Extend(def) })
            }
            "import" => self.import(dpos),
            "lexer" => {
                let pos = self.pos();
                let name = match self.next().0 {
                    Tok::Rule(n) => n,
                    t => return Err(self.err_at(pos, format!("expected a lexer mode after %lexer (contextual, basic or longest), found {}", describe(&t)))),
                };
                let mode = match crate::grammar::LexerMode::from_name(&name) {
                    Some(m @ (crate::grammar::LexerMode::Contextual | crate::grammar::LexerMode::Basic | crate::grammar::LexerMode::Longest)) => m,
                    _ => return Err(self.err_at(pos, format!("unknown lexer mode '{name}' (expected contextual, basic or longest)"))),
                };
                self.end_of_statement("%lexer")?;
                Ok(Stmt::Lexer { mode, pos: dpos })
            }
            "parser" => {
                let pos = self.pos();
                let earley = match self.next().0 {
                    Tok::Rule(n) if n == "lalr" || n == "earley" => n == "earley",
                    t => return Err(self.err_at(pos, format!("expected lalr or earley after %parser, found {}", describe(&t)))),
                };
                self.end_of_statement("%parser")?;
                Ok(Stmt::Parser { earley, pos: dpos })
            }
            _ => Err(self.err_at(dpos, format!("unknown directive '%{d}'; expected one of %import, %ignore, %declare, %override, %extend, %indent, %lexer, %parser, %reject"))),
        }
    }

    fn name(&mut self, what: &str) -> Result<String> {
        match self.peek().clone() {
            Tok::Term(n) | Tok::Rule(n) => {
                self.next();
                Ok(n)
            }
            _ => Err(self.err_here(what)),
        }
    }

    fn import(&mut self, pos: Pos) -> Result<Stmt> {
        let relative = self.is(".");
        if relative {
            self.next();
        }
        let mut parts = vec![self.name("a module name after %import")?];
        while self.is(".") {
            self.next();
            parts.push(self.name("a name after '.' in %import")?);
        }
        if self.is("(") {
            self.next();
            let mut names = Vec::new();
            loop {
                let npos = self.pos();
                let n = self.name("a rule or terminal name in the %import list")?;
                names.push((n.clone(), n, npos));
                if self.is(",") {
                    self.next();
                } else {
                    self.expect(")", "to close the %import list")?;
                    break;
                }
            }
            self.end_of_statement("%import")?;
            return Ok(Stmt::Import { relative, path: parts, names, pos });
        }
        let npos = pos;
        let last = parts.pop().unwrap_or_default();
        if parts.is_empty() {
            return Err(self.err_at(pos, format!("nothing imported from grammar '{last}': write `%import {last}.NAME` or `%import {last} (NAME, ...)`")));
        }
        let alias = if self.is("->") {
            self.next();
            let apos = self.pos();
            let a = self.name("a new name after '->' in %import")?;
            if last.trim_start_matches('_').starts_with(|c: char| c.is_ascii_uppercase()) != a.trim_start_matches('_').starts_with(|c: char| c.is_ascii_uppercase()) {
                return Err(self.err_at(apos, format!("cannot import '{last}' as '{a}': a terminal must be imported under a terminal name and a rule under a rule name")));
            }
            a
        } else {
            last.clone()
        };
        self.end_of_statement("%import")?;
        Ok(Stmt::Import { relative, path: parts, names: vec![(last, alias, npos)], pos })
    }

    fn expansions(&mut self) -> Result<Expansions> {
        let mut alts = vec![self.alias()?];
        while self.is("|") {
            self.next();
            alts.push(self.alias()?);
        }
        Ok(alts)
    }

    fn alias(&mut self) -> Result<Alt> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Tok::Punct("(" | "[") | Tok::Rule(_) | Tok::Term(_) | Tok::Str { .. } | Tok::Regex { .. } | Tok::Special(_) => items.push(self.expr()?),
                Tok::Punct(op @ ("+" | "*" | "?" | "~")) => {
                    let op = *op;
                    return Err(self.err_at(self.pos(), format!("operator '{op}' must follow an expression")));
                }
                _ => break,
            }
        }
        let alias = if self.is("->") {
            self.next();
            let pos = self.pos();
            match self.next().0 {
                Tok::Rule(n) => Some(n),
                t => return Err(self.err_at(pos, format!("expected an alias (a lowercase rule name) after '->', found {}", describe(&t)))),
            }
        } else {
            None
        };
        match self.peek() {
            Tok::Punct("|" | ")" | "]") | Tok::Newline | Tok::Eof => Ok(Alt { items, alias }),
            Tok::Punct(":") => Err(self.err_here("an expression, '|' or end of line (a definition ends at a newline; continuation lines must start with '|')")),
            _ => Err(self.err_here("an expression, '|', '->' or end of line")),
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err_at(self.pos(), format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn number(&mut self, after: &str) -> Result<u32> {
        let pos = self.pos();
        match self.next().0 {
            Tok::Number(n) => n.parse().map_err(|_| self.err_at(pos, format!("repeat count {n} is out of range"))),
            t => Err(self.err_at(pos, format!("expected a number after '{after}', found {}", describe(&t)))),
        }
    }

    fn expr(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let atom = match self.peek().clone() {
            Tok::Punct(open @ ("(" | "[")) => {
                self.next();
                let body = self.nested(|p| p.expansions())?;
                let close = if open == "(" { ")" } else { "]" };
                self.expect(close, &format!("to close '{open}' opened at {}:{}", pos.line, pos.col))?;
                if open == "(" { Atom::Group(body) } else { Atom::Maybe(body) }
            }
            _ => Atom::Value(self.value()?),
        };
        let op = match self.peek() {
            Tok::Punct("?") => Op::Opt,
            Tok::Punct("*") => Op::Star,
            Tok::Punct("+") => Op::Plus,
            Tok::Punct("~") => {
                self.next();
                let mn = self.number("~")?;
                let ranged = self.is("..");
                let mx = if ranged {
                    self.next();
                    self.number("..")?
                } else {
                    mn
                };
                if mx < mn {
                    return Err(self.err_at(pos, format!("bad repeat range ~{mn}..{mx} (the maximum is below the minimum)")));
                }
                Op::Repeat(mn, mx, ranged)
            }
            _ => Op::None,
        };
        if matches!(op, Op::Opt | Op::Star | Op::Plus) {
            self.next();
        }
        if op != Op::None {
            if let Tok::Punct(p @ ("?" | "*" | "+" | "~")) = self.peek() {
                let p = *p;
                return Err(self.err_at(self.pos(), format!("operator '{p}' cannot follow another operator (use parentheses)")));
            }
        }
        Ok(Expr { atom, op, pos })
    }

    fn value(&mut self) -> Result<Value> {
        let (tok, pos) = self.next();
        Ok(match tok {
            Tok::Term(n) => Value::Term(n, pos),
            Tok::Rule(n) => {
                if !self.is("{") {
                    return Ok(Value::Rule(n, pos));
                }
                self.next();
                let mut args = Vec::new();
                self.nested(|p| {
                    loop {
                        args.push(p.value()?);
                        if p.is(",") {
                            p.next();
                        } else {
                            return p.expect("}", &format!("to close the arguments of template '{n}'"));
                        }
                    }
                })?;
                Value::Template { name: n, args, pos }
            }
            Tok::Str { text, ci, raw } => {
                if self.is("..") {
                    self.next();
                    let hpos = self.pos();
                    let (hi, hi_raw) = match self.next().0 {
                        Tok::Str { text, raw, .. } => (text, raw),
                        t => return Err(self.err_at(hpos, format!("expected a string after '..' in a range, found {}", describe(&t)))),
                    };
                    let single = |s: &str, p: Pos| {
                        let mut cs = s.chars();
                        match (cs.next(), cs.next()) {
                            (Some(c), None) => Ok(c),
                            _ => Err(self.err_at(p, format!("range endpoints must be single characters, found {s:?}"))),
                        }
                    };
                    let (lo, hi) = (single(&text, pos)?, single(&hi, hpos)?);
                    if lo > hi {
                        return Err(self.err_at(pos, format!("empty range {lo:?}..{hi:?}")));
                    }
                    return Ok(Value::Range { lo, hi, lo_raw: raw, hi_raw, pos });
                }
                Value::Str { text, ci, pos }
            }
            Tok::Regex { src, flags } => Value::Regex { src, flags, pos },
            Tok::Special(name) => Value::Special { name, pos },
            t => return Err(self.err_at(pos, format!("expected a rule, terminal, string or regex, found {}", describe(&t)))),
        })
    }
}

/// Parses grammar text into statements.
pub(crate) fn parse(text: &str, file: &str) -> Result<Vec<Stmt>> {
    let toks = Lexer { chars: text.chars().collect(), i: 0, line: 1, col: 1, file }.tokenize()?;
    Parser { toks, i: 0, file, depth: 0 }.file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_and_comments() {
        let s = parse("a: b // c\n\n  // d\n  | c # e\nB: \"x\"\n", "t.lark").unwrap();
        assert_eq!(s.len(), 2);
        match &s[0] {
            Stmt::Def(Def::Rule { body, .. }) => assert_eq!(body.len(), 2),
            _ => panic!(),
        }
    }

    #[test]
    fn positions() {
        let e = parse("a: b\nvalue | c\n", "json.lark").unwrap_err();
        assert_eq!(e.message(), "json.lark:2:7: expected ':' after rule name 'value', found '|'");
        let e = parse("a: (b c\n", "g.lark").unwrap_err();
        assert_eq!(e.message(), "g.lark:1:8: expected ')' to close '(' opened at 1:4, found end of line");
        let e = parse("a: b??\n", "g.lark").unwrap_err();
        assert!(e.message().starts_with("g.lark:1:6: operator '?' cannot follow"), "{}", e.message());
        let e = parse("a: \"abc\n", "g.lark").unwrap_err();
        assert!(e.message().starts_with("g.lark:1:4: unterminated string"), "{}", e.message());
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let text = format!("a: {}b{}\n", "(".repeat(5000), ")".repeat(5000));
        assert!(parse(&text, "g").is_err());
    }
}
