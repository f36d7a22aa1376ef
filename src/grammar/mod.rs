//! The normalized grammar: a plain context-free grammar over terminals
//! ([`Cfg`]).
//!
//! The normalized form is what every later stage consumes:
//! - terminals carry a regex (regex-syntax dialect, the terminal's own
//!   references already inlined), a priority and whether they were a string
//!   literal (literals win ties against regexes);
//! - rules are plain `lhs -> rhs` productions over [`Symbol`]s; EBNF
//!   operators, templates, aliases and `?`/`!`/`_` prefixes are expanded;
//! - `%ignore` terminals are flagged; `%declare`d terminals have no pattern
//!   (they are produced by the indentation layer);
//! - `%indent NL INDENT DEDENT` gives an [`IndentConfig`];
//! - the grammar's [`LexerMode`] says which terminals compete for a lexeme
//!   and how the winner is chosen.
//!
//! The front ends (`frontend::lark`, `frontend::gbnf`, `frontend::schema`, `frontend::regex`,
//! feature `compiler`) emit a [`Cfg`]; the lexer, the LALR builder and the
//! store builder consume it. This module imports nothing but ids: it is the
//! one type the compile stages hand to each other.

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
    /// Matched with Python `re.match` semantics (leftmost-first: one match
    /// length per position). `lookaheads` (Lark regexes only, at most
    /// [`MAX_LOOKAHEADS`], sorted by position) are the one-character
    /// negative lookaheads `(?!C)` of the pattern, each replaced by the
    /// empty group `(?:)` in `regex` (so `regex` alone is the pattern
    /// without its lookaheads); the lexer compiles them where they are
    /// exact and refuses them otherwise.
    Regex { regex: String, lookaheads: Vec<Lookahead> },
    /// A *set* of strings (set semantics, no match preference): the non-empty
    /// strings that every regex of `all` matches completely and no regex of
    /// `none` matches completely. `all` is not empty. Used by the schema and
    /// regex front ends (e.g. a JSON string with a `pattern` and a
    /// `maxLength`: `all = [quoted pattern, quoted length bound]`; the keys of
    /// additional properties: `none = [declared keys]`). Under maximal munch
    /// the lexeme is the longest prefix in the set.
    Set { all: Vec<String>, none: Vec<String> },
    /// `%declare`d: no pattern, never produced by the lexer.
    Declared,
    /// A token of the tokenizer named in the grammar (`<|im_end|>` by its
    /// text, `<[151645]>` by its id; the terminal's name is what was
    /// written, see [`is_special_name`]): matched as that token id only,
    /// never as bytes. The lexer never starts it; the matcher feeds it when
    /// the token is committed (see `matcher`).
    Special,
}

/// Whether a terminal name names a token (`<...>`, see
/// [`TerminalPattern::Special`]): no other terminal name starts with `<`.
pub fn is_special_name(name: &str) -> bool {
    name.len() > 2 && name.starts_with('<') && name.ends_with('>')
}

/// A negative lookahead `(?!not)` inside a [`TerminalPattern::Regex`]: it
/// stands at byte offset `at` of the pattern's `regex` text, where that text
/// holds the empty group [`EMPTY_GROUP`] in its place; the pattern goes on
/// there only if the next character does not match `not` (regex-syntax text, no look-around of its
/// own). The lexer compiles the exact forms: `not` one ASCII character or
/// class, at a point where every thread of the match is at the lookahead or
/// at the end of the match (see `lexer::table`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookahead {
    pub at: usize,
    pub not: String,
}

/// What stands for a [`Lookahead`] in the regex text.
pub const EMPTY_GROUP: &str = "(?:)";

/// Most [`Lookahead`]s in one terminal's pattern.
pub const MAX_LOOKAHEADS: usize = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalDef {
    pub name: String,
    pub pattern: TerminalPattern,
    /// Lark priority (`NAME.2`), default 0. Higher wins ties of equal length.
    pub priority: i32,
    /// True when listed in `%ignore`.
    pub ignored: bool,
    pub span: Span,
    /// Lark's lexer order for this terminal (set by the Lark front end; used
    /// by [`LexerMode::Contextual`] and [`LexerMode::Basic`]).
    pub lark: Option<LarkOrder>,
}

/// What Lark's lexer needs to order terminals and to retype keywords: Lark
/// sorts a lexer's terminals by `(-priority, -max_width, -pattern_len, name)`
/// and takes the *first* one that matches (Python alternation), and a string
/// literal that a regex terminal of the same or higher priority matches
/// completely is produced by that regex's match and retyped (Lark's
/// `_create_unless`); it leaves the lexer's list when its flags are a subset
/// of the regex's.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LarkOrder {
    /// Lark's `pattern.max_width` (Python's `sre_parse` width, saturated).
    pub max_width: u64,
    /// `len(pattern.value)`: the length of Lark's pattern string.
    pub pattern_len: usize,
    /// The pattern's flags (`i`, `m`, `s`, `x`, ...), sorted.
    pub flags: Vec<char>,
}

