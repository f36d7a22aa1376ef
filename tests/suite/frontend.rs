//! Lark front end: constructs, normalization shape, imports, `%indent`,
//! error positions, Lark's python.lark, and a no-panic fuzz.
#![cfg(feature = "compiler")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use grammask::constraint::{load_lark_file as load_grammar_file, parse_lark as parse_grammar};
use grammask::grammar::{Cfg, TerminalPattern};
use grammask::ids::RuleId;
use grammask::ErrorKind;
use proptest::prelude::*;

fn cfg(text: &str) -> Cfg {
    parse_grammar(text, "t.lark", None, &|_| None).unwrap_or_else(|e| panic!("{e:?}"))
}

fn error(text: &str) -> grammask::Error {
    match parse_grammar(text, "g.lark", None, &|_| None) {
        Ok(_) => panic!("expected an error for {text:?}"),
        Err(e) => e,
    }
}

/// All rules as `lhs: a b c` strings, sorted.
fn rules(c: &Cfg) -> Vec<String> {
    let mut v: Vec<String> = (0..c.rules.len()).map(|r| c.rule_to_string(RuleId::new(r))).collect();
    v.sort();
    v
}

fn term_names(c: &Cfg) -> BTreeSet<String> {
    c.terminals.iter().map(|t| t.name.clone()).collect()
}

