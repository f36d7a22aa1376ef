//! The lexer: terminal regexes → one deterministic *lexer automaton* whose
//! transitions are taken byte by byte, so that LLM token bytes can be walked
//! through the lexer without knowing where lexemes end.
//!
//! # Lexing semantics (the definition; see [`reference`])
//!
//! Global maximal munch (not Lark's "first regex wins"). At a lexeme start,
//! every lexable terminal X (every terminal with a pattern; `%declare`d ones
//! are skipped) has a match length `m_X`: the length of X's anchored
//! **leftmost-first** match, i.e. Python `re.match` semantics, so lazy
//! quantifiers behave as in Python (`/".*?"/` on `"a" "b"` matches `"a"`).
//! Concretely, with X's regex-automata dense DFA (`MatchKind::LeftmostFirst`,
//! anchored start): a match ends at offset `p` iff
//! `is_match_state(next_eoi_state(state after p bytes))`, and `m_X` is the
//! last such `p` before the DFA dies.
//!
//! The lexeme is the terminal with the largest `m_X > 0`; ties are broken by
//! [`rank_better`]: higher priority, then string literal over regex, then the
//! longer literal text, then the lower [`TerminalId`]. `%ignore`d terminals
//! compete like the others; the caller skips them afterwards. No terminal
//! matching at a position is a lex failure. A terminal that can match the
//! empty string, or whose regex uses look-around assertions (`^ $ \b \B`
//! ...), is rejected at compile time with an error naming it.
//!
//! # The lexer automaton ([`Lexer`], built by [`build`])
//!
//! Every terminal's DFA is first converted to a small table (byte classes,
//! `dead` = "no match reachable any more", `accepting_here(s)` as above). A
//! lexer state is a pair `(cur, shadow)` of canonical (sorted, deduplicated)
//! sets of `(terminal, terminal-DFA state)` pairs, none dead:
//! - `cur`: the terminals still possible for the lexeme in progress;
//! - `shadow`: terminals that were still live when an *earlier* lexeme was
//!   emitted. If one of them later becomes `accepting_here`, that earlier
//!   emission was not a longest match, so the branch is invalid.
//!
//! State 0 is `L0 = (all lexable terminals at their start, {})`, and
//! - `winner(L)`: best-ranked terminal of `cur` that is `accepting_here`;
//! - `cont(L, b)`: advance `cur` and `shadow` by `b`, drop dead entries; none
//!   if `cur` becomes empty or a shadow entry is `accepting_here` (the byte
//!   extends the lexeme in progress);
//! - `emit(L, b)`: requires `winner(L)`; the lexeme ends here as `winner(L)`
//!   and `b` starts the next one: `shadow' = advance(shadow ∪ cur, b)` (none
//!   if any entry is `accepting_here`), `cur' = advance(L0.cur, b)` (none if
//!   empty);
//! - `comp(L)`: the terminals the lexeme in progress can still end up as:
//!   least fixpoint of `X ∈ comp(L)` iff `winner(L) = X` or
//!   `X ∈ comp(cont(L, b))` for some byte `b`.
//!
//! Walking a text non-deterministically (branch on `cont`/`emit` at every
//! byte, finish by emitting `winner`) yields exactly one surviving branch,
//! whose emissions are the reference lexemes, or none when the text does not
//! lex. Only states reachable from `L0` are kept; byte classes refine all
//! terminal tables and make `\n \r \t \x0c ' '` singletons.
//!
//! The runtime tables are flat `u32` arrays (see [`LexerParts`]) and need no
//! `compiler` feature. Many states share a transition row, so `cont` and
//! `emit` are stored as distinct rows plus one row index per state.

#[cfg(feature = "compiler")]
mod build;
#[cfg(feature = "compiler")]
pub mod reference;

#[cfg(feature = "compiler")]
pub use build::{build, build_with_stats, BuildStats};
#[cfg(feature = "compiler")]
pub use reference::{rank_better, RefLexer};

use crate::err;
use crate::ids::{LexStateId, TerminalId};
use crate::Result;

/// "No transition" / "no winner" in the flat tables.
pub const NONE: u32 = u32::MAX;

/// One lexeme: `text[start..end]` lexed as `terminal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lexeme {
    pub terminal: TerminalId,
    pub start: usize,
    pub end: usize,
}

/// No terminal matches at byte offset `pos`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LexFailure {
    pub pos: usize,
}

/// The lexer automaton (see the module doc). All tables are flat; transition
/// `t(s, b)` is `t_rows[t_row[s] * n_classes + class(b)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lexer {
    classes: [u8; 256],
    n_classes: u32,
    n_states: u32,
    cont_row: Vec<u32>,
    cont_rows: Vec<u32>,
    emit_row: Vec<u32>,
    emit_rows: Vec<u32>,
    winner: Vec<u32>,
    comp_offsets: Vec<u32>,
    comp: Vec<TerminalId>,
    n_terminals: u32,
    ignored: Vec<bool>,
}

