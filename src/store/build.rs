//! Building the mask store (feature `compiler`).
//!
//! Glossary (paper → code):
//! - `nfa_transition` → the token-trie walk below: for each lexer position
//!   `q = (L, X)`, a depth-first walk of the token trie advancing a set of
//!   `(L, X, S)` configurations by [`walk::step`] per byte; a subtree is skipped
//!   as soon as no configuration survives (so no loop over tokens × bytes).
//! - `mask_store[q][S]` → `entries[q][S]`, a sorted token list, then a
//!   deduplicated [`TokenSets`](super::sets::TokenSets) entry.
//! - `mask_store[q][()]` → `always[q]`.

use super::sets::SetsBuilder;
use super::walk::{self, StepCtx, NO_TARGET};
use super::{MaskStore, StoreInfo, NONE};
use crate::error::Result;
use crate::grammar::Cfg;
use crate::ids::LexStateId;
use crate::lexer::Lexer;
use crate::parser::alphabet::Sym;
use crate::parser::incremental::IncTables;
use crate::parser::indent::IndentRules;
use super::streamline::Entries;
use super::{QId, Tables};
use crate::vocab::trie::TokenTrie;
use crate::vocab::prepared::LoopWalk;
use crate::vocab::{PreparedVocab, Vocab};
use std::cell::RefCell;
use std::rc::Rc;
type HashMap<K, V> = crate::hash::FxMap<K, V>;
use crate::time::Instant;

/// Options of `grammask compile`.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Apply the streamlining steps (default true).
    pub streamline: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { streamline: true }
    }
}

/// Figures reported by `compile`.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CompileReport {
    pub terminals: usize,
    pub rules: usize,
    pub nonterminals: usize,
    pub lr_states: usize,
    pub lexer_states: usize,
    pub lexer_classes: usize,
    pub positions: usize,
    pub token_transitions: u64,
    pub raw_entries: usize,
    pub entries: usize,
    pub always_sets: usize,
    pub token_sets: usize,
    pub set_words: usize,
    pub ms_lexer: u64,
    pub ms_lalr: u64,
    pub ms_walk: u64,
    pub ms_streamline: u64,
    pub interchangeable: Vec<Vec<String>>,
}

/// Interned symbol sequences: a trie of (parent, symbol) → id; id 0 is `()`.
#[derive(Clone, Default)]
pub(crate) struct SeqInterner {
    map: HashMap<(u32, u32), u32>,
    nodes: Vec<(u32, u32)>,
}

impl SeqInterner {
    pub fn new() -> Self {
        SeqInterner { map: HashMap::default(), nodes: vec![(NONE, NONE)] }
    }
    pub fn push(&mut self, parent: u32, sym: u32) -> u32 {
        let n = self.nodes.len() as u32;
        *self.map.entry((parent, sym)).or_insert_with(|| {
            self.nodes.push((parent, sym));
            n
        })
    }
    pub fn extend(&mut self, mut id: u32, syms: &[u32]) -> u32 {
        for &s in syms {
            id = self.push(id, s);
        }
        id
    }
    pub fn get(&self, mut id: u32, out: &mut Vec<u32>) {
        let start = out.len();
        while id != 0 {
            let (p, s) = self.nodes[id as usize];
            out.push(s);
            id = p;
        }
        out[start..].reverse();
    }
}

/// Raw (unstreamlined) store contents, as produced by the walk: per position,
/// the map from symbol sequence to sorted tokens.
pub(crate) struct RawStore {
    pub q_base: Vec<u32>,
    pub q_target: Vec<u32>,
    pub entries: Vec<Vec<(Vec<u32>, Vec<u32>)>>,
    /// Per position: tokens that need no parser check (from streamlining).
    pub always: Vec<Vec<u32>>,
    pub transitions: u64,
}

/// Compile a grammar and a vocabulary into a mask store.
pub fn compile(
    cfg: &Cfg,
    vocab: Vocab,
    opts: &CompileOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(MaskStore, CompileReport)> {
    let mut rep = CompileReport {
        terminals: cfg.terminals.len(),
        rules: cfg.rules.len(),
        nonterminals: cfg.nonterminals.len(),
        ..Default::default()
    };
    check_specials(cfg, &vocab)?;
    let (lexer, grammar) = lexer_and_grammar(cfg, &mut rep, progress)?;

    let t = Instant::now();
    let trie = TokenTrie::new(&vocab);
    let raw = walk_all(&lexer, &grammar, &trie, progress);
    rep.ms_walk = t.elapsed().as_millis() as u64;
    rep.positions = raw.q_target.len();
    rep.token_transitions = raw.transitions;
    rep.raw_entries = raw.entries.iter().map(|e| e.len()).sum();
    progress(&format!(
        "token walk: {} positions, {} token transitions, {} raw entries ({} ms)",
        rep.positions, rep.token_transitions, rep.raw_entries, rep.ms_walk
    ));

    let mut raw = raw;
    let mut info = StoreInfo {
        terminal_names: terminal_names(cfg, &vocab),
        grammar_fingerprint: grammar_fingerprint(cfg),
        step_counts: vec![("raw".into(), rep.raw_entries as u64)],
    };
    let t = Instant::now();
    let mut ctx = super::streamline::ContextVerdicts::default();
    // Streamlining proves entries on the LR automaton (and step 5 is the LR
    // parser's contexts): a grammar on the general parser is not streamlined.
    if opts.streamline && grammar.earley.is_none() {
        let sr = super::streamline::streamline(
            cfg,
            &grammar,
            &raw.q_target,
            &mut raw.entries,
            &mut raw.always,
            &super::streamline::StreamlineOptions::default(),
        );
        for ((name, n), (_, ms)) in sr.steps.iter().zip(std::iter::once(&(String::new(), 0)).chain(sr.millis.iter().skip(1))) {
            progress(&format!("streamline: {name:<26} {n:>9} entries ({ms} ms)"));
        }
        progress(&format!("streamline: {} interchangeable classes: {:?}", sr.interchangeable.len(), sr.interchangeable));
        let (dft, lr, unknown) = sr.proofs;
        progress(&format!("streamline: is_always_legal queries: {dft} proved on the DFT PDA, {lr} more on the LR automaton, {unknown} unknown"));
        info.step_counts = sr.steps;
        rep.interchangeable = sr.interchangeable;
        ctx = sr.ctx;
    }
    rep.ms_streamline = t.elapsed().as_millis() as u64;
    let store = assemble(lexer, grammar, Rc::new(vocab), info, raw, &ctx);
    {
        let t = store.tables();
        rep.entries = t.n_entries();
        rep.always_sets = t.n_always();
        rep.token_sets = t.sets().len();
        rep.set_words = t.sets().data.len();
    }
    Ok((store, rep))
}

/// The LALR(1) tables, then the lexer automaton (contextual lexing needs
/// the tables), and the runtime grammar.
fn lexer_and_grammar(cfg: &Cfg, rep: &mut CompileReport, progress: &mut dyn FnMut(&str)) -> Result<(Lexer, IncTables)> {
    let t = Instant::now();
    if cfg.conflicts == crate::grammar::ConflictPolicy::General {
        // The general parser: no LR tables, no contextual lexing, no %indent.
        if cfg.lexer == crate::grammar::LexerMode::Contextual || cfg.indent.is_some() {
            return Err(crate::err!(Grammar, "the general parser (not LALR(1)) needs a global lexer and no %indent"));
        }
        let ey = crate::parser::earley::EarleyTables::new(cfg)?;
        if !ey.has_sentences() {
            return Err(crate::err!(Grammar, "the start rule derives no text"));
        }
        rep.ms_lalr = t.elapsed().as_millis() as u64;
        let (lexer, _) = crate::lexer::build_for(cfg, None)?;
        rep.ms_lexer = t.elapsed().as_millis() as u64 - rep.ms_lalr;
        rep.lexer_states = lexer.n_states();
        rep.lexer_classes = lexer.n_classes();
        progress(&format!("general parser (Earley); lexer: {} states ({} ms)", lexer.n_states(), rep.ms_lexer));
        return Ok((lexer, IncTables::general(ey)));
    }
    let tables = crate::parser::lalr::build_tables(cfg)?;
    rep.ms_lalr = t.elapsed().as_millis() as u64;
    rep.lr_states = tables.n_states() as usize;
    progress(&format!("LALR(1): {} states ({} ms)", tables.n_states(), rep.ms_lalr));
    let t = Instant::now();
    let (lexer, stats) = crate::lexer::build_for(cfg, Some(&tables))?;
    rep.ms_lexer = t.elapsed().as_millis() as u64;
    rep.lexer_states = lexer.n_states();
    rep.lexer_classes = lexer.n_classes();
    progress(&format!(
        "lexer: {} states, {} byte classes, {} lexing, {} modes ({} ms)",
        lexer.n_states(),
        lexer.n_classes(),
        cfg.lexer.name(),
        stats.n_modes,
        rep.ms_lexer
    ));
    let grammar = inc_tables(cfg, tables, &lexer);
    Ok((lexer, grammar))
}

/// The parser tables of a store: `tables` with `cfg`'s indentation rules and
/// the lexer's contextual modes.
fn inc_tables(cfg: &Cfg, tables: crate::parser::LrTables, lexer: &Lexer) -> IncTables {
    let n_terms = cfg.terminals.len() as u32;
    let indent = cfg.indent.as_ref().map(|c| IndentRules::from_config(c, cfg.terminals.len()));
    let mut grammar = IncTables::new(tables, indent, n_terms);
    if let Some(c) = lexer.contextual() {
        grammar = grammar.with_modes(c.state_mode.clone(), c.n_modes);
    }
    grammar
}

/// Compile a grammar for a prepared vocabulary, unstreamlined and lazy: the
/// lexer automaton and LR tables are built now, each position's entries on
/// its first visit (see [`crate::constraint::compile`]).
pub fn compile_lazy(cfg: &Cfg, pv: Rc<PreparedVocab>) -> Result<(MaskStore, CompileReport)> {
    let mut rep = CompileReport {
        terminals: cfg.terminals.len(),
        rules: cfg.rules.len(),
        nonterminals: cfg.nonterminals.len(),
        ..Default::default()
    };
    check_specials(cfg, pv.vocab())?;
    let (lexer, grammar) = lexer_and_grammar(cfg, &mut rep, &mut |_| {})?;
    let store = lazy_store(cfg, lexer, grammar, pv);
    rep.positions = store.q_target.len();
    Ok((store, rep))
}

/// [`compile_lazy`] from tables already built: `lr` must be `cfg`'s LALR(1)
/// tables and `lexer` `cfg`'s lexer automaton built with them
/// ([`crate::lexer::build_for`]); the caller checks the tokens `cfg` names
/// ([`check_specials`]): a token not in the vocabulary is never allowed.
/// A grammar on the general parser ignores `lr` (placeholder tables).
pub fn compile_lazy_from(cfg: &Cfg, lr: crate::parser::LrTables, lexer: Lexer, pv: Rc<PreparedVocab>) -> Result<MaskStore> {
    let grammar = if cfg.conflicts == crate::grammar::ConflictPolicy::General {
        IncTables::general(crate::parser::earley::EarleyTables::new(cfg)?)
    } else {
        inc_tables(cfg, lr, &lexer)
    };
    Ok(lazy_store(cfg, lexer, grammar, pv))
}

fn lazy_store(cfg: &Cfg, lexer: Lexer, grammar: IncTables, pv: Rc<PreparedVocab>) -> MaskStore {
    let (q_base, q_target) = positions(&lexer);
    let nq = q_target.len();
    let info = StoreInfo {
        terminal_names: terminal_names(cfg, pv.vocab()),
        grammar_fingerprint: grammar_fingerprint(cfg),
        step_counts: Vec::new(),
    };
    let lazy = Lazy {
        pv: pv.clone(),
        done: vec![NOT_TRIED; nq],
        n_done: 0,
        deferred: Vec::new(),
        walker: Walker::default(),
        seqs: SeqInterner::new(),
        asm: Assembler::default(),
        transitions: 0,
        first_visit_budget: FIRST_VISIT_BUDGET,
        inside_ids: Default::default(),
    };
    let mut store = MaskStore {
        lexer,
        grammar,
        vocab: pv.vocab_rc().clone(),
        info,
        q_base,
        q_target,
        tables: RefCell::new(Assembler::tables(nq, pv.vocab().len() as u32)),
        lazy: Some(RefCell::new(lazy)),
        specials: Vec::new(),
    };
    // Checked with spans by `check_specials` before.
    store.specials = store.find_specials().unwrap_or_default();
    store
}

/// The terminals' names in a store: a token the grammar names is written
/// by its id (`<[151657]>`, whatever the grammar wrote), so that loading a
/// blob needs no search of the vocabulary.
fn terminal_names(cfg: &Cfg, vocab: &Vocab) -> Vec<String> {
    cfg.terminals
        .iter()
        .map(|t| match &t.pattern {
            // Only a token terminal looks its name up (a scan of the vocabulary).
            crate::grammar::TerminalPattern::Special => match vocab.named_token(&t.name) {
                Ok(id) => format!("<[{}]>", id.0),
                Err(_) => t.display_name(),
            },
            _ => t.display_name(),
        })
        .collect()
}

/// The tokens `cfg` names (`<|im_end|>`, `<[151645]>`) must be tokens of
/// `vocab`, each named once: else a `Grammar` error at the name.
pub fn check_specials(cfg: &Cfg, vocab: &Vocab) -> Result<()> {
    let mut seen: Vec<(u32, &str)> = Vec::new();
    for t in cfg.terminals.iter().filter(|t| matches!(t.pattern, crate::grammar::TerminalPattern::Special)) {
        let id = vocab.named_token(&t.name).map_err(|e| crate::err!(Grammar, "{}: token {}: {e}", t.span, t.name))?.0;
        if let Some((_, other)) = seen.iter().find(|s| s.0 == id) {
            return Err(crate::err!(Grammar, "{}: token {} is {other} (id {id}) again: name each token once", t.span, t.name));
        }
        seen.push((id, &t.name));
    }
    Ok(())
}

/// A stable hash of the normalized grammar (terminals, patterns, rules).
pub fn grammar_fingerprint(cfg: &Cfg) -> u64 {
    let mut h = crate::hash::Fnv64::new();
    for t in &cfg.terminals {
        h.write(t.name.as_bytes());
        match &t.pattern {
            crate::grammar::TerminalPattern::Set { all, none } => {
                for (k, r) in all.iter().map(|r| (b'+', r)).chain(none.iter().map(|r| (b'-', r))) {
                    h.write(&[k]);
                    h.write(r.as_bytes());
                }
            }
            _ => h.write(crate::lexer::table::encoded_regex(&t.pattern).as_deref().unwrap_or("").as_bytes()),
        }
        h.write(&t.priority.to_le_bytes());
        h.write(&[t.ignored as u8, t.is_literal() as u8]);
    }
    for r in &cfg.rules {
        h.write(&r.lhs.0.to_le_bytes());
        for s in &r.rhs {
            match s {
                crate::grammar::Symbol::T(t) => h.write(&[0, t.0 as u8, (t.0 >> 8) as u8, (t.0 >> 16) as u8]),
                crate::grammar::Symbol::N(n) => h.write(&[1, n.0 as u8, (n.0 >> 8) as u8, (n.0 >> 16) as u8]),
            }
        }
        h.write(&[0xff]);
    }
    h.write(&cfg.start.0.to_le_bytes());
    if let Some(i) = &cfg.indent {
        h.write(&[i.newline.0 as u8, i.indent.0 as u8, i.dedent.0 as u8]);
    }
    h.finish()
}

pub(super) fn step_ctx<'a>(lexer: &'a Lexer, grammar: &IncTables) -> StepCtx<'a> {
    StepCtx { lexer, events: grammar.events, newline: grammar.indent.as_ref().map_or(NONE, |i| i.newline) }
}