impl TerminalDef {
    /// A terminal with priority 0, not ignored, no span, no Lark order.
    pub fn new(name: impl Into<String>, pattern: TerminalPattern) -> Self {
        TerminalDef { name: name.into(), pattern, priority: 0, ignored: false, span: Span::default(), lark: None }
    }
    /// The regex of a literal or a `re.match` regex, without its
    /// lookaheads (`None` for `%declare`d terminals and sets).
    pub fn regex(&self) -> Option<&str> {
        match &self.pattern {
            TerminalPattern::Literal { regex, .. } | TerminalPattern::Regex { regex, .. } => Some(regex),
            TerminalPattern::Set { .. } | TerminalPattern::Declared | TerminalPattern::Special => None,
        }
    }
    /// Whether the lexer produces this terminal from bytes (not
    /// `%declare`d, not a special token).
    pub fn is_lexed(&self) -> bool {
        !matches!(self.pattern, TerminalPattern::Declared | TerminalPattern::Special)
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
    /// Lark rule priority (`rule.2: ...`), default 0; settles reduce/reduce
    /// conflicts as in Lark's LALR.
    pub priority: i32,
}

impl Rule {
    pub fn new(lhs: NonterminalId, rhs: Vec<Symbol>, span: Span) -> Self {
        Rule { lhs, rhs, span, priority: 0 }
    }
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

/// Which terminals compete for a lexeme, and which of them wins.
///
/// In every mode each terminal's own match at a position is its regex's
/// leftmost-first match (Python `re.match`), or any prefix in the set for
/// [`TerminalPattern::Set`]; `%ignore`d terminals always compete and are
/// skipped afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LexerMode {
    /// Lark's default for LALR (`lexer='contextual'`): only the terminals
    /// the parser can act on in its current state (plus the ignored ones)
    /// compete, in Lark's order ([`LarkOrder`]): the first one that matches
    /// wins, with Lark's keyword retyping.
    #[default]
    Contextual,
    /// Lark's `lexer='basic'`: every terminal competes, Lark's order.
    Basic,
    /// grammask's global maximal munch (like CPython's tokenizer): every
    /// terminal competes, the longest match wins; ties go to the higher
    /// priority, then a string literal over a regex, then the longer literal,
    /// then the lower id. Keywords stay reserved.
    Longest,
    /// Global maximal munch where every terminal tied at the longest length
    /// is a possible lexeme (the parser keeps those it can use). For grammars
    /// built by the schema, regex and GBNF front ends.
    LongestAll,
}

impl LexerMode {
    /// The name used by `%lexer` and the compile options.
    pub fn name(self) -> &'static str {
        match self {
            LexerMode::Contextual => "contextual",
            LexerMode::Basic => "basic",
            LexerMode::Longest => "longest",
            LexerMode::LongestAll => "longest_all",
        }
    }
    pub fn from_name(s: &str) -> Option<LexerMode> {
        [LexerMode::Contextual, LexerMode::Basic, LexerMode::Longest, LexerMode::LongestAll].into_iter().find(|m| m.name() == s)
    }
}

/// How the LALR(1) table builder settles conflicts (see
/// [`crate::parser::lalr`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ConflictPolicy {
    /// Every conflict is an error (grammask's own front ends, which must
    /// emit conflict-free grammars: a conflict there is a bug, never settled
    /// silently).
    #[default]
    Strict,
    /// Lark 1.2.2's LALR (`Lark(..., parser='lalr')`): a shift/reduce
    /// conflict is settled as shift (grammask reports each one as a
    /// warning); a reduce/reduce conflict goes to the rule of strictly
    /// highest priority, else it is an error; reaching the end state at the
    /// end of input accepts.
    Lark,
    /// Lark with `strict=True`: as [`ConflictPolicy::Lark`], but a
    /// shift/reduce conflict is an error.
    LarkStrict,
    /// No LALR(1) tables: the grammar runs on the general parser
    /// ([`crate::parser::earley`]), any context-free grammar, ambiguity
    /// included (GBNF/EBNF grammars that are not LALR(1), Lark's
    /// `parser='earley'`).
    General,
}

impl ConflictPolicy {
    /// The strict variant of this policy (`--strict`).
    pub fn strict(self) -> ConflictPolicy {
        match self {
            ConflictPolicy::Strict => ConflictPolicy::Strict,
            ConflictPolicy::Lark | ConflictPolicy::LarkStrict => ConflictPolicy::LarkStrict,
            ConflictPolicy::General => ConflictPolicy::General,
        }
    }
}

/// A normalized context-free grammar over terminals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    pub terminals: Vec<TerminalDef>,
    pub nonterminals: Vec<NonterminalDef>,
    pub rules: Vec<Rule>,
    pub start: NonterminalId,
    pub indent: Option<IndentConfig>,
    pub lexer: LexerMode,
    /// How LALR(1) conflicts are settled (the Lark front end: [`ConflictPolicy::Lark`]).
    pub conflicts: ConflictPolicy,
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
