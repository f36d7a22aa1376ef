//! The lexer: terminal regexes → one deterministic *lexer automaton* whose
//! transitions are taken byte by byte, so that LLM token bytes can be walked
//! through the lexer without knowing where lexemes end.
//!
//! # Lexing semantics (the definition: `reference::lexer`)
//!
//! At a lexeme start, every competing terminal X has its own *match*: the
//! anchored **leftmost-first** match of its regex (Python `re.match`
//! semantics, so lazy quantifiers behave as in Python: `/".*?"/` on
//! `"a" "b"` matches `"a"`), or for a set terminal
//! ([`TerminalPattern::Set`](crate::grammar::TerminalPattern::Set)) the
//! longest prefix in the set. Concretely X's table (see `table`) says where a
//! match ends (`accepting`), and X's match is the last such offset before the
//! table dies. Which terminal wins depends on the grammar's
//! [`LexerMode`](crate::grammar::LexerMode):
//! - **Longest** (global maximal munch): the largest match wins; ties are
//!   broken by [`rank_better`] (priority, literal over regex, longer literal,
//!   lower id). Every lexed terminal competes.
//! - **LongestAll**: the same, but every terminal tied at the largest match
//!   is a possible lexeme.
//! - **Basic** (Lark's basic lexer): terminals in Lark's order, the first one
//!   that matches wins, with Lark's keyword retyping (see `lexer::order`).
//! - **Contextual** (Lark's contextual lexer): as Basic, but only the
//!   terminals the parser's current LR state has an action for (its *mode*)
//!   and the ignored ones compete.
//!
//! `%ignore`d terminals compete like the others; the caller skips them
//! afterwards. No terminal matching at a position is a lex failure. A
//! terminal that can match the empty string, or whose regex uses
//! look-around assertions (`^ $ \b \B` ...), is rejected at compile time
//! with an error naming it.
//!
//! # The lexer automaton ([`Lexer`], built by `build`)
//!
//! A lexer state is `(cur, shadow, tag)`: `cur` and `shadow` are canonical
//! sets of `(terminal, table state)` pairs, none dead:
//! - `cur`: the terminals still possible for the lexeme in progress (for
//!   the Lark modes, in Lark's order: once a terminal has matched, the later
//!   ones are dropped, and the matched one is marked; string literals watched
//!   only for retyping are marked too);
//! - `shadow`: terminals that had to *not* match (further) when an earlier
//!   lexeme was emitted: every live `cur` terminal of that lexeme (Longest:
//!   a longer match; Lark: an earlier-ordered terminal matching at all, or
//!   the winner's own longer match). If one of them later becomes
//!   accepting, that earlier emission was wrong, so the branch dies;
//! - `tag` (contextual only): the mode of the lexeme in progress while it may
//!   still end as an ignored terminal (the next lexeme starts in the same
//!   mode then).
//!
//! State 0 is `L0` (the competing terminals at their start, for contextual
//! lexing those of the LR start state's mode), and
//! - `winners(L)`: the terminals the lexeme in progress is if it ends here;
//! - `cont(L, b)`: advance `cur` and `shadow` by `b`; none if `cur` has no
//!   candidate left or a shadow entry accepts;
//! - `emit(L, b)` (global modes): requires a winner; the lexeme ends here
//!   and `b` starts the next one: `shadow' = advance(shadow ∪ cur, b)` (none
//!   if any entry accepts), `cur' = advance(L0.cur, b)` (none if empty);
//! - `emit_in(L, b, m)` (contextual): the same, the next lexeme starting in
//!   mode `m`; `m` is the lexeme's own mode (`tag`) after an ignored lexeme,
//!   else one of the modes of the LR states entered by shifting the winner
//!   ([`Lexer::next_modes`]): the walk over token bytes branches on them and
//!   the parser checks the branch (see `store::walk`). Stored factored: the
//!   shadow part per (state, class), the start part per (mode, class), and
//!   the resulting state per pair;
//! - `comp(L)`: the terminals the lexeme in progress can still end up as:
//!   least fixpoint of `X ∈ comp(L)` iff `X ∈ winners(L)` or
//!   `X ∈ comp(cont(L, b))` for some byte `b`.
//!
//! Walking a text non-deterministically (branch on `cont`/`emit` at every
//! byte, finish by emitting a winner) yields exactly the reference lexings
//! (one, or for LongestAll one per choice among ties), or none when the
//! text does not lex. Only states reachable from `L0` are kept; byte classes
//! refine all terminal tables and make `\n \r \t \x0c ' '` singletons.
//!
//! The runtime tables are flat `u32` arrays (see [`LexerParts`]) and need no
//! `compiler` feature. Many states share a transition row, so `cont` and
//! `emit` are stored as distinct rows plus one row index per state.