/// Positions of every lexer state, in store order.
fn positions(lexer: &Lexer) -> (Vec<u32>, Vec<u32>) {
    let mut q_base = Vec::with_capacity(lexer.n_states() + 1);
    let mut q_target = Vec::new();
    for l in 0..lexer.n_states() as u32 {
        q_base.push(q_target.len() as u32);
        q_target.extend(lexer.comp(LexStateId(l)).iter().map(|t| t.0));
        if LexStateId(l) == lexer.start() {
            q_target.push(NO_TARGET);
        }
    }
    q_base.push(q_target.len() as u32);
    (q_base, q_target)
}

fn walk_all(lexer: &Lexer, grammar: &IncTables, trie: &TokenTrie, progress: &mut dyn FnMut(&str)) -> RawStore {
    let (q_base, q_target) = positions(lexer);
    let cx = step_ctx(lexer, grammar);
    let nq = q_target.len();
    // Position q's lexer state.
    let mut q_lex = vec![0u32; nq];
    for l in 0..lexer.n_states() {
        q_lex[q_base[l] as usize..q_base[l + 1] as usize].fill(l as u32);
    }
    // Each position's entries depend on nothing but the position, so the
    // positions are shared out among threads (natively); every thread has
    // its own walker, sequence interner and lexeme-loop cache. The result
    // does not depend on the number of threads.
    type LoopCache = HashMap<Vec<u32>, Rc<LoopWalk>>;
    let init = || (Walker::default(), SeqInterner::new(), LoopCache::default());
    let walk_one = |(w, seqs, loops): &mut (Walker, SeqInterner, LoopCache), q: usize| {
        let mut lw = |sig: &[u32]| loops.entry(sig.to_vec()).or_insert_with(|| Rc::new(loop_walk(trie, sig))).clone();
        let mut transitions = 0u64;
        let e = w.entries_via_loop(cx, trie, &mut lw, seqs, q_lex[q], q_target[q], &mut transitions, true).0;
        (e, transitions)
    };
    let mut last = Instant::now();
    let mut report = |done: usize| {
        if last.elapsed().as_secs() >= 5 {
            progress(&format!("  token walk: {done}/{nq} positions"));
            last = Instant::now();
        }
    };
    let walked = super::par::map_with_progress(nq, init, walk_one, &mut report);
    let transitions = walked.iter().map(|(_, t)| t).sum();
    let entries: Vec<Entries> = walked.into_iter().map(|(e, _)| e).collect();
    let always = vec![Vec::new(); q_target.len()];
    RawStore { q_base, q_target, entries, always, transitions }
}

#[derive(Clone)]
pub(crate) struct Walker {
    arena: Vec<(u32, u32, u32)>,
    /// Per open trie node: (subtree end, its configurations in `arena`, their [`ConfMemo`] set).
    frames: Vec<(usize, usize, usize, u32)>,
    /// The configuration-set memo of the current walk (off unless the sink asks).
    memo: ConfMemo,
    /// Configuration steps left before the walk gives up (see
    /// [`Lazy::compute`]); `u64::MAX`: no bound.
    budget: u64,
    /// The last walk ran out of `budget` (its result is incomplete).
    over: bool,
    /// Scratch of [`dedup_tail`].
    seen: Vec<u32>,
    /// Each position's lexeme-loop walk (`None`: no loop), once per
    /// position: a position that stays direct is walked at every mask, and
    /// its loop (a breadth-first search and a minimisation) is the same
    /// each time. At most [`LOOP_MEMO`] positions or [`LOOP_MEMO_WORDS`]
    /// words of walks (it keeps walks the vocabulary's cache may evict),
    /// then cleared.
    loop_memo: HashMap<(u32, u32), Option<Rc<LoopWalk>>>,
    loop_memo_words: usize,
    /// The text slice as a walk without exits: the memo's entry for a
    /// position whose lexeme every text character continues (see
    /// [`text_closed_at`]).
    slice: Option<Rc<LoopWalk>>,
    /// Per `k`, the text slice's tokens of at most `k` characters as a walk
    /// without exits: the memo's entry for a position whose lexeme takes
    /// exactly up to `k` more text characters (see [`text_bounded_at`]).
    bounded: HashMap<usize, Rc<LoopWalk>>,
    /// [`text_bounded_at`]'s answers per `(lexer state, target)`.
    bounded_k: HashMap<(u32, u32), Option<usize>>,
}

/// Most positions in [`Walker`]'s loop memo.
const LOOP_MEMO: usize = 4096;
/// Most words of loop walks in [`Walker`]'s loop memo (8 MiB).
const LOOP_MEMO_WORDS: usize = 1 << 21;

impl Default for Walker {
    fn default() -> Self {
        Walker { arena: Vec::new(), frames: Vec::new(), memo: ConfMemo::default(), budget: u64::MAX, over: false, seen: Vec::new(), loop_memo: HashMap::default(), loop_memo_words: 0, slice: None, bounded: HashMap::default(), bounded_k: HashMap::default() }
    }
}

/// What a token-trie walk does with what it finds (see [`Walker::walk_position`]):
/// the store's walk collects every symbol sequence's tokens; the direct mask
/// path ([`super::direct`]) drops a configuration whose sequence the parser
/// rejects and sets the bits of the tokens reached.
pub(super) trait Sink {
    /// The id of sequence `s ++ syms` (`syms` not empty), or `None` to drop
    /// the configuration.
    fn extend(&mut self, s: u32, syms: &[Sym]) -> Option<u32>;
    /// The tokens at trie node `node` are reached by configurations `cfgs`
    /// (lexer state, target, sequence id).
    fn record(&mut self, trie: &TokenTrie, node: u32, cfgs: &[(u32, u32, u32)]);
    /// Tokens `toks` are reached by configurations `cfgs`.
    fn record_ids(&mut self, toks: &[u32], cfgs: &[(u32, u32, u32)]);
    /// May the walk memoize configuration sets ([`ConfMemo`])? Only if
    /// [`Sink::extend`] of one `(s, syms)` always answers the same, and
    /// configurations are few and repeat (the general parser's sequence
    /// ids are its item sets).
    fn memo(&self) -> bool {
        false
    }
}

/// The configuration sets a trie walk meets (each the deduplicated
/// configurations of one trie node, in order), interned, and the set after
/// `(set, byte class)` (a step depends on the byte's lexer class only; the general
/// parser has no indentation events): a walk over 100,000 nodes meets a few hundred sets (the
/// general parser's, inside an identifier or a comment), so stepping each
/// configuration through the lexer and the sink at every node repeats the
/// same work. Off: `intern` answers `NONE` and `next` nothing.
#[derive(Clone, Default)]
struct ConfMemo {
    on: bool,
    ids: HashMap<Vec<(u32, u32, u32)>, u32>,
    /// Per set: its configurations in `pool`.
    span: Vec<(u32, u32)>,
    pool: Vec<(u32, u32, u32)>,
    /// Per set, per byte class: the set after it (`NONE`: not yet stepped).
    next: Vec<u32>,
    /// Lexer byte classes.
    nc: usize,
}

/// Most sets [`ConfMemo`] interns per walk (4 bytes per byte class each).
const CONF_MEMO_SETS: usize = 4096;

