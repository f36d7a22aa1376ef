//! The GBNF / EBNF grammar language → rules of expressions (no meaning yet).
//!
//! GBNF is llama.cpp's (`llama-grammar.cpp`, `parse_sequence`): a rule is
//! `name ::= alternatives` and ends at the end of its line, except inside
//! parentheses, after `|` and after `::=`; `#` comments run to the end of the
//! line. EBNF is xgrammar's superset: line breaks are insignificant (a rule
//! ends where the next `name ::=` starts a line), names may hold `_` and
//! `.`, more escapes, `""` and `( )` match the empty string.
//!
//! Every syntax error is `ErrorKind::GrammarSyntax` naming `file:line:col`;
//! a construct that parses but cannot be enforced is `ErrorKind::Grammar`,
//! also at `file:line:col`, saying which construct and why.

use crate::grammar::Span;
use crate::{err, Error, Result};

/// Most repetitions `{m,n}` accepted for a count (llama.cpp unrolls up to 2,000).
pub(crate) const MAX_REPEAT: u32 = 2000;

/// Highest Unicode scalar value.
const MAX_CHAR: u32 = 0x10FFFF;

/// A set of Unicode scalar values: sorted, disjoint, non-adjacent ranges.
pub(crate) type Ranges = Vec<(u32, u32)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    /// A string literal (possibly empty in EBNF).
    Lit(Vec<char>),
    /// One character of the set (negation and `.` already resolved; never empty).
    Class(Ranges),
    /// A rule, by index into [`Grammar::rules`].
    Ref(usize),
    Seq(Vec<Expr>),
    Alt(Vec<Expr>),
    /// `x{min,max}`; `max: None` is unbounded.
    Rep(Box<Expr>, u32, Option<u32>),
}

#[derive(Clone, Debug)]
pub(crate) struct RuleDef {
    pub name: String,
    pub span: Span,
    pub body: Expr,
}

#[derive(Clone, Debug)]
pub(crate) struct Grammar {
    pub rules: Vec<RuleDef>,
}

/// Normalizes a list of ranges (sorts, merges, drops the surrogates).
pub(crate) fn normalize(mut r: Ranges) -> Ranges {
    let mut split = Vec::with_capacity(r.len() + 1);
    for (a, b) in r.drain(..) {
        // Surrogates are no characters.
        if a < 0xD800 && b > 0xDFFF {
            split.push((a, 0xD7FF));
            split.push((0xE000, b));
        } else if (0xD800..=0xDFFF).contains(&a) && (0xD800..=0xDFFF).contains(&b) {
        } else if (0xD800..=0xDFFF).contains(&a) {
            split.push((0xE000, b));
        } else if (0xD800..=0xDFFF).contains(&b) {
            split.push((a, 0xD7FF));
        } else {
            split.push((a, b));
        }
    }
    // Through the crate's one pair sort (wasm size).
    crate::sort::sort_packed(&mut split);
    let mut out: Ranges = Vec::new();
    for (a, b) in split {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The complement of a normalized set within the scalar values.
pub(crate) fn complement(r: &Ranges) -> Ranges {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(a, b) in r {
        if a > next {
            out.push((next, a - 1));
        }
        next = b + 1;
    }
    if next <= MAX_CHAR {
        out.push((next, MAX_CHAR));
    }
    normalize(out)
}

struct Parser<'a> {
    s: Vec<char>,
    pos: usize,
    file: &'a str,
    ebnf: bool,
    /// Rule names in order of first mention (definition or reference).
    names: Vec<String>,
    index: crate::hash::FxMap<String, usize>,
    defs: Vec<Option<(Span, Expr)>>,
    /// Where each name was first referenced (for "undefined rule").
    first_ref: Vec<Option<Span>>,
}

fn is_word(c: char, ebnf: bool) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_' || (ebnf && c == '.')
}

