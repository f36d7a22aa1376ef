//! Whole-text recognition: the definition of "the grammar's language" that the
//! masks must agree with (feature `compiler`).
//!
//! Text → reference lexer ([`crate::lexer::reference::RefLexer`], global maximal
//! munch) → lexer-level symbols (a terminal per non-ignored lexeme, plus
//! indentation events for the bytes of `%indent` newline lexemes) →
//! [`IncParser`] (LALR(1) + off-side rule) → end of input.

use super::indent::{Grammar, IncParser, IndentRules, Sym};
use crate::error::Result;
use crate::grammar::Cfg;
use crate::lexer::reference::RefLexer;
use serde::Serialize;

/// Why a text is rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rejection {
    /// Byte offset of the error.
    pub offset: usize,
    /// 1-based line and column (column in characters).
    pub line: usize,
    pub col: usize,
    pub message: String,
    /// Terminals the parser would have accepted there.
    pub expected: Vec<String>,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)?;
        if !self.expected.is_empty() {
            let shown: Vec<&str> = self.expected.iter().take(12).map(|s| s.as_str()).collect();
            write!(f, "; expected one of: {}", shown.join(" "))?;
            if self.expected.len() > 12 {
                write!(f, " … ({} more)", self.expected.len() - 12)?;
            }
        }
        Ok(())
    }
}

/// A compiled recognizer for one grammar.
pub struct Recognizer {
    cfg: Cfg,
    lexer: RefLexer,
    grammar: Grammar,
}

impl Recognizer {
    pub fn new(cfg: Cfg) -> Result<Self> {
        let lexer = RefLexer::new(&cfg)?;
        let tables = super::lalr::build_tables(&cfg)?;
        let indent = cfg.indent.as_ref().map(|c| IndentRules::from_config(c, cfg.terminals.len()));
        let grammar = Grammar::new(tables, indent, cfg.terminals.len() as u32);
        Ok(Recognizer { cfg, lexer, grammar })
    }

    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// The lexer-level symbols of `text` (None if it does not lex).
    pub fn symbols(&self, text: &[u8]) -> std::result::Result<Vec<(Sym, usize)>, usize> {
        let lexemes = self.lexer.lex(text).map_err(|f| f.pos)?;
        let mut out = Vec::with_capacity(lexemes.len());
        let nl = self.grammar.indent.as_ref().map(|i| i.newline);
        for lx in lexemes {
            let t = lx.terminal.0;
            if self.cfg.terminals[t as usize].ignored {
                continue;
            }
            out.push((t, lx.start));
            if Some(t) == nl {
                for (i, &b) in text[lx.start..lx.end].iter().enumerate() {
                    if let Some(e) = self.grammar.events.for_byte(b) {
                        out.push((e, lx.start + i));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Accept or reject a whole text.
    pub fn check(&self, text: &[u8]) -> std::result::Result<(), Rejection> {
        let (mut lexemes, mut lex_fail, mut pos) = (Vec::new(), None, 0);
        while pos < text.len() {
            match self.lexer.lexeme_at(text, pos) {
                Some(lx) => {
                    pos = lx.end;
                    lexemes.push(lx);
                }
                None => {
                    lex_fail = Some(pos);
                    break;
                }
            }
        }
        let g = &self.grammar;
        let nl = g.indent.as_ref().map(|i| i.newline);
        let mut p = IncParser::new(g);
        let mut syms: Vec<Sym> = Vec::new();
        for lx in &lexemes {
            let t = lx.terminal.0;
            if self.cfg.terminals[t as usize].ignored {
                continue;
            }
            syms.clear();
            syms.push(t);
            if Some(t) == nl {
                syms.extend(text[lx.start..lx.end].iter().filter_map(|&b| g.events.for_byte(b)));
            }
            if p.consume(g, &syms).is_err() {
                let name = self.cfg.terminals[t as usize].display_name();
                let snippet = String::from_utf8_lossy(&text[lx.start..lx.end.min(lx.start + 20)]).into_owned();
                return Err(self.rejection(text, lx.start, format!("unexpected {name} {snippet:?}"), &p));
            }
        }
        if let Some(pos) = lex_fail {
            let ch = String::from_utf8_lossy(&text[pos..(pos + 4).min(text.len())]).chars().next().unwrap_or('?');
            return Err(self.rejection(text, pos, format!("no terminal matches at {ch:?}"), &p));
        }
        if !p.accepts_eof(g, &[]) {
            return Err(self.rejection(text, text.len(), "unexpected end of input".into(), &p));
        }
        Ok(())
    }

    fn rejection(&self, text: &[u8], offset: usize, message: String, p: &IncParser) -> Rejection {
        let (line, col) = line_col(text, offset);
        let expected = p.expected(&self.grammar).into_iter().map(|t| self.cfg.terminals[t.index()].display_name()).collect();
        Rejection { offset, line, col, message, expected }
    }
}

/// 1-based (line, column in characters) of a byte offset.
pub fn line_col(text: &[u8], offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, col)
}
