//! Mask store streamlining (paper: "Accelerating LLM Code Generation Through
//! Mask Store Streamlining"): grammar analyses ([`analysis`]) and their use
//! on the store's entries.
pub mod analysis;
pub mod lr;

use crate::grammar::Cfg;
use crate::ids::TerminalId;
use crate::parser::incremental::IncTables;
use analysis::Analysis;
use crate::hash::FxMap as HashMap;

/// Tunables of streamlining.
#[derive(Clone, Debug)]
pub struct StreamlineOptions {
    /// Maximum stack size of unlimited-credit exploration for whole sequences.
    pub max_stack: usize,
    /// The same for terminal pairs (there are few, so they can afford more).
    pub max_stack_pairs: usize,
    /// Compute parser-context verdicts (beyond the paper).
    pub contexts: bool,
}

impl Default for StreamlineOptions {
    fn default() -> Self {
        StreamlineOptions { max_stack: 8, max_stack_pairs: 8, contexts: true }
    }
}

/// One position's entries: (symbol sequence, sorted tokens).
pub type Entries = Vec<(Vec<u32>, Vec<u32>)>;

/// What streamlining did, step by step (entry counts after each step).
#[derive(Clone, Debug, Default)]
pub struct StreamlineReport {
    pub steps: Vec<(String, u64)>,
    pub interchangeable: Vec<Vec<String>>,
    pub millis: Vec<(String, u64)>,
    /// Distinct `is_always_legal` queries: (proved on the DFT PDA, proved on
    /// the LR automaton only, unknown).
    pub proofs: (u64, u64, u64),
    /// Parser-context verdicts of the remaining entries (beyond the paper).
    pub ctx: ContextVerdicts,
}

/// Verdicts per parser context, before assembly into a
/// [`ContextTable`](crate::store::ContextTable).
#[derive(Clone, Debug, Default)]
pub struct ContextVerdicts {
    /// Per class: its target and its codes (`VERDICT_*`), one per sequence
    /// of the target (in the order of `seqs[target]`).
    pub classes: Vec<(u32, Vec<u8>)>,
    /// `(top state, 4 * state below + mode, class)`, sorted.
    pub contexts: Vec<(u32, u32, u32)>,
    /// Per target: the index of each of its sequences.
    pub(crate) seqs: HashMap<u32, HashMap<Vec<u32>, u32>>,
}

