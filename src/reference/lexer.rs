//! The reference lexer: the *definition* of the lexing semantics of every
//! [`LexerMode`], written as plainly as possible: at each lexeme start it
//! runs every competing terminal's table (`lexer::table`) and picks the
//! lexeme by the mode's rule. The lexer automaton ([`crate::lexer::Lexer`]) and the
//! recognizer ([`super::recognizer`]) are tested against it.
//!
//! Rules (the competing terminals are all lexed terminals, or for
//! [`LexerMode::Contextual`] the ones the caller passes):
//! - **Longest**: the longest match wins; ties by [`rank_better`](crate::lexer::rank_better).
//! - **LongestAll**: every terminal with the longest match is a lexeme.
//! - **Lark** (Contextual, Basic): Lark's `BasicLexer`: terminals in Lark's
//!   order (priority desc, max width desc, pattern length desc, name; see
//!   [`LarkOrder`](crate::grammar::LarkOrder)) minus the *embedded* string
//!   literals; the first one that matches wins with its own match. A regex
//!   winner whose match equals a string literal of the same priority that
//!   the regex matches completely (in Lark's order) is retyped to that
//!   literal (Lark's `_create_unless`); a literal is embedded (leaves the
//!   list) when its flags are a subset of such a regex's.

use crate::grammar::{Cfg, LexerMode};
use crate::ids::TerminalId;
use crate::lexer::order::Order;
use crate::lexer::table::{compile_all, Table};
use crate::lexer::{LexFailure, Lexeme};
use crate::Result;

/// The reference lexer (see the module doc).
pub struct RefLexer {
    tables: Vec<Option<Table>>,
    order: Order,
}

impl RefLexer {
    pub fn new(cfg: &Cfg) -> Result<RefLexer> {
        let tables = compile_all(cfg)?;
        let order = Order::new(cfg, &tables);
        Ok(RefLexer { tables, order })
    }

    pub fn mode(&self) -> LexerMode {
        self.order.mode
    }

    /// The lexemes possible at `pos`, with their common length (0 and none
    /// when no terminal matches). `competes` restricts the competing
    /// terminals (contextual lexing); `None` means all.
    pub fn lexemes_at(&self, text: &[u8], pos: usize, competes: Option<&dyn Fn(TerminalId) -> bool>) -> (usize, Vec<TerminalId>) {
        let ok = |i: usize| competes.is_none_or(|f| f(TerminalId::new(i)));
        let live = |i: usize| self.tables[i].as_ref().filter(|_| ok(i));
        if self.order.lark() {
            let embedded = self.order.embedded(&|i| ok(i) && self.tables[i].is_some());
            let mut cands: Vec<usize> = (0..self.tables.len()).filter(|&i| live(i).is_some() && !embedded[i]).collect();
            cands.sort_by_key(|&i| self.order.rank[i]);
            for r in cands {
                let n = self.tables[r].as_ref().map_or(0, |t| t.match_len(text, pos));
                if n == 0 {
                    continue;
                }
                if self.order.ignored[r] {
                    // Retyping an ignored match keeps it ignored (Lark).
                    return (n, vec![TerminalId::new(r)]);
                }
                let value = &text[pos..pos + n];
                let retyped = self.order.unless[r]
                    .iter()
                    .find(|s| ok(s.index()) && self.tables[s.index()].as_ref().is_some_and(|t| t.matches_whole(value)))
                    .copied();
                return (n, vec![retyped.unwrap_or(TerminalId::new(r))]);
            }
            return (0, Vec::new());
        }
        let mut best = 0;
        let mut winners: Vec<usize> = Vec::new();
        for i in 0..self.tables.len() {
            let Some(t) = live(i) else { continue };
            let m = t.match_len(text, pos);
            if m == 0 || m < best {
                continue;
            }
            if m > best {
                best = m;
                winners.clear();
            }
            winners.push(i);
        }
        winners.sort_by_key(|&i| self.order.rank[i]);
        if self.order.mode != LexerMode::LongestAll {
            winners.truncate(1);
        }
        (best, winners.into_iter().map(TerminalId::new).collect())
    }

    /// The lexeme at `pos` when every terminal competes (the first one for
    /// [`LexerMode::LongestAll`]), if any terminal matches.
    pub fn lexeme_at(&self, text: &[u8], pos: usize) -> Option<Lexeme> {
        let (n, ts) = self.lexemes_at(text, pos, None);
        ts.first().map(|&t| Lexeme { terminal: t, start: pos, end: pos + n })
    }

    /// Lexes `text` completely (ignored lexemes included) with every
    /// terminal competing; for [`LexerMode::LongestAll`], the first lexeme of
    /// each tie. (Contextual lexing needs the parser: see the recognizer.)
    pub fn lex(&self, text: &[u8]) -> std::result::Result<Vec<Lexeme>, LexFailure> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let lx = self.lexeme_at(text, pos).ok_or(LexFailure { pos })?;
            pos = lx.end;
            out.push(lx);
        }
        Ok(out)
    }

    /// Every complete lexing of `text` with every terminal competing (one
    /// per choice among ties under [`LexerMode::LongestAll`]; at most
    /// `limit`). Empty when the text does not lex.
    pub fn lexings(&self, text: &[u8], limit: usize) -> Vec<Vec<Lexeme>> {
        let mut out = Vec::new();
        let mut cur = Vec::new();
        self.lexings_from(text, 0, &mut cur, &mut out, limit);
        out
    }

    fn lexings_from(&self, text: &[u8], pos: usize, cur: &mut Vec<Lexeme>, out: &mut Vec<Vec<Lexeme>>, limit: usize) {
        if out.len() >= limit {
            return;
        }
        if pos == text.len() {
            out.push(cur.clone());
            return;
        }
        let (n, ts) = self.lexemes_at(text, pos, None);
        for t in ts {
            cur.push(Lexeme { terminal: t, start: pos, end: pos + n });
            self.lexings_from(text, pos + n, cur, out, limit);
            cur.pop();
        }
    }

    /// Is terminal `t` ignored (`%ignore`)?
    pub fn is_ignored(&self, t: TerminalId) -> bool {
        self.order.ignored.get(t.index()).copied().unwrap_or(false)
    }
}
