//! Construction of the lexer automaton (see the [module doc](super) for the
//! semantics of `cur`, `shadow`, `cont`, `emit`, `winners` and `comp`).
//!
//! Steps:
//! 1. compile every lexed terminal into a [`Table`] over all 256 bytes;
//! 2. byte classes: bytes with identical columns in every table (whitespace
//!    bytes kept as singletons);
//! 3. the competing sets (*modes*): one with every lexed terminal, or for
//!    contextual lexing one per distinct set of terminals an LR state acts
//!    on (plus the ignored ones);
//! 4. BFS over lexer states `(cur, shadow, tag)`, interned by their packed
//!    form (entries `rank << 34 | role << 32 | table state`, sorted);
//! 5. `comp` as a least fixpoint, propagated backwards along `cont` edges.

use std::time::Duration;

use super::order::Order;
use super::table::{byte_in, compile_all, Table};
use super::{CtxTables, Lexer, NONE};
use crate::err;
use crate::grammar::{Cfg, LexerMode};
use crate::ids::TerminalId;
use crate::parser::LrTables;
use crate::time::Instant;
use crate::Result;

/// Refuse to build more than this many `state × class` transition entries.
const MAX_TABLE_ENTRIES: usize = crate::limits::Limits::DEFAULT.max_lexer_table_entries;

/// Bytes that always get a class of their own.
const SINGLETON_BYTES: [u8; 5] = [b'\n', b'\r', b' ', b'\t', 0x0c];

/// Figures about a build.
#[derive(Clone, Debug)]
pub struct BuildStats {
    /// Lexer automaton states.
    pub n_states: usize,
    pub n_classes: usize,
    /// Terminals with a pattern.
    pub n_lexable: usize,
    /// Sum of the (pruned) terminal DFA sizes.
    pub terminal_dfa_states: usize,
    /// Largest `|cur| + |shadow|` of a lexer state.
    pub max_state_width: usize,
    /// Competing sets (1 for the global modes).
    pub n_modes: usize,
    pub elapsed: Duration,
    /// Of which compiling the terminal tables (step 1).
    pub terminal_elapsed: Duration,
}

use crate::hash::FxMap;

/// Separates the parts of an interned key.
const SEP: u64 = u64::MAX;

/// Entry roles (bits 32..34 of an entry).
const CAND: u64 = 0;
/// Lark modes: the last candidate, which has matched during this lexeme.
const MATCHED: u64 = 1;
/// Lark modes: a literal watched only to retype a regex winner.
const RETYPE: u64 = 2;

#[inline]
fn pack(rank: u32, role: u64, s: u32) -> u64 {
    (rank as u64) << 34 | role << 32 | s as u64
}
#[inline]
fn rank_of(e: u64) -> u32 {
    (e >> 34) as u32
}
#[inline]
fn role_of(e: u64) -> u64 {
    (e >> 32) & 3
}
#[inline]
fn state_of(e: u64) -> u32 {
    e as u32
}

/// Builds the lexer automaton of `cfg`'s terminals. Contextual lexing needs
/// the LR tables: they are built here (use [`build_for`] to pass them).
pub fn build(cfg: &Cfg) -> Result<Lexer> {
    build_with_stats(cfg).map(|(l, _)| l)
}

/// [`build`], also returning figures about the construction.
pub fn build_with_stats(cfg: &Cfg) -> Result<(Lexer, BuildStats)> {
    if cfg.lexer == LexerMode::Contextual {
        let tables = crate::parser::lalr::build_tables(cfg)?;
        build_for(cfg, Some(&tables))
    } else {
        build_for(cfg, None)
    }
}

