//! Lexer tests: maximal munch on a Python-like terminal set, the automaton
//! (every global mode, set terminals)
//! cross-checked against the reference lexer (whole-string non-deterministic
//! simulation and `comp`), errors, and table round trips.
#![cfg(feature = "compiler")]

use std::collections::{BTreeSet, VecDeque};
use std::sync::OnceLock;

use grammask::grammar::{Cfg, LexerMode, Lookahead, Span, TerminalDef, TerminalPattern, EMPTY_GROUP};
use grammask::ids::{LexStateId, NonterminalId, TerminalId};
use grammask::lexer::{build, build_with_stats, Lexeme, Lexer, LexerParts};
use grammask::reference::lexer::RefLexer;
use grammask::ErrorKind;
use proptest::prelude::*;

// ---------------------------------------------------------------- helpers

fn escape(text: &str) -> String {
    regex_syntax::escape(text)
}

fn lit(name: &str, text: &str) -> TerminalDef {
    TerminalDef {
        name: name.into(),
        pattern: TerminalPattern::Literal { text: text.into(), case_insensitive: false, regex: escape(text) },
        priority: 0,
        ignored: false,
        span: Span::default(),
        lark: None,
    }
}

/// A regex terminal; each `la(body)` in `regex` becomes a typed lookahead.
fn re(name: &str, regex: &str) -> TerminalDef {
    let (mut plain, mut lookaheads) = (String::new(), Vec::new());
    for (i, part) in regex.split(LA_OPEN).enumerate() {
        match part.split_once(LA_CLOSE) {
            Some((not, rest)) if i > 0 => {
                lookaheads.push(Lookahead { at: plain.len(), not: not.into() });
                plain.push_str(EMPTY_GROUP);
                plain.push_str(rest);
            }
            _ => plain.push_str(part),
        }
    }
    TerminalDef {
        name: name.into(),
        pattern: TerminalPattern::Regex { regex: plain, lookaheads },
        priority: 0,
        ignored: false,
        span: Span::default(),
        lark: None,
    }
}

fn set(name: &str, all: &[&str], none: &[&str]) -> TerminalDef {
    TerminalDef::new(
        name,
        TerminalPattern::Set { all: all.iter().map(|s| s.to_string()).collect(), none: none.iter().map(|s| s.to_string()).collect() },
    )
}

fn ignored(mut t: TerminalDef) -> TerminalDef {
    t.ignored = true;
    t
}

fn cfg(terminals: Vec<TerminalDef>) -> Cfg {
    Cfg { terminals, nonterminals: vec![], rules: vec![], start: NonterminalId(0), indent: None, lexer: grammask::grammar::LexerMode::Longest, conflicts: Default::default() }
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "match", "case",
];

const OPERATORS: &[(&str, &str)] = &[
    ("PLUS", "+"), ("MINUS", "-"), ("STAR", "*"), ("POW", "**"), ("SLASH", "/"), ("DSLASH", "//"), ("PERCENT", "%"),
    ("AT", "@"), ("LSHIFT", "<<"), ("RSHIFT", ">>"), ("AMP", "&"), ("VBAR", "|"), ("CIRC", "^"), ("TILDE", "~"),
    ("WALRUS", ":="), ("LT", "<"), ("GT", ">"), ("LE", "<="), ("GE", ">="), ("EQEQ", "=="), ("NE", "!="),
    ("LPAR", "("), ("RPAR", ")"), ("LSQB", "["), ("RSQB", "]"), ("LBRACE", "{"), ("RBRACE", "}"), ("COMMA", ","),
    ("COLON", ":"), ("DOT", "."), ("SEMI", ";"), ("EQUAL", "="), ("ARROW", "->"), ("PLUSEQ", "+="),
    ("MINUSEQ", "-="), ("STAREQ", "*="), ("SLASHEQ", "/="), ("DSLASHEQ", "//="), ("PERCENTEQ", "%="),
    ("ATEQ", "@="), ("AMPEQ", "&="), ("VBAREQ", "|="), ("CIRCEQ", "^="), ("RSHIFTEQ", ">>="),
    ("LSHIFTEQ", "<<="), ("POWEQ", "**="), ("ELLIPSIS", "..."),
];