/// The macros of xgrammar's EBNF (each refused by name).
const MACROS: [&str; 6] = ["Regex", "Substring", "TagDispatch", "Token", "ExcludeToken", "TokenTagDispatch"];

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.pos).copied()
    }
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(self.pos + i).copied()
    }
    fn span_at(&self, pos: usize) -> Span {
        let mut line = 1u32;
        let mut col = 1u32;
        for &c in &self.s[..pos.min(self.s.len())] {
            if c == '\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
        }
        Span { file: self.file.to_string(), line, col }
    }
    fn syntax_at(&self, pos: usize, msg: impl std::fmt::Display) -> Error {
        err!(GrammarSyntax, "{}: {msg}", self.span_at(pos))
    }
    fn syntax(&self, msg: impl std::fmt::Display) -> Error {
        let found = match self.peek() {
            None => "the end of the grammar".to_string(),
            Some('\n') => "the end of the line".to_string(),
            Some(c) => format!("{c:?}"),
        };
        self.syntax_at(self.pos, format!("{msg}, found {found}"))
    }
    fn unsupported(&self, pos: usize, what: &str, why: &str) -> Error {
        err!(Grammar, "{}: unsupported: {what}: {why}", self.span_at(pos))
    }

    fn skip_space(&mut self, newline_ok: bool) {
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' || (newline_ok && (c == '\r' || c == '\n')) {
                self.pos += 1;
            } else if c == '#' {
                while !matches!(self.peek(), None | Some('\r') | Some('\n')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    fn name_index(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        self.defs.push(None);
        self.first_ref.push(None);
        i
    }

    fn parse_name(&mut self) -> Result<String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| is_word(c, self.ebnf)) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.syntax("expected a rule name"));
        }
        Ok(self.s[start..self.pos].iter().collect())
    }

    /// EBNF: a rule starts here (a name that is the first token of its line,
    /// then `::=`, or `[options] ::=` on the same line).
    fn rule_starts_here(&self) -> bool {
        let mut i = self.pos;
        // First token of its line.
        let mut j = i;
        while j > 0 && matches!(self.s[j - 1], ' ' | '\t') {
            j -= 1;
        }
        if j > 0 && self.s[j - 1] != '\n' && self.s[j - 1] != '\r' {
            return false;
        }
        let n0 = i;
        while i < self.s.len() && is_word(self.s[i], true) {
            i += 1;
        }
        if i == n0 {
            return false;
        }
        while i < self.s.len() && matches!(self.s[i], ' ' | '\t') {
            i += 1;
        }
        if i < self.s.len() && self.s[i] == '[' {
            while i < self.s.len() && self.s[i] != ']' && self.s[i] != '\n' {
                i += 1;
            }
            if i >= self.s.len() || self.s[i] != ']' {
                return false;
            }
            i += 1;
            while i < self.s.len() && matches!(self.s[i], ' ' | '\t') {
                i += 1;
            }
        }
        self.s[i..].starts_with(&[':', ':', '='])
    }

    fn parse_hex(&mut self, start: usize, digits: Option<usize>) -> Result<u32> {
        let mut v: u32 = 0;
        let mut n = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
            if digits == Some(n) {
                break;
            }
            v = v.checked_mul(16).and_then(|v| v.checked_add(d)).filter(|&v| v <= 0xFFFF_FFF).unwrap_or(u32::MAX);
            n += 1;
            self.pos += 1;
        }
        if n == 0 || digits.is_some_and(|d| d != n) {
            return Err(self.syntax_at(start, format!("expected {} hex digits after `\\{}`", digits.map_or("some".to_string(), |d| d.to_string()), self.s[start + 1])));
        }
        Ok(v)
    }

    /// One character of a literal or a class (escapes decoded).
    fn parse_char(&mut self, in_class: bool) -> Result<u32> {
        let start = self.pos;
        let Some(c) = self.peek() else { return Err(self.syntax("unexpected end of the grammar")) };
        if c != '\\' {
            if (c == '\n' || c == '\r') && self.ebnf {
                return Err(self.syntax_at(start, "a line break inside a literal or class (write \\n)"));
            }
            self.pos += 1;
            return Ok(c as u32);
        }
        let Some(e) = self.at(1) else { return Err(self.syntax_at(start, "unexpected end of the grammar after `\\`")) };
        self.pos += 2;
        let v = match e {
            'x' => self.parse_hex(start, if self.ebnf { None } else { Some(2) })?,
            'u' => self.parse_hex(start, Some(4))?,
            'U' => self.parse_hex(start, Some(8))?,
            't' => 9,
            'r' => 13,
            'n' => 10,
            '\\' | '"' | '[' | ']' => e as u32,
            _ if self.ebnf => match e {
                '/' | '\'' | '?' => e as u32,
                'b' => 8,
                'f' => 12,
                'a' => 7,
                'v' => 11,
                '0' => 0,
                'e' => 27,
                '^' | '$' | '.' | '*' | '+' | '(' | ')' | '{' | '}' | '|' | '-' if in_class => e as u32,
                _ => return Err(self.syntax_at(start, format!("unknown escape `\\{e}`"))),
            },
            _ => return Err(self.syntax_at(start, format!("unknown escape `\\{e}`"))),
        };
        if v > MAX_CHAR || (0xD800..=0xDFFF).contains(&v) {
            return Err(self.syntax_at(start, format!("`{}` is not a Unicode character (U+{v:04X})", self.s[start..self.pos].iter().collect::<String>())));
        }
        Ok(v)
    }

    fn parse_literal(&mut self) -> Result<Expr> {
        let open = self.pos;
        self.pos += 1;
        let mut chars = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.syntax_at(open, "unterminated string literal")),
                Some('"') => break,
                _ => {
                    let v = self.parse_char(false)?;
                    chars.push(char::from_u32(v).ok_or_else(|| self.syntax_at(open, "not a character"))?);
                }
            }
        }
        self.pos += 1;
        Ok(Expr::Lit(chars))
    }

    fn parse_class(&mut self) -> Result<Expr> {
        let open = self.pos;
        self.pos += 1;
        let neg = self.peek() == Some('^');
        if neg {
            self.pos += 1;
        }
        let mut ranges = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.syntax_at(open, "unterminated character class")),
                Some(']') => break,
                _ => {
                    let at = self.pos;
                    let a = self.parse_char(true)?;
                    let mut b = a;
                    if self.peek() == Some('-') && self.at(1).is_some_and(|c| c != ']') {
                        self.pos += 1;
                        b = self.parse_char(true)?;
                        if b < a {
                            return Err(self.syntax_at(at, "character range out of order"));
                        }
                    }
                    ranges.push((a, b));
                }
            }
        }
        self.pos += 1;
        let set = normalize(ranges);
        if set.is_empty() && !neg {
            return Err(self.syntax_at(open, "empty character class `[]` (it matches no character)"));
        }
        let set = if neg { complement(&set) } else { set };
        if set.is_empty() {
            return Err(self.syntax_at(open, "this negated class excludes every character"));
        }
        Ok(Expr::Class(set))
    }

    fn parse_int(&mut self) -> Result<u32> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.syntax("expected an integer"));
        }
        let t: String = self.s[start..self.pos].iter().collect();
        match t.parse::<u32>() {
            Ok(v) if v <= MAX_REPEAT => Ok(v),
            _ => Err(err!(Limit, "{}: repetition count {t} is over the limit of {MAX_REPEAT}", self.span_at(start))),
        }
    }

    fn parse_alternates(&mut self, nested: bool) -> Result<Expr> {
        let mut alts = vec![self.parse_sequence(nested)?];
        while self.peek() == Some('|') {
            self.pos += 1;
            self.skip_space(true);
            alts.push(self.parse_sequence(nested)?);
        }
        Ok(if alts.len() == 1 { alts.pop().unwrap() } else { Expr::Alt(alts) })
    }

    fn parse_sequence(&mut self, nested: bool) -> Result<Expr> {
        let nl = nested || self.ebnf;
        let mut items: Vec<Expr> = Vec::new();
        // Whether the last item already carries an operator (EBNF refuses `x**`).
        let mut repeated = false;
        while let Some(c) = self.peek() {
            let start = self.pos;
            match c {
                '"' => {
                    items.push(self.parse_literal()?);
                    repeated = false;
                }
                '[' => {
                    items.push(self.parse_class()?);
                    repeated = false;
                }
                '<' | '!' => {
                    let mut end = self.pos;
                    while end < self.s.len() && self.s[end] != '>' && self.s[end] != '\n' {
                        end += 1;
                    }
                    let text: String = self.s[start..(end + 1).min(self.s.len())].iter().collect();
                    return Err(self.unsupported(
                        start,
                        &format!("token reference `{text}`"),
                        "grammask constrains text, and special tokens inside a grammar are not enforced yet",
                    ));
                }
                '.' => {
                    self.pos += 1;
                    items.push(Expr::Class(complement(&Vec::new())));
                    repeated = false;
                }
                '(' => {
                    self.pos += 1;
                    self.skip_space(true);
                    if self.peek() == Some('=') {
                        return Err(self.unsupported(start, "lookahead assertion `(= ...)`", "xgrammar's lookahead assertions are not enforced"));
                    }
                    let inner = self.parse_alternates(true)?;
                    if self.peek() != Some(')') {
                        return Err(self.syntax("expected `)`"));
                    }
                    self.pos += 1;
                    items.push(inner);
                    repeated = false;
                }
                '*' | '+' | '?' | '{' => {
                    let Some(last) = items.pop() else {
                        return Err(self.syntax_at(start, format!("`{c}` needs an item before it")));
                    };
                    if repeated && self.ebnf {
                        return Err(self.syntax_at(start, "two repetition operators in a row (write `(x+)+`)"));
                    }
                    self.pos += 1;
                    let (min, max) = match c {
                        '*' => (0, None),
                        '+' => (1, None),
                        '?' => (0, Some(1)),
                        _ => {
                            self.skip_space(nl);
                            let min = self.parse_int()?;
                            self.skip_space(nl);
                            let max = match self.peek() {
                                Some('}') => Some(min),
                                Some(',') => {
                                    self.pos += 1;
                                    self.skip_space(nl);
                                    let max = if self.peek().is_some_and(|c| c.is_ascii_digit()) { Some(self.parse_int()?) } else { None };
                                    self.skip_space(nl);
                                    if self.peek() != Some('}') {
                                        return Err(self.syntax("expected `}`"));
                                    }
                                    max
                                }
                                _ => return Err(self.syntax("expected `,` or `}`")),
                            };
                            self.pos += 1;
                            if max.is_some_and(|m| m < min) {
                                return Err(self.syntax_at(start, format!("repetition {{{min},{}}}: the maximum is below the minimum", max.unwrap())));
                            }
                            (min, max)
                        }
                    };
                    items.push(Expr::Rep(Box::new(last), min, max));
                    repeated = true;
                }
                c if is_word(c, self.ebnf) => {
                    if self.ebnf && self.rule_starts_here() {
                        break;
                    }
                    let name = self.parse_name()?;
                    if self.ebnf && self.peek() == Some('(') && MACROS.contains(&name.as_str()) {
                        return Err(self.unsupported(start, &format!("xgrammar macro `{name}(...)`"), "grammask does not implement xgrammar's macros"));
                    }
                    let i = self.name_index(&name);
                    if self.first_ref[i].is_none() {
                        self.first_ref[i] = Some(self.span_at(start));
                    }
                    items.push(Expr::Ref(i));
                    repeated = false;
                }
                _ => break,
            }
            self.skip_space(nl);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Expr::Seq(items) })
    }

    fn parse_rule(&mut self) -> Result<()> {
        let start = self.pos;
        let name = self.parse_name()?;
        self.skip_space(false);
        if self.ebnf && self.peek() == Some('[') {
            let mut end = self.pos;
            while end < self.s.len() && self.s[end] != ']' {
                end += 1;
            }
            let text: String = self.s[self.pos..(end + 1).min(self.s.len())].iter().collect();
            return Err(self.unsupported(self.pos, &format!("rule options `{text}`"), "xgrammar's rule options (token and character budgets, captures, lazy, temperature) are not enforced"));
        }
        if !(self.peek() == Some(':') && self.at(1) == Some(':') && self.at(2) == Some('=')) {
            return Err(self.syntax("expected `::=`"));
        }
        self.pos += 3;
        self.skip_space(true);
        let body = self.parse_alternates(false)?;
        let i = self.name_index(&name);
        if let Some((prev, _)) = &self.defs[i] {
            return Err(err!(Grammar, "{}: rule `{name}` is defined twice (first at {prev})", self.span_at(start)));
        }
        self.defs[i] = Some((self.span_at(start), body));
        if !self.ebnf {
            match self.peek() {
                Some('\r') => {
                    self.pos += 1;
                    if self.peek() == Some('\n') {
                        self.pos += 1;
                    }
                }
                Some('\n') => self.pos += 1,
                None => {}
                _ => return Err(self.syntax("expected the end of the line")),
            }
        } else if self.peek().is_some() && !self.rule_starts_here() {
            return Err(self.syntax("expected a rule, an alternative or the end of the grammar"));
        }
        self.skip_space(true);
        Ok(())
    }
}

/// Parses GBNF (`ebnf: false`) or xgrammar EBNF text.
pub(crate) fn parse(text: &str, file: &str, ebnf: bool) -> Result<Grammar> {
    let mut p = Parser {
        s: text.chars().collect(),
        pos: 0,
        file,
        ebnf,
        names: Vec::new(),
        index: Default::default(),
        defs: Vec::new(),
        first_ref: Vec::new(),
    };
    p.skip_space(true);
    while p.peek().is_some() {
        p.parse_rule()?;
    }
    let mut rules = Vec::with_capacity(p.names.len());
    for (i, name) in p.names.iter().enumerate() {
        match p.defs[i].take() {
            Some((span, body)) => rules.push(RuleDef { name: name.clone(), span, body }),
            None => {
                let at = p.first_ref[i].clone().unwrap_or_default();
                return Err(err!(Grammar, "{at}: undefined rule `{name}`"));
            }
        }
    }
    Ok(Grammar { rules })
}