/// Beyond the paper: for every target `X` and every parser context `(t, s)`
/// (`s` entered by shifting `X`, `t` any state with an edge into `s`), the
/// verdict of each remaining clean sequence of `X`'s positions, from the LR
/// exploration ([`lr::LrProver::verdict_in`]). Contexts of `X` with equal
/// verdict rows share a class. Returns the table and the expected number of
/// checked entries per (position, context) over all positions (contexts
/// weighted equally), the "entries" of this step.
fn context_verdicts(
    grammar: &IncTables,
    targets: &[u32],
    entries: &[Entries],
    clean_target: &dyn Fn(u32) -> bool,
    clean_seq: &dyn Fn(&[u32]) -> bool,
    newline: u32,
) -> (ContextVerdicts, u64) {
    use crate::parser::incremental::{MODE_DIRECT, MODE_IN_BRACKETS, MODE_PENDING_INDENT, MODE_PENDING_SAME};
    use crate::store::{VERDICT_ALWAYS, VERDICT_CHECK, VERDICT_NEVER};
    // Clean sequences, and clean sequences followed by the `%indent` newline
    // (trailing indentation events are already stripped).
    let eligible = |s: &[u32]| {
        clean_seq(s) || (s.last() == Some(&newline) && (s.len() == 1 || clean_seq(&s[..s.len() - 1])))
    };
    // A sequence that follows a pending newline: a real terminal first.
    let after_nl = |s: &[u32]| s.first().is_some_and(|&y| clean_target(y)) && eligible(s);
    let bracket: Vec<i8> = grammar.indent.as_ref().map_or(Vec::new(), |r| r.bracket.clone());
    let indent = grammar.indent.as_ref().map_or(u32::MAX, |r| r.indent);
    let dedent = grammar.indent.as_ref().map(|r| r.dedent);
    // Without `%indent` the layout never tracks brackets.
    let modes: &[u32] = if grammar.indent.is_some() { &[MODE_DIRECT, MODE_IN_BRACKETS] } else { &[MODE_DIRECT] };
    // Sequences borrowed from the entries (no copies until the table keeps them).
    let mut per_x: std::collections::BTreeMap<u32, Vec<&[u32]>> = Default::default();
    for (q, list) in entries.iter().enumerate() {
        let x = targets[q];
        if clean_target(x) {
            let v = per_x.entry(x).or_default();
            v.extend(list.iter().filter(|(s, _)| eligible(s)).map(|(s, _)| s.as_slice()));
        } else if x == newline && newline != u32::MAX {
            let v = per_x.entry(x).or_default();
            v.extend(list.iter().filter(|(s, _)| after_nl(s)).map(|(s, _)| s.as_slice()));
        }
        // The rest of a sequence after each clean terminal Y in it, for Y's
        // contexts (the matcher looks them up once it has fed Y); after an
        // indentation event or a newline, for the newline's.
        for (s, _) in list {
            for k in 0..s.len().saturating_sub(1) {
                let rest = &s[k + 1..];
                if clean_target(s[k]) && eligible(rest) {
                    per_x.entry(s[k]).or_default().push(rest);
                } else if newline != u32::MAX && (s[k] == newline || grammar.events.is_event(s[k])) && after_nl(rest) {
                    per_x.entry(newline).or_default().push(rest);
                }
            }
        }
    }
    let code = |v: lr::Verdict| {
        if v.good {
            VERDICT_ALWAYS
        } else if !v.possible {
            VERDICT_NEVER
        } else {
            VERDICT_CHECK
        }
    };
    let mut out = ContextVerdicts::default();
    // Per target: per sequence (in `out.seqs` order), the fraction of its
    // contexts that must check it.
    // (`x` → index into `fracs`: a map type the crate has already.)
    let mut check_frac: HashMap<u32, u32> = HashMap::default();
    let mut fracs: Vec<Vec<f64>> = Vec::new();
    let mut per_x: Vec<(u32, Vec<&[u32]>)> = per_x.into_iter().collect();
    for (_, seqs) in per_x.iter_mut() {
        crate::sort::sort_cold(seqs);
        seqs.dedup();
    }
    // The targets are independent: their verdict rows are computed in
    // parallel (natively), each thread with its own LR prover, then numbered
    // into classes in target order.
    let tables = &grammar.tables;
    let per_x = &per_x;
    // Per target: (context, class) pairs, its distinct rows (classes, in order of
    // first use), per sequence the number of contexts that check it, the context count.
    type TargetRows = (Vec<(u32, u32, u32)>, Vec<Vec<u8>>, Vec<u32>, usize);
    let rows_of = |lr: &mut lr::LrProver, i: usize| -> Option<TargetRows> {
        let (x, seqs) = (per_x[i].0, &per_x[i].1);
        // After a newline the layout is pending: only the modes where the
        // next terminal keeps the block or opens one are decided here.
        let modes: &[u32] = if x == newline { &[MODE_PENDING_SAME, MODE_PENDING_INDENT] } else { modes };
        let mut ctxs: Vec<(u32, u32, u32)> = lr
            .entered_by(TerminalId(x))
            .iter()
            .flat_map(|&s0| lr.preds(s0).iter().map(move |&t| (s0, t)))
            .flat_map(|(s0, t)| modes.iter().map(move |&m| (s0, t, m)))
            .collect();
        // After a newline that dedents, the matcher looks the sequences up in
        // the context reached by the DEDENTs (`IncCursor::dedent_context`):
        // a state entered by DEDENT, then a real terminal fed directly.
        if let Some(d) = dedent.filter(|_| x == newline) {
            ctxs.extend(
                lr.entered_by(TerminalId(d))
                    .iter()
                    .flat_map(|&s0| lr.preds(s0).iter().map(move |&t| (s0, t, MODE_PENDING_SAME))),
            );
        }
        if seqs.is_empty() || ctxs.is_empty() {
            return None;
        }
        // For a sequence ending with the newline: (net bracket delta, lowest
        // running delta) of the part before it, which decide whether the
        // layout feeds that newline to the parser (per sequence, not per context).
        let nl_depth: Vec<Option<(i32, i32)>> = seqs
            .iter()
            .map(|s| {
                (s.last() == Some(&newline)).then(|| {
                    s[..s.len() - 1].iter().fold((0i32, 0i32), |(d, low), &y| {
                        let d = d + bracket.get(y as usize).copied().unwrap_or(0) as i32;
                        (d, low.min(d))
                    })
                })
            })
            .collect();
        let (mut pairs, mut rows, mut checks) = (Vec::with_capacity(ctxs.len()), Vec::new(), vec![0u32; seqs.len()]);
        let mut class_of: HashMap<Vec<u8>, u32> = HashMap::default();
        for &(s0, t, mode) in &ctxs {
            let inb = mode == MODE_IN_BRACKETS;
            // The verdict of `s` for the LR parser: INDENT first when pending deeper.
            let verdict = |s: &[u32]| {
                if mode == MODE_PENDING_INDENT {
                    lr.verdict_in(t, s0, &std::iter::once(indent).chain(s.iter().copied()).collect::<Vec<u32>>())
                } else {
                    lr.verdict_in(t, s0, s)
                }
            };
            let row: Vec<u8> = seqs
                .iter()
                .zip(&nl_depth)
                .map(|(s, nl)| {
                    let Some((d, low)) = *nl else { return code(verdict(s)) as u8 };
                    // The layout feeds the trailing newline to the parser at
                    // bracket depth 0 and drops it inside brackets. Depth after
                    // the rest `c` (the layout saturates at 0): known from depth
                    // 0 when `c` never closes below it; from depth >= 1, at
                    // least 1 when `c` closes at most one level below its start
                    // and ends no lower. Otherwise only agreeing readings decide.
                    let v1 = verdict(&s[..s.len() - 1]);
                    (if !inb && low == 0 && d == 0 {
                        code(verdict(s))
                    } else if (!inb && low == 0) || (inb && low >= -1 && d >= 0) {
                        code(v1)
                    } else if !v1.possible && !v1.good {
                        VERDICT_NEVER
                    } else if v1.good && verdict(s).good {
                        VERDICT_ALWAYS
                    } else {
                        VERDICT_CHECK
                    }) as u8
                })
                .collect();
            for (c, &v) in checks.iter_mut().zip(&row) {
                *c += (v as u32 == VERDICT_CHECK) as u32;
            }
            let next = rows.len() as u32;
            let k = *class_of.entry(row).or_insert_with_key(|row| {
                rows.push(row.clone());
                next
            });
            pairs.push((s0, 4 * t + mode, k));
        }
        lr.clear_memo();
        Some((pairs, rows, checks, ctxs.len()))
    };
    let all_rows = super::par::map(per_x.len(), || lr::LrProver::new(tables, 16), rows_of);
    for ((x, seqs), rows_x) in per_x.iter().zip(all_rows) {
        let Some((pairs, rows, checks, n_ctx)) = rows_x else { continue };
        let base = out.classes.len() as u32;
        out.classes.extend(rows.into_iter().map(|row| (*x, row)));
        out.contexts.extend(pairs.into_iter().map(|(s0, key, k)| (s0, key, base + k)));
        check_frac.insert(*x, fracs.len() as u32);
        fracs.push(checks.iter().map(|&c| c as f64 / n_ctx as f64).collect());
        out.seqs.insert(*x, seqs.iter().enumerate().map(|(i, s)| (s.to_vec(), i as u32)).collect());
    }
    crate::sort::sort_packed(&mut out.contexts);
    let mut expected = 0f64;
    for (q, list) in entries.iter().enumerate() {
        // Positions after a newline keep their full count: their dedent
        // contexts have no verdicts.
        let x = targets[q];
        let frac = |s: &Vec<u32>| Some(fracs[*check_frac.get(&x)? as usize][*out.seqs.get(&x)?.get(s)? as usize]);
        for (s, _) in list {
            expected += if clean_target(x) { frac(s).unwrap_or(1.0) } else { 1.0 };
        }
    }
    (out, expected.round() as u64)
}

