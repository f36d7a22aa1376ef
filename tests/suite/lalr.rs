//! LALR(1) construction and the incremental parser, checked against an
//! Earley prefix recognizer on hand-written and random grammars.
#![cfg(feature = "compiler")]

use grammask::grammar::{Cfg, NonterminalDef, Rule, Span, Symbol, TerminalDef, TerminalPattern};
use grammask::ids::{NonterminalId, TerminalId};
use grammask::parser::lalr::build_tables;
use grammask::parser::{LrParser, LrTables};
use grammask::ErrorKind;

// ---------------------------------------------------------------- helpers

/// A tiny BNF: one rule per line, `name: alt | alt`, UPPERCASE names are
/// terminals, lowercase are nonterminals, an empty alternative is ε. The
/// first rule's lhs is the start symbol.
fn bnf(src: &str) -> Cfg {
    let mut cfg = Cfg { terminals: vec![], nonterminals: vec![], rules: vec![], start: NonterminalId(0), indent: None, lexer: grammask::grammar::LexerMode::Longest, conflicts: Default::default() };
    let span = |line: usize| Span { file: "test.bnf".into(), line: line as u32 + 1, col: 1 };
    fn nt(cfg: &mut Cfg, name: &str, span: Span) -> NonterminalId {
        cfg.nonterminal_by_name(name).unwrap_or_else(|| {
            cfg.nonterminals.push(NonterminalDef { name: name.into(), span });
            NonterminalId::new(cfg.nonterminals.len() - 1)
        })
    }
    for (ln, line) in src.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (lhs, alts) = line.split_once(':').expect("rule needs ':'");
        let lhs = nt(&mut cfg, lhs.trim(), span(ln));
        cfg.nonterminals[lhs.index()].span = span(ln);
        for alt in alts.split('|') {
            let mut rhs = vec![];
            for w in alt.split_whitespace() {
                if w.chars().next().unwrap().is_uppercase() {
                    let t = cfg.terminal_by_name(w).unwrap_or_else(|| {
                        cfg.terminals.push(TerminalDef {
                            name: w.into(),
                            pattern: TerminalPattern::Literal { text: w.into(), case_insensitive: false, regex: w.into() },
                            priority: 0,
                            ignored: false,
                            span: span(ln),
                            lark: None,
                        });
                        TerminalId::new(cfg.terminals.len() - 1)
                    });
                    rhs.push(Symbol::T(t));
                } else {
                    rhs.push(Symbol::N(nt(&mut cfg, w, span(ln))));
                }
            }
            cfg.rules.push(Rule::new(lhs, rhs, span(ln)));
        }
    }
    cfg
}

fn terms(cfg: &Cfg, s: &str) -> Vec<TerminalId> {
    s.split_whitespace().map(|w| cfg.terminal_by_name(w).unwrap()).collect()
}

/// An Earley recognizer that extends one terminal at a time. With every
/// nonterminal productive, a nonempty set after `w` means `w` is a prefix of
/// some sentence.
struct Earley<'a> {
    cfg: &'a Cfg,
    /// sets[j] = items (rule, dot, origin); rule == cfg.rules.len() is `S' -> start`.
    sets: Vec<Vec<(usize, usize, usize)>>,
}