/// A Python-like terminal set (~95 terminals), without look-around.
fn python_cfg() -> Cfg {
    let mut ts: Vec<TerminalDef> = KEYWORDS.iter().map(|k| lit(&k.to_uppercase(), k)).collect();
    ts.extend(OPERATORS.iter().map(|(n, t)| lit(n, t)));
    let digits = "[0-9](?:_?[0-9])*";
    let exp = format!("[eE][-+]?{digits}");
    let float = format!("(?:{digits}\\.(?:{digits})?(?:{exp})?|\\.{digits}(?:{exp})?|{digits}{exp})");
    let prefix = "(?i:[rub]|br|rb|f|fr|rf)?";
    ts.extend([
        re("NAME", r"[^\W\d]\w*"),
        re("DEC_NUMBER", "[1-9](?:_?[0-9])*|0(?:_?0)*"),
        re("HEX_NUMBER", "0[xX](?:_?[0-9a-fA-F])+"),
        re("OCT_NUMBER", "0[oO](?:_?[0-7])+"),
        re("BIN_NUMBER", "0[bB](?:_?[01])+"),
        re("FLOAT_NUMBER", &float),
        re("IMAG_NUMBER", &format!("(?:{digits}|{float})[jJ]")),
        re("STRING", &format!(r#"{prefix}(?:"(?:[^"\\\n]|\\[\s\S])*"|'(?:[^'\\\n]|\\[\s\S])*')"#)),
        re("LONG_STRING", &format!(r#"{prefix}(?:"""(?:[^\\]|\\[\s\S])*?"""|'''(?:[^\\]|\\[\s\S])*?''')"#)),
        re("_NEWLINE", r"(?:\r?\n[\t ]*)+"),
        ignored(re("COMMENT", r"#[^\r\n]*")),
        ignored(re("WS", r"[\t \x0c]+")),
        ignored(re("LINE_CONT", r"\\[\t \x0c]*\r?\n")),
    ]);
    cfg(ts)
}

struct Py {
    cfg: Cfg,
    lexer: Lexer,
    reference: RefLexer,
}

fn python() -> &'static Py {
    static PY: OnceLock<Py> = OnceLock::new();
    PY.get_or_init(|| {
        let cfg = python_cfg();
        let (lexer, stats) = build_with_stats(&cfg).unwrap();
        eprintln!("python-like lexer: {stats:?}");
        let reference = RefLexer::new(&cfg).unwrap();
        Py { cfg, lexer, reference }
    })
}

fn names(cfg: &Cfg, lexemes: &[Lexeme]) -> Vec<String> {
    lexemes.iter().filter(|l| !cfg.terminal(l.terminal).ignored).map(|l| cfg.terminal(l.terminal).name.clone()).collect()
}

/// Lexes with both lexers, checks they agree, returns the non-ignored names.
fn py_lex(text: &str) -> Vec<String> {
    let py = python();
    let r = py.reference.lex(text.as_bytes()).unwrap_or_else(|e| panic!("{text:?} fails at {}", e.pos));
    assert_eq!(py.lexer.lex(text.as_bytes()), Ok(r.clone()), "automaton vs reference on {text:?}");
    names(&py.cfg, &r)
}

// --------------------------------------------- non-deterministic simulation

/// A branch of the automaton walk: state, start of the lexeme in progress,
/// lexemes emitted so far.
type Branch = (LexStateId, usize, Vec<Lexeme>);

/// All branches alive after walking `text` (branching on emit/cont at every byte).
fn branches(lexer: &Lexer, text: &[u8]) -> BTreeSet<Branch> {
    let mut set = BTreeSet::from([(lexer.start(), 0usize, Vec::new())]);
    for (pos, &b) in text.iter().enumerate() {
        let mut next = BTreeSet::new();
        for (s, start, out) in set {
            if let Some(c) = lexer.cont(s, b) {
                next.insert((c, start, out.clone()));
            }
            if let Some(e) = lexer.emit(s, b) {
                for &w in lexer.winners_before(s, b) {
                    let mut out = out.clone();
                    out.push(Lexeme { terminal: w, start, end: pos });
                    next.insert((e, pos, out));
                }
            }
        }
        set = next;
        assert!(set.len() < 10_000, "branch explosion");
    }
    set
}

/// Every complete lexing the automaton accepts for `text`.
fn automaton_lexings(lexer: &Lexer, text: &[u8]) -> BTreeSet<Vec<Lexeme>> {
    let mut all = BTreeSet::new();
    for (s, start, out) in branches(lexer, text) {
        for &w in lexer.winners(s) {
            let mut out = out.clone();
            if !text.is_empty() {
                out.push(Lexeme { terminal: w, start, end: text.len() });
            }
            all.insert(out);
        }
    }
    all
}

fn check_whole(lexer: &Lexer, reference: &RefLexer, text: &[u8]) {
    let got = automaton_lexings(lexer, text);
    // The empty text: the start state has no winner (no empty matches).
    let want: BTreeSet<Vec<Lexeme>> =
        if text.is_empty() { BTreeSet::new() } else { reference.lexings(text, 10_000).into_iter().collect() };
    assert_eq!(got, want, "text {:?}", String::from_utf8_lossy(text));
    match lexer.lex(text) {
        Ok(l) => assert!(text.is_empty() || want.contains(&l), "Lexer::lex on {text:?}: {l:?} is not a reference lexing"),
        Err(_) => assert!(want.is_empty(), "Lexer::lex on {text:?} fails"),
    }
}

/// The terminal the lexeme in progress of `branch` becomes in the reference
/// lexing of `text` (an extension of the branch's text), if that lexing
/// extends the branch's emissions by exactly one lexeme ending at the end.
fn completes_as(reference: &RefLexer, text: &[u8], branch: &Branch) -> BTreeSet<TerminalId> {
    let (_, start, out) = branch;
    reference
        .lexings(text, 10_000)
        .into_iter()
        .filter(|r| r.len() == out.len() + 1 && r[..out.len()] == out[..] && r[out.len()].start == *start)
        .map(|r| r[out.len()].terminal)
        .collect()
}

/// Shortest cont-path from `s` to a state whose end-of-text winner is `x`.
fn witness_eof(lexer: &Lexer, s: LexStateId, x: TerminalId) -> Option<Vec<u8>> {
    let mut reps = vec![None; lexer.n_classes()];
    for b in 0..=255u8 {
        reps[lexer.class(b) as usize].get_or_insert(b);
    }
    let mut prev = vec![None; lexer.n_states()];
    let mut queue = VecDeque::from([s]);
    let mut seen = vec![false; lexer.n_states()];
    seen[s.index()] = true;
    while let Some(u) = queue.pop_front() {
        if lexer.is_winner(u, x) {
            let mut path = Vec::new();
            let mut v = u;
            while let Some((p, b)) = prev[v.index()] {
                path.push(b);
                v = p;
            }
            path.reverse();
            return Some(path);
        }
        for &b in reps.iter().flatten() {
            if let Some(n) = lexer.cont(u, b) {
                if !seen[n.index()] {
                    seen[n.index()] = true;
                    prev[n.index()] = Some((u, b));
                    queue.push_back(n);
                }
            }
        }
    }
    None
}

/// `comp` against the reference, for every branch after `w`:
/// X ∈ comp ⇒ a witness extension completes as X (checked by the reference);
/// X ∉ comp ⇒ no extension over `alphabet` of length ≤ `k` completes as X.
fn check_comp(lexer: &Lexer, reference: &RefLexer, w: &[u8], alphabet: &[u8], k: usize) {
    let mut exts: Vec<Vec<u8>> = vec![vec![]];
    let mut layer: Vec<Vec<u8>> = vec![vec![]];
    for _ in 0..k {
        layer = layer.iter().flat_map(|v| alphabet.iter().map(move |&b| [v.as_slice(), &[b]].concat())).collect();
        exts.extend(layer.iter().cloned());
    }
    // Longer extensions, only searched for the witnesses of lookahead winners.
    let mut more_exts: Vec<Vec<u8>> = Vec::new();
    for _ in k..4 {
        layer = layer.iter().flat_map(|v| alphabet.iter().map(move |&b| [v.as_slice(), &[b]].concat())).collect();
        more_exts.extend(layer.iter().cloned());
    }
    for branch in branches(lexer, w) {
        let s = branch.0;
        for &x in lexer.comp(s) {
            if let Some(v) = witness_eof(lexer, s, x) {
                let text = [w, &v].concat();
                assert!(completes_as(reference, &text, &branch).contains(&x), "witness {text:?} for comp member {x:?}");
                continue;
            }
            // `x` wins only before some bytes (a lookahead): search the
            // extensions for a reference lexing where the lexeme in progress
            // ends as `x`, followed by more lexemes.
            let (_, start, out) = &branch;
            let found = exts.iter().chain(&more_exts).any(|v| {
                let text = [w, v.as_slice()].concat();
                reference.lexings(&text, 10_000).into_iter().any(|r| {
                    r.len() > out.len() + 1
                        && r[..out.len()] == out[..]
                        && r[out.len()].terminal == x
                        && r[out.len()].start == *start
                        && r[out.len()].end >= w.len()
                })
            });
            assert!(found, "no extension of {w:?} completes comp member {x:?}");
        }
        for v in &exts {
            let text = [w, v.as_slice()].concat();
            if text.len() > branch.1 {
                for x in completes_as(reference, &text, &branch) {
                    assert!(lexer.can_complete(s, x), "{text:?} completes as {x:?}, not in comp after {w:?}");
                }
            }
        }
    }
}

// ------------------------------------------------------------ python cases

#[test]
fn python_maximal_munch() {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(py_lex("return1"), v(&["NAME"]));
    assert_eq!(py_lex("return 1"), v(&["RETURN", "DEC_NUMBER"]));
    assert_eq!(py_lex("return"), v(&["RETURN"]));
    assert_eq!(py_lex("0x1F"), v(&["HEX_NUMBER"]));
    assert_eq!(py_lex("0x1_f"), v(&["HEX_NUMBER"]));
    assert_eq!(py_lex("1_000.5e-3j"), v(&["IMAG_NUMBER"]));
    assert_eq!(py_lex("1.e5"), v(&["FLOAT_NUMBER"]));
    assert_eq!(py_lex("\"a\" + \"b\""), v(&["STRING", "PLUS", "STRING"]));
    assert_eq!(py_lex("1if"), v(&["DEC_NUMBER", "IF"]));
    assert_eq!(py_lex("..."), v(&["ELLIPSIS"]));
    assert_eq!(py_lex("...."), v(&["ELLIPSIS", "DOT"]));
    assert_eq!(py_lex(".."), v(&["DOT", "DOT"]));
    assert_eq!(py_lex("x.y"), v(&["NAME", "DOT", "NAME"]));
    assert_eq!(py_lex("1..2"), v(&["FLOAT_NUMBER", "FLOAT_NUMBER"]));
    assert_eq!(py_lex("**="), v(&["POWEQ"]));
    assert_eq!(py_lex("** ="), v(&["POW", "EQUAL"]));
    assert_eq!(py_lex("a**b"), v(&["NAME", "POW", "NAME"]));
    assert_eq!(py_lex("//="), v(&["DSLASHEQ"]));
    assert_eq!(py_lex("->"), v(&["ARROW"]));
    assert_eq!(py_lex("rb'x' f\"y\""), v(&["STRING", "STRING"]));
    assert_eq!(py_lex("rbx"), v(&["NAME"]));
    assert_eq!(py_lex("\"\"\"a\"b\"\"\" \"\""), v(&["LONG_STRING", "STRING"]));
    assert_eq!(py_lex("'''x''' '''y'''"), v(&["LONG_STRING", "LONG_STRING"]));
    assert_eq!(py_lex("été = 1"), v(&["NAME", "EQUAL", "DEC_NUMBER"]));
    assert_eq!(py_lex("x # c\n  y"), v(&["NAME", "_NEWLINE", "NAME"]));
    assert_eq!(py_lex("x\n\n  \ny"), v(&["NAME", "_NEWLINE", "NAME"]));
    assert_eq!(py_lex("if x:\\\n  pass"), v(&["IF", "NAME", "COLON", "PASS"]));
    assert_eq!(py_lex("00"), v(&["DEC_NUMBER"]));
    // Ignored lexemes are produced (the caller filters them).
    let py = python();
    let all = py.reference.lex(b"a  b").unwrap();
    assert_eq!(all.len(), 3);
    assert!(py.lexer.is_ignored(all[1].terminal));
    // Failures: the reference reports where no terminal matches.
    assert_eq!(py.reference.lex(b"a $").unwrap_err().pos, 2);
    assert!(py.lexer.lex(b"a $").is_err());
    assert!(py.lexer.lex(b"\"abc").is_err());
    assert!(py.lexer.lex(b"\xff").is_err());
}

#[test]
fn lazy_quantifier_is_python_like() {
    let c = cfg(vec![re("S", r#"".*?""#), ignored(lit("SP", " "))]);
    let reference = RefLexer::new(&c).unwrap();
    let lexer = build(&c).unwrap();
    let r = reference.lex(br#""a" "b""#).unwrap();
    let spans: Vec<_> = r.iter().map(|l| (l.start, l.end)).collect();
    assert_eq!(spans, vec![(0, 3), (3, 4), (4, 7)]);
    check_whole(&lexer, &reference, br#""a" "b""#);
    // Leftmost-first alternation: /a|ab/ matches "a", so "ab" fails here.
    let c = cfg(vec![re("A", "a|ab")]);
    let reference = RefLexer::new(&c).unwrap();
    assert_eq!(reference.lex(b"ab").unwrap_err().pos, 1);
    check_whole(&build(&c).unwrap(), &reference, b"ab");
}

#[test]
fn ties_priority_literal_id() {
    let mut hi = re("HI", "[a-z]+");
    hi.priority = 1;
    let c = cfg(vec![re("R", "[a-z]+"), lit("IF", "if"), hi, re("R2", "if")]);
    let (lexer, reference) = (build(&c).unwrap(), RefLexer::new(&c).unwrap());
    assert_eq!(reference.lex(b"if").unwrap()[0].terminal, TerminalId(2)); // priority
    check_whole(&lexer, &reference, b"if");
    let c = cfg(vec![re("R", "if"), re("R1", "[a-z]+"), lit("IF", "if")]);
    let (lexer, reference) = (build(&c).unwrap(), RefLexer::new(&c).unwrap());
    assert_eq!(reference.lex(b"if").unwrap()[0].terminal, TerminalId(2)); // literal
    check_whole(&lexer, &reference, b"if");
    let c = cfg(vec![re("R1", "[a-z]+"), re("R", "if")]);
    let reference = RefLexer::new(&c).unwrap();
    assert_eq!(reference.lex(b"if").unwrap()[0].terminal, TerminalId(0)); // lower id
    assert!(grammask::lexer::rank_better(&c, TerminalId(0), TerminalId(1)));
    assert!(!grammask::lexer::rank_better(&c, TerminalId(1), TerminalId(0)));
}

#[test]
fn python_cross_check_fixed_texts() {
    let py = python();
    for text in [
        "def f(x, *a, **k) -> int:\n    return x**2 + 0x1F if x else 1.5e3j\n",
        "s = rb'\\x00' + \"\"\"doc\n\"\"\" # hi\n",
        "a[1:2] //= b @ c ... ; d.e != f <<= 3",
        "lambda: not None is True and False or 1_0",
    ] {
        check_whole(&py.lexer, &py.reference, text.as_bytes());
    }
    for w in ["ret", "0x", "1.", "\"ab", "**", "#x", "'''a''", "1e"] {
        check_comp(&py.lexer, &py.reference, w.as_bytes(), b"a1x.=\"'e ", 2);
    }
    // comp of the start state: every lexable terminal.
    assert_eq!(py.lexer.comp(py.lexer.start()).len(), py.cfg.terminals.len());
}

// ------------------------------------------------------------------ errors

#[test]
fn errors_name_the_terminal() {
    let e = build(&cfg(vec![lit("A", "a"), re("EMPTYISH", "b*")])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Grammar);
    assert!(e.message().contains("EMPTYISH") && e.message().contains("empty string"), "{e:?}");
    for bad in [r"\bfoo", "^a", "a$", r"(?m)a$", r"\Ba", r"a\z"] {
        let e = RefLexer::new(&cfg(vec![re("LOOKY", bad)])).err().unwrap();
        assert_eq!(e.kind(), ErrorKind::Grammar);
        assert!(e.message().contains("LOOKY") && e.message().contains("look-around"), "{e:?}");
    }
    // Lookaheads that cannot be compiled exactly are refused, naming the terminal.
    for (bad, why) in [
        (format!("(?:a|ab){}", la("b")), "prefer"),
        (format!("a*?{}", la("b")), "prefer"),
        (format!("a{}", la("ab")), "more than one character"),
        (format!("a{}", la("é")), "non-ASCII"),
        (format!("a{}b|ab?", la("c")), "other alternatives"),
    ] {
        let e = build(&cfg(vec![re("LOOKY", &bad)])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Grammar);
        assert!(e.message().contains("LOOKY") && e.message().contains(why), "{bad}: {e:?}");
    }
    let e = build(&cfg(vec![re("BROKEN", "(a")])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Regex);
    assert!(e.message().contains("BROKEN"), "{e:?}");
    // %declare'd terminals are skipped.
    let mut d = lit("D", "x");
    d.pattern = TerminalPattern::Declared;
    let c = cfg(vec![d, lit("A", "a")]);
    let lexer = build(&c).unwrap();
    assert_eq!(lexer.comp(lexer.start()), &[TerminalId(1)]);
    assert!(RefLexer::new(&c).unwrap().lex(b"x").is_err());
    // A terminal that matches nothing is harmless.
    let c = cfg(vec![re("NEVER", r"[^\s\S]"), lit("A", "a")]);
    let (lexer, reference) = (build(&c).unwrap(), RefLexer::new(&c).unwrap());
    assert_eq!(lexer.comp(lexer.start()), &[TerminalId(1)]);
    check_whole(&lexer, &reference, b"aa");
}

#[test]
fn parts_round_trip_and_validation() {
    let lexer = &python().lexer;
    let p = lexer.parts();
    assert_eq!(&Lexer::from_parts(p).unwrap(), lexer);
    let mut cont = p.cont_rows.to_vec();
    cont[3] = lexer.n_states() as u32;
    assert_eq!(Lexer::from_parts(LexerParts { cont_rows: &cont, ..p }).unwrap_err().kind(), ErrorKind::BlobCorrupt);
    let mut row = p.emit_row.to_vec();
    row[1] = (p.emit_rows.len() / p.n_classes as usize) as u32;
    assert_eq!(Lexer::from_parts(LexerParts { emit_row: &row, ..p }).unwrap_err().kind(), ErrorKind::BlobCorrupt);
    let off: Vec<u32> = p.win_off[..p.win_off.len() - 1].to_vec();
    assert!(Lexer::from_parts(LexerParts { win_off: &off, ..p }).is_err());
    let win = vec![TerminalId(u32::MAX); p.win.len()];
    assert!(Lexer::from_parts(LexerParts { win: &win, ..p }).is_err());
    let mut comp = p.comp.to_vec();
    comp.swap(0, 1);
    assert!(Lexer::from_parts(LexerParts { comp: &comp, ..p }).is_err());
    let mut classes = *p.classes;
    classes[7] = p.n_classes as u8;
    assert!(Lexer::from_parts(LexerParts { classes: &classes, ..p }).is_err());
    let offs: Vec<u32> = p.comp_offsets.iter().map(|&o| o + 1).collect();
    assert!(Lexer::from_parts(LexerParts { comp_offsets: &offs, ..p }).is_err());
    assert!(Lexer::from_parts(LexerParts { n_terminals: 3, ..p }).is_err());
}

#[test]
fn byte_classes() {
    let lexer = &python().lexer;
    for b in [b'\n', b'\r', b' ', b'\t', 0x0c] {
        assert!((0..=255u8).all(|o| o == b || lexer.class(o) != lexer.class(b)), "{b} not a singleton class");
    }
    // Digits 2-7 behave alike for every Python terminal.
    assert_eq!(lexer.class(b'2'), lexer.class(b'6'));
    assert_ne!(lexer.class(b'1'), lexer.class(b'2'));
}

// ---------------------------------------------------------------- proptest

/// Pool of terminals over the alphabet `ab."` plus space.
fn pool() -> Vec<TerminalDef> {
    vec![
        lit("A", "a"),
        lit("AB", "ab"),
        lit("ABA", "aba"),
        lit("B", "b"),
        lit("DOT", "."),
        lit("DOTS", "..."),
        lit("BA", "ba"),
        ignored(lit("SP", " ")),
        re("AS", "a+"),
        re("ABS", "[ab]+"),
        re("BSA", "b*a"),
        re("STR", r#""[^"]*""#),
        re("LAZY", r#"".*?""#),
        re("ATOB", "a.*?b"),
        re("ABREP", "(?:ab)+"),
        re("DOTNUM", r"\.[ab]+"),
        re("ALT1", "a|ab"),
        re("ALT2", "ab|a"),
        re("OPT", "(?:a|ab)(?:\\.|b\\.a)?"),
        re("LAZYB", "b+?"),
        ignored(re("WS", r"\s+")),
        re("ANY", "[^ ]"),
        re("NL", "(?:\\.\"*)+"),
        set("SETAB", &["[ab]+", "[ab]{0,3}"], &["ab"]),
        set("SETDOT", &[r"\.[ab.]*", r"[^b]*"], &[]),
        set("SETQ", &[r#""[ab ]*""#], &[r#"" *""#]),
        // One-character negative lookaheads (the Lark front end's encoding).
        re("ANOTB", &format!("a+{}", la("b"))),
        re("DOTNOTA", &format!(r"\.{}[ab]*", la("a"))),
        re("AORB", &format!("a|b{}", la("[a.]"))),
        re("DOTS2", &format!(r"\.\.?{}", la(r"\."))),
        re("QNOTQ", &format!(r#""{}[^"]*"?"#, la(r#"""#))),
    ]
}

/// `(?!body)` in a regex given to [`re`], which turns it into a typed lookahead.
fn la(body: &str) -> String {
    format!("{LA_OPEN}{body}{LA_CLOSE}")
}
const LA_OPEN: char = '\u{1}';
const LA_CLOSE: char = '\u{2}';

fn arb_cfg() -> impl Strategy<Value = Cfg> {
    let n = pool().len();
    let modes = [LexerMode::Longest, LexerMode::LongestAll, LexerMode::Basic];
    (
        proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 1..=5),
        proptest::collection::vec(0..3i32, 5),
        proptest::sample::select(modes.to_vec()),
    )
        .prop_map(|(idx, prios, mode)| {
            let p = pool();
            let mut c = cfg(idx
                .iter()
                .zip(prios)
                .map(|(&i, pr)| {
                    let mut t = p[i].clone();
                    t.priority = (pr == 2) as i32;
                    t
                })
                .collect());
            c.lexer = mode;
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn automaton_equals_reference(c in arb_cfg(), text in "[ab.\" ]{0,10}") {
        let lexer = build(&c).unwrap();
        let reference = RefLexer::new(&c).unwrap();
        check_whole(&lexer, &reference, text.as_bytes());
        for k in 0..=text.len() {
            check_comp(&lexer, &reference, &text.as_bytes()[..k], b"ab.\" ", 2);
        }
    }

    #[test]
    fn python_automaton_equals_reference(text in "[ax1f0r._e\"'# \n+*=<>(jJ\\\\]{0,12}") {
        let py = python();
        check_whole(&py.lexer, &py.reference, text.as_bytes());
    }

    #[test]
    fn python_comp(text in "[ax1f0r._e\"'# \n*=]{0,6}") {
        let py = python();
        check_comp(&py.lexer, &py.reference, text.as_bytes(), b"a1.e\"' =", 2);
    }
}

/// Figures for the Python-like set; run with
/// `cargo test --release --test suite -- --ignored --nocapture lexer::python_build_figures`.
#[test]
#[ignore = "a measurement: --ignored --nocapture lexer::python_build_figures"]
fn python_build_figures() {
    let c = python_cfg();
    for _ in 0..3 {
        let (_, stats) = build_with_stats(&c).unwrap();
        println!("{stats:?}");
    }
}

// ------------------------------------------------------------ other modes

fn lexed_names(c: &Cfg, text: &str) -> Vec<Vec<String>> {
    let lexer = build(c).unwrap();
    let reference = RefLexer::new(c).unwrap();
    check_whole(&lexer, &reference, text.as_bytes());
    reference.lexings(text.as_bytes(), 100).iter().map(|l| names(c, l)).collect()
}

/// Lark's basic lexer takes the first terminal in its order that matches
/// (checked against Lark 1.2.2: `AS B` for "ab"), and retypes a regex match
/// equal to a literal; a case-insensitive literal stays a candidate too.
#[test]
fn basic_mode_is_lark_first_match() {
    let mut c = cfg(vec![re("AS", "a+"), lit("AB", "ab"), lit("B", "b")]);
    c.lexer = LexerMode::Basic;
    assert_eq!(lexed_names(&c, "ab"), vec![vec!["AS", "B"]]);
    c.lexer = LexerMode::Longest;
    assert_eq!(lexed_names(&c, "ab"), vec![vec!["AB"]]);
    let ci = TerminalDef::new("IFI", TerminalPattern::Literal { text: "in".into(), case_insensitive: true, regex: "(?i:in)".into() });
    let mut c = cfg(vec![re("NAME", "[a-z]+"), lit("IF", "if"), ci, ignored(lit("SP", " "))]);
    c.lexer = LexerMode::Basic;
    assert_eq!(lexed_names(&c, "if iff in IN In"), vec![vec!["IF", "NAME", "IFI", "IFI", "IFI"]]);
}

/// LongestAll: every terminal tied at the longest match is a lexeme.
#[test]
fn longest_all_keeps_ties() {
    let mut c = cfg(vec![re("P", "[ab]+"), re("Q", "[bc]+"), ignored(lit("SP", " "))]);
    c.lexer = LexerMode::LongestAll;
    let mut got = lexed_names(&c, "bb ab");
    got.sort();
    assert_eq!(got, vec![vec!["P", "P"], vec!["Q", "P"]]);
    c.lexer = LexerMode::Longest;
    assert_eq!(lexed_names(&c, "bb ab"), vec![vec!["P", "P"]]);
}

/// Set terminals: intersections and differences, with set semantics (the
/// longest prefix in the set, not a leftmost-first match).
#[test]
fn set_terminals() {
    let mut c = cfg(vec![set("W", &["[a-z]+", "[a-z]{0,3}"], &["if|in"]), lit("IF", "if"), ignored(lit("SP", " "))]);
    c.lexer = LexerMode::LongestAll;
    assert_eq!(lexed_names(&c, "a ab abc if"), vec![vec!["W", "W", "W", "IF"]]);
    // "in" is outside W: its longest prefix in W is "i".
    assert_eq!(lexed_names(&c, "in"), vec![vec!["W", "W"]]);
    assert_eq!(lexed_names(&c, "abcd"), vec![vec!["W", "W"]], "W is at most 3 long: abc then d");
    // Set semantics: `a|ab` as a set matches "ab" whole; as a regex only "a".
    let mut c = cfg(vec![set("S", &["a|ab"], &[]), re("R", "a|ab"), lit("B", "b")]);
    c.lexer = LexerMode::LongestAll;
    assert_eq!(lexed_names(&c, "ab"), vec![vec!["S"]]);
    let empty = cfg(vec![set("E", &["a*"], &["a*"])]);
    assert!(RefLexer::new(&empty).unwrap().lexings(b"a", 10).is_empty());
}