/// Streamline every position's entries in place.
///
/// `targets[q]` is the position's target terminal (`u32::MAX` for none).
/// Applies only where the CFG reasoning is sound (see the module doc of
/// `store`): the target is a real (not ignored, not the `%indent` newline)
/// terminal, and the sequence holds only grammar terminals other than the
/// newline (no indentation events). Other entries are kept as they are.
///
/// Steps (paper, "Experimental results"):
/// 1. interchangeable terminals: map each symbol to its class representative
///    and merge equal sequences;
/// 2. successor graph: drop sequences with an impossible adjacent pair
///    (including the target followed by the first symbol);
/// 3. pairs: `is_always_legal(X, (Y,))` moves one-symbol entries to `always`;
///    §6.1 truncation with pair facts;
/// 4. whole sequences: `is_never_legal(X, S)` drops, `is_always_legal(X, S)`
///    moves to `always`, §6.1 truncation with sequence facts.
pub fn streamline(
    cfg: &Cfg,
    grammar: &IncTables,
    targets: &[u32],
    entries: &mut [Entries],
    always: &mut [Vec<u32>],
    opts: &StreamlineOptions,
) -> StreamlineReport {
    let t0 = crate::time::Instant::now();
    let an = Analysis::new(cfg).with_lr(&grammar.tables);
    let newline = grammar.indent.as_ref().map_or(u32::MAX, |i| i.newline);
    let n_terms = cfg.terminals.len() as u32;
    let clean_target = |x: u32| x < n_terms && x != newline && !cfg.terminals[x as usize].ignored;
    let clean_seq = |s: &[u32]| !s.is_empty() && s.iter().all(|&y| y < n_terms && y != newline);
    // The part of a sequence before its first newline or event: the layout
    // feeds it unchanged, so "never legal" reasoning applies to it.
    let clean_prefix = |s: &[u32]| -> usize { s.iter().position(|&y| y >= n_terms || y == newline).unwrap_or(s.len()) };
    let count = |e: &[Entries]| e.iter().map(|v| v.len() as u64).sum::<u64>();
    let mut rep = StreamlineReport::default();
    rep.steps.push(("raw".into(), count(entries)));
    rep.interchangeable = an
        .interchangeable_classes()
        .iter()
        .map(|c| c.iter().map(|t| cfg.terminals[t.index()].display_name()).collect())
        .collect();
    let terms = |s: &[u32]| -> Vec<TerminalId> { s.iter().map(|&y| TerminalId(y)).collect() };
    let mut millis = vec![("analysis".to_string(), t0.elapsed().as_millis() as u64)];

    // Step 1: interchangeable terminals.
    let t = crate::time::Instant::now();
    for (q, list) in entries.iter_mut().enumerate() {
        if !clean_target(targets[q]) {
            continue;
        }
        let mut changed = false;
        for (s, _) in list.iter_mut() {
            if clean_seq(s) {
                for y in s.iter_mut() {
                    let r = an.class_rep(TerminalId(*y)).0;
                    changed |= r != *y;
                    *y = r;
                }
            }
        }
        if changed {
            merge(list);
        }
    }
    rep.steps.push(("1 interchangeable".into(), count(entries)));
    millis.push(("1 interchangeable".into(), t.elapsed().as_millis() as u64));

    // Step 2: successor graph.
    let t = crate::time::Instant::now();
    for (q, list) in entries.iter_mut().enumerate() {
        let x = targets[q];
        if !clean_target(x) {
            continue;
        }
        list.retain(|(s, _)| {
            let p = &s[..clean_prefix(s)];
            p.is_empty()
                || (an.successor(TerminalId(x), TerminalId(p[0]))
                    && p.windows(2).all(|w| an.successor(TerminalId(w[0]), TerminalId(w[1]))))
        });
    }
    rep.steps.push(("2 successor graph".into(), count(entries)));
    millis.push(("2 successor graph".into(), t.elapsed().as_millis() as u64));

    // Steps 3 and 4: always/never legal, first with pair facts, then whole sequences.
    // Verdicts by (target, step), then sequence (looked up without a copy).
    // `(x, step)` → index into `caches` (a map type the crate has already).
    let mut cache: HashMap<(u32, u32), u32> = HashMap::default();
    let mut caches: Vec<HashMap<Vec<u32>, Verdict>> = Vec::new();
    for step in [3, 4] {
        let t = crate::time::Instant::now();
        for (q, list) in entries.iter_mut().enumerate() {
            let x = targets[q];
            if !clean_target(x) {
                continue;
            }
            let mut changed = false;
            let mut keep: Entries = Vec::with_capacity(list.len());
            for (s, toks) in list.drain(..) {
                if !clean_seq(&s) {
                    // Only the clean prefix can be judged, and only "never".
                    let p = &s[..clean_prefix(&s)];
                    if step == 4 && p.len() >= 2 && an.is_never_legal(TerminalId(x), &terms(p)) {
                        changed = true;
                    } else {
                        keep.push((s, toks));
                    }
                    continue;
                }
                let i = *cache.entry((x, step)).or_insert_with(|| {
                    caches.push(HashMap::default());
                    caches.len() as u32 - 1
                });
                let by_seq = &mut caches[i as usize];
                let v = match by_seq.get(s.as_slice()) {
                    Some(v) => v.clone(),
                    None => {
                        let v = verdict(&an, x, &terms(&s), step, opts);
                        by_seq.insert(s.clone(), v.clone());
                        v
                    }
                };
                match v {
                    Verdict::Never => changed = true,
                    Verdict::Always => {
                        always[q].extend_from_slice(&toks);
                        changed = true;
                    }
                    Verdict::Truncate(m) => {
                        keep.push((s[..m].to_vec(), toks));
                        changed |= m < s.len();
                    }
                }
            }
            *list = keep;
            if changed {
                merge(list);
            }
        }
        let name = if step == 3 { "3 pairs always/never" } else { "4 sequences always/never" };
        rep.steps.push((name.into(), count(entries)));
        millis.push((name.into(), t.elapsed().as_millis() as u64));
    }
    // Beyond the paper: verdicts per parser context.
    let t = crate::time::Instant::now();
    drop((cache, caches));
    if opts.contexts {
        let (cv, expected) = context_verdicts(
            grammar,
            targets,
            entries,
            &clean_target,
            &clean_seq,
            newline,
        );
        rep.steps
            .push(("5 beyond: parser contexts".into(), expected));
        rep.ctx = cv;
    }
    millis.push((
        "5 beyond: parser contexts".into(),
        t.elapsed().as_millis() as u64,
    ));
    for a in always.iter_mut() {
        a.sort_unstable();
        a.dedup();
    }
    rep.millis = millis;
    rep.proofs = an.proof_counts();
    rep
}