impl<'a> Earley<'a> {
    fn new(cfg: &'a Cfg) -> Self {
        let mut e = Earley { cfg, sets: vec![vec![(cfg.rules.len(), 0, 0)]] };
        e.close(0);
        e
    }
    fn rhs(&self, r: usize) -> Vec<Symbol> {
        if r == self.cfg.rules.len() {
            vec![Symbol::N(self.cfg.start)]
        } else {
            self.cfg.rules[r].rhs.clone()
        }
    }
    fn lhs(&self, r: usize) -> Option<NonterminalId> {
        self.cfg.rules.get(r).map(|x| x.lhs)
    }
    fn add(&mut self, j: usize, it: (usize, usize, usize)) -> bool {
        if self.sets[j].contains(&it) {
            false
        } else {
            self.sets[j].push(it);
            true
        }
    }
    fn close(&mut self, j: usize) {
        loop {
            let mut changed = false;
            let items = self.sets[j].clone();
            for &(r, d, o) in &items {
                match self.rhs(r).get(d) {
                    Some(Symbol::N(b)) => {
                        for (r2, rule) in self.cfg.rules.iter().enumerate() {
                            if rule.lhs == *b {
                                changed |= self.add(j, (r2, 0, j));
                            }
                        }
                    }
                    Some(Symbol::T(_)) => {}
                    None => {
                        let Some(a) = self.lhs(r) else { continue };
                        for (r2, d2, o2) in self.sets[o].clone() {
                            if self.rhs(r2).get(d2) == Some(&Symbol::N(a)) {
                                changed |= self.add(j, (r2, d2 + 1, o2));
                            }
                        }
                    }
                }
            }
            if !changed {
                return;
            }
        }
    }
    /// Pushes the set after `t`; returns whether it is nonempty.
    fn push(&mut self, t: TerminalId) -> bool {
        let j = self.sets.len() - 1;
        let next: Vec<_> = self.sets[j]
            .iter()
            .filter(|&&(r, d, _)| self.rhs(r).get(d) == Some(&Symbol::T(t)))
            .map(|&(r, d, o)| (r, d + 1, o))
            .collect();
        self.sets.push(next);
        self.close(j + 1);
        !self.sets[j + 1].is_empty()
    }
    fn pop(&mut self) {
        self.sets.pop();
    }
    fn is_sentence(&self) -> bool {
        self.sets.last().unwrap().contains(&(self.cfg.rules.len(), 1, 0))
    }
}

