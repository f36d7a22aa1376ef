//! LALR(1) table construction (DeRemer & Pennello, "Efficient Computation of
//! LALR(1) Look-Ahead Sets", TOPLAS 1982).
//!
//! The grammar is augmented with `$START -> start $END`; `$END` is terminal id
//! `cfg.terminals.len()`. The LR(0) automaton is built from item kernels; the
//! `$END` shift out of the state holding `$START -> start . $END` becomes the
//! `accept` action (no final state is built). Lookaheads are computed with two
//! passes of the `digraph` SCC algorithm, then every state gets its shifts,
//! its reductions on their lookaheads and `accept`; any doubly defined entry
//! is a conflict. All conflicts (up to [`MAX_REPORTED_CONFLICTS`]) are
//! reported in one [`ErrorKind::Conflict`](crate::ErrorKind::Conflict) error.
//!
//! Glossary (paper → code):
//! - nonterminal transition `(p, A)` → an index into `ntt` (`Ntt { from, nt, to }`)
//! - `DR(p, A)` (direct reads) → initial rows of `read` (terminals shifted in `to`)
//! - `reads` → `reads` edges (via nullable nonterminal transitions out of `to`)
//! - `Read(p, A)` → `read` after the first `digraph`
//! - `includes` → `includes` edges; `Follow(p, A)` → `follow` after the second `digraph`
//! - `lookback (q, A -> ω)` → `lookback` pairs (reduction index, ntt index)
//! - `LA(q, A -> ω)` → `la` rows, one per reduction (completed item) of a state
//! - `N`, `S`, `traverse` → `digraph`'s `num`, `stack`, explicit call stack

use crate::hash::FxMap as HashMap;

use super::{Action, LrTableParts, LrTables, SparseGoto, MAX_ACTION_ID};
use crate::err;
use crate::grammar::{Cfg, ConflictPolicy, Symbol};
use crate::ids::{ParseStateId, RuleId};
use crate::Result;

/// Conflicts listed in one error; the rest are counted.
pub const MAX_REPORTED_CONFLICTS: usize = 20;
/// Most cells of the dense action + goto tables (states × (terminals +
/// nonterminals)); beyond it a compile fails with a `Limit` error instead of
/// allocating several gigabytes (see [`crate::limits::Limits::max_lalr_table_cells`]).
pub const MAX_TABLE_CELLS: usize = crate::limits::Limits::DEFAULT.max_lalr_table_cells;

/// Builds LALR(1) tables for `cfg` (see the module doc), settling conflicts
/// by `cfg.conflicts`.
pub fn build_tables(cfg: &Cfg) -> Result<LrTables> {
    build(cfg).map(|b| b.tables)
}

/// [`build_tables`], also returning the conflicts settled as Lark does.
/// A [`ConflictPolicy::General`] grammar gets placeholder tables (it runs
/// on the general parser, [`crate::parser::earley`]).
pub fn build(cfg: &Cfg) -> Result<LalrBuild> {
    if cfg.conflicts == ConflictPolicy::General {
        return Ok(LalrBuild { tables: LrTables::placeholder(cfg.terminals.len() as u32), warnings: Vec::new() });
    }
    let g = Grammar::new(cfg)?;
    let lr0 = Lr0::build(&g)?;
    let (reductions, la) = lookaheads(&g, &lr0);
    emit(cfg, &g, &lr0, &reductions, &la)
}

/// The augmented grammar with symbols as `u32`: terminals `0..n_term`
/// (`$END` = `n_term - 1`), nonterminal `A` = `n_term + A`, `$START` last.
struct Grammar {
    n_term: u32,
    n_nt: u32, // cfg nonterminals (without $START)
    /// Per rule, `rhs[rule_start[r]..rule_start[r + 1]]`; the last rule is `$START -> start $END`.
    rhs: Vec<u32>,
    rule_start: Vec<u32>,
    lhs: Vec<u32>, // nonterminal index (not symbol)
    rules_of: Vec<Vec<u32>>,
    nullable: Vec<bool>, // by nonterminal index
    /// Item `i` is `(item_rule[i], i - item_base[rule])`; item ids of a rule
    /// are consecutive, dot 0..=len.
    item_base: Vec<u32>,
    item_rule: Vec<u32>,
    /// True when everything after the dot is nullable.
    item_rest_nullable: Vec<bool>,
}