#[derive(Clone, Debug)]
enum Verdict {
    Never,
    Always,
    /// Keep the first `m` symbols (jointly legal with the whole sequence).
    Truncate(usize),
}

fn verdict(an: &Analysis, x: u32, s: &[TerminalId], step: u32, opts: &StreamlineOptions) -> Verdict {
    let x = TerminalId(x);
    let max_stack = if step == 3 { opts.max_stack_pairs } else { opts.max_stack };
    if step == 3 {
        // Pair facts only: (X, Y1) and adjacent pairs (Yi, Yi+1).
        if s.len() == 1 {
            if an.is_always_legal(x, s, max_stack) {
                return Verdict::Always;
            }
            return Verdict::Truncate(1);
        }
        // §6.1 with pairs: drop a trailing Yk when (Yk-1, Yk) is always legal.
        let mut m = s.len();
        while m > 1 && an.is_always_legal(s[m - 2], &s[m - 1..m], max_stack) {
            m -= 1;
        }
        if m == 1 && an.is_always_legal(x, &s[..1], max_stack) {
            return Verdict::Always;
        }
        return Verdict::Truncate(m);
    }
    if s.len() >= 2 && an.is_never_legal(x, s) {
        return Verdict::Never;
    }
    match an.truncate_after(x, s, max_stack) {
        0 => Verdict::Always,
        m => Verdict::Truncate(m.min(s.len())),
    }
}