/// Borrowed raw tables of a [`Lexer`], for serialization; [`Lexer::from_parts`]
/// validates and rebuilds.
#[derive(Clone, Copy, Debug)]
pub struct LexerParts<'a> {
    pub classes: &'a [u8; 256],
    pub n_classes: u32,
    pub n_states: u32,
    /// `n_states` row indices into `cont_rows`.
    pub cont_row: &'a [u32],
    /// Distinct `cont` rows, `n_classes` entries each, [`NONE`] or a state.
    pub cont_rows: &'a [u32],
    /// `n_states` row indices into `emit_rows`.
    pub emit_row: &'a [u32],
    /// Distinct `emit` rows, `n_classes` entries each, [`NONE`] or a state.
    pub emit_rows: &'a [u32],
    /// `n_states` entries, [`NONE`] or a terminal.
    pub winner: &'a [u32],
    /// `n_states + 1` offsets into `comp`.
    pub comp_offsets: &'a [u32],
    /// Per state, a strictly increasing list of terminals.
    pub comp: &'a [TerminalId],
    pub n_terminals: u32,
    /// `n_terminals` flags.
    pub ignored: &'a [bool],
}

#[inline]
fn opt(x: u32) -> Option<u32> {
    (x != NONE).then_some(x)
}

impl Lexer {
    /// The start state `L0` (always state 0).
    #[inline]
    pub fn start(&self) -> LexStateId {
        LexStateId(0)
    }
    #[inline]
    pub fn n_states(&self) -> usize {
        self.n_states as usize
    }
    #[inline]
    pub fn n_classes(&self) -> usize {
        self.n_classes as usize
    }
    #[inline]
    pub fn n_terminals(&self) -> usize {
        self.n_terminals as usize
    }
    /// The byte class of `b`.
    #[inline]
    pub fn class(&self, b: u8) -> u8 {
        self.classes[b as usize]
    }
    #[inline]
    fn idx(&self, row: u32, b: u8) -> usize {
        row as usize * self.n_classes as usize + self.classes[b as usize] as usize
    }
    /// `b` extends the lexeme in progress.
    #[inline]
    pub fn cont(&self, s: LexStateId, b: u8) -> Option<LexStateId> {
        opt(self.cont_rows[self.idx(self.cont_row[s.index()], b)]).map(LexStateId)
    }
    /// The lexeme in progress ends here as [`Lexer::winner`]`(s)`; `b` starts the next one.
    #[inline]
    pub fn emit(&self, s: LexStateId, b: u8) -> Option<LexStateId> {
        opt(self.emit_rows[self.idx(self.emit_row[s.index()], b)]).map(LexStateId)
    }
    /// The terminal the lexeme in progress would be if it ended here.
    #[inline]
    pub fn winner(&self, s: LexStateId) -> Option<TerminalId> {
        opt(self.winner[s.index()]).map(TerminalId)
    }
    /// The terminals the lexeme in progress can still end up as (sorted).
    #[inline]
    pub fn comp(&self, s: LexStateId) -> &[TerminalId] {
        let i = s.index();
        &self.comp[self.comp_offsets[i] as usize..self.comp_offsets[i + 1] as usize]
    }
    #[inline]
    pub fn can_complete(&self, s: LexStateId, t: TerminalId) -> bool {
        self.comp(s).binary_search(&t).is_ok()
    }
    #[inline]
    pub fn is_ignored(&self, t: TerminalId) -> bool {
        self.ignored.get(t.index()).copied().unwrap_or(false)
    }

    /// Lexes a whole text with the automaton, exploring the `cont`/`emit`
    /// branches depth-first (memoizing failed `(position, state)` pairs, so
    /// this is `O(len × n_states)`). Equals the reference lexer's result
    /// (ignored lexemes included); on failure, `pos` is the furthest offset
    /// any branch reached (which may lie beyond the reference lexer's
    /// failure offset: a branch can walk into a lexeme that never completes).
    pub fn lex(&self, text: &[u8]) -> std::result::Result<Vec<Lexeme>, LexFailure> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        // Emitted lexemes form a tree: (lexeme, parent index or NONE).
        let mut arena: Vec<(Lexeme, u32)> = Vec::new();
        // Branches: (position, state, lexeme start, last emitted lexeme).
        let mut stack = vec![(0usize, self.start(), 0usize, NONE)];
        let mut seen = std::collections::HashSet::new();
        let mut furthest = 0;
        while let Some((pos, s, start, last)) = stack.pop() {
            if !seen.insert((pos, s)) {
                continue; // fully explored before, without success
            }
            furthest = furthest.max(pos);
            let w = self.winner(s);
            if pos == text.len() {
                let Some(w) = w else { continue };
                let mut out = vec![Lexeme { terminal: w, start, end: pos }];
                let mut i = last;
                while i != NONE {
                    out.push(arena[i as usize].0);
                    i = arena[i as usize].1;
                }
                out.reverse();
                return Ok(out);
            }
            let b = text[pos];
            if let (Some(w), Some(e)) = (w, self.emit(s, b)) {
                arena.push((Lexeme { terminal: w, start, end: pos }, last));
                stack.push((pos + 1, e, pos, arena.len() as u32 - 1));
            }
            if let Some(c) = self.cont(s, b) {
                stack.push((pos + 1, c, start, last));
            }
        }
        Err(LexFailure { pos: furthest })
    }
}