impl ConfMemo {
    const NONE: u32 = u32::MAX;

    fn reset(&mut self, on: bool, nc: usize) {
        self.on = on;
        self.nc = nc;
        if !self.span.is_empty() {
            self.ids.clear();
            self.span.clear();
            self.pool.clear();
            self.next.clear();
        }
    }

    fn intern(&mut self, cfgs: &[(u32, u32, u32)]) -> u32 {
        if !self.on {
            return Self::NONE;
        }
        if let Some(&id) = self.ids.get(cfgs) {
            return id;
        }
        if self.span.len() >= CONF_MEMO_SETS {
            return Self::NONE;
        }
        let id = self.span.len() as u32;
        self.span.push((self.pool.len() as u32, (self.pool.len() + cfgs.len()) as u32));
        self.pool.extend_from_slice(cfgs);
        self.next.resize(self.next.len() + self.nc, Self::NONE);
        self.ids.insert(cfgs.to_vec(), id);
        id
    }

    #[inline]
    fn next(&self, set: u32, c: usize) -> Option<u32> {
        if set == Self::NONE {
            return None;
        }
        let n = self.next[set as usize * self.nc + c];
        (n != Self::NONE).then_some(n)
    }

    #[inline]
    fn set_next(&mut self, set: u32, c: usize, n: u32) {
        if set != Self::NONE {
            self.next[set as usize * self.nc + c] = n;
        }
    }

    #[inline]
    fn copy(&self, set: u32, out: &mut Vec<(u32, u32, u32)>) {
        let (a, z) = self.span[set as usize];
        out.extend_from_slice(&self.pool[a as usize..z as usize]);
    }
}

/// The store's sink: sequence ids interned, seq id → tokens.
struct Collect<'s> {
    seqs: &'s mut SeqInterner,
    out: HashMap<u32, Vec<u32>>,
    transitions: u64,
}

impl Sink for Collect<'_> {
    fn extend(&mut self, s: u32, syms: &[Sym]) -> Option<u32> {
        Some(self.seqs.extend(s, syms))
    }
    fn record(&mut self, trie: &TokenTrie, node: u32, cfgs: &[(u32, u32, u32)]) {
        let toks = trie.tokens_at(node);
        if toks.is_empty() {
            return;
        }
        for c in cfgs {
            self.out.entry(c.2).or_default().extend(toks.iter().map(|t| t.0));
        }
        self.transitions += (toks.len() * cfgs.len()) as u64;
    }
    fn record_ids(&mut self, toks: &[u32], cfgs: &[(u32, u32, u32)]) {
        for c in cfgs {
            self.out.entry(c.2).or_default().extend_from_slice(toks);
        }
        self.transitions += (toks.len() * cfgs.len()) as u64;
    }
}

impl Walker {
    /// The raw entries of position (l, x): (sequence, sorted tokens), sorted
    /// by sequence, trailing indentation events dropped. Through the
    /// position's lexeme loop when it has one (see [`lexeme_loop`]): the
    /// tokens that stay inside the loop come from the vocabulary's loop
    /// cache, and only the subtrees where the walk leaves the loop are
    /// walked. Empty if the walk ran over its budget (`self.over`).
    /// The loop's inside tokens are joined into the empty sequence's entry
    /// (`join`), or left out and the loop walk returned (a lazy store keeps
    /// its mask words by reference: see `Tables::q_inside`).
    #[allow(clippy::too_many_arguments)]
    fn entries_via_loop(
        &mut self,
        cx: StepCtx<'_>,
        trie: &TokenTrie,
        loop_walks: &mut dyn FnMut(&[u32]) -> Rc<LoopWalk>,
        seqs: &mut SeqInterner,
        l: u32,
        x: u32,
        transitions: &mut u64,
        join: bool,
    ) -> (Entries, Option<Rc<LoopWalk>>) {
        let mut sink = Collect { seqs, out: HashMap::default(), transitions: 0 };
        let lw = self.walk_position(cx, trie, loop_walks, l, x, &mut sink);
        *transitions += sink.transitions;
        if self.over {
            return (Vec::new(), None);
        }
        let (lw, inside): (_, Option<Vec<u32>>) = match lw {
            Some(lw) if join => (None, Some(lw.inside_ids().collect())),
            lw => (lw, None),
        };
        *transitions += inside.as_ref().map_or(0, |v| v.len() as u64);
        let mut list = self.finish(cx, sink.seqs, sink.out, inside.as_ref());
        super::streamline::merge(&mut list);
        (list, lw)
    }

    /// Walk the token trie from position `(l, x)` into `sink`: through the
    /// position's lexeme loop when it has one, whose walk (the inside tokens
    /// are reached with the empty sequence) is returned.
    pub(super) fn walk_position(
        &mut self,
        cx: StepCtx<'_>,
        trie: &TokenTrie,
        loop_walks: &mut dyn FnMut(&[u32]) -> Rc<LoopWalk>,
        l: u32,
        x: u32,
        sink: &mut dyn Sink,
    ) -> Option<Rc<LoopWalk>> {
        // Sequence ids are the sink's: the memo holds for this walk only.
        self.memo.reset(sink.memo(), cx.lexer.n_classes());
        // Each exit: the subtree of frontier node `f`, from the lexer state
        // before its byte (the loop run along the bytes above `f`); `None`
        // (no loop, or a path that leaves the lexer, which cannot happen as
        // the signature is the loop's): the plain walk, which is exact.
        let lw = match self.loop_memo.get(&(l, x)) {
            Some(lw) => lw.clone(),
            None => {
                // A lexeme that takes exactly up to k more text characters
                // (a counted body: `maxLength`, `{m,n}`) or any number of
                // them (a string body), and cannot end on the way: the
                // slice's tokens of at most k characters by reference,
                // without a loop signature or a walk of the whole trie per
                // count. Otherwise its lexeme loop, or the whole slice if
                // every text character continues the lexeme (which may end).
                let memo = &mut self.bounded_k;
                if memo.len() >= LOOP_MEMO {
                    memo.clear();
                }
                let lw = match text_bounded_at(cx, l, x, TEXT_CLOSED_PAIRS, trie.text_slice().by_chars.len(), memo) {
                    Some(k) => Some(self.bounded_walk(trie, k)),
                    None => match lexeme_loop(cx, l, x, trie) {
                        Some(sig) => Some(loop_walks(&sig)),
                        None if text_closed_at(cx, l, x, 0, TEXT_CLOSED_PAIRS) => Some(
                            self.slice
                                .get_or_insert_with(|| {
                                    Rc::new(LoopWalk { inside: trie.text_slice().inside.clone(), ..Default::default() })
                                })
                                .clone(),
                        ),
                        None => None,
                    },
                };
                let shared = |w: &Rc<LoopWalk>| self.is_sliced(w);
                let words = lw.as_ref().filter(|w| !shared(w)).map_or(0, |w| w.inside.len() + 2 * w.frontier.len() + w.paths.len() / 4) + 4;
                if self.loop_memo.len() >= LOOP_MEMO || self.loop_memo_words + words > LOOP_MEMO_WORDS {
                    self.loop_memo.clear();
                    self.loop_memo_words = 0;
                }
                self.loop_memo.insert((l, x), lw.clone());
                self.loop_memo_words += words;
                lw
            }
        };
        if x == NO_TARGET {
            self.walk_start(cx, trie, l, sink);
            return None;
        }
        // Every text character continues the lexeme (or, bounded, every
        // string of up to k of them, and none longer): the text slice (its
        // tokens of at most k characters) is reached with the empty
        // sequence, and the other tokens are walked.
        if let Some(lw) = lw.as_ref().filter(|lw| self.is_sliced(lw)) {
            let rest = &trie.text_slice().rest;
            self.arena.clear();
            self.arena.push((l, x, 0));
            self.walk_range(cx, rest, 1, rest.node_count(), sink);
            return Some(lw.clone());
        }
        let starts: Option<Vec<u32>> = lw.as_ref().and_then(|lw| {
            let ends = lw.frontier.iter().skip(1).map(|e| e.1 as usize).chain([lw.paths.len()]);
            lw.frontier.iter().zip(ends).map(|(&(_, p0), p1)| lw.paths[p0 as usize..p1].iter().try_fold(LexStateId(l), |s, &b| cx.lexer.cont(s, b)).map(|s| s.0)).collect()
        });
        let (Some(lw), Some(starts)) = (lw, starts) else {
            self.arena.clear();
            self.arena.push((l, x, 0));
            self.walk_range(cx, trie, 1, trie.node_count(), sink);
            return None;
        };
        for (&(f, _), &s) in lw.frontier.iter().zip(&starts) {
            self.arena.clear();
            self.arena.push((s, x, 0));
            self.walk_range(cx, trie, f as usize, trie.subtree_end(f) as usize, sink);
            if self.over {
                break;
            }
        }
        Some(lw)
    }

    /// The text slice's tokens of at most `k` characters as a walk without
    /// exits, kept per `k`: derived from the nearest `k` kept (the groups
    /// of tokens by length are disjoint), so the counts of one body cost a
    /// copy and a few groups each, not a pass over the slice.
    fn bounded_walk(&mut self, trie: &TokenTrie, k: usize) -> Rc<LoopWalk> {
        if let Some(w) = self.bounded.get(&k) {
            return w.clone();
        }
        let sl = trie.text_slice();
        let near = self.bounded.keys().copied().min_by_key(|&j| j.abs_diff(k));
        let inside = match near {
            Some(j) if j.abs_diff(k) < k.min(8) => {
                let mut m = self.bounded[&j].inside.clone();
                let (lo, hi, set) = if j < k { (j + 1, k, true) } else { (k + 1, j, false) };
                for t in sl.by_chars.iter().take(hi + 1).skip(lo).flatten() {
                    let (w, bit) = (*t as usize / 32, 1u32 << (t % 32));
                    if set {
                        m[w] |= bit;
                    } else {
                        m[w] &= !bit;
                    }
                }
                m
            }
            _ => sl.up_to(k),
        };
        let w = Rc::new(LoopWalk { inside, ..Default::default() });
        self.bounded.insert(k, w.clone());
        w
    }

    /// Is `w` the text slice, or its tokens up to some length (no exits)?
    fn is_sliced(&self, w: &Rc<LoopWalk>) -> bool {
        self.slice.as_ref().is_some_and(|sl| Rc::ptr_eq(sl, w)) || self.bounded.values().any(|b| Rc::ptr_eq(b, w))
    }

    /// The walk from the start of the input (target [`NO_TARGET`]), one first
    /// byte at a time: where every configuration after the byte continues
    /// its lexeme through any text characters ([`text_closed_at`]), the
    /// text slice's tokens with that first byte are reached by exactly those
    /// configurations' sequences (any longer sequence the plain walk finds
    /// for them extends one of these, and viability is prefix-closed), and
    /// only the other tokens are walked.
    fn walk_start(&mut self, cx: StepCtx<'_>, trie: &TokenTrie, l: u32, sink: &mut dyn Sink) {
        let sl = trie.text_slice();
        let mut cfgs: Vec<(u32, u32, u32)> = Vec::new();
        for c in trie.children(trie.root()) {
            let b = trie.byte(c);
            cfgs.clear();
            walk::step(cx, l, NO_TARGET, b, &mut |l2, z, syms| {
                if let Some(s2) = if syms.is_empty() { Some(0) } else { sink.extend(0, syms) } {
                    cfgs.push((l2, z, s2));
                }
            });
            let closed = crate::vocab::trie::text_step(0, b)
                .is_some_and(|u| !cfgs.is_empty() && cfgs.iter().all(|&(l2, z, _)| text_closed_at(cx, l2, z, u, TEXT_CLOSED_START_PAIRS)));
            let (t, c) = match closed {
                true => {
                    sink.record_ids(&sl.by_first[b as usize], &cfgs);
                    match sl.rest.child(sl.rest.root(), b) {
                        Some(rc) => (&sl.rest, rc),
                        None => continue,
                    }
                }
                false => (trie, c),
            };
            self.arena.clear();
            self.arena.push((l, NO_TARGET, 0));
            self.walk_range(cx, t, c as usize, t.subtree_end(c) as usize, sink);
            if self.over {
                return;
            }
        }
    }