fn is_prefix(cfg: &Cfg, w: &[TerminalId]) -> bool {
    let mut e = Earley::new(cfg);
    w.iter().all(|&t| e.push(t))
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Walks every word up to `max_len` that is a prefix of the language
/// (plus one dead terminal at each node), checking the parser against
/// Earley. Returns the number of words checked.
fn check_exhaustive(cfg: &Cfg, t: &LrTables, max_len: usize, rng: &mut Rng) -> usize {
    let root = LrParser::new(t);
    let mut e = Earley::new(cfg);
    let mut word = vec![];
    let mut count = 0;
    walk(cfg, t, &root, &root, &mut e, &mut word, max_len, rng, &mut count);
    count
}

#[allow(clippy::too_many_arguments)]
fn walk(
    cfg: &Cfg,
    t: &LrTables,
    root: &LrParser,
    here: &LrParser,
    e: &mut Earley,
    word: &mut Vec<TerminalId>,
    max_len: usize,
    rng: &mut Rng,
    count: &mut usize,
) {
    let ctx = |word: &[TerminalId]| format!("grammar {:?}\nword {:?}", cfg.rules.iter().map(|r| &r.rhs).collect::<Vec<_>>(), word);
    assert!(root.accepts(t, word), "root.accepts(w) for a prefix w\n{}", ctx(word));
    assert_eq!(here.accepts_eof(t), e.is_sentence(), "accepts_eof\n{}", ctx(word));
    assert_eq!(root.accepts_prefix_then(t, word, &[t.eof()]), e.is_sentence(), "accepts(w $END)\n{}", ctx(word));
    let mut expected = vec![];
    for x in 0..cfg.terminals.len() {
        let x = TerminalId::new(x);
        *count += 1;
        let ok = e.push(x);
        assert_eq!(here.accepts(t, &[x]), ok, "accepts after consume, terminal {x:?}\n{}", ctx(word));
        word.push(x);
        assert_eq!(root.accepts(t, word), ok, "root.accepts(w x), x = {x:?}\n{}", ctx(word));
        let k = rng.below(word.len() + 1);
        assert_eq!(root.accepts_prefix_then(t, &word[..k], &word[k..]), ok, "accepts_prefix_then split {k}\n{}", ctx(word));
        if ok {
            expected.push(x);
            if word.len() <= max_len {
                let mut next = here.clone();
                let (depth, states): (usize, Vec<_>) = (here.depth(), here.states().collect());
                next.consume(t, &[x]).unwrap();
                assert_eq!((here.depth(), here.states().collect::<Vec<_>>()), (depth, states), "clone-then-consume changed the original");
                walk(cfg, t, root, &next, e, word, max_len, rng, count);
            }
        } else {
            let mut bad = here.clone();
            let err = bad.consume(t, &[x]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Parse);
            assert_eq!(bad.states().collect::<Vec<_>>(), here.states().collect::<Vec<_>>(), "failed consume changed the parser");
        }
        word.pop();
        e.pop();
    }
    if e.is_sentence() {
        expected.push(t.eof());
    }
    assert_eq!(here.expected(t), expected, "expected()\n{}", ctx(word));
}

// ---------------------------------------------------------------- grammars

const EXPR: &str = "
e: e PLUS t | t
t: t STAR f | f
f: LP e RP | ID
";

#[test]
fn expression_grammar() {
    let cfg = bnf(EXPR);
    let t = build_tables(&cfg).unwrap();
    assert_eq!(t.n_terminals() as usize, cfg.terminals.len() + 1);
    assert_eq!(t.eof(), TerminalId::new(cfg.terminals.len()));
    let p = LrParser::new(&t);
    assert!(p.accepts(&t, &terms(&cfg, "ID PLUS LP ID STAR ID RP")));
    assert!(!p.accepts(&t, &terms(&cfg, "ID PLUS RP")));
    assert!(!p.accepts_eof(&t));
    let mut q = p.clone();
    q.consume(&t, &terms(&cfg, "LP ID PLUS ID")).unwrap();
    assert!(!q.accepts_eof(&t));
    assert!(q.accepts(&t, &terms(&cfg, "RP STAR ID")));
    let e = q.consume(&t, &terms(&cfg, "RP RP")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Parse);
    assert!(q.accepts(&t, &terms(&cfg, "RP")), "failed consume must leave the parser unchanged");
    let n = check_exhaustive(&cfg, &t, 7, &mut Rng(7));
    assert!(n > 1000, "{n}");
}

#[test]
fn anbn() {
    let cfg = bnf("s: A s B |");
    let t = build_tables(&cfg).unwrap();
    let p = LrParser::new(&t);
    assert!(p.accepts_eof(&t));
    for n in 0..12 {
        for m in 0..14 {
            let mut w = terms(&cfg, &"A ".repeat(n));
            w.extend(terms(&cfg, &"B ".repeat(m)));
            assert_eq!(p.accepts(&t, &w), m <= n, "a^{n} b^{m}");
            assert_eq!(p.accepts_prefix_then(&t, &w, &[t.eof()]), m == n, "a^{n} b^{m} $END");
            let mut q = p.clone();
            assert_eq!(q.consume(&t, &w).is_ok(), m <= n);
            if m <= n {
                assert_eq!(q.accepts_eof(&t), m == n);
            }
        }
    }
    check_exhaustive(&cfg, &t, 9, &mut Rng(3));
}

#[test]
fn epsilon_rules_and_recursion() {
    // Left recursion (list), right recursion (tail), nested ε.
    let cfg = bnf(
        "
prog: list
list: list item |
item: ID args SEMI | LB list RB
args: LP opt RP |
opt: ID tail |
tail: COMMA ID tail |
",
    );
    let t = build_tables(&cfg).unwrap();
    check_exhaustive(&cfg, &t, 5, &mut Rng(11));
    let p = LrParser::new(&t);
    let deep = "LB ".repeat(200) + "ID LP ID COMMA ID RP SEMI" + &" RB".repeat(200);
    let w = terms(&cfg, &deep);
    assert!(p.accepts_prefix_then(&t, &w, &[t.eof()]), "deep nesting overflows the overlay");
    let mut q = p.clone();
    q.consume(&t, &w).unwrap();
    assert!(q.accepts_eof(&t));
    assert_eq!(p.depth(), 1);
}

#[test]
fn lalr_but_not_slr() {
    let cfg = bnf(
        "
s: l EQ r | r
l: STAR r | ID
r: l
",
    );
    let t = build_tables(&cfg).unwrap();
    check_exhaustive(&cfg, &t, 6, &mut Rng(5));
}

#[test]
fn dangling_else_conflict() {
    let cfg = bnf(
        "
stmt: IF expr THEN stmt | IF expr THEN stmt ELSE stmt | OTHER
expr: ID
",
    );
    let e = build_tables(&cfg).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    let m = e.message();
    assert!(m.contains("shift/reduce conflict on terminal ELSE in state"), "{m}");
    assert!(m.contains("shift (stmt: IF expr THEN stmt . ELSE stmt, test.bnf:2:1)"), "{m}");
    assert!(m.contains("vs reduce (stmt: IF expr THEN stmt, test.bnf:2:1)"), "{m}");
    assert!(m.contains("1 conflict(s)"), "{m}");
}

#[test]
fn reduce_reduce_conflicts() {
    let cfg = bnf(
        "
s: a X | b X
a: ID
b: ID
",
    );
    let e = build_tables(&cfg).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.message().contains("reduce/reduce conflict on terminal X"), "{}", e.message());
    assert!(e.message().contains("reduce (a: ID, test.bnf:3:1) vs reduce (b: ID, test.bnf:4:1)"), "{}", e.message());

    // LR(1) but not LALR(1): merging the two `X .` states conflicts.
    let cfg = bnf(
        "
s: A e C | A f D | B f C | B e D
e: X
f: X
",
    );
    let e = build_tables(&cfg).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.message().contains("2 conflict(s)"), "{}", e.message());

    // Ambiguous ε: both on $END.
    let e = build_tables(&bnf("s: a | b\na:\nb:")).unwrap_err();
    assert!(e.message().contains("reduce/reduce conflict on terminal $END"), "{}", e.message());
}