/// Does terminal `name` match all of `text`?
fn full_match(c: &Cfg, name: &str, text: &str) -> bool {
    // The terminal's own table (Python `re.match` semantics, lookaheads included).
    c.terminal_by_name(name).unwrap_or_else(|| panic!("no terminal {name}"));
    let mut one = c.clone();
    one.terminals.retain(|t| t.name == name);
    one.indent = None;
    one.lexer = grammask::grammar::LexerMode::Longest;
    let r = grammask::reference::lexer::RefLexer::new(&one).unwrap();
    r.lexeme_at(text.as_bytes(), 0).is_some_and(|l| l.end == text.len())
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("grammask-frontend-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn rule_prefixes_priorities_aliases_are_ignored() {
    let c = cfg("?start: _a -> x | b\n_a.2: \"a\"\n!b: \"b\"  -> bee\n");
    assert_eq!(rules(&c), vec!["_a: A", "b: B", "start: _a", "start: b"]);
    assert_eq!(c.nonterminal(c.start).name, "start");
}

#[test]
fn optionals_and_groups_are_inlined() {
    let c = cfg("start: \"a\" [b] (\"c\" | \"d\") \"e\"?\nb: \"b\"\n");
    assert_eq!(
        rules(&c),
        vec!["b: B", "start: A C", "start: A C E", "start: A D", "start: A D E", "start: A b C", "start: A b C E", "start: A b D", "start: A b D E"]
    );
}

#[test]
fn plus_and_star_helpers_are_left_recursive_and_shared() {
    let c = cfg("start: a+ \",\" a* \";\" (a | \"x\")+\na: \"a\"\n");
    let r = rules(&c);
    // `a+` and `a*` share one helper; `(a|"x")+` gets its own.
    assert!(r.contains(&"__start_plus_0: a".to_string()), "{r:?}");
    assert!(r.contains(&"__start_plus_0: __start_plus_0 a".to_string()));
    assert!(r.contains(&"start: __start_plus_0 COMMA __start_plus_0 SEMICOLON __start_plus_1".to_string()));
    assert!(r.contains(&"start: __start_plus_0 COMMA SEMICOLON __start_plus_1".to_string()));
    assert!(r.contains(&"__start_plus_1: __start_plus_1 X".to_string()));
    assert_eq!(r.len(), 1 + 2 + 2 + 4);
}

#[test]
fn repeats() {
    let c = cfg("start: \"a\"~3 \"b\"~1..2\n");
    assert_eq!(rules(&c), vec!["start: A A A B", "start: A A A B B"]);
    // Large repeats use helper rules (Lark's factorization) instead of 60 inline alternatives.
    let c = cfg("start: \"a\"~60\n");
    assert!(c.rules.len() < 10, "{:?}", rules(&c));
    assert!(rules(&c).iter().any(|r| r.starts_with("__start_repeat_a")));
}

#[test]
fn templates_instantiate_per_argument_list() {
    let c = cfg("start: _sep{x, \",\"} _sep{y, \";\"} _sep{x, \",\"}\n_sep{e, s}: e (s e)*\nx: \"x\"\ny: \"y\"\n");
    let r = rules(&c);
    assert!(r.contains(&"start: _sep{x,COMMA} _sep{y,SEMICOLON} _sep{x,COMMA}".to_string()), "{r:?}");
    assert!(r.contains(&"_sep{x,COMMA}: x".to_string()));
    assert!(r.contains(&"_sep{x,COMMA}: x ___sep{x,COMMA}_star_0".to_string()));
    assert!(r.contains(&"___sep{x,COMMA}_star_0: ___sep{x,COMMA}_star_0 COMMA x".to_string()));
    assert_eq!(r.iter().filter(|s| s.starts_with("_sep{")).count(), 4);
    let e = error("start: _sep{x}\n_sep{e, s}: e (s e)*\nx: \"x\"\n");
    assert_eq!(e.kind(), ErrorKind::Grammar);
    assert_eq!(e.message(), "g.lark:1:8: template '_sep' expects 2 argument(s), got 1");
}

#[test]
fn anonymous_terminal_names_follow_lark() {
    let c = cfg("start: \"(\" \"def\" \"==\" /[0-9]+/ \"_\" \"\\\"\" SL \"/\" \"if\"i\nSL: \"/\"\n");
    assert_eq!(rules(&c), vec!["start: LPAR DEF __ANON_0 __ANON_1 UNDERSCORE DBLQUOTE SL SL IF"]);
    let t = c.terminal(c.terminal_by_name("IF").unwrap());
    assert_eq!(t.pattern, TerminalPattern::Literal { text: "if".into(), case_insensitive: true, regex: "(?i:if)".into() });
    let t = c.terminal(c.terminal_by_name("__ANON_0").unwrap());
    assert_eq!(t.pattern, TerminalPattern::Literal { text: "==".into(), case_insensitive: false, regex: "==".into() });
    // A literal whose uppercase name is taken by another terminal gets __ANON_n.
    let c = cfg("start: \"def\" DEF\nDEF: /def+/\n");
    assert_eq!(rules(&c), vec!["start: __ANON_0 DEF"]);
}

#[test]
fn terminal_definitions_become_one_regex() {
    let c = cfg(concat!(
        "start: A B C D E F G H\n",
        "A.2: \"a\"..\"c\" (\"x\" | \"y\")+\n",
        "B: /ab+/i\n",
        "C: \"q\" ~ 2..3\n",
        "D: A \"-\" DIG?\n",
        "DIG: \"0\"..\"9\"\n",
        "E: /a.b/s\n",
        "F: \"\\\\\" \"\\n\" \"\\x41\"\n",
        "G: /a|b/ \"c\"\n",
        "H: [\"+\"] /[0-9]/\n",
    ));
    assert_eq!(c.terminal(c.terminal_by_name("A").unwrap()).priority, 2);
    assert!(full_match(&c, "A", "bxyx") && !full_match(&c, "A", "dx") && !full_match(&c, "A", "b"));
    assert!(full_match(&c, "B", "ABB") && !full_match(&c, "B", "a"));
    assert!(full_match(&c, "C", "qq") && full_match(&c, "C", "qqq") && !full_match(&c, "C", "qqqq"));
    assert!(full_match(&c, "D", "ax-") && full_match(&c, "D", "cy-7"));
    assert!(full_match(&c, "E", "a\nb"));
    assert!(full_match(&c, "F", "\\\nA"));
    // As in Lark, the parts of a terminal are joined without parentheses: `a|bc`.
    assert!(full_match(&c, "G", "bc") && full_match(&c, "G", "a") && !full_match(&c, "G", "ac"));
    assert!(full_match(&c, "H", "+1") && full_match(&c, "H", "1"));
    assert!(!c.terminal(c.terminal_by_name("A").unwrap()).is_literal());
    // A terminal defined as exactly one string literal is a Literal.
    let c = cfg("start: K\nK: \"k.\"\n");
    assert_eq!(c.terminals[0].pattern, TerminalPattern::Literal { text: "k.".into(), case_insensitive: false, regex: "k\\.".into() });
}

#[test]
fn python_regex_dialect_is_translated() {
    let c = cfg("start: A B C\nA: /x\\Z/\nB: /(?P<n>[[&&])+/\nC: /a b # comment\n c/x\n");
    assert_eq!(c.terminal(c.terminal_by_name("A").unwrap()).regex(), Some("x\\z"));
    assert!(full_match(&c, "B", "[&&"));
    assert!(full_match(&c, "C", "abc"));
}

#[test]
fn ignore_declare_and_pruning() {
    let c = cfg("start: A _X\nA: \"a\"\nUNUSED: \"u\"\nunused: A\n%declare _X\n%ignore WS\n%ignore \" \"\n%ignore /\\t+/\nWS: /[ ]+/\n");
    assert_eq!(term_names(&c), ["A", "WS", "_X", "__IGNORE_1", "__IGNORE_2"].iter().map(|s| s.to_string()).collect());
    assert!(c.terminal(c.terminal_by_name("WS").unwrap()).ignored);
    assert!(!c.terminal(c.terminal_by_name("A").unwrap()).ignored);
    assert_eq!(c.terminal(c.terminal_by_name("_X").unwrap()).pattern, TerminalPattern::Declared);
    assert!(c.nonterminal_by_name("unused").is_none());
    let e = error("start: A\nA: \"a\"\n%declare A\n");
    assert_eq!(e.message(), "g.lark:3:10: terminal 'A' is defined more than once (first defined at g.lark:2:1)");
    let e = error("%declare A\nstart: A\nA: \"a\"\n");
    assert_eq!(e.message(), "g.lark:3:1: terminal 'A' is %declare'd (at g.lark:1:10) and also defined here");
}

#[test]
fn imports_from_common() {
    let c = cfg("start: NUMBER NAME WS_INLINE? ESCAPED_STRING\n%import common.NUMBER\n%import common (WS_INLINE, ESCAPED_STRING)\n%import common.CNAME -> NAME\n%ignore WS_INLINE\n");
    assert_eq!(term_names(&c), ["ESCAPED_STRING", "NAME", "NUMBER", "WS_INLINE"].iter().map(|s| s.to_string()).collect());
    for (t, yes, no) in [
        ("NUMBER", &["12", "1.5", ".5", "1e10", "2.E-3"][..], &["1.2.3", "e1", ""][..]),
        ("NAME", &["_a1", "abc"], &["1a", ""]),
        ("ESCAPED_STRING", &[r#""a\"b""#, r#""""#, r#""\\""#], &[r#""a"#, r#""a\""#]),
    ] {
        for y in yes {
            assert!(full_match(&c, t, y), "{t} should match {y:?}");
        }
        for n in no {
            assert!(!full_match(&c, t, n), "{t} should not match {n:?}");
        }
    }
    // Every terminal of the bundled common.lark loads and is lookaround-free.
    let names = ["DIGIT", "HEXDIGIT", "INT", "SIGNED_INT", "DECIMAL", "FLOAT", "SIGNED_FLOAT", "NUMBER", "SIGNED_NUMBER",
        "ESCAPED_STRING", "LETTER", "LCASE_LETTER", "UCASE_LETTER", "WORD", "CNAME", "WS_INLINE", "WS", "CR", "LF", "NEWLINE",
        "SH_COMMENT", "CPP_COMMENT", "C_COMMENT", "SQL_COMMENT"];
    let g = format!("start: {}\n%import common ({})\n", names.join(" "), names.join(", "));
    let c = cfg(&g);
    // C_COMMENT is Lark's lazy `/\*(.|\n)*?\*/`: as a regex it fully matches "/* a */ b */", but as a
    // lexeme (leftmost-first, Python's re.match) it ends at the first "*/".
    assert!(full_match(&c, "C_COMMENT", "/* a * b **/"));
    assert!(full_match(&c, "NEWLINE", "\r\n\n") && full_match(&c, "SIGNED_FLOAT", "-1.5e3"));
    let e = error("start: A\n%import common.NOPE\n");
    assert_eq!(e.message(), "g.lark:2:1: cannot import 'NOPE': it is not defined in common.lark");
    let e = error("start: A\n%import nowhere.A\n");
    assert!(e.message().starts_with("g.lark:2:1: cannot import 'nowhere'"), "{}", e.message());
}

#[test]
fn imports_of_sibling_files_are_namespaced() {
    let dir = temp_dir("sibling");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("main.lark"), "start: pair item TOK2\nitem: \"m\"\n%import .sub.lib (pair, item2)\n%import .sub.lib.TOK -> TOK2\n").unwrap();
    std::fs::write(
        dir.join("sub/lib.lark"),
        "pair: \"(\" item \",\" item \")\"\nitem: \"i\" | leaf\nitem2: \"z\"\nTOK: \"t\" DIGIT\n%import common.DIGIT\n%import .leafs.leaf\n",
    )
    .unwrap();
    std::fs::write(dir.join("sub/leafs.lark"), "leaf: \"l\"\n").unwrap();
    let c = load_grammar_file(&dir.join("main.lark"), None).unwrap();
    let r = rules(&c);
    // The sibling's own `item` does not clash with ours.
    assert!(r.contains(&"start: pair item TOK2".to_string()), "{r:?}");
    assert!(r.contains(&"pair: LPAR sub__lib__item COMMA sub__lib__item RPAR".to_string()));
    assert!(r.contains(&"sub__lib__item: sub__lib__leaf".to_string()));
    assert!(r.contains(&"sub__lib__leaf: L".to_string()));
    assert!(r.contains(&"item: M".to_string()));
    assert!(full_match(&c, "TOK2", "t7"));
    // item2 is imported but unreachable: dropped.
    assert!(c.nonterminal_by_name("item2").is_none());
    std::fs::write(dir.join("bad.lark"), "start: x\n%import .missing.x\n").unwrap();
    let e = load_grammar_file(&dir.join("bad.lark"), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Grammar);
    assert!(e.message().contains("bad.lark:2:1: cannot import '.missing'") && e.message().contains("missing.lark not found"), "{}", e.message());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn override_and_extend() {
    let c = cfg("start: a\na: \"x\"\n%override a: \"y\"\n%extend a: \"z\"\n");
    assert_eq!(rules(&c), vec!["a: Y", "a: Z", "start: a"]);
    assert!(error("start: a\n%override a: \"y\"\n").message().contains("cannot %override 'a'"));
}

#[test]
fn indent_directive() {
    let g = "start: (_NL | stmt)*\nstmt: NAME \":\" _NL _INDENT stmt+ _DEDENT | NAME \"(\" \")\" _NL | \"[\" \"]\" _NL\n\
             NAME: /[a-z]+/\n_NL: /(\\r?\\n[\\t ]*)+/\n%declare _INDENT _DEDENT\n%indent _NL _INDENT _DEDENT\n";
    let c = cfg(g);
    let ind = c.indent.clone().expect("indent config");
    assert_eq!(c.terminal(ind.newline).name, "_NL");
    assert_eq!(c.terminal(ind.indent).name, "_INDENT");
    assert_eq!(c.terminal(ind.dedent).name, "_DEDENT");
    let names = |v: &[grammask::ids::TerminalId]| v.iter().map(|&t| c.terminal(t).name.clone()).collect::<BTreeSet<_>>();
    assert_eq!(names(&ind.open), ["LPAR", "LSQB"].iter().map(|s| s.to_string()).collect());
    assert_eq!(names(&ind.close), ["RPAR", "RSQB"].iter().map(|s| s.to_string()).collect());
    let e = error("start: A _I _D\nA: \"a\"\n_I: \"i\"\n_D: \"d\"\n_NL: /\\n/\n%indent _NL _I _D\n");
    assert_eq!(e.message(), "g.lark:6:13: %indent: '_I' must be %declare'd (the indentation layer produces it), but it is defined");
    let e = error("start: A\nA: \"a\"\n%declare _I _D\n%indent _NL _I _D\n");
    assert_eq!(e.message(), "g.lark:4:9: %indent names undefined terminal '_NL'");
}

#[test]
fn reject_directive() {
    use grammask::grammar::LexerMode;
    use grammask::reference::recognizer::Recognizer;
    // `%reject`ed terminals are lexed (maximal munch picks them) but no rule
    // accepts them: `0x` alone is refused instead of lexing as `0` `x`.
    let g = "%lexer longest\nstart: (NUM | NAME)+\nNUM: /0x[0-9a-f]+|[0-9]+/\nNAME: /[a-z]+/\nBAD: /0x/\n%reject BAD\n%ignore \" \"\n";
    let c = cfg(g);
    assert!(term_names(&c).contains("BAD"));
    let r = Recognizer::new(c.clone()).unwrap();
    assert!(r.check(b"0x1f y 0 x").is_ok());
    assert!(r.check(b"0xy").is_err());
    assert!(r.check(b"0x").is_err());
    // Without the directive, BAD is dropped like any unused terminal (Lark).
    let c2 = cfg(&g.replace("%reject BAD\n", ""));
    assert!(!term_names(&c2).contains("BAD"));
    assert!(Recognizer::new(c2).unwrap().check(b"0xy").is_ok());
    // The contextual lexer cannot lex a terminal no rule uses: refused, also as an override.
    let e = error(&g.replace("%lexer longest\n", ""));
    assert_eq!(e.message(), "g.lark:5:9: %reject of 'BAD' needs a global lexer (%lexer longest or basic): the contextual lexer lexes only the terminals the parser can accept");
    let mut c3 = c.clone();
    let e = grammask::frontend::lark::set_lexer(&mut c3, LexerMode::Contextual).unwrap_err();
    assert!(e.message().starts_with("the contextual lexer cannot lex the %reject'ed terminal(s) BAD"), "{}", e.message());
    assert!(grammask::frontend::lark::set_lexer(&mut c3, LexerMode::Basic).is_ok());
    let e = error("%lexer longest\nstart: A\nA: \"a\"\n%reject A\n");
    assert_eq!(e.message(), "g.lark:4:9: %reject of terminal 'A', which is used by a rule; a rejected terminal must not be accepted anywhere");
    let e = error("%lexer longest\nstart: A\nA: \"a\"\n%reject B\n");
    assert_eq!(e.message(), "g.lark:4:9: %reject of undefined terminal 'B' (it needs a pattern)");
    let e = error("%lexer longest\nstart: A\nA: \"a\"\n%reject\n");
    assert_eq!(e.kind(), ErrorKind::GrammarSyntax);
}

#[test]
fn syntax_errors_name_file_line_col() {
    let cases = [
        ("start: value\nvalue | \"x\"\n", "g.lark:2:7: expected ':' after rule name 'value', found '|'"),
        ("start: (\"a\" \"b\"\n", "g.lark:1:16: expected ')' to close '(' opened at 1:8, found end of line"),
        ("start: \"a\"\n  X: \"b\" ]\n", "g.lark:2:10: unmatched ']' (no '[' is open) in the definition of terminal 'X'"),
        ("start: * \"a\"\n", "g.lark:1:8: operator '*' must follow an expression"),
        ("start: \"a\"~\n", "g.lark:1:12: expected a number after '~', found end of line"),
        ("Start: \"a\"\n", "g.lark:1:1: invalid name 'Start': rule names are lowercase (`_?[a-z][_a-z0-9]*`), terminal names uppercase (`_?[A-Z][_A-Z0-9]*`)"),
        ("start: a\n%frobnicate x\n", "g.lark:2:1: unknown directive '%frobnicate'; expected one of %import, %ignore, %declare, %override, %extend, %indent, %lexer, %parser, %reject"),
        ("start: /abc\n", "g.lark:1:8: unterminated regex literal (expected a closing '/')"),
        ("start: \"a\" -> B\n", "g.lark:1:15: expected an alias (a lowercase rule name) after '->', found terminal name 'B'"),
        ("start: a\n\na: \"x\" \"y\":\n", "g.lark:3:11: expected an expression, '|' or end of line (a definition ends at a newline; continuation lines must start with '|'), found ':'"),
    ];
    for (text, msg) in cases {
        let e = error(text);
        assert_eq!(e.kind(), ErrorKind::GrammarSyntax, "{text:?}");
        assert_eq!(e.message(), msg, "{text:?}");
    }
}

#[test]
fn semantic_errors_name_file_line_col() {
    let cases = [
        ("start: a b\na: \"x\"\n", "g.lark:1:10: undefined rule 'b' (used in rule 'start')"),
        ("start: A\nA: \"a\" B\n", "g.lark:2:8: undefined terminal 'B' (used in terminal 'A')"),
        ("start: \"a\"\nstart: \"b\"\n", "g.lark:2:1: rule 'start' is defined more than once (first defined at g.lark:1:1)"),
        ("start: A\nA: \"a\" A\n", "g.lark:2:1: recursion in terminal 'A' (recursion is only allowed in rules, not terminals)"),
        ("start: A\nA: \"a\" b\nb: \"b\"\n", "g.lark:2:8: rules are not allowed inside terminals ('b' in terminal 'A')"),
        ("start: \"\"\n", "g.lark:1:8: empty string literal (terminals must match at least one character)"),
        ("start: A\n%ignore B\nA: \"a\"\n", "g.lark:2:9: %ignore of undefined terminal 'B'"),
    ];
    for (text, msg) in cases {
        let e = error(text);
        assert_eq!(e.kind(), ErrorKind::Grammar, "{text:?}");
        assert_eq!(e.message(), msg, "{text:?}");
    }
    // An explicitly named start rule must exist ...
    let e = parse_grammar("other: \"a\"\n", "g.lark", Some("start"), &|_| None).unwrap_err();
    assert_eq!((e.kind(), e.message()), (ErrorKind::Grammar, "start rule 'start' is not defined"));
    // ... while without one, `start` or else the first rule of the file is the start.
    let c = cfg("other: \"a\"\nsecond: \"b\"\n");
    assert_eq!(c.nonterminal(c.start).name, "other");
    let e = error("start: A\nA: /a(b/\n");
    assert_eq!(e.kind(), ErrorKind::Regex);
    assert!(e.message().starts_with("g.lark:2:1: terminal 'A' has an invalid regex"), "{}", e.message());
    // The error names the user's pattern, not its translation (`\d` is ~100 Unicode ranges there).
    let e = error("start: A\nA: /(\\d{3}-\\d{4}/\n");
    assert_eq!(e.message(), "g.lark:2:1: terminal 'A' has an invalid regex /(\\d{3}-\\d{4}/: unclosed group");
}

#[test]
fn lookaround_is_reported_for_all_terminals_at_once() {
    let e = error("start: A B C D\nA: /a(?=b)/\nB: /(?<!x)b/\nC: \"c\"\nD: /(d)\\1/\nE: /(?!unused)/\n");
    assert_eq!(e.kind(), ErrorKind::Grammar);
    let lines: Vec<&str> = e.message().lines().skip(1).map(str::trim).collect();
    assert_eq!(lines, vec!["g.lark:2:1: A uses lookahead `(?=`", "g.lark:3:1: B uses lookbehind `(?<!`", "g.lark:5:1: D uses backreference `\\1`"]);
}

fn python_lark() -> (PathBuf, String) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/lark/grammars/python.lark");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}). Run the setup step that fetches Lark's grammars:\n  mkdir -p models && cd /tmp && pip download --no-deps lark==1.2.2 -d /tmp/larkdl && cd /tmp/larkdl && unzip -o lark-*.whl 'lark/grammars/*' -d <repo>/models/",
            p.display()
        )
    });
    (p, text)
}