    /// Walk the trie nodes `lo..hi` (the children subtrees of one node, in
    /// preorder) from the configurations in `arena` (those of that node).
    /// With the sink's memo on ([`Sink::memo`]), each node's configurations
    /// are a set interned in [`ConfMemo`], and the set after `(set, byte)` is
    /// stepped once per walk, then copied.
    fn walk_range(&mut self, cx: StepCtx<'_>, trie: &TokenTrie, lo: usize, hi: usize, sink: &mut dyn Sink) {
        self.frames.clear();
        let root = self.memo.intern(&self.arena);
        self.frames.push((hi, 0, self.arena.len(), root));
        let mut i = lo;
        while i < hi {
            while i >= self.frames.last().unwrap().0 {
                let (_, lo, _, _) = self.frames.pop().unwrap();
                self.arena.truncate(lo);
            }
            let (_, plo, phi, pset) = *self.frames.last().unwrap();
            let b = trie.byte(i as u32);
            let start = self.arena.len();
            let bc = cx.lexer.class(b) as usize;
            let set = match self.memo.next(pset, bc) {
                Some(set) => {
                    self.memo.copy(set, &mut self.arena);
                    set
                }
                None => self.step_into(cx, plo, phi, pset, b, bc, sink),
            };
            // Cost: the configurations stepped and those they produced.
            let cost = (phi - plo + self.arena.len() - start) as u64;
            if cost > self.budget {
                self.over = true;
                self.budget = 0;
                return;
            }
            self.budget -= cost;
            let end = trie.subtree_end(i as u32) as usize;
            if self.arena.len() == start {
                i = end;
                continue;
            }
            sink.record(trie, i as u32, &self.arena[start..]);
            self.frames.push((end, start, self.arena.len(), set));
            i += 1;
        }
    }

    /// Step the configurations `arena[plo..phi]` (memo set `pset`) by byte
    /// `b` (lexer class `bc`), pushing those after it (deduplicated) onto `arena`: their memo set.
    #[allow(clippy::too_many_arguments)]
    fn step_into(&mut self, cx: StepCtx<'_>, plo: usize, phi: usize, pset: u32, b: u8, bc: usize, sink: &mut dyn Sink) -> u32 {
        let start = self.arena.len();
        for c in plo..phi {
            let (cl, cxg, cs) = self.arena[c];
            let arena = &mut self.arena;
            walk::step(cx, cl, cxg, b, &mut |l2, z, syms| {
                let s2 = if syms.is_empty() { Some(cs) } else { sink.extend(cs, syms) };
                if let Some(s2) = s2 {
                    arena.push((l2, z, s2));
                }
            });
        }
        dedup_tail(&mut self.arena, start, &mut self.seen);
        let set = self.memo.intern(&self.arena[start..]);
        self.memo.set_next(pset, bc, set);
        set
    }

    /// Seq id → tokens as sorted entries, trailing indentation events
    /// dropped; `inside` (sorted) joins the empty sequence's tokens.
    fn finish(&self, cx: StepCtx<'_>, seqs: &SeqInterner, mut map: HashMap<u32, Vec<u32>>, inside: Option<&Vec<u32>>) -> Entries {
        if let Some(inside) = inside.filter(|v| !v.is_empty()) {
            match map.get_mut(&0) {
                None => {
                    map.insert(0, inside.clone());
                }
                Some(v) => {
                    v.sort_unstable();
                    v.dedup();
                    let mut m = Vec::with_capacity(v.len() + inside.len());
                    let (mut i, mut j) = (0, 0);
                    while i < v.len() && j < inside.len() {
                        if v[i] < inside[j] {
                            m.push(v[i]);
                            i += 1;
                        } else if inside[j] < v[i] {
                            m.push(inside[j]);
                            j += 1;
                        } else {
                            m.push(v[i]);
                            i += 1;
                            j += 1;
                        }
                    }
                    m.extend_from_slice(&v[i..]);
                    m.extend_from_slice(&inside[j..]);
                    *v = m;
                }
            }
        }
        let mut list: Entries = map
            .into_iter()
            .map(|(sid, mut toks)| {
                if !toks.is_sorted() {
                    toks.sort_unstable();
                }
                toks.dedup();
                toks.shrink_to_fit();
                let mut s = Vec::new();
                seqs.get(sid, &mut s);
                // Trailing indentation events never decide anything: the
                // column only matters once a later terminal arrives.
                while s.last().is_some_and(|&y| cx.events.is_event(y)) {
                    s.pop();
                }
                (s, toks)
            })
            .collect();
        // Unstable is enough: equal entries are identical (and one sort
        // with `streamline::merge`).
        super::streamline::sort_entries(&mut list);
        list
    }
}