impl Lexer {
    /// The raw tables, for serialization.
    pub fn parts(&self) -> LexerParts<'_> {
        LexerParts {
            classes: &self.classes,
            n_classes: self.n_classes,
            n_states: self.n_states,
            cont_row: &self.cont_row,
            cont_rows: &self.cont_rows,
            emit_row: &self.emit_row,
            emit_rows: &self.emit_rows,
            winner: &self.winner,
            comp_offsets: &self.comp_offsets,
            comp: &self.comp,
            n_terminals: self.n_terminals,
            ignored: &self.ignored,
        }
    }

    /// Rebuilds a lexer from raw tables, validating every index and length
    /// (errors are [`crate::ErrorKind::BlobCorrupt`]).
    pub fn from_parts(p: LexerParts<'_>) -> Result<Lexer> {
        let bad = |what: &str| Err(err!(BlobCorrupt, "lexer tables: {what}"));
        let (nc, ns, nt) = (p.n_classes as usize, p.n_states as usize, p.n_terminals as usize);
        if nc == 0 || nc > 256 {
            return bad("class count out of range");
        }
        if p.classes.iter().any(|&c| c as usize >= nc) {
            return bad("byte class out of range");
        }
        if ns == 0 {
            return bad("no states");
        }
        for (row, rows) in [(p.cont_row, p.cont_rows), (p.emit_row, p.emit_rows)] {
            if row.len() != ns || rows.len() % nc != 0 || row.iter().any(|&r| r as usize >= rows.len() / nc) {
                return bad("transition table size");
            }
            if rows.iter().any(|&x| x != NONE && x as usize >= ns) {
                return bad("transition target out of range");
            }
        }
        if p.winner.len() != ns || p.winner.iter().any(|&w| w != NONE && w as usize >= nt) {
            return bad("winner table");
        }
        if p.ignored.len() != nt {
            return bad("ignored flags size");
        }
        let offs = p.comp_offsets;
        if offs.len() != ns + 1 || offs[0] != 0 || offs[ns] as usize != p.comp.len() {
            return bad("completion offsets");
        }
        if offs.windows(2).any(|w| w[0] > w[1]) {
            return bad("completion offsets not increasing");
        }
        for s in 0..ns {
            let list = &p.comp[offs[s] as usize..offs[s + 1] as usize];
            if list.iter().any(|t| t.index() >= nt) || list.windows(2).any(|w| w[0] >= w[1]) {
                return bad("completion list not sorted or out of range");
            }
            if p.winner[s] != NONE && list.binary_search(&TerminalId(p.winner[s])).is_err() {
                return bad("winner not completable");
            }
        }
        Ok(Lexer {
            classes: *p.classes,
            n_classes: p.n_classes,
            n_states: p.n_states,
            cont_row: p.cont_row.to_vec(),
            cont_rows: p.cont_rows.to_vec(),
            emit_row: p.emit_row.to_vec(),
            emit_rows: p.emit_rows.to_vec(),
            winner: p.winner.to_vec(),
            comp_offsets: offs.to_vec(),
            comp: p.comp.to_vec(),
            n_terminals: p.n_terminals,
            ignored: p.ignored.to_vec(),
        })
    }
}

/// Split a flat `rows × width` table into (row index per row, distinct rows in
/// first-occurrence order).
#[cfg(feature = "compiler")]
pub(crate) fn dedup_rows(flat: &[u32], width: usize) -> (Vec<u32>, Vec<u32>) {
    let mut seen: std::collections::HashMap<&[u32], u32> = std::collections::HashMap::new();
    let (mut index, mut rows) = (Vec::new(), Vec::new());
    for r in flat.chunks(width.max(1)) {
        let n = seen.len() as u32;
        let id = *seen.entry(r).or_insert_with(|| {
            rows.extend_from_slice(r);
            n
        });
        index.push(id);
    }
    (index, rows)
}