/// The competing sets of contextual lexing: per LR state, the terminals it
/// has an action for (not `$END`) plus the ignored ones; equal sets share a
/// mode. Returns (modes as sorted terminal lists, mode of each LR state).
pub fn contextual_modes(cfg: &Cfg, lr: &LrTables) -> (Vec<Vec<TerminalId>>, Vec<u32>) {
    let nt = cfg.terminals.len();
    let mut ids: FxMap<Vec<TerminalId>, u32> = FxMap::default();
    let mut modes = Vec::new();
    let mut state_mode = Vec::with_capacity(lr.n_states() as usize);
    for s in 0..lr.n_states() {
        let set: Vec<TerminalId> = (0..nt)
            .map(TerminalId::new)
            .filter(|&t| {
                cfg.terminals[t.index()].is_lexed()
                    && (cfg.terminals[t.index()].ignored
                        || lr.action(crate::ids::ParseStateId(s), t) != crate::parser::Action::Error)
            })
            .collect();
        let n = modes.len() as u32;
        let id = *ids.entry(set.clone()).or_insert_with(|| {
            modes.push(set);
            n
        });
        state_mode.push(id);
    }
    (modes, state_mode)
}

/// Builds the lexer automaton; `lr` must be given for contextual lexing.
pub fn build_for(cfg: &Cfg, lr: Option<&LrTables>) -> Result<(Lexer, BuildStats)> {
    let t0 = Instant::now();
    let nt = cfg.terminals.len();
    if nt >= 1 << 29 {
        return Err(err!(Limit, "too many terminals"));
    }
    // 1. Terminal tables (indexed by terminal id; None = not lexed).
    let mut tables = compile_all(cfg)?;
    let terminal_elapsed = t0.elapsed();
    let order = Order::new(cfg, &tables);
    // 2. Byte classes: equal columns in every table, whitespace singletons.
    let mut classes = [0u8; 256];
    let mut sig_ids: FxMap<Vec<u32>, u8> = FxMap::default();
    for (b, class) in classes.iter_mut().enumerate() {
        let mut sig = Vec::new();
        if SINGLETON_BYTES.contains(&(b as u8)) {
            sig.push(NONE - 1 - b as u32);
        }
        for tb in tables.iter().flatten() {
            sig.extend((0..tb.n_states()).map(|s| tb.next[s * 256 + b]));
            // Guarded accepts: the class decides the guard.
            sig.extend(tb.guards.iter().map(|(_, f)| byte_in(f, b as u8) as u32));
        }
        let len = sig_ids.len() as u8; // at most 255: one new id per byte
        *class = *sig_ids.entry(sig).or_insert(len);
    }
    let n_classes = sig_ids.len();
    // One byte of each class (guards are decided on it).
    let mut rep = vec![0u8; n_classes];
    for b in (0..=255u8).rev() {
        rep[classes[b as usize] as usize] = b;
    }
    for tb in tables.iter_mut().flatten() {
        tb.compress(&classes, n_classes);
    }
    let terminal_dfa_states = tables.iter().flatten().map(Table::n_states).sum();
    let n_lexable = tables.iter().flatten().count();

    // 3. Modes.
    let lexed = |i: usize| tables[i].as_ref().is_some_and(|t| t.start != NONE);
    let (modes, state_mode): (Vec<Vec<TerminalId>>, Vec<u32>) = match (cfg.lexer, lr) {
        (LexerMode::Contextual, Some(lr)) => contextual_modes(cfg, lr),
        (LexerMode::Contextual, None) => return Err(err!(Grammar, "contextual lexing needs the LR tables")),
        _ => (vec![(0..nt).map(TerminalId::new).collect()], Vec::new()),
    };
    if cfg.lexer == LexerMode::Contextual && cfg.indent.is_some() {
        return Err(err!(Grammar, "%indent needs a global lexer (add `%lexer longest` or `%lexer basic`)"));
    }
    let mut by_rank = vec![0u32; nt];
    for (t, &r) in order.rank.iter().enumerate() {
        by_rank[r as usize] = t as u32;
    }
    let lark = order.lark();
    let mode_kind = cfg.lexer;
    let ignored: Vec<bool> = cfg.terminals.iter().map(|t| t.ignored).collect();
    // unless[R] as a rank bitmap lookup: literal rank -> is in unless(R).
    let unless_ranks: Vec<Vec<u32>> =
        order.unless.iter().map(|v| v.iter().map(|s| order.rank[s.index()]).collect()).collect();

    let tb = |e: u64| tables[by_rank[rank_of(e) as usize] as usize].as_ref().expect("lexed terminal");
    // A match ends here, for some next byte or at the end of the text.
    let accepting = |e: u64| tb(e).accept[state_of(e) as usize];
    // A match ends here whatever follows.
    let acc_full = |e: u64| accepting(e) && tb(e).guard(state_of(e)).is_none();
    // A match ends here if the next byte is in class `c`.
    let acc_on = |e: u64, c: usize| tb(e).accepts_before(state_of(e), Some(rep[c]));
    // A guarded match ends here: decided by the next byte.
    let pending = |e: u64| accepting(e) && tb(e).guard(state_of(e)).is_some();
    let term = |e: u64| by_rank[rank_of(e) as usize];
    // Advance a set of packed entries by class `c` into `out` (dead dropped;
    // stays sorted).
    let advance = |set: &[u64], c: usize, out: &mut Vec<u64>| {
        out.clear();
        for &e in set {
            let n = tb(e).next[state_of(e) as usize * n_classes + c];
            if n != NONE {
                out.push(e & !0xffff_ffff | n as u64);
            }
        }
    };
    // Lark modes, after a byte: the first candidate that accepts now or has
    // matched before becomes the matched one and the later candidates go;
    // literals watched for retyping are kept only for a remaining regex.
    // `acc`: which entries accept now (guarded ones are settled when the
    // next byte is read).
    let settle = |cur: &mut Vec<u64>, acc: &dyn Fn(u64) -> bool| {
        if !lark {
            return;
        }
        let first = cur.iter().position(|&e| role_of(e) != RETYPE && (role_of(e) == MATCHED || acc(e)));
        if let Some(i) = first {
            let r = rank_of(cur[i]);
            let (mut out, mut keep_ret) = (Vec::with_capacity(cur.len()), Vec::new());
            for &e in cur.iter() {
                match role_of(e) {
                    RETYPE => keep_ret.push(e),
                    _ if rank_of(e) < r => out.push(e),
                    _ if rank_of(e) == r => out.push(e & !(3 << 32) | MATCHED << 32),
                    _ => {}
                }
            }
            cur.clear();
            cur.extend(out);
            cur.extend(keep_ret);
        }
        // Drop retype entries no remaining regex candidate can use.
        let regexes: Vec<u32> = cur.iter().filter(|&&e| role_of(e) != RETYPE).map(|&e| term(e)).collect();
        cur.retain(|&e| {
            role_of(e) != RETYPE || regexes.iter().any(|&r| unless_ranks[r as usize].contains(&rank_of(e)))
        });
        cur.sort_unstable();
    };
    // The winners of a `cur` (terminal ids), `acc` saying which entries accept.
    let winners = |cur: &[u64], acc: &dyn Fn(u64) -> bool, out: &mut Vec<u32>| {
        out.clear();
        match mode_kind {
            LexerMode::Longest => {
                if let Some(&e) = cur.iter().find(|&&e| acc(e)) {
                    out.push(term(e));
                }
            }
            LexerMode::LongestAll => out.extend(cur.iter().filter(|&&e| acc(e)).map(|&e| term(e))),
            LexerMode::Contextual | LexerMode::Basic => {
                let Some(&m) = cur.iter().find(|&&e| role_of(e) == MATCHED) else { return };
                if !acc(m) {
                    return;
                }
                let r = term(m);
                if !ignored[r as usize] {
                    let ur = &unless_ranks[r as usize];
                    // Retype entries are sorted by rank: the first accepting one in unless(R).
                    if let Some(&s) =
                        cur.iter().find(|&&e| role_of(e) == RETYPE && ur.contains(&rank_of(e)) && acc(e))
                    {
                        out.push(term(s));
                        return;
                    }
                }
                out.push(r);
            }
        }
    };
    // The shadow of the next lexeme: every candidate of `cur` (roles dropped).
    let to_shadow = |cur: &[u64], shadow: &[u64], out: &mut Vec<u64>| {
        out.clear();
        out.extend(shadow.iter().copied());
        out.extend(cur.iter().filter(|&&e| role_of(e) != RETYPE).map(|&e| e & !(3 << 32)));
        out.sort_unstable();
        out.dedup();
    };

    // Per mode: the entries of a lexeme start, and after each first byte.
    let mut mode_l0: Vec<Vec<u64>> = Vec::with_capacity(modes.len());
    let mut mode_has_ignored = Vec::with_capacity(modes.len());
    for set in &modes {
        let ts: Vec<usize> = set.iter().map(|t| t.index()).filter(|&i| lexed(i)).collect();
        let competes = |i: usize| ts.contains(&i);
        let embedded = if lark { order.embedded(&competes) } else { vec![false; nt] };
        let mut l0: Vec<u64> = ts
            .iter()
            .filter(|&&i| !embedded[i])
            .map(|&i| pack(order.rank[i], CAND, tables[i].as_ref().unwrap().start))
            .collect();
        if lark {
            let mut ret: Vec<usize> =
                ts.iter().flat_map(|&r| order.unless[r].iter().map(|s| s.index())).filter(|&s| competes(s)).collect();
            ret.sort_unstable();
            ret.dedup();
            l0.extend(ret.into_iter().map(|s| pack(order.rank[s], RETYPE, tables[s].as_ref().unwrap().start)));
        }
        l0.sort_unstable();
        mode_has_ignored.push(ts.iter().any(|&i| ignored[i]));
        mode_l0.push(l0);
    }
    let mut start_adv: Vec<Vec<Vec<u64>>> = Vec::with_capacity(modes.len());
    for l0 in &mode_l0 {
        let mut per_c = Vec::with_capacity(n_classes);
        for c in 0..n_classes {
            let mut out = Vec::new();
            advance(l0, c, &mut out);
            settle(&mut out, &acc_full);
            if !out.iter().any(|&e| role_of(e) != RETYPE) {
                out.clear();
            }
            per_c.push(out);
        }
        start_adv.push(per_c);
    }
    // Whether `cur` still holds an ignored candidate (the lexeme may end
    // ignored, so the mode to return to must be kept).
    let has_ignored = |cur: &[u64]| cur.iter().any(|&e| role_of(e) != RETYPE && ignored[term(e) as usize]);
    let contextual = mode_kind == LexerMode::Contextual;
    let start_mode = if contextual { lr.map_or(0, |t| state_mode[t.start_state().index()]) } else { 0 };
    // Contextual: the modes an LR state entered by shifting each terminal can have.
    let mut next_modes: Vec<Vec<u32>> = vec![Vec::new(); nt];
    if let (true, Some(lr)) = (contextual, lr) {
        for s in 0..lr.n_states() {
            for (t, nm) in next_modes.iter_mut().enumerate() {
                if let crate::parser::Action::Shift(s2) = lr.action(crate::ids::ParseStateId(s), TerminalId::new(t)) {
                    nm.push(state_mode[s2.index()]);
                }
            }
        }
        for nm in &mut next_modes {
            nm.sort_unstable();
            nm.dedup();
        }
    }

    // 4. Lexer states.
    let mut ids: FxMap<Box<[u64]>, u32> = FxMap::default();
    let mut states: Vec<Box<[u64]>> = Vec::new(); // interned keys
    let mut key: Vec<u64> = Vec::new();
    let make_key = |cur: &[u64], shadow: &[u64], tag: u32, key: &mut Vec<u64>| {
        key.clear();
        key.extend_from_slice(cur);
        key.push(SEP);
        key.extend_from_slice(shadow);
        key.push(SEP);
        key.push(tag as u64);
    };
    let l0_tag = if contextual && mode_has_ignored[start_mode as usize] { start_mode } else { NONE };
    make_key(&mode_l0[start_mode as usize], &[], l0_tag, &mut key);
    ids.insert(key.clone().into_boxed_slice(), 0);
    states.push(key.clone().into_boxed_slice());
    let intern = |key: &[u64], ids: &mut FxMap<Box<[u64]>, u32>, states: &mut Vec<Box<[u64]>>| -> Result<u32> {
        if let Some(&id) = ids.get(key) {
            return Ok(id);
        }
        let id = states.len() as u32;
        if (id as usize + 1) * n_classes > MAX_TABLE_ENTRIES {
            return Err(err!(Limit, "lexer automaton too large (over {id} states); simplify the terminals"));
        }
        let b: Box<[u64]> = key.into();
        ids.insert(b.clone(), id);
        states.push(b);
        Ok(id)
    };

    // Tokens matched by id (`TerminalPattern::Special`): no byte starts
    // them; each has one state, the lexer right after it (its lexeme ended,
    // nothing in its shadow), which the matcher enters when it commits the
    // token. Reached by no byte, so text never produces them.
    for (t, def) in cfg.terminals.iter().enumerate() {
        if matches!(def.pattern, crate::grammar::TerminalPattern::Special) {
            let role = if lark { MATCHED } else { CAND };
            make_key(&[pack(order.rank[t], role, 0)], &[], NONE, &mut key);
            intern(&key, &mut ids, &mut states)?;
        }
    }

    let (mut cont, mut emit) = (Vec::new(), Vec::new());
    let (mut win_off, mut win) = (vec![0u32], Vec::new());
    // Winners that depend on the next byte (guarded accepts): per state a
    // row (or NONE), per row and class a list.
    let (mut gw_row, mut gw_off, mut gw) = (Vec::new(), vec![0u32], Vec::new());
    let mut n_gw_rows = 0u32;
    // Emissions from states with guarded accepts: (state, class, next state).
    let mut guard_edges: Vec<(u32, u32, u32)> = Vec::new();
    let mut tags = Vec::new();
    // Contextual emission, factored: shadow part per (state, class), start part per (mode, class).
    let mut sh_ids: FxMap<Box<[u64]>, u32> = FxMap::default();
    let mut sh_of: Vec<u32> = Vec::new(); // per (state, class)
    let mut start_ids: FxMap<(u32, u32), u32> = FxMap::default(); // (mode, class) -> start id, only valid ones
    let mut start_key: Vec<(u32, u32)> = Vec::new(); // start id -> (mode, class)
    let mut combos: Vec<([u32; 2], u32)> = Vec::new();
    let mut combo_seen: FxMap<[u32; 2], u32> = FxMap::default();
    let (mut adv_cur, mut adv_sh, mut merged, mut wbuf) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut max_state_width = 0;
    let mut i = 0;
    while i < states.len() {
        let st = states[i].clone();
        i += 1;
        let sep = st.iter().position(|&e| e == SEP).expect("separator");
        let sep2 = sep + 1 + st[sep + 1..].iter().position(|&e| e == SEP).expect("separator");
        let (cur, shadow, tag) = (&st[..sep], &st[sep + 1..sep2], st[sep2 + 1] as u32);
        max_state_width = max_state_width.max(cur.len() + shadow.len());
        tags.push(tag);
        // Guarded accepts in this state are decided by the next byte.
        let guarded = cur.iter().chain(shadow).any(|&e| pending(e));
        if shadow.iter().any(|&e| pending(e)) {
            // At the end of the text a shadow entry's guarded match holds.
            wbuf.clear();
        } else if guarded && lark {
            let mut c2 = cur.to_vec();
            settle(&mut c2, &accepting);
            winners(&c2, &accepting, &mut wbuf);
        } else {
            winners(cur, &accepting, &mut wbuf);
        }
        win.extend(wbuf.iter().copied());
        win_off.push(win.len() as u32);
        let w_eof: Vec<u32> = wbuf.clone();
        let mut w_by_class: Vec<Vec<u32>> = Vec::new();
        for c in 0..n_classes {
            // The lexeme in progress as the next byte (class `c`) sees it.
            let killed_before = guarded && shadow.iter().any(|&e| pending(e) && acc_on(e, c));
            let cur_c: std::borrow::Cow<[u64]> = if guarded && lark {
                let mut v = cur.to_vec();
                settle(&mut v, &|e| acc_on(e, c));
                v.into()
            } else {
                cur.into()
            };
            let w: &[u32] = if !guarded {
                &w_eof
            } else {
                if killed_before {
                    wbuf.clear();
                } else {
                    winners(&cur_c, &|e| acc_on(e, c), &mut wbuf);
                }
                w_by_class.push(wbuf.clone());
                &w_by_class[c]
            };
            let cur = &cur_c[..];
            advance(cur, c, &mut adv_cur);
            settle(&mut adv_cur, &acc_full);
            advance(shadow, c, &mut adv_sh);
            let killed = killed_before || adv_sh.iter().any(|&e| acc_full(e));
            adv_sh.sort_unstable();
            adv_sh.dedup();
            cont.push(if killed || !adv_cur.iter().any(|&e| role_of(e) != RETYPE) {
                NONE
            } else {
                let t = if contextual && has_ignored(&adv_cur) { tag } else { NONE };
                make_key(&adv_cur, &adv_sh, t, &mut key);
                intern(&key, &mut ids, &mut states)?
            });
            // Ending the lexeme here: the next lexeme's shadow.
            let shadow_next = if w.is_empty() {
                None
            } else {
                to_shadow(cur, shadow, &mut merged);
                advance(&merged, c, &mut adv_sh);
                if adv_sh.iter().any(|&e| acc_full(e)) {
                    None
                } else {
                    adv_sh.sort_unstable();
                    adv_sh.dedup();
                    Some(adv_sh.clone())
                }
            };
            if !contextual {
                let e = match &shadow_next {
                    Some(sh) if !start_adv[0][c].is_empty() => {
                        make_key(&start_adv[0][c], sh, NONE, &mut key);
                        intern(&key, &mut ids, &mut states)?
                    }
                    _ => NONE,
                };
                if guarded && e != NONE {
                    guard_edges.push((i as u32 - 1, c as u32, e));
                }
                emit.push(e);
                continue;
            }
            let Some(sh) = shadow_next else {
                sh_of.push(NONE);
                continue;
            };
            let n = sh_ids.len() as u32;
            let sid = *sh_ids.entry(sh.clone().into_boxed_slice()).or_insert(n);
            sh_of.push(sid);
            // The next lexeme's modes: the same one after an ignored lexeme,
            // else those the parser can be in after the winner.
            let ms: Vec<u32> = if w.iter().all(|&x| ignored[x as usize]) {
                if tag == NONE {
                    Vec::new()
                } else {
                    vec![tag]
                }
            } else {
                let mut v: Vec<u32> = w.iter().flat_map(|&x| next_modes[x as usize].iter().copied()).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            for m in ms {
                if start_adv[m as usize][c].is_empty() {
                    continue;
                }
                let n = start_key.len() as u32;
                let stid = *start_ids.entry((m, c as u32)).or_insert_with(|| {
                    start_key.push((m, c as u32));
                    n
                });
                if let Some(&target) = combo_seen.get(&[stid, sid]) {
                    if guarded {
                        guard_edges.push((i as u32 - 1, c as u32, target));
                    }
                    continue;
                }
                let scur = &start_adv[m as usize][c];
                let t = if has_ignored(scur) { m } else { NONE };
                make_key(scur, &sh, t, &mut key);
                let target = intern(&key, &mut ids, &mut states)?;
                combo_seen.insert([stid, sid], target);
                combos.push(([stid, sid], target));
                if guarded {
                    guard_edges.push((i as u32 - 1, c as u32, target));
                }
            }
        }
        if w_by_class.iter().any(|w| *w != w_eof) {
            gw_row.push(n_gw_rows);
            n_gw_rows += 1;
            for w in &w_by_class {
                let mut w = w.clone();
                w.sort_unstable();
                gw.extend(w);
                gw_off.push(gw.len() as u32);
            }
        } else {
            gw_row.push(NONE);
        }
    }
    let ns = states.len();
    if n_gw_rows == 0 {
        gw_row.clear();
    }

    // 5. comp: least fixpoint, propagated backwards along cont edges.
    let words = nt.div_ceil(64).max(1);
    let mut bits = vec![0u64; ns * words];
    let mut preds_off = vec![0u32; ns + 1];
    for &t in cont.iter().filter(|&&t| t != NONE) {
        preds_off[t as usize + 1] += 1;
    }
    for s in 0..ns {
        preds_off[s + 1] += preds_off[s];
    }
    let mut fill = preds_off.clone();
    let mut preds = vec![0u32; preds_off[ns] as usize];
    for (k, &t) in cont.iter().enumerate() {
        if t != NONE {
            preds[fill[t as usize] as usize] = (k / n_classes) as u32;
            fill[t as usize] += 1;
        }
    }
    let mut queued = vec![true; ns];
    let mut work: Vec<u32> = (0..ns as u32).collect();
    for s in 0..ns {
        for &w in &win[win_off[s] as usize..win_off[s + 1] as usize] {
            bits[s * words + w as usize / 64] |= 1 << (w % 64);
        }
    }
    // A terminal that wins only before some bytes (a lookahead) counts where
    // the lexeme it emits before one of them can itself complete.
    let gw_list = |s: u32, c: u32| -> &[u32] {
        let k = gw_row[s as usize] as usize * n_classes + c as usize;
        &gw[gw_off[k] as usize..gw_off[k + 1] as usize]
    };
    loop {
        while let Some(s) = work.pop() {
            let s = s as usize;
            queued[s] = false;
            for &p in &preds[preds_off[s] as usize..preds_off[s + 1] as usize] {
                let p = p as usize;
                let mut changed = false;
                for k in 0..words {
                    let new = bits[p * words + k] | bits[s * words + k];
                    changed |= new != bits[p * words + k];
                    bits[p * words + k] = new;
                }
                if changed && !queued[p] {
                    queued[p] = true;
                    work.push(p as u32);
                }
            }
        }
        for &(s, c, t) in &guard_edges {
            if gw_row.get(s as usize).is_none_or(|&r| r == NONE)
                || bits[t as usize * words..(t as usize + 1) * words].iter().all(|&w| w == 0)
            {
                continue;
            }
            let mut changed = false;
            for &w in gw_list(s, c) {
                let (k, bit) = (s as usize * words + w as usize / 64, 1u64 << (w % 64));
                changed |= bits[k] & bit == 0;
                bits[k] |= bit;
            }
            if changed && !queued[s as usize] {
                queued[s as usize] = true;
                work.push(s);
            }
        }
        if work.is_empty() {
            break;
        }
    }
    let mut comp_offsets = vec![0u32];
    let mut comp = Vec::new();
    for s in 0..ns {
        for t in 0..nt {
            if bits[s * words + t / 64] >> (t % 64) & 1 == 1 {
                comp.push(TerminalId::new(t));
            }
        }
        comp_offsets.push(comp.len() as u32);
    }
    // Winners sorted by id (the runtime searches them).
    for s in 0..ns {
        win[win_off[s] as usize..win_off[s + 1] as usize].sort_unstable();
    }

    let (cont_row, cont_rows) = super::dedup_rows(&cont, n_classes);
    let (emit_row, emit_rows) = super::dedup_rows(&emit, n_classes);
    let ctx = if contextual {
        let (sh_row, sh_rows) = super::dedup_rows(&sh_of, n_classes);
        let mut start = vec![NONE; modes.len() * n_classes];
        for (id, &(m, c)) in start_key.iter().enumerate() {
            start[m as usize * n_classes + c as usize] = id as u32;
        }
        crate::sort::sort_packed(&mut combos);
        let mut next_off = vec![0u32];
        let mut next = Vec::new();
        for nm in &next_modes {
            next.extend_from_slice(nm);
            next_off.push(next.len() as u32);
        }
        Some(Box::new(CtxTables {
            n_modes: modes.len() as u32,
            start_mode,
            tag: tags,
            sh_row,
            sh_rows,
            start,
            combo_key: combos.iter().flat_map(|(k, _)| k.iter().copied()).collect(),
            combo_state: combos.iter().map(|&(_, s)| s).collect(),
            next_off,
            next,
            state_mode: state_mode.clone(),
        }))
    } else {
        None
    };
    let lexer = Lexer {
        classes,
        n_classes: n_classes as u32,
        n_states: ns as u32,
        cont_row,
        cont_rows,
        emit_row,
        emit_rows,
        win_off,
        win: win.into_iter().map(TerminalId).collect(),
        comp_offsets,
        comp,
        n_terminals: nt as u32,
        ignored,
        ctx,
        gw_row,
        gw_off,
        gw: gw.into_iter().map(TerminalId).collect(),
    };
    let stats = BuildStats {
        n_states: ns,
        n_classes,
        n_lexable,
        terminal_dfa_states,
        max_state_width,
        n_modes: modes.len(),
        elapsed: t0.elapsed(),
        terminal_elapsed,
    };
    Ok((lexer, stats))
}