#[test]
fn many_conflicts_are_capped() {
    let mut src = String::from("s: e\ne: ID");
    for i in 0..30 {
        src.push_str(&format!(" | e OP{i} e"));
    }
    let e = build_tables(&bnf(&src)).unwrap_err();
    let m = e.message();
    assert_eq!(m.lines().count(), 1 + 20 + 1, "{m}");
    assert!(m.contains("... and"), "{m}");
}

#[test]
fn unproductive_and_malformed_grammars_are_errors() {
    let e = build_tables(&bnf("s: A | B u\nu: C u")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Grammar);
    assert!(e.message().contains("u (test.bnf:2:1)"), "{}", e.message());
    // Unreachable junk is fine.
    build_tables(&bnf("s: A\nu: C u")).unwrap();

    let mut cfg = bnf("s: A");
    cfg.rules[0].rhs.push(Symbol::T(TerminalId(5)));
    assert_eq!(build_tables(&cfg).unwrap_err().kind(), ErrorKind::Grammar);
    let mut cfg = bnf("s: A");
    cfg.rules[0].rhs.push(Symbol::N(NonterminalId(5)));
    assert_eq!(build_tables(&cfg).unwrap_err().kind(), ErrorKind::Grammar);
    let mut cfg = bnf("s: A");
    cfg.start = NonterminalId(3);
    assert_eq!(build_tables(&cfg).unwrap_err().kind(), ErrorKind::Grammar);
}

#[test]
fn out_of_range_terminals_are_rejected() {
    let cfg = bnf(EXPR);
    let t = build_tables(&cfg).unwrap();
    let mut p = LrParser::new(&t);
    let bad = TerminalId(t.n_terminals());
    assert!(!p.accepts(&t, &[bad]));
    assert!(p.consume(&t, &[bad]).is_err());
    assert!(p.consume(&t, &[t.eof()]).is_err());
    assert!(!p.accepts(&t, &[TerminalId(u32::MAX)]));
}