/// Terminal names listed by a lookaround error (one `  file:line:col: NAME uses ...` line each).
fn listed_terminals(msg: &str) -> BTreeSet<String> {
    msg.lines().skip(1).filter_map(|l| l.split(": ").nth(1)?.split(' ').next().map(str::to_string)).collect()
}

/// Lark's own python.lark loads unmodified: its string terminals are the
/// escaped-string idioms (with `(?!"")` and the triple-quoted form) and
/// DEC_NUMBER ends with a one-character lookahead, all compiled exactly.
#[test]
fn python_lark_loads_unmodified() {
    let (_, text) = python_lark();
    let c = parse_grammar(&text, "python.lark", Some("file_input"), &|_| None).unwrap_or_else(|e| panic!("{e}"));
    // Same BNF size as Lark 1.2.2's own EBNF→BNF for this grammar (537 rules).
    assert_eq!(c.rules.len(), 537);
    assert!(full_match(&c, "STRING", r#"rb'a\'b'"#) && full_match(&c, "STRING", r#""x""#) && !full_match(&c, "STRING", r#""a"b""#));
    // `""` is the empty string, but not where a third quote follows (Python's `(?!"")`).
    assert!(full_match(&c, "STRING", r#""""#) && !full_match(&c, "STRING", "\"\n\""));
    assert!(full_match(&c, "LONG_STRING", "\"\"\"a\n\"b\"\"\"") && full_match(&c, "LONG_STRING", r#"'''a\''''"#));
    assert!(!full_match(&c, "LONG_STRING", r#""""a""""""#));
    assert!(full_match(&c, "DEC_NUMBER", "1_000") && full_match(&c, "DEC_NUMBER", "00"));
    // `0(?:_?0)*(?![1-9])`: no match when a digit 1-9 follows the zeros.
    assert!(!full_match(&c, "DEC_NUMBER", "01") && !full_match(&c, "DEC_NUMBER", "0_01"));
    assert!(full_match(&c, "IMAG_NUMBER", "1.5j") && full_match(&c, "HEX_NUMBER", "0xFF"));
    assert!(c.terminal_by_name("_INDENT").is_some() && c.terminal_by_name("_NEWLINE").is_some());
    assert!(c.terminals.iter().filter(|t| t.ignored).count() == 3);
    // What stays refused is listed per terminal: a lookbehind outside the idiom.
    let bad = text.replace(r#"("(?!"").*?(?<!\\)(\\\\)*?""#, r#"("(?!"").*?(?<!\\)(\\\\)*?"x"#);
    let e = parse_grammar(&bad, "python.lark", Some("file_input"), &|_| None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Grammar);
    assert_eq!(listed_terminals(e.message()), BTreeSet::from(["STRING".to_string()]), "{}", e.message());
    assert!(e.message().contains("python.lark:284:1: STRING uses"), "{}", e.message());
}

proptest! {

    #[test]
    fn random_text_never_panics(s in "[ -~\\n\\t]{0,80}") {
        let _ = parse_grammar(&s, "f.lark", None, &|_| None);
    }

    #[test]
    fn grammar_like_text_never_panics(parts in proptest::collection::vec(prop_oneof![
        Just("start"), Just(":"), Just(" a"), Just(" A"), Just("\"x\""), Just("/[a-z]+/"), Just("|"), Just("("), Just(")"),
        Just("["), Just("]"), Just("+"), Just("*"), Just("?"), Just("~"), Just(" 3"), Just(".."), Just("{"), Just("}"),
        Just(","), Just("\n"), Just("%import common.INT"), Just("%ignore"), Just("%declare"), Just("->"), Just("."),
        Just("\\"), Just("\"a\"..\"z\""), Just("/(?=x)/"), Just("%indent"), Just("_t{a, b}"), Just("i"),
    ], 0..40)) {
        let s: String = parts.concat();
        let _ = parse_grammar(&s, "f.lark", None, &|_| None);
    }

    #[test]
    fn mutated_python_lark_never_panics(edits in proptest::collection::vec((0usize..20000, 0usize..6, any::<char>()), 1..6)) {
        let (_, text) = python_lark();
        let mut chars: Vec<char> = text.chars().collect();
        for (at, len, c) in edits {
            let at = at % (chars.len() + 1);
            let end = (at + len).min(chars.len());
            if len % 2 == 0 { chars.splice(at..end, std::iter::once(c)); } else { chars.insert(at, c); }
        }
        let s: String = chars.into_iter().collect();
        let _ = parse_grammar(&s, "python.lark", Some("file_input"), &|_| None);
    }
}

#[test]
fn data_driven_case_grammars_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars/cases");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with("frontend_") && name.ends_with(".json")) {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let text = v["grammar_text"].as_str().unwrap();
        let start = v["start"].as_str();
        parse_grammar(text, &name, start, &|_| None).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(v["accept"].as_array().is_some_and(|a| !a.is_empty()) && v["reject"].as_array().is_some_and(|a| !a.is_empty()), "{name}");
        n += 1;
    }
    assert!(n >= 5, "expected the frontend_*.json cases, found {n}");
}

#[test]
fn regex_errors_name_the_users_pattern_not_its_translation() {
    // `\d` translates to ~100 Unicode ranges: the message shows the user's pattern and the column in it.
    let e = grammask::frontend::regex::to_cfg(r"(\d{3}-\d{4}").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Regex);
    assert_eq!(e.message(), r#"regex constraint "(\\d{3}-\\d{4}": unclosed group at column 1"#);
    let e = grammask::frontend::regex::to_cfg(r"\w\d{3,2}").unwrap_err();
    assert_eq!(e.message(), r#"regex constraint "\\w\\d{3,2}": invalid repetition count range, the start must be <= the end at column 5"#);
}