/// Remove duplicates from `v[start..]`, keeping first occurrences in order.
/// A linear `contains` per push is quadratic where a byte starts hundreds of
/// terminals (global lexing of a large schema); an open addressing table of
/// indices (`seen`, scratch) finds them instead.
#[inline]
pub(super) fn dedup_tail(v: &mut Vec<(u32, u32, u32)>, start: usize, seen: &mut Vec<u32>) {
    let n = v.len() - start;
    if n < 2 {
        return;
    }
    let size = (2 * n).next_power_of_two();
    let mask = size - 1;
    seen.clear();
    seen.resize(size, u32::MAX);
    let slot = |x: (u32, u32, u32)| {
        let h = (x.0 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (x.1 as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f) ^ (x.2 as u64).wrapping_mul(0x1656_67b1_9e37_79f9);
        (h ^ (h >> 29)) as usize & mask
    };
    let mut w = start;
    for r in start..v.len() {
        let x = v[r];
        let mut i = slot(x);
        loop {
            let k = seen[i];
            if k == u32::MAX {
                seen[i] = w as u32;
                v[w] = x;
                w += 1;
                break;
            }
            if v[k as usize] == x {
                break;
            }
            i = (i + 1) & mask;
        }
    }
    v.truncate(w);
}

/// Codes of a loop signature besides loop state indices.
const LOOP_DEAD: u32 = u32::MAX;
const LOOP_EXIT: u32 = u32::MAX - 1;
/// Most lexer states of a lexeme loop taken through the loop cache.
const MAX_LOOP_STATES: usize = 2048;
/// A signature starts with the number of byte classes, the class of every
/// byte and the cut (0: none).
const SIG_HEADER: usize = 258;

/// The *lexeme loop* of position `(l, x)`: while the lexeme in progress
/// cannot end as `x` (`x` is not a winner), [`walk::step`] has exactly one
/// outcome per byte — the lexeme continues (`(l2, x)`, no symbol) or dies —
/// so a trie walk from `(l, x)` is a plain DFA run over the lexer states
/// reachable that way (the loop), until a byte reaches a state where `x`
/// wins (an exit: from there on the general walk takes over). Returns the
/// signature (of the minimal loop, see [`minimise_loop`]); `None` when
/// the position has no loop (the start position, a winner, the `%indent`
/// newline, too many states).
///
/// The signature is canonical, so that equal loops share one walk in the
/// vocabulary's cache across positions and compiles: the loop's own byte
/// classes (bytes with equal columns), numbered by their first byte, then
/// per loop state (discovered breadth-first, bytes in order) per loop class:
/// the next loop state, [`LOOP_EXIT`] or [`LOOP_DEAD`]. States `horizon`
/// bytes away (the trie's cut depth) discover no further states (those
/// codes are [`LOOP_DEAD`]), and when that happened the signature records
/// the cut: its walk stops at nodes deeper than the cut and hands them to
/// the general walk as exits ([`loop_walk`]), so no row past the cut is
/// ever read. A string of at most 80 characters thus has the same
/// signature at every count more than the cut from its bound, and its
/// steps share one cached walk; only the few tokens longer than the cut
/// are walked per position. Only acyclic loops are cut (counted bodies): a
/// loop that can cycle (an unbounded body, keys tracked under `LongestAll`)
/// takes the longest token as its horizon, as its walk is shared anyway
/// and its exits can be costly to walk per position.
pub(super) fn lexeme_loop(cx: StepCtx<'_>, l: u32, x: u32, trie: &TokenTrie) -> Option<Vec<u32>> {
    let max = trie.max_depth();
    match loop_signature(cx, l, x, trie.cut_depth().min(max), max)? {
        Err(()) => loop_signature(cx, l, x, max, max)?.ok(),
        Ok(sig) => Some(sig),
    }
}

/// [`lexeme_loop`] with horizon `horizon` (the longest token is `max`
/// bytes): `Err` if the loop was cut there but can cycle.
fn loop_signature(cx: StepCtx<'_>, l: u32, x: u32, horizon: usize, max: usize) -> Option<std::result::Result<Vec<u32>, ()>> {
    let lx = cx.lexer;
    let xt = crate::ids::TerminalId(x);
    if x == NO_TARGET || x == cx.newline || lx.may_win(LexStateId(l), xt) {
        return None;
    }
    let nc = lx.n_classes();
    // The lexer's classes by first byte (a canonical order).
    let mut rep = vec![u16::MAX; nc];
    let mut by_first = Vec::with_capacity(nc);
    for b in 0..=255u8 {
        let c = lx.class(b) as usize;
        if rep[c] == u16::MAX {
            rep[c] = b as u16;
            by_first.push(c);
        }
    }
    let mut order = vec![l];
    let mut depth = vec![0usize];
    let mut index: HashMap<u32, u32> = HashMap::from_iter([(l, 0)]);
    // Rows over the lexer's classes (in `by_first` order), then re-keyed.
    let mut rows: Vec<u32> = Vec::with_capacity(4 * nc);
    let mut cut = false;
    let mut i = 0;
    while i < order.len() {
        let s = LexStateId(order[i]);
        let d = depth[i];
        i += 1;
        for &c in &by_first {
            // Rows of states `horizon` bytes away are never read by a
            // token: any codes are exact there. They keep those that need
            // no new state (so that such states can merge with their equals
            // in [`minimise_loop`]), and are dead elsewhere.
            let code = {
                match lx.cont(s, rep[c] as u8) {
                    Some(l2) if lx.can_complete(l2, xt) => {
                        if lx.may_win(l2, xt) {
                            LOOP_EXIT
                        } else if let Some(&k) = index.get(&l2.0) {
                            k
                        } else if d >= horizon {
                            cut = true;
                            LOOP_DEAD
                        } else {
                            if order.len() >= MAX_LOOP_STATES {
                                return None;
                            }
                            index.insert(l2.0, order.len() as u32);
                            order.push(l2.0);
                            depth.push(d + 1);
                            order.len() as u32 - 1
                        }
                    }
                    _ => LOOP_DEAD,
                }
            };
            rows.push(code);
        }
    }
    // No token reads past the longest one: no cut there.
    let cut = cut && horizon < max;
    let heights = loop_heights(&rows, order.len(), &(0..nc).collect::<Vec<_>>(), nc);
    if cut && heights[0] == u32::MAX {
        return Some(Err(()));
    }
    if let Some(r2) = minimise_loop(&rows, order.len(), nc, &heights) {
        rows = r2;
    }
    // The loop's classes: lexer classes (by first byte) with equal columns.
    let ns = rows.len() / nc;
    let mut lclass_of = vec![0u32; nc];
    // Per loop class: its column's hash and its first lexer class (by position).
    let mut lclass_cols: Vec<(u64, usize)> = Vec::new();
    let same = |a: usize, b: usize| (0..ns).all(|q| rows[q * nc + a] == rows[q * nc + b]);
    for (k, &c) in by_first.iter().enumerate() {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for q in 0..ns {
            h = (h ^ rows[q * nc + k] as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        lclass_of[c] = match lclass_cols.iter().position(|&(h2, k2)| h2 == h && same(k, k2)) {
            Some(i) => i as u32,
            None => {
                lclass_cols.push((h, k));
                lclass_cols.len() as u32 - 1
            }
        };
    }
    let nlc = lclass_cols.len();
    let mut sig = Vec::with_capacity(SIG_HEADER + ns * nlc);
    sig.push(nlc as u32);
    sig.extend((0..=255u8).map(|b| lclass_of[lx.class(b) as usize]));
    sig.push(if cut { horizon as u32 } else { 0 });
    for q in 0..ns {
        sig.extend(lclass_cols.iter().map(|&(_, k)| rows[q * nc + k]));
    }
    Some(Ok(sig))
}

/// Most (state × column) steps [`minimise_loop`] spends refining.
const MINIMISE_WORK: usize = 1 << 22;

/// The minimal form of a lexeme loop's rows (`ns` rows of `nc` codes, as in
/// [`lexeme_loop`]): states with the same codes (dead, exit, loop state) per
/// byte whose loop successors merge too are merged (Moore's refinement) and
/// renumbered in the same breadth-first discovery order; `None` when no two
/// states merge (or the refinement ran over [`MINIMISE_WORK`]). The walk of
/// the minimal loop is the walk of the original (a DFA run over the trie
/// whose codes are those of the original along every path), so equal loops
/// share one walk in the vocabulary's cache. Under `LongestAll` or global
/// lexing a lexer state also tracks the other terminals its lexeme could
/// still become (the keys and enum literals a string could still spell):
/// one string body had up to 2,000 lexer states, merged into about 15. Exits
/// are walked from the lexer state replayed along the exit node's path
/// ([`LoopWalk::paths`]), not from a loop state. `height`: the states'
/// [`loop_heights`] (any per-state values that equal states share give the
/// same result; tests compare with all zeros).
fn minimise_loop(rows: &[u32], ns: usize, nc: usize, height: &[u32]) -> Option<Vec<u32>> {
    if ns < 2 {
        return None;
    }
    // Distinct columns (equal columns stay equal when merging).
    let mut cols: Vec<(u64, usize)> = Vec::new();
    for k in 0..nc {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for q in 0..ns {
            h = (h ^ rows[q * nc + k] as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
        if !cols.iter().any(|&(h2, k2)| h2 == h && (0..ns).all(|q| rows[q * nc + k] == rows[q * nc + k2])) {
            cols.push((h, k));
        }
    }
    let cols: Vec<usize> = cols.into_iter().map(|c| c.1).collect();
    // Initial classes: the codes' kinds and the height (equal states have
    // equal heights, so the final partition is the same; a counted body,
    // `{0,80}`, is a chain of states that all differ in height, and is
    // found minimal before any round instead of after one round per count).
    let mut ids: HashMap<Vec<u32>, u32> = HashMap::default();
    let mut cls = vec![0u32; ns];
    let mut key = Vec::with_capacity(2 * cols.len() + 1);
    for q in 0..ns {
        key.clear();
        key.push(height[q]);
        for &k in &cols {
            key.push(match rows[q * nc + k] {
                LOOP_DEAD => LOOP_DEAD,
                LOOP_EXIT => LOOP_EXIT,
                _ => 0,
            });
        }
        let n = ids.len() as u32;
        cls[q] = *ids.entry(key.clone()).or_insert(n);
    }
    let mut n_cls = ids.len();
    let mut work = 0usize;
    loop {
        if n_cls == ns {
            return None;
        }
        work += ns * cols.len();
        if work > MINIMISE_WORK {
            return None;
        }
        ids.clear();
        let mut cls2 = vec![0u32; ns];
        for q in 0..ns {
            key.clear();
            key.push(cls[q]);
            key.extend(cols.iter().filter_map(|&k| {
                let c = rows[q * nc + k];
                (c < LOOP_EXIT).then(|| cls[c as usize])
            }));
            let n = ids.len() as u32;
            cls2[q] = *ids.entry(key.clone()).or_insert(n);
        }
        cls = cls2;
        if ids.len() == n_cls {
            break;
        }
        n_cls = ids.len();
    }
    // Renumber breadth-first from the start's class, bytes in order.
    let mut first = vec![u32::MAX; n_cls];
    for q in (0..ns).rev() {
        first[cls[q] as usize] = q as u32;
    }
    let mut new_of = vec![u32::MAX; n_cls];
    new_of[cls[0] as usize] = 0;
    let mut reps = vec![0usize];
    let mut rows2 = Vec::with_capacity(n_cls * nc);
    let mut i = 0;
    while i < reps.len() {
        let q = reps[i];
        i += 1;
        for k in 0..nc {
            let c = rows[q * nc + k];
            rows2.push(if c >= LOOP_EXIT {
                c
            } else {
                let m = cls[c as usize] as usize;
                if new_of[m] == u32::MAX {
                    new_of[m] = reps.len() as u32;
                    reps.push(first[m] as usize);
                }
                new_of[m]
            });
        }
    }
    Some(rows2)
}

/// Per loop state, the most bytes a run from it can read without leaving
/// the loop's states (`u32::MAX` when it can reach a cycle): a property of
/// the state's language, so equal states have equal heights. Longest paths
/// by peeling states whose loop successors are all done (Kahn's order).
fn loop_heights(rows: &[u32], ns: usize, cols: &[usize], nc: usize) -> Vec<u32> {
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); ns];
    let mut left = vec![0u32; ns]; // loop successors (with repeats) not done yet
    for q in 0..ns {
        for &k in cols {
            let c = rows[q * nc + k];
            if c < LOOP_EXIT {
                preds[c as usize].push(q as u32);
                left[q] += 1;
            }
        }
    }
    let mut height = vec![u32::MAX; ns];
    let mut done: Vec<u32> = (0..ns as u32).filter(|&q| left[q as usize] == 0).collect();
    for &q in &done {
        height[q as usize] = 0;
    }
    let mut i = 0;
    while i < done.len() {
        let q = done[i] as usize;
        i += 1;
        for &p in &preds[q] {
            let p = p as usize;
            left[p] -= 1;
            if left[p] == 0 {
                // Every successor is done: the longest is one more.
                height[p] = cols.iter().filter_map(|&k| {
                    let c = rows[p * nc + k];
                    (c < LOOP_EXIT).then(|| height[c as usize])
                }).max().map_or(0, |h| h + 1);
                done.push(p as u32);
            }
        }
    }
    height
}

/// Run a loop signature over the whole trie (see [`lexeme_loop`]).
pub(super) fn loop_walk(trie: &TokenTrie, sig: &[u32]) -> LoopWalk {
    let nc = sig[0] as usize;
    let class = &sig[1..SIG_HEADER - 1];
    // Nodes deeper than the cut (`usize::MAX`: none) are exits.
    let cut = match sig[SIG_HEADER - 1] as usize {
        0 => usize::MAX,
        d => d,
    };
    let rows = &sig[SIG_HEADER..];
    let mut w = LoopWalk::default();
    let mut bits: Vec<u64> = Vec::new();
    // A loop that keeps every text character inside has the text slice
    // inside as a whole; the walk covers the other tokens, whose trie maps
    // back to the whole one (no slice token lies under an exit or a dead
    // node: its bytes stay inside from every state on its path).
    let (slice, trie) = match loop_text_closed(sig) {
        true => {
            let sl = trie.text_slice();
            bits = sl.inside.chunks(2).map(|c| c[0] as u64 | (*c.get(1).unwrap_or(&0) as u64) << 32).collect();
            (Some(&sl.node[..]), &sl.rest)
        }
        false => (None, trie),
    };
    let n = trie.node_count();
    // (subtree end, loop state, byte) of the current path's nodes.
    let mut stack: Vec<(usize, u32, u8)> = vec![(n, 0, 0)];
    let mut i = 1;
    while i < n {
        while i >= stack.last().unwrap().0 {
            stack.pop();
        }
        let ps = stack.last().unwrap().1;
        let code = if stack.len() > cut { LOOP_EXIT } else { rows[ps as usize * nc + class[trie.byte(i as u32) as usize] as usize] };
        let end = trie.subtree_end(i as u32) as usize;
        match code {
            LOOP_DEAD => i = end,
            LOOP_EXIT => {
                w.frontier.push((slice.map_or(i as u32, |m| m[i]), w.paths.len() as u32));
                w.paths.extend(stack[1..].iter().map(|e| e.2));
                i = end;
            }
            k => {
                for t in trie.tokens_at(i as u32) {
                    let (wi, bit) = (t.0 as usize / 64, t.0 % 64);
                    if wi >= bits.len() {
                        bits.resize(wi + 1, 0);
                    }
                    bits[wi] |= 1 << bit;
                }
                stack.push((end, k, trie.byte(i as u32)));
                i += 1;
            }
        }
    }
    w.inside = bits.iter().flat_map(|&x| [x as u32, (x >> 32) as u32]).collect();
    while w.inside.last() == Some(&0) {
        w.inside.pop();
    }
    w
}

/// The loop of signature `sig` (see [`lexeme_loop`]) is uncut and every
/// text character keeps it inside ([`text_closed`]): its walk has the
/// text slice inside.
fn loop_text_closed(sig: &[u32]) -> bool {
    let nc = sig[0] as usize;
    sig[SIG_HEADER - 1] == 0 && text_closed(nc, &sig[1..SIG_HEADER - 1], &sig[SIG_HEADER..])
}

/// True if every text character (see [`crate::vocab::trie::text_step`])
/// keeps the loop of [`loop_walk`] (`nc` classes, `class` per byte, `rows`)
/// inside, from its start and from every state text characters reach.
fn text_closed(nc: usize, class: &[u32], rows: &[u32]) -> bool {
    use crate::vocab::trie::text_step;
    let mut seen = vec![false; rows.len() / nc * 8];
    seen[0] = true;
    let mut todo = vec![(0u32, 0u8)];
    while let Some((q, u)) = todo.pop() {
        for b in 0..=255u8 {
            let Some(u2) = text_step(u, b) else { continue };
            let code = rows[q as usize * nc + class[b as usize] as usize];
            if code == LOOP_DEAD || code == LOOP_EXIT {
                return false;
            }
            let k = code as usize * 8 + u2 as usize;
            if !seen[k] {
                seen[k] = true;
                todo.push((code, u2));
            }
        }
    }
    true
}

/// Most (lexer state, character position) pairs [`text_closed_at`] visits
/// for a position, and per first byte at the start of the input (where it
/// saves the walk of that byte's tokens only, about 1/100 of the trie).
const TEXT_CLOSED_PAIRS: usize = 4096;
const TEXT_CLOSED_START_PAIRS: usize = 64;

/// True if every text character continues the lexeme in progress at
/// position `(l, x)` (the lexer steps on and `x` can still complete), from
/// `l` (`u0` bytes into a character: see [`crate::vocab::trie::text_step`])
/// and from every state text characters reach: then every token of the
/// text slice is reached with the empty sequence, whatever else it may
/// also lex as (the mask is the union). `false` past `max_pairs`.
fn text_closed_at(cx: StepCtx<'_>, l: u32, x: u32, u0: u8, max_pairs: usize) -> bool {
    use crate::vocab::trie::text_step;
    if x == NO_TARGET || x == cx.newline {
        return false;
    }
    let (lx, xt) = (cx.lexer, crate::ids::TerminalId(x));
    let mut seen: crate::hash::FxMap<usize, u32> = crate::hash::FxMap::default();
    seen.insert(l as usize * 8 + u0 as usize, 0);
    let mut todo = vec![(l, u0)];
    while let Some((s, u)) = todo.pop() {
        for b in 0..=255u8 {
            let Some(u2) = text_step(u, b) else { continue };
            let Some(s2) = lx.cont(LexStateId(s), b).filter(|&s2| lx.can_complete(s2, xt)) else { return false };
            if seen.insert(s2.0 as usize * 8 + u2 as usize, 0).is_none() {
                if seen.len() > max_pairs {
                    return false;
                }
                todo.push((s2.0, u2));
            }
        }
    }
    true
}

/// The bounded case of [`text_closed_at`] (a counted body: `maxLength`,
/// `{m,n}`): `Some(k)` if from position `(l, x)` every string of at most
/// `k` text characters continues the lexeme, no string of `k + 1` does, and
/// the lexeme cannot end anywhere along them (from `l` on). Then the text
/// slice's tokens of at most `k` characters are reached with the empty
/// sequence (the mask is the union, as in [`text_closed_at`]) and its
/// longer tokens are reached by nothing: only the other tokens are walked.
/// `Some(max_k)` when every string of `max_k` characters (longer than every
/// slice token) continues; `None` otherwise, or past `max_pairs` (lexer
/// state, character position) pairs in one character.
///
/// One character on, a state may lead to several (the lexer still tells
/// apart candidates that cannot be `x`, e.g. keys being spelled beside a
/// string value): the answer holds at `l` if it holds at each of them with
/// the same `k - 1`. The answers are kept in `memo` (per `(state, x)`), so
/// the states of one body cost one search in all, not one per count. A path
/// that comes back to one of its states (a string body) continues for ever.
fn text_bounded_at(cx: StepCtx<'_>, l: u32, x: u32, max_pairs: usize, max_k: usize, memo: &mut HashMap<(u32, u32), Option<usize>>) -> Option<usize> {
    if x == NO_TARGET || x == cx.newline {
        return None;
    }
    if let Some(&r) = memo.get(&(l, x)) {
        return r;
    }
    let reps = std::cell::OnceCell::new();
    let mut path = Vec::new();
    let mut budget = BOUNDED_LEVELS;
    bounded_from(cx, l, x, max_pairs, max_k, memo, &reps, &mut path, &mut budget).0
}

/// Most states [`text_bounded_at`] looks at in one call (what is found
/// under an assumption is not kept, so a graph of several states per count
/// with cycles could be searched path by path): past it, `None` (walk it).
const BOUNDED_LEVELS: usize = 512;

/// [`text_bounded_at`] at `s`, `path` the states from the caller's `l` to
/// `s` (excluded): (answer, exact). Not exact (not kept in `memo`, but true
/// at `l`): cut at `max_k` characters from `l`, or found under the
/// assumption that a state of the path continues for ever; or `None` past
/// the budget (kept at `l` only: true there, as `None` means "walk it").
#[allow(clippy::too_many_arguments)]
fn bounded_from(
    cx: StepCtx<'_>,
    s: u32,
    x: u32,
    max_pairs: usize,
    max_k: usize,
    memo: &mut HashMap<(u32, u32), Option<usize>>,
    reps: &std::cell::OnceCell<TextReps>,
    path: &mut Vec<u32>,
    budget: &mut usize,
) -> (Option<usize>, bool) {
    if let Some(&r) = memo.get(&(s, x)) {
        return (r, true);
    }
    if *budget == 0 {
        return (None, false);
    }
    *budget -= 1;
    // Back at a state of the path: every count continues, for ever, if the
    // state's own answer (all its branches) says so; assumed here, so what
    // is found under the assumption is not kept, except at `l`.
    if path.contains(&s) {
        return (Some(max_k), false);
    }
    if path.len() >= max_k {
        return (Some(max_k), false);
    }
    let (r, exact) = match text_level(cx, s, x, max_pairs, reps.get_or_init(|| TextReps::new(cx.lexer))) {
        None => (None, true),
        Some(next) if next.is_empty() => (Some(0), true),
        Some(next) => {
            path.push(s);
            let (mut r, mut exact) = (None, true);
            for (i, &n) in next.iter().enumerate() {
                let (k, e) = bounded_from(cx, n, x, max_pairs, max_k, memo, reps, path, budget);
                exact &= e;
                let k = k.map(|k| (k + 1).min(max_k));
                if k.is_none() || (i > 0 && k != r) {
                    r = None;
                    break;
                }
                r = k;
            }
            path.pop();
            (r, exact)
        }
    };
    if exact || path.is_empty() {
        memo.insert((s, x), r);
    }
    (r, exact)
}

/// Per UTF-8 position `u` (see [`crate::vocab::trie::text_step`]), one
/// byte per distinct (lexer byte class, next position): the bytes whose
/// steps [`text_level`] must take (the others repeat one of them).
struct TextReps([Vec<(u8, u8)>; 8]);

impl TextReps {
    fn new(lx: &crate::lexer::Lexer) -> TextReps {
        use crate::vocab::trie::text_step;
        TextReps(std::array::from_fn(|u| {
            let mut seen = [false; 256 * 8];
            let mut v = Vec::new();
            for b in 0..=255u8 {
                if let Some(u2) = text_step(u as u8, b) {
                    let k = lx.class(b) as usize * 8 + u2 as usize;
                    if !seen[k] {
                        seen[k] = true;
                        v.push((b, u2));
                    }
                }
            }
            v
        }))
    }
}

/// One text character on from lexer state `l` (at a character boundary)
/// with target `x`: the states after it (empty: every text character dies)
/// or `None` if some continue and some die, the lexeme can end on the way
/// (or at `l`), or past `max_pairs` pairs.
fn text_level(cx: StepCtx<'_>, l: u32, x: u32, max_pairs: usize, reps: &TextReps) -> Option<Vec<u32>> {
    let (lx, xt) = (cx.lexer, crate::ids::TerminalId(x));
    let (mut live, mut dead) = (false, false);
    let mut seen: crate::hash::FxMap<usize, u32> = crate::hash::FxMap::default();
    let mut next: Vec<u32> = Vec::new();
    let mut todo: Vec<(u32, u8)> = vec![(l, 0)];
    while let Some((s, u)) = todo.pop() {
        if lx.may_win(LexStateId(s), xt) {
            return None;
        }
        for &(b, u2) in &reps.0[u as usize] {
            let Some(s2) = lx.cont(LexStateId(s), b).filter(|&s2| lx.can_complete(s2, xt)) else {
                dead = true;
                continue;
            };
            live = true;
            if seen.insert(s2.0 as usize * 8 + u2 as usize, 0).is_none() {
                if seen.len() > max_pairs {
                    return None;
                }
                if u2 == 0 {
                    next.push(s2.0);
                } else {
                    todo.push((s2.0, u2));
                }
            }
        }
        if live && dead {
            return None;
        }
    }
    next.sort_unstable();
    Some(next)
}

/// True if `seq` can never be rejected: it holds only indentation events.
pub(crate) fn trivially_legal(grammar: &IncTables, seq: &[u32]) -> bool {
    seq.iter().all(|&s| grammar.events.is_event(s))
}

/// Builds the entry [`Tables`] position by position (all at once for a full
/// compile, on first visit for a lazy store). Equal token sets, sequences,
/// (sequence, set) items and whole entry lists are stored once.
#[derive(Clone, Debug, Default)]
pub(crate) struct Assembler {
    set_ids: HashMap<Vec<u32>, u32>,
    /// Sequence → its range in `seq_pool`.
    seq_ids: HashMap<Vec<u32>, [u32; 2]>,
    item_ids: HashMap<(u32, u32), u32>,
    /// (target or NONE, items) → entry range: positions with equal checked
    /// lists share them (with context verdicts only within one target, as an
    /// entry's verdict index is per target).
    shared: HashMap<(u32, Vec<u32>), (u32, u32)>,
}

impl Assembler {
    /// Empty tables for `nq` positions over a vocabulary of `vocab_len` tokens.
    fn tables(nq: usize, vocab_len: u32) -> Tables {
        Tables {
            q_always: vec![NONE; nq],
            q_entries: vec![0; 2 * nq],
            sets: SetsBuilder::new(vocab_len).finish(),
            ..Default::default()
        }
    }

    /// Store position `q`'s entries (`proven`: tokens streamlining proved legal).
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        t: &mut Tables,
        grammar: &IncTables,
        ctx: &super::streamline::ContextVerdicts,
        q: usize,
        x: u32,
        list: &Entries,
        proven: &[u32],
    ) {
        let has_ctx = !ctx.classes.is_empty();
        let newline = grammar.indent.as_ref().map_or(NONE, |r| r.newline);
        let xseqs = ctx.seqs.get(&x);
        let mut always: Vec<u32> = proven.to_vec();
        let mut items: Vec<u32> = Vec::with_capacity(list.len());
        for (seq, toks) in list {
            if trivially_legal(grammar, seq) {
                always.extend_from_slice(toks);
                continue;
            }
            let set = super::sets::add_dedup(&mut t.sets, &mut self.set_ids, toks);
            let range = *self.seq_ids.entry(seq.clone()).or_insert_with(|| {
                t.seq_pool.extend_from_slice(seq);
                if has_ctx {
                    // The code index of `seq[k+1..]` among the sequences of
                    // `seq[k]` (after an indentation event: of the newline,
                    // since the rest follows a newline).
                    t.ctx.pool_vidx.extend((0..seq.len()).map(|k| {
                        let y = if grammar.events.is_event(seq[k]) { newline } else { seq[k] };
                        let rest = &seq[k + 1..];
                        if rest.is_empty() {
                            return NONE;
                        }
                        ctx.seqs.get(&y).and_then(|m| m.get(rest)).copied().unwrap_or(NONE)
                    }));
                }
                [(t.seq_pool.len() - seq.len()) as u32, t.seq_pool.len() as u32]
            });
            let item = *self.item_ids.entry((range[0], set)).or_insert_with(|| {
                t.item_seq.extend_from_slice(&range);
                t.item_set.push(set);
                t.item_set.len() as u32 - 1
            });
            items.push(item);
        }
        let key = (if xseqs.is_some() { x } else { NONE }, items);
        let range = match self.shared.get(&key) {
            Some(&r) => r,
            None => {
                let lo = t.entry_item.len() as u32;
                for ((seq, _), &item) in list.iter().filter(|(s, _)| !trivially_legal(grammar, s)).zip(&key.1) {
                    if has_ctx {
                        t.ctx.entry_vidx.push(xseqs.and_then(|m| m.get(seq)).copied().unwrap_or(NONE));
                    }
                    t.entry_item.push(item);
                }
                let r = (lo, t.entry_item.len() as u32);
                self.shared.insert(key, r);
                r
            }
        };
        t.q_entries[2 * q] = range.0;
        t.q_entries[2 * q + 1] = range.1;
        always.sort_unstable();
        always.dedup();
        t.q_always[q] = if always.is_empty() { NONE } else { super::sets::add_dedup(&mut t.sets, &mut self.set_ids, &always) };
        t.sync_lcp();
    }
}

/// Turn raw entries into the flat runtime store.
fn assemble(lexer: Lexer, grammar: IncTables, vocab: Rc<Vocab>, info: StoreInfo, raw: RawStore, ctx: &super::streamline::ContextVerdicts) -> MaskStore {
    let nq = raw.q_target.len();
    let mut t = Assembler::tables(nq, vocab.len() as u32);
    let mut asm = Assembler::default();
    for (q, ((list, proven), &x)) in raw.entries.iter().zip(&raw.always).zip(&raw.q_target).enumerate() {
        asm.add(&mut t, &grammar, ctx, q, x, list, proven);
    }
    let (entry_vidx, pool_vidx) = (std::mem::take(&mut t.ctx.entry_vidx), std::mem::take(&mut t.ctx.pool_vidx));
    t.ctx = context_table(&grammar, ctx, entry_vidx, pool_vidx);
    t.sets = super::sets::delta_encode(std::mem::take(&mut t.sets));
    let mut store = MaskStore {
        lexer,
        grammar,
        vocab,
        info,
        q_base: raw.q_base,
        q_target: raw.q_target,
        tables: RefCell::new(t),
        lazy: None,
        specials: Vec::new(),
    };
    store.specials = store.find_specials().unwrap_or_default();
    store
}

/// Position states of a [`Lazy`] store.
const NOT_TRIED: u8 = 0;
const COMPUTED: u8 = 1;
/// Over the first-visit budget: masks computed directly until
/// [`Lazy::prefetch`] computes the entries.
const DEFERRED: u8 = 2;
/// Over the prefetch budget too: masks computed directly for good.
const DIRECT: u8 = 3;

/// Configuration steps a position's token walk may take on its first visit
/// before the mask is computed directly instead (a step: one configuration
/// advanced by one byte, or one it produced).
pub const FIRST_VISIT_BUDGET: u64 = 20_000;
/// Configuration steps a deferred position's walk may take in
/// [`Lazy::prefetch`] (beyond that, its store entries would be too many to
/// be worth keeping: the direct walk, with the parser in the loop, is cheaper).
pub const PREFETCH_BUDGET: u64 = 50_000;

/// A store's way to compute positions on first visit (see
/// [`MaskStore::ensure`]): the token walk of one position, then its raw
/// entries added to the tables. A position's entries equal those of the
/// same grammar's unstreamlined full compile.
///
/// A first visit is bounded: a walk that takes more than
/// `first_visit_budget` configuration steps is abandoned, the position is
/// *deferred*, and the matcher computes masks there directly (the parser in
/// the loop over the token trie, [`super::direct`]) until
/// [`Lazy::prefetch`] (idle time) computes its entries.
#[derive(Clone)]
pub(crate) struct Lazy {
    pv: Rc<PreparedVocab>,
    done: Vec<u8>,
    n_done: usize,
    /// Deferred positions, oldest first (some may be computed since).
    deferred: Vec<QId>,
    pub(super) walker: Walker,
    seqs: SeqInterner,
    asm: Assembler,
    transitions: u64,
    first_visit_budget: u64,
    /// Loop walk (by address; `Tables::insides` keeps it alive) → its index
    /// in `Tables::insides`.
    inside_ids: crate::hash::FxMap<usize, u32>,
}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy").field("computed", &self.n_done).field("positions", &self.done.len()).finish()
    }
}