#[test]
fn tables_roundtrip_through_parts() {
    let t = build_tables(&bnf(EXPR)).unwrap();
    assert_eq!(LrTables::from_parts(t.to_parts()).unwrap(), t);
    // Corrupt each shift target/reduce rule/goto in turn: always an error, never a panic.
    let parts = t.to_parts();
    for i in 0..parts.action.len() {
        if parts.action[i] == 0 {
            continue;
        }
        let mut p = parts.clone();
        p.action[i] |= 0xffff_0000;
        assert!(LrTables::from_parts(p).is_err());
    }
    for i in 0..parts.goto_.len() {
        let mut p = parts.clone();
        p.goto_[i] = parts.n_states;
        assert!(LrTables::from_parts(p).is_err());
    }
}

/// A random grammar whose reachable nonterminals are all productive (the
/// others are rejected by `build_tables`, which we check too).
fn random_grammar(rng: &mut Rng) -> Cfg {
    let n_t = 1 + rng.below(3);
    let n_n = 1 + rng.below(4);
    let mut src = String::new();
    for a in 0..n_n {
        src.push_str(&format!("n{a}:"));
        let n_alts = 1 + rng.below(3);
        for k in 0..n_alts {
            if k > 0 {
                src.push_str(" |");
            }
            let len = if rng.below(5) == 0 { 0 } else { 1 + rng.below(3) };
            for _ in 0..len {
                if rng.below(2) == 0 {
                    src.push_str(&format!(" T{}", rng.below(n_t)));
                } else {
                    src.push_str(&format!(" n{}", rng.below(n_n)));
                }
            }
        }
        src.push('\n');
    }
    bnf(&src)
}

fn all_productive(cfg: &Cfg) -> bool {
    let mut prod = vec![false; cfg.nonterminals.len()];
    loop {
        let mut changed = false;
        for r in &cfg.rules {
            if !prod[r.lhs.index()] && r.rhs.iter().all(|s| matches!(s, Symbol::T(_)) || matches!(s, Symbol::N(n) if prod[n.index()])) {
                prod[r.lhs.index()] = true;
                changed = true;
            }
        }
        if !changed {
            return prod.iter().all(|&x| x);
        }
    }
}

#[test]
fn random_grammars_match_earley() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut conflicts, mut unproductive, mut words) = (0, 0, 0, 0);
    for _ in 0..10_000 {
        let cfg = random_grammar(&mut rng);
        match build_tables(&cfg) {
            Ok(t) => {
                words += check_exhaustive(&cfg, &t, 6, &mut rng);
                // Random longer words, mostly dead, against Earley.
                let p = LrParser::new(&t);
                for _ in 0..if cfg.terminals.is_empty() { 0 } else { 20 } {
                    let w: Vec<_> = (0..rng.below(10)).map(|_| TerminalId::new(rng.below(cfg.terminals.len()))).collect();
                    assert_eq!(p.accepts(&t, &w), is_prefix(&cfg, &w), "{w:?}");
                }
                ok += 1;
            }
            Err(e) if e.kind() == ErrorKind::Conflict => conflicts += 1,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Grammar, "{e:?}");
                assert!(!all_productive(&cfg), "rejected a productive grammar: {e:?}");
                unproductive += 1;
            }
        }
    }
    eprintln!("random grammars: {ok} LALR(1), {conflicts} with conflicts, {unproductive} unproductive; {words} words checked");
    assert!(ok > 2500 && conflicts > 1000 && unproductive > 1000 && words > 30_000, "{ok} {conflicts} {unproductive}");
}