/// Sort entries like `sort_unstable` (equal entries are identical) through
/// the crate's one index sort, not a sort of their own (wasm size).
pub(crate) fn sort_entries(list: &mut Entries) {
    let order = crate::sort::order_by(list.len(), &mut |a, b| list[a].cmp(&list[b]));
    let mut old = std::mem::take(list);
    for i in order {
        list.push(std::mem::take(&mut old[i as usize]));
    }
}

/// Merge entries with equal sequences (union of their sorted token lists).
pub(crate) fn merge(list: &mut Entries) {
    // Sorted by (sequence, tokens): equal sequences are adjacent, and the
    // merged lists are sorted below, so the result is the same as by sequence.
    sort_entries(list);
    let mut out: Entries = Vec::with_capacity(list.len());
    // Equal sequences are adjacent: concatenate their token lists, then sort
    // each merged list once (not once per merged entry).
    let mut merged = Vec::new(); // indices into `out` that took more than one list
    for (s, toks) in list.drain(..) {
        let n = out.len();
        match out.last_mut() {
            Some((ls, lt)) if *ls == s => {
                if merged.last() != Some(&(n - 1)) {
                    merged.push(n - 1);
                }
                lt.extend_from_slice(&toks);
            }
            _ => out.push((s, toks)),
        }
    }
    for i in merged {
        let lt = &mut out[i].1;
        lt.sort_unstable();
        lt.dedup();
    }
    *list = out;
}