impl Lazy {
    /// Are `q`'s entries in the tables?
    pub fn has(&self, q: QId) -> bool {
        self.done.get(q as usize).is_none_or(|&d| d == COMPUTED)
    }
    pub fn n_computed(&self) -> usize {
        self.n_done
    }
    /// Deferred positions not computed yet.
    pub fn n_deferred(&self) -> usize {
        self.deferred.iter().filter(|&&q| self.done[q as usize] == DEFERRED).count()
    }
    /// The walker (unbounded) and the prepared vocabulary, for a mask
    /// computed directly (`store::direct`).
    pub(super) fn direct_parts(&mut self) -> (&mut Walker, &PreparedVocab) {
        self.walker.budget = u64::MAX;
        self.walker.over = false;
        (&mut self.walker, &self.pv)
    }
    pub fn set_first_visit_budget(&mut self, steps: u64) {
        self.first_visit_budget = steps;
    }

    /// Compute `q`'s entries on a first visit (bounded, unless `unbounded`).
    /// False if `q` is deferred or direct (its masks are computed directly).
    pub fn visit(&mut self, store: &MaskStore, t: &mut Tables, q: QId, unbounded: bool) -> bool {
        match self.done[q as usize] {
            COMPUTED => true,
            NOT_TRIED => {
                let budget = if unbounded { u64::MAX } else { self.first_visit_budget };
                if self.compute(store, t, q, budget) {
                    return true;
                }
                self.done[q as usize] = DEFERRED;
                self.deferred.push(q);
                false
            }
            _ if unbounded => self.compute(store, t, q, u64::MAX),
            _ => false,
        }
    }