/// A synthetic large grammar: `levels` binary-operator precedence levels
/// (each with its own operator, left- or right-associative), postfix calls
/// with argument lists, a statement layer with blocks and if/else-with-end.
fn big_grammar(levels: usize) -> Cfg {
    let mut s = String::from("file: stmts\nstmts: stmts stmt |\nstmt: e0 SEMI | IF e0 block elifs else_ END | WHILE e0 block END | LB stmts RB | DEF ID LP params RP block END\nelifs: elifs ELIF e0 block |\nelse_: ELSE block |\nblock: COLON stmts\nparams: ID | params COMMA ID |\n");
    for i in 0..levels {
        let next = if i + 1 == levels { "postfix".to_string() } else { format!("e{}", i + 1) };
        if i % 2 == 0 {
            s.push_str(&format!("e{i}: e{i} OP{i} {next} | {next} | e{i} ALT{i} opt{i} {next}\nopt{i}: OPT{i} |\n"));
        } else {
            s.push_str(&format!("e{i}: {next} OP{i} e{i} | {next} | NEG{i} e{i}\n"));
        }
    }
    s.push_str("postfix: postfix LP args RP | postfix DOT ID | postfix LSQ e0 RSQ | atom\nargs: e0 | args COMMA e0 |\natom: ID | NUM | LP e0 RP | LSQ args RSQ\n");
    bnf(&s)
}

#[test]
fn big_grammar_builds() {
    let cfg = big_grammar(100);
    let start = std::time::Instant::now();
    let t = build_tables(&cfg).unwrap();
    eprintln!(
        "big grammar: {} nonterminals, {} rules, {} terminals, {} states in {:?}",
        cfg.nonterminals.len(),
        cfg.rules.len(),
        t.n_terminals(),
        t.n_states(),
        start.elapsed()
    );
    let p = LrParser::new(&t);
    let w = terms(&cfg, "IF ID OP0 NUM OP1 ID LP ID COMMA NUM RP COLON ID DOT ID SEMI ELSE COLON END");
    assert!(p.accepts_prefix_then(&t, &w, &[t.eof()]));
    assert!(!p.accepts(&t, &terms(&cfg, "IF ID OP0 OP0")));
}

/// `cargo test --release --test suite -- --ignored --nocapture lalr::bench`
#[test]
#[ignore = "a measurement (ns per call): --ignored --nocapture lalr::bench"]
fn bench_accepts() {
    let cfg = bnf(EXPR);
    let t = build_tables(&cfg).unwrap();
    let input = terms(&cfg, "ID PLUS LP ID STAR LP ID PLUS ID RP RP STAR ID");
    let parsers: Vec<LrParser> = (0..=input.len())
        .map(|k| {
            let mut p = LrParser::new(&t);
            p.consume(&t, &input[..k]).unwrap();
            p
        })
        .collect();
    let all: Vec<TerminalId> = (0..t.n_terminals() - 1).map(TerminalId).collect();
    let rounds = 500_000u64;
    let start = std::time::Instant::now();
    let mut hits = 0u64;
    for _ in 0..rounds {
        for p in &parsers {
            for x in &all {
                hits += std::hint::black_box(p).accepts(&t, std::hint::black_box(std::slice::from_ref(x))) as u64;
            }
        }
    }
    let calls = rounds * (parsers.len() * all.len()) as u64;
    eprintln!(
        "accepts(&[x]) on expr grammar, {} parser states x {} terminals: {:.1} ns/call ({:.0}% accepted)",
        parsers.len(),
        all.len(),
        start.elapsed().as_nanos() as f64 / calls as f64,
        100.0 * hits as f64 / calls as f64
    );
    let p = &parsers[9];
    let n = 10_000_000u64;
    let two = terms(&cfg, "RP STAR");
    let start = std::time::Instant::now();
    for _ in 0..n {
        hits += std::hint::black_box(&p).accepts(&t, std::hint::black_box(&two)) as u64;
    }
    eprintln!("accepts(&[RP, STAR]): {:.1} ns/call", start.elapsed().as_nanos() as f64 / n as f64);
    let start = std::time::Instant::now();
    for _ in 0..n {
        hits += std::hint::black_box(&p).accepts_eof(&t) as u64;
    }
    eprintln!("accepts_eof: {:.1} ns/call ({hits})", start.elapsed().as_nanos() as f64 / n as f64);
    let cfg = big_grammar(300);
    let start = std::time::Instant::now();
    let t = build_tables(&cfg).unwrap();
    eprintln!("big grammar ({} nts, {} rules, {} states): built in {:?}", cfg.nonterminals.len(), cfg.rules.len(), t.n_states(), start.elapsed());
}