impl Grammar {
    fn new(cfg: &Cfg) -> Result<Grammar> {
        let n_term = cfg.terminals.len() as u32 + 1;
        let n_nt = cfg.nonterminals.len() as u32;
        if cfg.start.0 >= n_nt {
            return Err(err!(Grammar, "start nonterminal {} is out of range ({} nonterminals)", cfg.start.0, n_nt));
        }
        if cfg.rules.len() as u64 >= MAX_ACTION_ID as u64 || n_term as u64 + n_nt as u64 >= u32::MAX as u64 / 2 {
            return Err(err!(Limit, "grammar too large for the LR tables"));
        }
        let mut rhs = Vec::new();
        let mut rule_start = vec![0u32];
        let mut lhs = Vec::with_capacity(cfg.rules.len() + 1);
        let mut rules_of = vec![Vec::new(); n_nt as usize + 1];
        for (r, rule) in cfg.rules.iter().enumerate() {
            if rule.lhs.0 >= n_nt {
                return Err(err!(Grammar, "rule {r} ({}) has an out-of-range lhs", rule.span));
            }
            for &s in &rule.rhs {
                rhs.push(match s {
                    Symbol::T(t) if t.0 + 1 < n_term => t.0,
                    Symbol::N(n) if n.0 < n_nt => n_term + n.0,
                    _ => return Err(err!(Grammar, "rule {r} ({}) uses an out-of-range symbol {s:?}", rule.span)),
                });
            }
            rule_start.push(rhs.len() as u32);
            lhs.push(rule.lhs.0);
            rules_of[rule.lhs.index()].push(r as u32);
        }
        // $START -> start $END
        rhs.extend([n_term + cfg.start.0, n_term - 1]);
        rule_start.push(rhs.len() as u32);
        lhs.push(n_nt);
        rules_of[n_nt as usize].push(cfg.rules.len() as u32);

        let n_rules = lhs.len();
        let mut nullable = vec![false; n_nt as usize + 1];
        loop {
            let mut changed = false;
            for r in 0..n_rules {
                let a = lhs[r] as usize;
                if !nullable[a]
                    && rhs[rule_start[r] as usize..rule_start[r + 1] as usize]
                        .iter()
                        .all(|&s| s >= n_term && nullable[(s - n_term) as usize])
                {
                    nullable[a] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        check_productive(cfg, n_term, &rhs, &rule_start, &lhs, &rules_of)?;
        let mut item_base = Vec::with_capacity(n_rules);
        let mut item_rule = Vec::new();
        let mut item_rest_nullable = Vec::new();
        for r in 0..n_rules {
            item_base.push(item_rule.len() as u32);
            let body = &rhs[rule_start[r] as usize..rule_start[r + 1] as usize];
            let first = item_rest_nullable.len();
            item_rest_nullable.resize(first + body.len() + 1, false);
            item_rule.resize(first + body.len() + 1, r as u32);
            let mut ok = true;
            for d in (0..=body.len()).rev() {
                item_rest_nullable[first + d] = ok;
                if d > 0 {
                    ok = ok && body[d - 1] >= n_term && nullable[(body[d - 1] - n_term) as usize];
                }
            }
        }
        Ok(Grammar { n_term, n_nt, rhs, rule_start, lhs, rules_of, nullable, item_base, item_rule, item_rest_nullable })
    }

    fn eof(&self) -> u32 {
        self.n_term - 1
    }
    fn body(&self, r: u32) -> &[u32] {
        &self.rhs[self.rule_start[r as usize] as usize..self.rule_start[r as usize + 1] as usize]
    }
    /// `(rule, dot)` of an item.
    fn item(&self, i: u32) -> (u32, usize) {
        let r = self.item_rule[i as usize];
        (r, (i - self.item_base[r as usize]) as usize)
    }
    /// The symbol after the dot, if any.
    fn next_sym(&self, i: u32) -> Option<u32> {
        let (r, d) = self.item(i);
        self.body(r).get(d).copied()
    }
    fn is_nullable_sym(&self, s: u32) -> bool {
        s >= self.n_term && self.nullable[(s - self.n_term) as usize]
    }
}

/// Every nonterminal reachable from the start must derive some terminal
/// string; otherwise the parser would accept prefixes that can never be
/// completed (a dead end for constrained decoding).
fn check_productive(cfg: &Cfg, n_term: u32, rhs: &[u32], rule_start: &[u32], lhs: &[u32], rules_of: &[Vec<u32>]) -> Result<()> {
    let body = |r: usize| &rhs[rule_start[r] as usize..rule_start[r + 1] as usize];
    let mut productive = vec![false; rules_of.len()];
    loop {
        let mut changed = false;
        for (r, &a) in lhs.iter().enumerate() {
            let a = a as usize;
            if !productive[a] && body(r).iter().all(|&s| s < n_term || productive[(s - n_term) as usize]) {
                productive[a] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let start = rules_of.len() - 1; // $START
    let mut seen = vec![false; rules_of.len()];
    seen[start] = true;
    let mut work = vec![start];
    let mut dead = Vec::new();
    while let Some(a) = work.pop() {
        if !productive[a] && a != start {
            dead.push(a);
        }
        for &r in &rules_of[a] {
            for &s in body(r as usize) {
                if s >= n_term && !seen[(s - n_term) as usize] {
                    seen[(s - n_term) as usize] = true;
                    work.push((s - n_term) as usize);
                }
            }
        }
    }
    if dead.is_empty() {
        return Ok(());
    }
    dead.sort_unstable();
    let names: Vec<String> = dead.iter().map(|&a| format!("{} ({})", cfg.nonterminals[a].name, cfg.nonterminals[a].span)).collect();
    Err(err!(Grammar, "nonterminal(s) that can never derive a finite string of terminals: {}", names.join(", ")))
}

struct State {
    kernel: Vec<u32>,
    /// `(symbol, target)` sorted by symbol; terminals first. No `$END`.
    trans: Vec<(u32, u32)>,
    /// Rules completed in this state (kernel items at the end, ε-rules), sorted.
    reduce: Vec<u32>,
    /// Holds `$START -> start . $END`.
    accept: bool,
}

struct Lr0 {
    states: Vec<State>,
}

impl Lr0 {
    fn build(g: &Grammar) -> Result<Lr0> {
        let n_sym = (g.n_term + g.n_nt + 1) as usize;
        let start_item = g.item_base[g.lhs.len() - 1];
        let mut states = vec![];
        let mut index: crate::hash::FxMap<Vec<u32>, u32> = Default::default();
        index.insert(vec![start_item], 0);
        let mut pending = vec![vec![start_item]];
        let mut mark = vec![u32::MAX; g.n_nt as usize + 1];
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); n_sym];
        let mut touched: Vec<u32> = Vec::new();
        let mut items = Vec::new();
        let mut i = 0usize;
        while i < pending.len() {
            let kernel = std::mem::take(&mut pending[i]);
            closure(g, &kernel, i as u32, &mut mark, &mut items);
            let mut reduce = vec![];
            let mut accept = false;
            for &it in &items {
                match g.next_sym(it) {
                    None => reduce.push(g.item_rule[it as usize]),
                    Some(s) if s == g.eof() => accept = true,
                    Some(s) => {
                        if buckets[s as usize].is_empty() {
                            touched.push(s);
                        }
                        buckets[s as usize].push(it + 1);
                    }
                }
            }
            reduce.sort_unstable();
            touched.sort_unstable();
            let mut trans = Vec::with_capacity(touched.len());
            for &s in &touched {
                let mut k = std::mem::take(&mut buckets[s as usize]);
                k.sort_unstable();
                let next = pending.len() as u32;
                let target = *index.entry(k.clone()).or_insert(next);
                if target == next {
                    if next > MAX_ACTION_ID {
                        return Err(err!(Limit, "LR(0) automaton exceeds {MAX_ACTION_ID} states"));
                    }
                    // The table limit, checked as states are found: the
                    // lookahead sets of a grammar far past it would take
                    // gigabytes before `emit` could refuse it (and overflow
                    // wasm32's address space).
                    let cells = (next as usize + 1).saturating_mul(n_sym - 1);
                    if cells > MAX_TABLE_CELLS {
                        return Err(err!(
                            Limit,
                            "the LALR(1) tables would have more than {} states x ({} terminals + {} nonterminals) = {cells} cells \
                             (limit {MAX_TABLE_CELLS}): the grammar is too large",
                            next,
                            g.n_term,
                            g.n_nt
                        ));
                    }
                    pending.push(k);
                }
                trans.push((s, target));
            }
            touched.clear();
            states.push(State { kernel, trans, reduce, accept });
            i += 1;
        }
        Ok(Lr0 { states })
    }

    fn goto(&self, p: u32, sym: u32) -> Option<u32> {
        let tr = &self.states[p as usize].trans;
        tr.binary_search_by_key(&sym, |&(s, _)| s).ok().map(|k| tr[k].1)
    }
}

/// The closure of `kernel`: the kernel items, then the dot-0 items of every
/// nonterminal reachable as a leftmost symbol. `mark` holds per-nonterminal
/// stamps (`stamp` must be fresh for each call).
fn closure(g: &Grammar, kernel: &[u32], stamp: u32, mark: &mut [u32], out: &mut Vec<u32>) {
    out.clear();
    out.extend_from_slice(kernel);
    let mut k = 0;
    while k < out.len() {
        if let Some(s) = g.next_sym(out[k]) {
            if s >= g.n_term && mark[(s - g.n_term) as usize] != stamp {
                let a = (s - g.n_term) as usize;
                mark[a] = stamp;
                out.extend(g.rules_of[a].iter().map(|&r| g.item_base[r as usize]));
            }
        }
        k += 1;
    }
}

/// A dense bit matrix: one row of `w` words per node.
struct Bits {
    w: usize,
    data: Vec<u64>,
}

impl Bits {
    fn new(rows: usize, cols: usize) -> Bits {
        let w = cols.div_ceil(64);
        Bits { w, data: vec![0; rows * w] }
    }
    fn set(&mut self, r: usize, c: usize) {
        self.data[r * self.w + c / 64] |= 1 << (c % 64);
    }
    fn row(&self, r: usize) -> &[u64] {
        &self.data[r * self.w..(r + 1) * self.w]
    }
    fn union_into(&mut self, dst: usize, src: usize) {
        if dst != src {
            for k in 0..self.w {
                self.data[dst * self.w + k] |= self.data[src * self.w + k];
            }
        }
    }
    fn copy_into(&mut self, dst: usize, src: usize) {
        if dst != src {
            self.data.copy_within(src * self.w..(src + 1) * self.w, dst * self.w);
        }
    }
    fn iter_row(&self, r: usize) -> impl Iterator<Item = u32> + '_ {
        self.row(r).iter().enumerate().flat_map(|(k, &word)| {
            (0..64).filter(move |b| word >> b & 1 == 1).map(move |b| (k * 64 + b) as u32)
        })
    }
}

/// Edges in compressed form: successors of `x` are `succ[start[x]..start[x + 1]]`.
struct Csr {
    start: Vec<u32>,
    succ: Vec<u32>,
}

impl Csr {
    fn from_pairs(n: usize, mut pairs: Vec<(u32, u32)>) -> Csr {
        crate::sort::sort_packed(&mut pairs);
        pairs.dedup();
        let mut start = vec![0u32; n + 1];
        for &(x, _) in &pairs {
            start[x as usize + 1] += 1;
        }
        for x in 0..n {
            start[x + 1] += start[x];
        }
        Csr { start, succ: pairs.into_iter().map(|(_, y)| y).collect() }
    }
    fn edges(&self, x: usize) -> std::ops::Range<usize> {
        self.start[x] as usize..self.start[x + 1] as usize
    }
}

/// DeRemer–Pennello `digraph`: makes each row of `f` the union of its own
/// initial row and the rows of all nodes reachable through `r`, in linear
/// time via Tarjan's SCCs. Iterative (no recursion on deep graphs).
fn digraph(r: &Csr, f: &mut Bits) {
    let n = r.start.len() - 1;
    const DONE: u32 = u32::MAX;
    let mut num = vec![0u32; n];
    let mut stack: Vec<u32> = Vec::new();
    // Frames: (node, next edge position, stack depth at entry).
    let mut call: Vec<(u32, usize, u32)> = Vec::new();
    for x0 in 0..n {
        if num[x0] != 0 {
            continue;
        }
        stack.push(x0 as u32);
        num[x0] = stack.len() as u32;
        call.push((x0 as u32, r.edges(x0).start, stack.len() as u32));
        while let Some(frame) = call.last_mut() {
            let x = frame.0 as usize;
            if frame.1 < r.edges(x).end {
                let y = r.succ[frame.1] as usize;
                frame.1 += 1;
                if num[y] == 0 {
                    stack.push(y as u32);
                    num[y] = stack.len() as u32;
                    call.push((y as u32, r.edges(y).start, stack.len() as u32));
                } else {
                    num[x] = num[x].min(num[y]);
                    f.union_into(x, y);
                }
                continue;
            }
            let d = frame.2;
            call.pop();
            if num[x] == d {
                while let Some(top) = stack.pop() {
                    num[top as usize] = DONE;
                    if top as usize == x {
                        break;
                    }
                    f.copy_into(top as usize, x);
                }
            }
            if let Some(&(p, _, _)) = call.last() {
                num[p as usize] = num[p as usize].min(num[x]);
                f.union_into(p as usize, x);
            }
        }
    }
}

/// One reduction of the automaton: state `q` reduces by `rule`.
struct Reduction {
    state: u32,
    rule: u32,
}

/// Computes LA for every reduction; returns the reductions (grouped by
/// state, in state order) and their lookahead rows.
fn lookaheads(g: &Grammar, lr0: &Lr0) -> (Vec<Reduction>, Bits) {
    let n_states = lr0.states.len();
    // Nonterminal transitions.
    let mut ntt_first = Vec::with_capacity(n_states + 1); // first ntt index of each state
    let mut ntt: Vec<(u32, u32, u32)> = Vec::new(); // (from, symbol, to)
    for (p, st) in lr0.states.iter().enumerate() {
        ntt_first.push(ntt.len() as u32);
        for &(s, to) in &st.trans {
            if s >= g.n_term {
                ntt.push((p as u32, s, to));
            }
        }
    }
    ntt_first.push(ntt.len() as u32);
    let ntt_index = |p: u32, sym: u32| -> usize {
        let lo = ntt_first[p as usize] as usize;
        let hi = ntt_first[p as usize + 1] as usize;
        lo + ntt[lo..hi].binary_search_by_key(&sym, |&(_, s, _)| s).expect("nonterminal transition exists")
    };

    // Reductions, indexed per state.
    let mut red_first = Vec::with_capacity(n_states + 1);
    let mut reductions = Vec::new();
    for (q, st) in lr0.states.iter().enumerate() {
        red_first.push(reductions.len() as u32);
        reductions.extend(st.reduce.iter().map(|&rule| Reduction { state: q as u32, rule }));
    }
    red_first.push(reductions.len() as u32);

    // DR and reads.
    let mut read = Bits::new(ntt.len(), g.n_term as usize);
    let mut reads = Vec::new();
    for (i, &(_, _, to)) in ntt.iter().enumerate() {
        let st = &lr0.states[to as usize];
        for &(s, _) in &st.trans {
            if s < g.n_term {
                read.set(i, s as usize);
            } else if g.is_nullable_sym(s) {
                reads.push((i as u32, ntt_index(to, s) as u32));
            }
        }
        if st.accept {
            read.set(i, g.eof() as usize);
        }
    }
    digraph(&Csr::from_pairs(ntt.len(), reads), &mut read);

    // includes and lookback.
    let mut includes = Vec::new();
    let mut lookback: Vec<(u32, u32)> = Vec::new(); // (reduction, ntt)
    for (i, &(p, sym, _)) in ntt.iter().enumerate() {
        let b = (sym - g.n_term) as usize;
        for &r in &g.rules_of[b] {
            let mut q = p;
            let base = g.item_base[r as usize];
            for (d, &s) in g.body(r).iter().enumerate() {
                if s >= g.n_term && g.item_rest_nullable[(base + d as u32 + 1) as usize] {
                    includes.push((ntt_index(q, s) as u32, i as u32));
                }
                q = lr0.goto(q, s).expect("LR(0) path exists");
            }
            let lo = red_first[q as usize] as usize;
            let hi = red_first[q as usize + 1] as usize;
            let k = lo + reductions[lo..hi].binary_search_by_key(&r, |x| x.rule).expect("completed item exists");
            lookback.push((k as u32, i as u32));
        }
    }
    digraph(&Csr::from_pairs(ntt.len(), includes), &mut read);
    let follow = read;

    let mut la = Bits::new(reductions.len(), g.n_term as usize);
    for (k, i) in lookback {
        let w = la.w;
        for j in 0..w {
            la.data[k as usize * w + j] |= follow.data[i as usize * w + j];
        }
    }
    (reductions, la)
}

/// One conflict settled the way Lark settles it (a warning, not an error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettledConflict {
    /// The LR state (grammask's numbering).
    pub state: u32,
    /// The terminal (display name; `$END` for the end of input).
    pub terminal: String,
    /// The rule that is *not* reduced there.
    pub rule: RuleId,
    /// Where that rule was written.
    pub span: crate::grammar::Span,
    /// `file:line:col: shift/reduce conflict on terminal T resolved as shift: ...`.
    pub message: String,
}

/// LR tables plus the conflicts that [`ConflictPolicy::Lark`] settled.
#[derive(Clone, Debug)]
pub struct LalrBuild {
    pub tables: LrTables,
    /// Shift/reduce conflicts settled as shift, in state order.
    pub warnings: Vec<SettledConflict>,
}

/// Fills the tables and settles or collects conflicts (see [`ConflictPolicy`]).
fn emit(cfg: &Cfg, g: &Grammar, lr0: &Lr0, reductions: &[Reduction], la: &Bits) -> Result<LalrBuild> {
    let n_states = lr0.states.len();
    let nt = g.n_term as usize;
    let nn = g.n_nt as usize;
    let cells = n_states.saturating_mul(nt + nn);
    if cells > MAX_TABLE_CELLS {
        return Err(err!(
            Limit,
            "the LALR(1) tables would have {n_states} states x ({nt} terminals + {nn} nonterminals) = {cells} cells \
             (limit {MAX_TABLE_CELLS}): the grammar is too large"
        ));
    }
    let mut action = vec![0u32; n_states * nt];
    let mut goto_ = SparseGoto { first: Vec::with_capacity(n_states + 1), ..Default::default() };
    goto_.first.push(0);
    let mut row: Vec<(u32, u32)> = Vec::new();
    for (p, st) in lr0.states.iter().enumerate() {
        row.clear();
        for &(s, to) in &st.trans {
            if s < g.n_term {
                action[p * nt + s as usize] = Action::Shift(ParseStateId(to)).encode();
            } else if ((s - g.n_term) as usize) < nn {
                row.push((s - g.n_term, to));
            }
        }
        crate::sort::sort_packed(&mut row);
        row.dedup_by_key(|e| e.0); // `trans` has one entry per symbol already
        goto_.nt.extend(row.iter().map(|e| e.0));
        goto_.to.extend(row.iter().map(|e| e.1));
        goto_.first.push(goto_.nt.len() as u32);
        if st.accept {
            action[p * nt + g.eof() as usize] = Action::Accept.encode();
        }
    }
    let policy = cfg.conflicts;
    let lark = policy != ConflictPolicy::Strict;
    let mut conflicts: Vec<String> = Vec::new();
    let mut n_conflicts = 0usize;
    let mut n_rr = 0usize;
    let mut warnings = Vec::new();
    let mut report = |conflicts: &mut Vec<String>, c: String| {
        n_conflicts += 1;
        if conflicts.len() < MAX_REPORTED_CONFLICTS {
            conflicts.push(c);
        }
    };
    // Reductions are grouped by state: settle each state's terminals at once.
    let mut by_term: HashMap<u32, Vec<u32>> = HashMap::default();
    let mut k = 0;
    while k < reductions.len() {
        let p = reductions[k].state as usize;
        by_term.clear();
        while k < reductions.len() && reductions[k].state as usize == p {
            for t in la.iter_row(k) {
                by_term.entry(t).or_default().push(reductions[k].rule);
            }
            k += 1;
        }
        let mut terms: Vec<u32> = by_term.keys().copied().collect();
        terms.sort_unstable();
        for t in terms {
            let mut rules = by_term[&t].clone();
            let slot = action[p * nt + t as usize];
            if rules.len() > 1 {
                // Lark: the rule of strictly highest priority wins; else an error.
                let prio = |r: u32| cfg.rules.get(r as usize).map_or(0, |x| x.priority);
                crate::sort::sort_u32_by(&mut rules, &mut |a, b| prio(b).cmp(&prio(a)));
                if lark && prio(rules[0]) > prio(rules[1]) {
                    rules.truncate(1);
                } else {
                    n_rr += 1;
                    let first = Action::Reduce(RuleId(rules[0]));
                    for &r in &rules[1..] {
                        report(&mut conflicts, describe_conflict(cfg, g, lr0, p as u32, t, first, r));
                    }
                    if Action::decode(slot) != Action::Error && policy == ConflictPolicy::Strict {
                        report(&mut conflicts, describe_conflict(cfg, g, lr0, p as u32, t, Action::decode(slot), rules[0]));
                    }
                    continue;
                }
            }
            let rule = rules[0];
            match Action::decode(slot) {
                Action::Error => action[p * nt + t as usize] = Action::Reduce(RuleId(rule)).encode(),
                // Lark returns as soon as a reduction reaches the end state at
                // the end of input: the reduction on $END there never runs.
                Action::Accept if lark => {}
                old @ Action::Shift(_) if policy == ConflictPolicy::Lark => {
                    let what = describe_conflict(cfg, g, lr0, p as u32, t, old, rule);
                    let span = cfg.rules.get(rule as usize).map(|r| r.span.clone()).unwrap_or_default();
                    let message = format!("{span}: {what}; resolved as shift (as Lark does)");
                    warnings.push(SettledConflict { state: p as u32, terminal: sym_name(cfg, g, t).to_string(), rule: RuleId(rule), span, message });
                }
                old => report(&mut conflicts, describe_conflict(cfg, g, lr0, p as u32, t, old, rule)),
            }
        }
    }
    if n_conflicts > 0 {
        let mut msg = format!("the grammar is not LALR(1): {n_conflicts} conflict(s)");
        for c in &conflicts {
            msg.push_str("\n  ");
            msg.push_str(c);
        }
        if n_conflicts > conflicts.len() {
            msg.push_str(&format!("\n  ... and {} more", n_conflicts - conflicts.len()));
        }
        if lark && n_rr > 0 {
            msg.push_str(
                "\nLark's LALR parser refuses this grammar too (reduce/reduce conflicts are errors in \
                 Lark unless one rule has a higher priority): the grammar is ambiguous or needs more than \
                 one token of lookahead, as grammars written for Lark's Earley parser often are. Usual \
                 rewrites: merge the rules that derive the same text into one (inline one into the \
                 other, or factor out their common part), or give the rule to prefer a higher priority \
                 (`rule.2: ...`).",
            );
        } else if policy == ConflictPolicy::LarkStrict {
            msg.push_str("\n(strict mode: Lark would resolve shift/reduce conflicts as shift; drop the strict option (CLI --strict, JS strict: true) to accept that)");
        }
        return Err(err!(Conflict, "{msg}"));
    }
    let parts = LrTableParts {
        n_terminals: g.n_term,
        n_nonterminals: g.n_nt,
        n_states: n_states as u32,
        start_state: 0,
        action,
        goto_: Vec::new(),
        rule_lhs: g.lhs[..g.lhs.len() - 1].to_vec(),
        rule_len: (0..g.lhs.len() as u32 - 1).map(|r| g.body(r).len() as u32).collect(),
    };
    let tables = LrTables::with_goto(parts, goto_)?;
    Ok(LalrBuild { tables, warnings })
}

fn sym_name<'a>(cfg: &'a Cfg, g: &Grammar, s: u32) -> &'a str {
    if s == g.eof() {
        "$END"
    } else if s < g.n_term {
        &cfg.terminals[s as usize].name
    } else if s - g.n_term < g.n_nt {
        &cfg.nonterminals[(s - g.n_term) as usize].name
    } else {
        "$START"
    }
}