    /// Compute deferred positions' entries, oldest first, while `more_time()`
    /// (asked before each position; one walk is bounded by
    /// [`PREFETCH_BUDGET`]). Returns true if deferred positions remain.
    pub fn prefetch(&mut self, store: &MaskStore, t: &mut Tables, mut more_time: impl FnMut() -> bool) -> bool {
        let mut i = 0;
        while i < self.deferred.len() {
            if !more_time() {
                break;
            }
            let q = self.deferred[i];
            i += 1;
            if self.done[q as usize] == DEFERRED && !self.compute(store, t, q, PREFETCH_BUDGET) {
                self.done[q as usize] = DIRECT;
            }
        }
        // Those before `i` are computed or direct now.
        self.deferred.retain(|&q| self.done[q as usize] == DEFERRED);
        !self.deferred.is_empty()
    }

    /// The token walk of `q` within `budget` steps, its entries added to
    /// the tables; false (nothing added) if the walk ran over.
    fn compute(&mut self, store: &MaskStore, t: &mut Tables, q: QId, budget: u64) -> bool {
        let (l, x) = store.q_parts(q);
        let cx = step_ctx(&store.lexer, &store.grammar);
        let pv = &self.pv;
        let mut lw = |sig: &[u32]| pv.loop_walk(sig, |trie| loop_walk(trie, sig));
        self.walker.budget = budget;
        self.walker.over = false;
        let (list, inside) =
            self.walker.entries_via_loop(cx, pv.trie(), &mut lw, &mut self.seqs, l, x, &mut self.transitions, false);
        self.walker.budget = u64::MAX;
        if self.walker.over {
            self.walker.over = false;
            return false;
        }
        let none = super::streamline::ContextVerdicts::default();
        self.asm.add(t, &store.grammar, &none, q as usize, x, &list, &[]);
        if let Some(lw) = inside.filter(|w| !w.inside.is_empty()) {
            let i = *self.inside_ids.entry(Rc::as_ptr(&lw) as usize).or_insert_with(|| {
                t.insides.push(lw.clone());
                t.insides.len() as u32 - 1
            });
            if t.q_inside.len() <= q as usize {
                t.q_inside.resize(store.n_positions(), NONE);
            }
            t.q_inside[q as usize] = i;
        }
        self.done[q as usize] = COMPUTED;
        self.n_done += 1;
        true
    }
}

/// Pack [`ContextVerdicts`](super::streamline::ContextVerdicts) into the
/// runtime table (empty when there are no classes).
fn context_table(grammar: &IncTables, ctx: &super::streamline::ContextVerdicts, entry_vidx: Vec<u32>, pool_vidx: Vec<u32>) -> super::ContextTable {
    if ctx.classes.is_empty() {
        return super::ContextTable::default();
    }
    let ns = grammar.tables.n_states() as usize;
    let mut t = super::ContextTable { entry_vidx, pool_vidx, ..Default::default() };
    t.ctx_off = vec![0; ns + 1];
    for &(s, _, _) in &ctx.contexts {
        t.ctx_off[s as usize + 1] += 1;
    }
    for i in 0..ns {
        t.ctx_off[i + 1] += t.ctx_off[i];
    }
    // `contexts` is sorted by (top, below).
    t.ctx_pred = ctx.contexts.iter().map(|c| c.1).collect();
    t.ctx_class = ctx.contexts.iter().map(|c| c.2).collect();
    t.class_off.push(0);
    let mut n = 0usize;
    for (x, codes) in &ctx.classes {
        t.class_target.push(*x);
        for &c in codes {
            if n % 16 == 0 {
                t.bits.push(0);
            }
            *t.bits.last_mut().unwrap() |= (c as u32) << (2 * (n % 16));
            n += 1;
        }
        t.class_off.push(n as u32);
    }
    t
}

#[cfg(test)]
mod loop_tests {
    use super::*;