// ---------------------------------------------------------------- Lark's conflict rules

fn lark(src: &str) -> Cfg {
    grammask::constraint::parse_lark(src, "g.lark", None, &|_| None).unwrap()
}

#[test]
fn lark_shift_reduce_is_shift_with_a_warning() {
    let mut cfg = lark("start: stmt\nstmt: \"if\" \"x\" stmt | \"if\" \"x\" stmt \"else\" stmt | \"s\"\n%ignore \" \"\n");
    let b = grammask::parser::lalr::build(&cfg).unwrap();
    assert_eq!(b.warnings.len(), 1, "{:?}", b.warnings);
    let w = &b.warnings[0];
    assert_eq!(w.terminal, "ELSE");
    assert!(w.message.starts_with("g.lark:2:1: shift/reduce conflict on terminal ELSE"), "{}", w.message);
    assert!(w.message.contains("resolved as shift"), "{}", w.message);
    // Shift: the else belongs to the inner if; both nestings parse.
    let rec = grammask::reference::recognizer::Recognizer::new(cfg.clone()).unwrap();
    assert!(rec.check(b"if x if x s else s").is_ok());
    assert!(rec.check(b"if x s else s else s").is_err());
    // Strict (Lark's strict=True) refuses it.
    cfg.conflicts = cfg.conflicts.strict();
    let e = build_tables(&cfg).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.message().contains("shift/reduce conflict on terminal ELSE") && e.message().contains("strict"), "{}", e.message());
}

#[test]
fn lark_reduce_reduce_by_rule_priority() {
    // Without priorities: an error, as in Lark, with the Earley hint.
    let e = build_tables(&lark("start: a | b\na: \"x\"\nb: \"x\"\n")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    let m = e.message();
    assert!(m.contains("reduce/reduce conflict on terminal $END"), "{m}");
    assert!(m.contains("Lark's LALR parser refuses this grammar too") && m.contains("Earley") && m.contains("rule.2"), "{m}");
    // Equal priorities: still an error.
    assert!(build_tables(&lark("start: a | b\na.1: \"x\"\nb.1: \"x\"\n")).is_err());
    // A strictly higher priority wins.
    let cfg = lark("start: a | b\na: \"x\"\nb.2: \"x\"\n");
    let b = grammask::parser::lalr::build(&cfg).unwrap();
    assert!(b.warnings.is_empty());
    let bx = cfg.nonterminal_by_name("b").unwrap();
    let rb = cfg.rules.iter().position(|r| r.lhs == bx).unwrap();
    let t = b.tables;
    let x = cfg.terminal_by_name("X").unwrap();
    let mut p = LrParser::new(&t);
    p.consume(&t, &[x]).unwrap();
    assert_eq!(t.action(p.top_state(), t.eof()), grammask::parser::Action::Reduce(grammask::ids::RuleId(rb as u32)));
}

#[test]
fn lark_accepts_at_the_end_state() {
    // `s: start` makes the end state also reduce on $END (an accept/reduce
    // conflict for a strict LALR builder); Lark accepts there.
    let mut cfg = lark("start: s | \"a\"\ns: start\n");
    let b = grammask::parser::lalr::build(&cfg).unwrap();
    assert!(b.warnings.is_empty());
    let rec = grammask::reference::recognizer::Recognizer::new(cfg.clone()).unwrap();
    assert!(rec.check(b"a").is_ok() && rec.check(b"").is_err() && rec.check(b"aa").is_err());
    cfg.conflicts = grammask::grammar::ConflictPolicy::Strict;
    assert!(build_tables(&cfg).unwrap_err().message().contains("accept/reduce"));
}
