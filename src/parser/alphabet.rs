//! The lexer-level alphabet: what the matcher and the mask store feed the
//! incremental parser ([`super::incremental::IncParser`]).
//!
//! The matcher and the mask store speak in lexer-level symbols ([`Sym`], u32):
//! - `0..n` — the grammar's terminals (`n = cfg.terminals.len()`); a terminal is
//!   *announced* when its lexeme starts;
//! - `n` — `$END` (only used by [`IncParser::accepts_eof`](super::incremental::IncParser::accepts_eof));
//! - `n+1..=n+4` — indentation **events**, emitted for the bytes of a lexeme
//!   whose terminal is the `%indent` newline terminal: [`Events::nl`] for `\n`,
//!   [`Events::sp`] for a space, [`Events::tab`] for a tab, [`Events::ff`] for a
//!   form feed. All other bytes emit nothing;
//! - `n+5+m` — **mode** symbols (contextual lexing, [`Events::mode`]): "the
//!   LR state on top has lexer mode `m`", emitted when a lexeme ends and the
//!   next one starts in mode `m`; the parser checks it without moving.

/// A lexer-level symbol: a terminal id, `$END`, or an indentation event.
pub type Sym = u32;

/// The ids of the four indentation events for a grammar with `n` terminals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Events {
    n: u32,
}

impl Events {
    pub fn new(n_terminals: u32) -> Self {
        Events { n: n_terminals }
    }
    pub fn nl(self) -> Sym {
        self.n + 1
    }
    pub fn sp(self) -> Sym {
        self.n + 2
    }
    pub fn tab(self) -> Sym {
        self.n + 3
    }
    pub fn ff(self) -> Sym {
        self.n + 4
    }
    pub fn is_event(self, s: Sym) -> bool {
        s > self.n && s <= self.n + 4
    }
    /// The event for byte `b` inside a newline lexeme, if any.
    pub fn for_byte(self, b: u8) -> Option<Sym> {
        match b {
            b'\n' => Some(self.nl()),
            b' ' => Some(self.sp()),
            b'\t' => Some(self.tab()),
            0x0c => Some(self.ff()),
            _ => None,
        }
    }
    /// Total size of the lexer-level alphabet.
    /// The first mode symbol.
    pub fn mode_base(self) -> Sym {
        self.n + 5
    }
    /// The symbol of lexer mode `m`.
    pub fn mode(self, m: u32) -> Sym {
        self.n + 5 + m
    }
    pub fn is_mode(self, s: Sym) -> bool {
        s >= self.n + 5
    }
}