    /// Heights in the initial partition change no minimal loop: random loop
    /// tables (chains, cycles, exits and dead codes mixed) minimise to the
    /// same rows with and without them, and a counted chain is found
    /// minimal with them.
    #[test]
    fn heights_change_no_minimal_loop() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config { cases: 2000, ..Config::default() });
        let table = (1usize..24, 1usize..5).prop_flat_map(|(ns, nc)| {
            let code = prop_oneof![3 => 0..ns as u32, 1 => Just(LOOP_EXIT), 1 => Just(LOOP_DEAD)];
            (Just(ns), Just(nc), proptest::collection::vec(code, ns * nc))
        });
        runner
            .run(&table, |(ns, nc, rows)| {
                let all: Vec<usize> = (0..nc).collect();
                prop_assert_eq!(minimise_loop(&rows, ns, nc, &loop_heights(&rows, ns, &all, nc)), minimise_loop(&rows, ns, nc, &vec![0; ns]));
                Ok(())
            })
            .unwrap();
        // A body of at most 200 characters (class 0: a character, class 1:
        // the closing quote): state i reads one more character up to 200.
        let n = 201;
        let mut rows = Vec::new();
        for i in 0..n {
            rows.extend([if i + 1 < n { i as u32 + 1 } else { LOOP_DEAD }, LOOP_EXIT]);
        }
        let heights = loop_heights(&rows, n, &[0, 1], 2);
        assert_eq!(heights[0], 200);
        assert_eq!(minimise_loop(&rows, n, 2, &heights), None);
    }

    /// Every position that has a lexeme loop: its entries through the loop
    /// (the minimal loop's cached walk, each exit walked from the lexer state
    /// replayed along its path) equal those of the plain trie walk, with the
    /// real Llama-3 vocabulary, over the schemas of tests/data/schemas and
    /// schemas with bounded strings (`maxLength`, `{m,n}` in patterns) and
    /// objects whose free keys must avoid the declared ones (the loops that
    /// minimising merges most).
    #[test]
    fn loop_walks_equal_plain_walks() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let vocab = crate::vocab::load::load_tokenizer_file(&root.join("models/llama3/tokenizer.json"), None).unwrap();
        let pv = Rc::new(PreparedVocab::new(vocab));
        let mut schemas: Vec<serde_json::Value> = Vec::new();
        let mut names: Vec<_> = std::fs::read_dir(root.join("tests/data/schemas")).unwrap().map(|e| e.unwrap().path()).collect();
        names.sort();
        for p in names {
            schemas.push(serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap());
        }
        schemas.extend([
            serde_json::json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 7}, "nick": {"type": "string", "minLength": 2, "maxLength": 40}, "bio": {"type": "string", "maxLength": 300}}, "additionalProperties": {"type": "string", "format": "uri"}}),
            serde_json::json!({"type": "object", "properties": {"php": {"type": "string"}, "phpunit": {"type": "string", "pattern": "^[0-9]{1,3}\\.[a-z]{2,12}$"}, "ext-json": {"type": "integer"}}, "additionalProperties": {"type": "string"}}),
            serde_json::json!({"type": "array", "items": {"type": "string", "pattern": "^[A-Za-zé_-]{3,20}$"}, "maxItems": 3}),
        ]);
        let opts = crate::constraint::ConstraintOptions::default();
        let trie = pv.trie();
        let (mut looped, mut merged, mut cut, mut sliced) = (0usize, 0usize, 0usize, 0usize);
        for schema in schemas {
            let (cfg, _) = crate::constraint::to_cfg(&crate::constraint::Constraint::JsonSchema(schema), &opts).unwrap();
            let (store, _) = compile_lazy(&cfg, pv.clone()).unwrap();
            let cx = step_ctx(&store.lexer, &store.grammar);
            let mut w = Walker::default();
            let mut seqs = SeqInterner::new();
            let mut n = 0;
            for q in 0..store.n_positions() {
                let (l, x) = store.q_parts(q as QId);
                let Some(sig) = lexeme_loop(cx, l, x, trie) else { continue };
                n += 1;
                if n > 60 {
                    break;
                }
                looped += 1;
                cut += usize::from(sig[SIG_HEADER - 1] != 0);
                let closed = text_closed(sig[0] as usize, &sig[1..SIG_HEADER - 1], &sig[SIG_HEADER..]);
                sliced += usize::from(sig[SIG_HEADER - 1] == 0 && closed);
                let states = (sig.len() - SIG_HEADER) / sig[0] as usize;
                let plain_states = {
                    let mut seen = crate::hash::FxSet::from_iter([l]);
                    let mut todo = vec![LexStateId(l)];
                    let xt = crate::ids::TerminalId(x);
                    while let Some(s) = todo.pop() {
                        for b in 0..=255u8 {
                            if let Some(l2) = store.lexer.cont(s, b).filter(|&l2| store.lexer.can_complete(l2, xt) && !store.lexer.may_win(l2, xt)) {
                                if seen.insert(l2.0) {
                                    todo.push(l2);
                                }
                            }
                        }
                    }
                    seen.len()
                };
                merged += usize::from(states < plain_states);
                let (a, mut b) = walked_and_plain(&mut w, &mut seqs, &pv, cx, l, x);
                super::super::streamline::merge(&mut b);
                assert!(!w.over);
                assert_eq!(a, b, "position ({l}, {x}): loop walk and plain walk differ");
            }
        }
        eprintln!("{looped} loop positions compared, {merged} with merged loop states, {cut} cut, {sliced} through the text slice");
        assert!(
            looped > 200 && merged > 20 && cut > 20 && sliced > 20,
            "{looped} loop positions, {merged} merged, {cut} cut, {sliced} sliced"
        );
    }

    /// Position `(l, x)`'s entries as the store walks them (loops and the
    /// text slice joined) and by the plain walk over the whole trie.
    fn walked_and_plain(
        w: &mut Walker,
        seqs: &mut SeqInterner,
        pv: &PreparedVocab,
        cx: StepCtx<'_>,
        l: u32,
        x: u32,
    ) -> (Entries, Entries) {
        let trie = pv.trie();
        let mut lw = |sig: &[u32]| pv.loop_walk(sig, |trie| loop_walk(trie, sig));
        let a = w.entries_via_loop(cx, trie, &mut lw, seqs, l, x, &mut 0, true).0;
        let mut sink = Collect { seqs, out: HashMap::default(), transitions: 0 };
        w.arena.clear();
        w.arena.push((l, x, 0));
        w.walk_range(cx, trie, 1, trie.node_count(), &mut sink);
        let Collect { seqs: s2, out, .. } = sink;
        (a, w.finish(cx, s2, out, None))
    }

    /// A position whose lexeme every text character continues (free text,
    /// comments; not a lexeme loop) walks only the tokens outside the text
    /// slice: each slice token is reached with the empty sequence, as the
    /// plain walk finds too, and every other token keeps exactly the plain
    /// walk's sequences.
    #[test]
    fn text_closed_positions_equal_plain_walks() {
        let pv = llama3();
        let trie = pv.trie();
        let slice = trie.text_slice();
        let in_slice = |t: u32| slice.inside.get(t as usize / 32).is_some_and(|w| w >> (t % 32) & 1 == 1);
        let grammars = [
            "start: TEXT? CALL*\nCALL: \"<call>\" /[0-9]+/ \"</call>\"\nTEXT: /(?s:.)+/\n",
            "start: (WORD | COMMENT)+\nWORD: /[a-z]+/\nCOMMENT: /#[^\\n]*/\n%ignore /[ \\n]+/\n",
            "start: \"say:\" LINE\nLINE: /[^\\n]+/ \"\\n\"?\n",
            "start: TEXT? CALL?\nCALL: \"<call>\" /[0-9]+/\nTEXT: /[^<]+/\n%ignore \"  \"\n",
        ];
        let (mut compared, mut starts) = (0, 0);
        for g in grammars {
            let c = crate::constraint::Constraint::Lark { grammar: g.into(), file: "t.lark".into(), start: None };
            let (cfg, _) = crate::constraint::to_cfg(&c, &Default::default()).unwrap();
            let (store, _) = compile_lazy(&cfg, pv.clone()).unwrap();
            let cx = step_ctx(&store.lexer, &store.grammar);
            for q in 0..store.n_positions() {
                let (l, x) = store.q_parts(q as QId);
                let start = x == walk::NO_TARGET;
                if !start && (lexeme_loop(cx, l, x, trie).is_some() || !text_closed_at(cx, l, x, 0, TEXT_CLOSED_PAIRS)) {
                    continue;
                }
                starts += usize::from(start);
                compared += 1;
                let (a, b) = walked_and_plain(&mut Walker::default(), &mut SeqInterner::new(), &pv, cx, l, x);
                sliced_equals_plain(&a, &b, &in_slice, l, x);
            }
        }
        assert!(compared >= 6 && starts == 4, "{compared} text-closed positions compared, {starts} starts");
    }

    /// The Llama-3 vocabulary, prepared.
    fn llama3() -> Rc<PreparedVocab> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let vocab = crate::vocab::load::load_tokenizer_file(&root.join("models/llama3/tokenizer.json"), None).unwrap();
        Rc::new(PreparedVocab::new(vocab))
    }

    /// Per token, its sequences: equal outside the slice; for a slice
    /// token, the sliced walk's (`a`) are among the plain walk's (`b`) and
    /// each of those extends one of them (the same mask, as viability is
    /// prefix-closed).
    fn sliced_equals_plain(a: &Entries, b: &Entries, in_slice: &dyn Fn(u32) -> bool, l: u32, x: u32) {
        let by_token = |list: &Entries| {
            let mut m: std::collections::BTreeMap<u32, Vec<Vec<u32>>> = Default::default();
            for (seq, toks) in list {
                for &t in toks {
                    m.entry(t).or_default().push(seq.clone());
                }
            }
            m
        };
        let (ma, mb) = (by_token(a), by_token(b));
        assert_eq!(ma.len(), mb.len(), "position ({l}, {x}): different tokens reached");
        for (t, sa) in &ma {
            let sb = &mb[t];
            if !in_slice(*t) {
                assert_eq!(sa, sb, "position ({l}, {x}), token {t}");
                continue;
            }
            assert!(sa.iter().all(|q| sb.contains(q)), "position ({l}, {x}), token {t}: {sa:?} vs {sb:?}");
            assert!(sb.iter().all(|q| sa.iter().any(|p| q.starts_with(p))), "position ({l}, {x}), token {t}: {sa:?} vs {sb:?}");
        }
    }

    /// A position inside a counted body (`maxLength`, `{m,n}`) whose lexeme
    /// takes up to k more text characters and no more walks only the tokens
    /// outside the text slice: the slice's tokens of at most k characters
    /// are reached with the empty sequence, as the plain walk finds too,
    /// its longer tokens by nothing, and every other token keeps exactly
    /// the plain walk's sequences.
    #[test]
    fn text_bounded_positions_equal_plain_walks() {
        let pv = llama3();
        let trie = pv.trie();
        let slice = trie.text_slice();
        let in_slice = |t: u32| slice.inside.get(t as usize / 32).is_some_and(|w| w >> (t % 32) & 1 == 1);
        let schema = serde_json::json!({"type": "object", "properties": {
            "a": {"type": "string", "maxLength": 24}, "b": {"type": "string", "minLength": 2, "maxLength": 4},
            "c": {"type": "string", "maxLength": 200}, "d": {"type": "string"},
            // Keys being spelled beside a string value: one character on, the
            // lexer still tells "n..." (the keys) from other characters apart.
            "name": {"type": "string", "maxLength": 30}, "nation": {"type": "string", "minLength": 3, "maxLength": 9}},
            "required": ["a", "b", "c", "d"]});
        let constraints = [
            crate::constraint::Constraint::JsonSchema(schema),
            crate::constraint::Constraint::Lark { grammar: "start: S \"!\"\nS: /<[^<>]{0,12}>/\n".into(), file: "t.lark".into(), start: None },
        ];
        let (mut compared, mut zero, mut mid, mut all) = (0, 0, 0, 0);
        for c in constraints {
            let (cfg, _) = crate::constraint::to_cfg(&c, &Default::default()).unwrap();
            let (store, _) = compile_lazy(&cfg, pv.clone()).unwrap();
            let cx = step_ctx(&store.lexer, &store.grammar);
            let mut bounded_memo = HashMap::default();
            // One walker per store, as the store has: its bounded walks are
            // derived from each other (see `Walker::bounded_walk`).
            let mut walker = Walker::default();
            for q in 0..store.n_positions() {
                let (l, x) = store.q_parts(q as QId);
                let fresh = text_bounded_at(cx, l, x, TEXT_CLOSED_PAIRS, slice.by_chars.len(), &mut HashMap::default());
                let memo = text_bounded_at(cx, l, x, TEXT_CLOSED_PAIRS, slice.by_chars.len(), &mut bounded_memo);
                // (`None` only means "walk it": a search that gives up may be decided through the memo.)
                assert!(memo == fresh || memo.is_none() || fresh.is_none(), "position ({l}, {x}): the memo's answer differs: {memo:?} vs {fresh:?}");
                let Some(k) = fresh else { continue };
                // The long body's counts past the short ones: a sample (plain walks are slow).
                if (k > 24 && k % 16 != 0 && k != slice.by_chars.len()) || (k == slice.by_chars.len() && all >= 3) || (k == 0 && zero >= 40) {
                    continue;
                }
                compared += 1;
                zero += usize::from(k == 0);
                mid += usize::from((1..=24).contains(&k));
                all += usize::from(k == slice.by_chars.len());
                let (a, b) = walked_and_plain(&mut walker, &mut SeqInterner::new(), &pv, cx, l, x);
                sliced_equals_plain(&a, &b, &in_slice, l, x);
            }
        }
        let counts = format!("{compared} bounded positions compared: {zero} with k = 0, {mid} with k in 1..=24, {all} with every slice token");
        eprintln!("{counts}");
        assert!(zero >= 3 && mid >= 30 && all >= 1, "{counts}");
    }
}