#[cfg(feature = "compiler")]
mod build;
#[cfg(feature = "compiler")]
pub(crate) mod order;
#[cfg(feature = "compiler")]
pub(crate) mod table;

#[cfg(feature = "compiler")]
pub use build::{build, build_for, build_with_stats, contextual_modes, BuildStats};
#[cfg(feature = "compiler")]
pub use order::rank_better;

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

/// Contextual lexing: the extra tables (see the module doc, "Contextual
/// lexing"). Ending a lexeme in state `s` on byte class `c` and starting the
/// next one in mode `m` leads to `combo(start[m][c], sh(s, c))`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtxTables {
    pub n_modes: u32,
    /// The mode of the LR start state (the first lexeme's).
    pub start_mode: u32,
    /// Per state: the mode of the lexeme in progress when it may still end
    /// as an ignored terminal (the next lexeme then starts in the same mode),
    /// else [`NONE`].
    pub tag: Vec<u32>,
    /// Per state: a row of `sh_rows` (`n_classes` wide): the next lexeme's
    /// shadow set id after ending the lexeme here and reading the class, or
    /// [`NONE`] (a longer match exists).
    pub sh_row: Vec<u32>,
    pub sh_rows: Vec<u32>,
    /// Per mode × class: the start id of a lexeme starting in that mode with
    /// that class, or [`NONE`].
    pub start: Vec<u32>,
    /// Sorted `(start id, shadow id)` pairs (flattened) and their states.
    pub combo_key: Vec<u32>,
    pub combo_state: Vec<u32>,
    /// Per terminal `X`: the modes of the LR states entered by shifting `X`
    /// (`next[next_off[X]..next_off[X+1]]`).
    pub next_off: Vec<u32>,
    pub next: Vec<u32>,
    /// Per LR state: its mode.
    pub state_mode: Vec<u32>,
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
    win_off: Vec<u32>,
    win: Vec<TerminalId>,
    comp_offsets: Vec<u32>,
    comp: Vec<TerminalId>,
    n_terminals: u32,
    ignored: Vec<bool>,
    ctx: Option<Box<CtxTables>>,
    /// Winners that depend on the next byte (terminals with a guarded accept,
    /// from a `(?!...)` lookahead): empty, or per state a row or [`NONE`].
    gw_row: Vec<u32>,
    /// Per row × class: offsets into `gw` (`rows × n_classes + 1`).
    gw_off: Vec<u32>,
    gw: Vec<TerminalId>,
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
    /// `n_states` row indices into `emit_rows` (global lexing; empty for contextual).
    pub emit_row: &'a [u32],
    /// Distinct `emit` rows, `n_classes` entries each, [`NONE`] or a state.
    pub emit_rows: &'a [u32],
    /// `n_states + 1` offsets into `win`.
    pub win_off: &'a [u32],
    /// Per state, a strictly increasing list of winning terminals.
    pub win: &'a [TerminalId],
    /// `n_states + 1` offsets into `comp`.
    pub comp_offsets: &'a [u32],
    /// Per state, a strictly increasing list of terminals.
    pub comp: &'a [TerminalId],
    pub n_terminals: u32,
    /// `n_terminals` flags.
    pub ignored: &'a [bool],
    /// Contextual lexing tables.
    pub ctx: Option<&'a CtxTables>,
    /// Empty, or `n_states` rows of next-byte winners ([`NONE`]: the
    /// winners do not depend on the next byte).
    pub gw_row: &'a [u32],
    /// `rows × n_classes + 1` offsets into `gw`.
    pub gw_off: &'a [u32],
    /// Per row and class, a strictly increasing list of winning terminals.
    pub gw: &'a [TerminalId],
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
    /// Global lexing: the lexeme in progress ends here as one of
    /// [`Lexer::winners`]`(s)`; `b` starts the next one. (`None` under
    /// contextual lexing: see [`Lexer::emit_in`].)
    #[inline]
    pub fn emit(&self, s: LexStateId, b: u8) -> Option<LexStateId> {
        if self.emit_row.is_empty() {
            return None;
        }
        opt(self.emit_rows[self.idx(self.emit_row[s.index()], b)]).map(LexStateId)
    }
    /// Contextual lexing: the lexeme in progress ends here and `b` starts
    /// the next one in mode `m`.
    #[inline]
    pub fn emit_in(&self, s: LexStateId, b: u8, m: u32) -> Option<LexStateId> {
        let c = self.ctx.as_deref()?;
        let sid = c.sh_rows[self.idx(c.sh_row[s.index()], b)];
        let st = *c.start.get((m as usize).checked_mul(self.n_classes as usize)? + self.classes[b as usize] as usize)?;
        if sid == NONE || st == NONE {
            return None;
        }
        let n = c.combo_state.len();
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let k = [c.combo_key[2 * mid], c.combo_key[2 * mid + 1]];
            match k.cmp(&[st, sid]) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(LexStateId(c.combo_state[mid])),
            }
        }
        None
    }
    /// The contextual tables, if the lexer is contextual.
    #[inline]
    pub fn contextual(&self) -> Option<&CtxTables> {
        self.ctx.as_deref()
    }
    /// Contextual lexing: the modes the next lexeme can start in after the
    /// lexeme in progress ends in state `s` as terminal `x`: the same mode
    /// for an ignored terminal, else the modes after `x` (empty for global
    /// lexing).
    #[inline]
    pub fn next_modes(&self, s: LexStateId, x: TerminalId) -> &[u32] {
        let Some(c) = self.ctx.as_deref() else { return &[] };
        if self.is_ignored(x) {
            let t = &c.tag[s.index()];
            return if *t == NONE { &[] } else { std::slice::from_ref(t) };
        }
        let (lo, hi) = (c.next_off[x.index()] as usize, c.next_off[x.index() + 1] as usize);
        &c.next[lo..hi]
    }
    /// The terminals the lexeme in progress would be if it ended here at
    /// the end of the text (sorted; at most one except under
    /// [`crate::grammar::LexerMode::LongestAll`]).
    #[inline]
    pub fn winners(&self, s: LexStateId) -> &[TerminalId] {
        let i = s.index();
        &self.win[self.win_off[i] as usize..self.win_off[i + 1] as usize]
    }
    /// The winners if the lexeme in progress ends here and byte `b` follows
    /// (they differ from [`Lexer::winners`] only where a terminal's accept
    /// is guarded by a lookahead).
    #[inline]
    pub fn winners_before(&self, s: LexStateId, b: u8) -> &[TerminalId] {
        match self.gw_row.get(s.index()) {
            Some(&r) if r != NONE => {
                let k = r as usize * self.n_classes as usize + self.classes[b as usize] as usize;
                &self.gw[self.gw_off[k] as usize..self.gw_off[k + 1] as usize]
            }
            _ => self.winners(s),
        }
    }
    /// `x` ∈ [`Lexer::winners_before`]`(s, b)`.
    #[inline]
    pub fn is_winner_before(&self, s: LexStateId, x: TerminalId, b: u8) -> bool {
        match self.winners_before(s, b) {
            [] => false,
            [w] => *w == x,
            ws => ws.contains(&x),
        }
    }
    /// Can the lexeme in progress end here as `x`, before some byte or at
    /// the end of the text?
    pub fn may_win(&self, s: LexStateId, x: TerminalId) -> bool {
        if self.is_winner(s, x) {
            return true;
        }
        match self.gw_row.get(s.index()) {
            Some(&r) if r != NONE => {
                let nc = self.n_classes as usize;
                let (lo, hi) = (self.gw_off[r as usize * nc] as usize, self.gw_off[(r as usize + 1) * nc] as usize);
                self.gw[lo..hi].contains(&x)
            }
            _ => false,
        }
    }
    /// The first of [`Lexer::winners`].
    #[inline]
    pub fn winner(&self, s: LexStateId) -> Option<TerminalId> {
        self.winners(s).first().copied()
    }
    #[inline]
    pub fn is_winner(&self, s: LexStateId, x: TerminalId) -> bool {
        match self.winners(s) {
            [] => false,
            [w] => *w == x,
            ws => ws.contains(&x),
        }
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

    /// Lexes a whole text with a global automaton, exploring the
    /// `cont`/`emit` branches depth-first (memoizing failed `(position,
    /// state)` pairs, so this is `O(len × n_states)`). Equals the reference
    /// lexer's result (ignored lexemes included; for LongestAll, one of the
    /// lexings); on failure, `pos` is the furthest offset any branch reached
    /// (which may lie beyond the reference lexer's failure offset: a branch
    /// can walk into a lexeme that never completes). Contextual lexing needs
    /// the parser, so a contextual automaton only lexes single lexemes here.
    pub fn lex(&self, text: &[u8]) -> std::result::Result<Vec<Lexeme>, LexFailure> {
        if text.is_empty() {
            return Ok(Vec::new());
        }
        // Emitted lexemes form a tree: (lexeme, parent index or NONE).
        let mut arena: Vec<(Lexeme, u32)> = Vec::new();
        // Branches: (position, state, lexeme start, last emitted lexeme).
        let mut stack = vec![(0usize, self.start(), 0usize, NONE)];
        let mut seen = crate::hash::FxSet::default();
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
            if let (Some(&w), Some(e)) = (self.winners_before(s, b).first(), self.emit(s, b)) {
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
            win_off: &self.win_off,
            win: &self.win,
            comp_offsets: &self.comp_offsets,
            comp: &self.comp,
            n_terminals: self.n_terminals,
            ignored: &self.ignored,
            ctx: self.ctx.as_deref(),
            gw_row: &self.gw_row,
            gw_off: &self.gw_off,
            gw: &self.gw,
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
        let rows_ok = |row: &[u32], rows: &[u32], targets: usize| {
            row.len() == ns
                && rows.len() % nc == 0
                && row.iter().all(|&r| (r as usize) < rows.len() / nc)
                && rows.iter().all(|&x| x == NONE || (x as usize) < targets)
        };
        if !rows_ok(p.cont_row, p.cont_rows, ns) {
            return bad("cont table");
        }
        let global = p.ctx.is_none();
        if global && !rows_ok(p.emit_row, p.emit_rows, ns) || !global && (!p.emit_row.is_empty() || !p.emit_rows.is_empty()) {
            return bad("emit table");
        }
        let csr_ok = |off: &[u32], list: &[TerminalId]| {
            off.len() == ns + 1
                && off[0] == 0
                && off[ns] as usize == list.len()
                && off.windows(2).all(|w| w[0] <= w[1])
                && (0..ns).all(|s| {
                    let l = &list[off[s] as usize..off[s + 1] as usize];
                    l.iter().all(|t| t.index() < nt) && l.windows(2).all(|w| w[0] < w[1])
                })
        };
        if !csr_ok(p.win_off, p.win) {
            return bad("winner lists");
        }
        if !csr_ok(p.comp_offsets, p.comp) {
            return bad("completion lists");
        }
        if p.ignored.len() != nt {
            return bad("ignored flags size");
        }
        for s in 0..ns {
            let comp = &p.comp[p.comp_offsets[s] as usize..p.comp_offsets[s + 1] as usize];
            if p.win[p.win_off[s] as usize..p.win_off[s + 1] as usize].iter().any(|w| comp.binary_search(w).is_err()) {
                return bad("winner not completable");
            }
        }
        let n_rows = p.gw_row.iter().filter(|&&r| r != NONE).count();
        let gw_ok = if p.gw_row.is_empty() {
            p.gw_off.len() == 1 && p.gw_off[0] == 0 && p.gw.is_empty()
        } else {
            p.gw_row.len() == ns
                && p.gw_row.iter().all(|&r| r == NONE || (r as usize) < n_rows)
                && n_rows.checked_mul(nc).map(|k| k + 1) == Some(p.gw_off.len())
                && p.gw_off[0] == 0
                && p.gw_off.windows(2).all(|w| w[0] <= w[1])
                && p.gw_off[p.gw_off.len() - 1] as usize == p.gw.len()
                && p.gw_off.windows(2).all(|w| {
                    let l = &p.gw[w[0] as usize..w[1] as usize];
                    l.iter().all(|t| t.index() < nt) && l.windows(2).all(|x| x[0] < x[1])
                })
        };
        if !gw_ok {
            return bad("next-byte winner lists");
        }
        if let Some(c) = p.ctx {
            let nm = c.n_modes as usize;
            let ok = nm > 0
                && (c.start_mode as usize) < nm
                && c.tag.len() == ns
                && c.tag.iter().all(|&t| t == NONE || (t as usize) < nm)
                && c.sh_row.len() == ns
                && c.sh_rows.len() % nc == 0
                && c.sh_row.iter().all(|&r| (r as usize) < c.sh_rows.len() / nc)
                && nm.checked_mul(nc) == Some(c.start.len())
                && c.combo_key.len() == 2 * c.combo_state.len()
                && c.combo_key.chunks_exact(2).zip(c.combo_key.chunks_exact(2).skip(1)).all(|(a, b)| a < b)
                && c.combo_state.iter().all(|&s| (s as usize) < ns)
                && c.next_off.len() == nt + 1
                && c.next_off[0] == 0
                && c.next_off.windows(2).all(|w| w[0] <= w[1])
                && c.next_off[nt] as usize == c.next.len()
                && c.next.iter().all(|&m| (m as usize) < nm)
                && c.state_mode.iter().all(|&m| (m as usize) < nm);
            if !ok {
                return bad("contextual tables");
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
            win_off: p.win_off.to_vec(),
            win: p.win.to_vec(),
            comp_offsets: p.comp_offsets.to_vec(),
            comp: p.comp.to_vec(),
            n_terminals: p.n_terminals,
            ignored: p.ignored.to_vec(),
            ctx: p.ctx.map(|c| Box::new(c.clone())),
            gw_row: p.gw_row.to_vec(),
            gw_off: p.gw_off.to_vec(),
            gw: p.gw.to_vec(),
        })
    }
}

/// Split a flat `rows × width` table into (row index per row, distinct rows in
/// first-occurrence order).
#[cfg(feature = "compiler")]
pub(crate) fn dedup_rows(flat: &[u32], width: usize) -> (Vec<u32>, Vec<u32>) {
    let mut seen: crate::hash::FxMap<&[u32], u32> = crate::hash::FxMap::default();
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
