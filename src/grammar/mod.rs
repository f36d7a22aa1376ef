//! The grammar: a Lark front end ([`lark`]) that normalizes to a plain
//! context-free grammar over terminals ([`Cfg`]).
//!
//! The normalized form is what every later stage consumes:
//! - terminals carry a regex (regex-syntax dialect, the terminal's own
//!   references already inlined), a priority and whether they were a string
//!   literal (literals win ties against regexes);
//! - rules are plain `lhs -> rhs` productions over [`Symbol`]s; EBNF
//!   operators, templates, aliases and `?`/`!`/`_` prefixes are expanded;
//! - `%ignore` terminals are flagged; `%declare`d terminals have no pattern
//!   (they are produced by the indentation layer);
//! - `%indent NL INDENT DEDENT` gives an [`IndentConfig`].

#[cfg(feature = "compiler")]
pub mod lark;

use crate::ids::{NonterminalId, RuleId, TerminalId};

/// Where something was written: `file:line:col` (1-based).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// How a terminal is matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerminalPattern {
    /// A string literal (possibly case-insensitive, the `i` flag). `regex` is
    /// the equivalent escaped regex.
    Literal { text: String, case_insensitive: bool, regex: String },
    /// A regular expression in regex-syntax dialect, flags already inlined
    /// (e.g. `(?i)`, `(?s)`, `(?m)`, `(?x)`), terminal references inlined.
    Regex { regex: String },
    /// `%declare`d: no pattern, never produced by the lexer.
    Declared,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalDef {
    pub name: String,
    pub pattern: TerminalPattern,
    /// Lark priority (`NAME.2`), default 0. Higher wins ties of equal length.
    pub priority: i32,
    /// True when listed in `%ignore`.
    pub ignored: bool,
    pub span: Span,
}

impl TerminalDef {
    /// The regex to compile, if the terminal is lexed at all.
    pub fn regex(&self) -> Option<&str> {
        match &self.pattern {
            TerminalPattern::Literal { regex, .. } | TerminalPattern::Regex { regex } => Some(regex),
            TerminalPattern::Declared => None,
        }
    }
    pub fn is_literal(&self) -> bool {
        matches!(self.pattern, TerminalPattern::Literal { .. })
    }
    /// The name to show users: the quoted text for anonymous literals
    /// (`"+="` rather than `__ANON_3`), else the terminal's name.
    pub fn display_name(&self) -> String {
        match &self.pattern {
            TerminalPattern::Literal { text, .. } if self.name.starts_with("__") => format!("{text:?}"),
            _ => self.name.clone(),
        }
    }

    /// The literal text, if this is a case-sensitive string literal.
    pub fn literal_text(&self) -> Option<&str> {
        match &self.pattern {
            TerminalPattern::Literal { text, case_insensitive: false, .. } => Some(text),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symbol {
    T(TerminalId),
    N(NonterminalId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub lhs: NonterminalId,
    pub rhs: Vec<Symbol>,
    /// Where the (source) rule was written, for conflict messages.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NonterminalDef {
    pub name: String,
    pub span: Span,
}

/// Python-style off-side rule, from `%indent NL INDENT DEDENT`.
/// Brackets are the terminals whose literal text is `(`/`[`/`{` (open) and
/// `)`/`]`/`}` (close).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndentConfig {
    pub newline: TerminalId,
    pub indent: TerminalId,
    pub dedent: TerminalId,
    pub open: Vec<TerminalId>,
    pub close: Vec<TerminalId>,
}

/// A normalized context-free grammar over terminals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    pub terminals: Vec<TerminalDef>,
    pub nonterminals: Vec<NonterminalDef>,
    pub rules: Vec<Rule>,
    pub start: NonterminalId,
    pub indent: Option<IndentConfig>,
}

impl Cfg {
    pub fn terminal(&self, t: TerminalId) -> &TerminalDef {
        &self.terminals[t.index()]
    }
    pub fn nonterminal(&self, n: NonterminalId) -> &NonterminalDef {
        &self.nonterminals[n.index()]
    }
    pub fn rule(&self, r: RuleId) -> &Rule {
        &self.rules[r.index()]
    }
    pub fn terminal_by_name(&self, name: &str) -> Option<TerminalId> {
        self.terminals.iter().position(|t| t.name == name).map(TerminalId::new)
    }
    pub fn nonterminal_by_name(&self, name: &str) -> Option<NonterminalId> {
        self.nonterminals.iter().position(|t| t.name == name).map(NonterminalId::new)
    }
    pub fn symbol_name(&self, s: Symbol) -> &str {
        match s {
            Symbol::T(t) => &self.terminal(t).name,
            Symbol::N(n) => &self.nonterminal(n).name,
        }
    }
    /// `lhs: a b c` for messages.
    pub fn rule_to_string(&self, r: RuleId) -> String {
        let rule = self.rule(r);
        let mut s = format!("{}:", self.nonterminal(rule.lhs).name);
        if rule.rhs.is_empty() {
            s.push_str(" <empty>");
        }
        for &sym in &rule.rhs {
            s.push(' ');
            s.push_str(self.symbol_name(sym));
        }
        s
    }
}