/// `lhs: a b . c, file:line:col` (the dot only when `dot` is given).
fn item_string(cfg: &Cfg, g: &Grammar, rule: u32, dot: Option<usize>) -> String {
    let mut s = String::from(sym_name(cfg, g, g.n_term + g.lhs[rule as usize]));
    s.push(':');
    let body = g.body(rule);
    for (d, &x) in body.iter().enumerate() {
        if dot == Some(d) {
            s.push_str(" .");
        }
        s.push(' ');
        s.push_str(sym_name(cfg, g, x));
    }
    if dot == Some(body.len()) {
        s.push_str(" .");
    } else if body.is_empty() {
        s.push_str(" <empty>");
    }
    match cfg.rules.get(rule as usize) {
        Some(r) => format!("{s}, {}", r.span),
        None => s,
    }
}

fn describe_conflict(cfg: &Cfg, g: &Grammar, lr0: &Lr0, p: u32, t: u32, old: Action, rule: u32) -> String {
    let name = sym_name(cfg, g, t);
    let reduce = format!("reduce ({})", item_string(cfg, g, rule, None));
    let (kind, first) = match old {
        Action::Reduce(r) => ("reduce/reduce", format!("reduce ({})", item_string(cfg, g, r.0, None))),
        Action::Shift(_) | Action::Accept => {
            let mut items = Vec::new();
            let mut mark = vec![u32::MAX; g.n_nt as usize + 1];
            closure(g, &lr0.states[p as usize].kernel, 0, &mut mark, &mut items);
            let shifts: Vec<String> = items
                .iter()
                .filter(|&&it| g.next_sym(it) == Some(t))
                .map(|&it| {
                    let (r, d) = g.item(it);
                    item_string(cfg, g, r, Some(d))
                })
                .collect();
            let verb = if old == Action::Accept { "accept" } else { "shift" };
            (if old == Action::Accept { "accept/reduce" } else { "shift/reduce" }, format!("{verb} ({})", shifts.join("; ")))
        }
        Action::Error => ("internal", String::new()),
    };
    format!("{kind} conflict on terminal {name} in state {p}: {first} vs {reduce}")
}

