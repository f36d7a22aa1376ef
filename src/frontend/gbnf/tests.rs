//! The extraction against a character-level definition: an Earley
//! recognizer over the parsed rules (no terminals, no lexer) decides each
//! text, and the extracted grammar's reference oracle (lexer + parser) must
//! agree on every text: random derivations, their mutations, and every short
//! string over the grammar's characters.

use super::syntax::{parse, Expr, Ranges};
use super::*;
use crate::reference::oracle::Oracle;
use crate::ErrorKind;

#[derive(Clone, Debug)]
enum S {
    C(Ranges),
    N(usize),
}

/// The rules as plain BNF over character sets.
struct Bnf {
    prods: Vec<(usize, Vec<S>)>,
    n: usize,
}

impl Bnf {
    fn new(g: &syntax::Grammar) -> Bnf {
        let mut b = Bnf { prods: Vec::new(), n: g.rules.len() };
        for (i, r) in g.rules.iter().enumerate() {
            match &r.body {
                Expr::Alt(xs) => {
                    for x in xs {
                        let rhs = b.seq(x);
                        b.prods.push((i, rhs));
                    }
                }
                e => {
                    let rhs = b.seq(e);
                    b.prods.push((i, rhs));
                }
            }
        }
        b
    }
    fn fresh(&mut self) -> usize {
        self.n += 1;
        self.n - 1
    }
    fn seq(&mut self, e: &Expr) -> Vec<S> {
        let mut out = Vec::new();
        self.push(e, &mut out);
        out
    }
    fn push(&mut self, e: &Expr, out: &mut Vec<S>) {
        match e {
            Expr::Lit(cs) => out.extend(cs.iter().map(|&c| S::C(vec![(c as u32, c as u32)]))),
            Expr::Class(r) => out.push(S::C(r.clone())),
            Expr::Ref(i) => out.push(S::N(*i)),
            Expr::Seq(xs) => xs.iter().for_each(|x| self.push(x, out)),
            Expr::Alt(xs) => {
                let n = self.fresh();
                for x in xs {
                    let rhs = self.seq(x);
                    self.prods.push((n, rhs));
                }
                out.push(S::N(n));
            }
            Expr::Rep(x, m, max) => {
                for _ in 0..*m {
                    self.push(x, out);
                }
                let n = self.fresh();
                self.prods.push((n, vec![]));
                match max {
                    None => {
                        let mut rhs = self.seq(x);
                        rhs.push(S::N(n));
                        self.prods.push((n, rhs));
                    }
                    Some(k) => {
                        // n -> ε | x | x x | ... (k - m copies at most)
                        for c in 1..=(k - m) {
                            let mut rhs = Vec::new();
                            for _ in 0..c {
                                self.push(x, &mut rhs);
                            }
                            self.prods.push((n, rhs));
                        }
                    }
                }
                out.push(S::N(n));
            }
        }
    }

    /// Earley recognition of `text` from `start`.
    fn accepts(&self, start: usize, text: &[char]) -> bool {
        use std::collections::HashSet;
        type Item = (usize, usize, usize); // (prod, dot, origin)
        let mut sets: Vec<Vec<Item>> = vec![Vec::new(); text.len() + 1];
        let mut seen: Vec<HashSet<Item>> = vec![HashSet::new(); text.len() + 1];
        let add = |sets: &mut Vec<Vec<Item>>, seen: &mut Vec<HashSet<Item>>, k: usize, it: Item| {
            if seen[k].insert(it) {
                sets[k].push(it);
            }
        };
        for (p, (lhs, _)) in self.prods.iter().enumerate() {
            if *lhs == start {
                add(&mut sets, &mut seen, 0, (p, 0, 0));
            }
        }
        for k in 0..=text.len() {
            let mut i = 0;
            while i < sets[k].len() {
                let (p, dot, org) = sets[k][i];
                i += 1;
                let rhs = &self.prods[p].1;
                if dot == rhs.len() {
                    let lhs = self.prods[p].0;
                    let parents: Vec<Item> = sets[org].clone();
                    for (q, d, o) in parents {
                        if matches!(self.prods[q].1.get(d), Some(S::N(n)) if *n == lhs) {
                            add(&mut sets, &mut seen, k, (q, d + 1, o));
                        }
                    }
                    // Nullable completions into items added later at k (org == k).
                    continue;
                }
                match &rhs[dot] {
                    S::N(n) => {
                        for (q, (lhs, _)) in self.prods.iter().enumerate() {
                            if lhs == n {
                                add(&mut sets, &mut seen, k, (q, 0, k));
                            }
                        }
                        // An already completed nullable n at k.
                        let done: Vec<Item> = sets[k].iter().copied().filter(|&(q, d, o)| o == k && self.prods[q].0 == *n && d == self.prods[q].1.len()).collect();
                        if !done.is_empty() {
                            add(&mut sets, &mut seen, k, (p, dot + 1, org));
                        }
                    }
                    S::C(r) => {
                        if k < text.len() && r.iter().any(|&(a, b)| a <= text[k] as u32 && text[k] as u32 <= b) {
                            add(&mut sets, &mut seen, k + 1, (p, dot + 1, org));
                        }
                    }
                }
            }
        }
        sets[text.len()].iter().any(|&(p, d, o)| o == 0 && self.prods[p].0 == start && d == self.prods[p].1.len())
    }

    /// A random string of `n`'s language (bounded depth; `None` if it ran out).
    fn sample(&self, n: usize, rng: &mut u64, depth: usize, out: &mut Vec<char>) -> bool {
        if depth > 40 || out.len() > 200 {
            return false;
        }
        let opts: Vec<usize> = (0..self.prods.len()).filter(|&p| self.prods[p].0 == n).collect();
        // Deep: prefer the shortest production.
        let p = if depth > 12 { *opts.iter().min_by_key(|&&p| self.prods[p].1.len()).unwrap() } else { opts[next(rng) as usize % opts.len()] };
        for s in &self.prods[p].1 {
            match s {
                S::C(r) => out.push(pick(r, rng)),
                S::N(m) => {
                    if !self.sample(*m, rng, depth + 1, out) {
                        return false;
                    }
                }
            }
        }
        true
    }
}

fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

fn pick(r: &Ranges, rng: &mut u64) -> char {
    let (a, b) = r[next(rng) as usize % r.len()];
    let span = (b - a + 1).min(200);
    char::from_u32(a + (next(rng) as u32 % span)).unwrap_or('a')
}

/// The extracted grammar and the character-level definition agree on many texts.
fn agree(src: &str, ebnf: bool, seed: u64) {
    let d = if ebnf { Dialect::Ebnf } else { Dialect::Gbnf };
    let g = parse(src, "t.gbnf", ebnf).unwrap();
    let root = g.rules.iter().position(|r| r.name == "root").unwrap();
    let bnf = Bnf::new(&g);
    let cfg = crate::constraint::gbnf_cfg(src, "t.gbnf", d, None).unwrap_or_else(|e| panic!("{src}\n{e:?}"));
    let oracle = Oracle::new(&cfg).unwrap();
    let mut rng = seed | 1;
    let mut alphabet: Vec<char> = Vec::new();
    let mut texts: Vec<Vec<char>> = Vec::new();
    for _ in 0..300 {
        let mut t = Vec::new();
        if bnf.sample(root, &mut rng, 0, &mut t) {
            alphabet.extend(t.iter().copied());
            texts.push(t);
        }
    }
    alphabet.sort_unstable();
    alphabet.dedup();
    alphabet.truncate(12);
    if alphabet.is_empty() {
        alphabet.push('a');
    }
    let n = texts.len();
    for i in 0..n {
        let mut t = texts[i].clone();
        match next(&mut rng) % 3 {
            0 if !t.is_empty() => {
                let k = next(&mut rng) as usize % t.len();
                t.remove(k);
            }
            1 => {
                let k = next(&mut rng) as usize % (t.len() + 1);
                t.insert(k, alphabet[next(&mut rng) as usize % alphabet.len()]);
            }
            _ if !t.is_empty() => {
                let k = next(&mut rng) as usize % t.len();
                t[k] = alphabet[next(&mut rng) as usize % alphabet.len()];
            }
            _ => {}
        }
        texts.push(t);
        // Every prefix of a valid text is a viable prefix: checked as concatenations below.
    }
    // Every string up to length 3 over the alphabet.
    let mut frontier: Vec<Vec<char>> = vec![vec![]];
    for _ in 0..3 {
        let mut nf = Vec::new();
        for f in &frontier {
            for &c in &alphabet {
                let mut x = f.clone();
                x.push(c);
                nf.push(x);
            }
        }
        texts.extend(nf.iter().cloned());
        frontier = nf;
    }
    texts.push(vec![]);
    let mut yes = 0;
    for t in &texts {
        let s: String = t.iter().collect();
        let want = bnf.accepts(root, t);
        let got = oracle.check(s.as_bytes()).is_ok();
        assert_eq!(got, want, "grammar:\n{src}\ntext {s:?}: definition {want}, extracted {got}\n{:#?}", cfg.terminals);
        yes += want as usize;
    }
    assert!(yes > 0, "no text of the language was tried");
}

#[test]
fn extraction_is_exact() {
    let grammars = [
        // llama.cpp's json.gbnf (string and number stay terminals).
        r#"root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws
array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws
string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
"#,
        // A whole regular root.
        "root ::= [a-z]* \"x\"\n",
        // A terminal that is a prefix of what follows it: must be split.
        "root ::= num \"5\" | num \"x\"\nnum ::= [0-9]+\n",
        // Overlapping classes and a keyword.
        "root ::= (kw | id) (\" \" (kw | id))*\nkw ::= \"if\" \"(\"\nid ::= [a-z]+ \";\"\n",
        // Recursion with nested groups and counted repetition.
        "root ::= item (\",\" item){0,3}\nitem ::= \"[\" root? \"]\" | [0-9]{1,2}\n",
        // Unicode and negated classes, `.`.
        "root ::= \"«\" [^»]* \"»\" (. \"!\")?\n",
        // Right-recursive list.
        "root ::= \"(\" list \")\"\nlist ::= [a-c] | [a-c] \" \" list\n",
    ];
    for (i, g) in grammars.iter().enumerate() {
        agree(g, false, 0x9E37_79B9_7F4A_7C15 ^ i as u64);
    }
    agree("root ::= a+ \"\" ( )\n  b\na ::= [\\-x]\nb ::= \"\\e\" | \"\\x1F600\"", true, 7);
}

fn error(src: &str, ebnf: bool) -> crate::Error {
    let d = if ebnf { Dialect::Ebnf } else { Dialect::Gbnf };
    crate::constraint::gbnf_cfg(src, "g.gbnf", d, None).expect_err(src)
}

#[test]
fn errors_name_the_place() {
    let cases: &[(&str, bool, ErrorKind, &str)] = &[
        ("root ::= \"a\" (\"b\"\n", false, ErrorKind::GrammarSyntax, "g.gbnf:2:1: expected `)`"),
        ("root ::= \"a\"\nx ::= [b-a]\n", false, ErrorKind::GrammarSyntax, "g.gbnf:2:8: character range out of order"),
        ("root ::= \"\\q\"\n", false, ErrorKind::GrammarSyntax, "g.gbnf:1:11: unknown escape"),
        ("root ::= foo\n", false, ErrorKind::Grammar, "g.gbnf:1:10: undefined rule `foo`"),
        ("start ::= \"a\"\n", false, ErrorKind::Grammar, "no `root` rule"),
        ("root ::= \"a\"\nroot ::= \"b\"\n", false, ErrorKind::Grammar, "defined twice"),
        ("root ::= <[42]> \"a\"\n", false, ErrorKind::Grammar, "g.gbnf:1:10: unsupported: token reference `<[42]>`"),
        ("root ::= \"a\" <|end|>\n", false, ErrorKind::Grammar, "unsupported: token reference `<|end|>`"),
        ("root ::= !<[7]>\n", false, ErrorKind::Grammar, "unsupported: token reference `!<[7]>`"),
        ("root ::= \"a\" (= \"b\")\n", true, ErrorKind::Grammar, "unsupported: lookahead assertion"),
        ("root ::= Regex(\"[0-9]+\")\n", true, ErrorKind::Grammar, "unsupported: xgrammar macro `Regex(...)`"),
        ("root ::= TagDispatch((\"<a>\", x))\nx ::= \"b\"\n", true, ErrorKind::Grammar, "macro `TagDispatch"),
        ("root[lazy] ::= [a-z]+\n", true, ErrorKind::Grammar, "g.gbnf:1:5: unsupported: rule options `[lazy]`"),
        ("root ::= \"a\"++\n", true, ErrorKind::GrammarSyntax, "two repetition operators"),
        ("root ::= \"a\"{3,1}\n", false, ErrorKind::GrammarSyntax, "below the minimum"),
        ("root ::= \"a\"{5000}\n", false, ErrorKind::Limit, "over the limit"),
        ("root ::= []\n", false, ErrorKind::GrammarSyntax, "empty character class"),
        ("root ::= \"\\uD800\"\n", false, ErrorKind::GrammarSyntax, "not a Unicode character"),
        ("root ::= \"a\" \"b\" )\n", false, ErrorKind::GrammarSyntax, "g.gbnf:1:18: expected the end of the line"),
    ];
    for (src, ebnf, kind, text) in cases {
        let e = error(src, *ebnf);
        assert_eq!(e.kind(), *kind, "{src}: {e:?}");
        assert!(e.message().contains(text), "{src}: {e:?} should contain {text:?}");
    }
}

/// Grammars that are not LALR(1) after lexer extraction run on the general
/// parser; the reference recognizer (textbook Earley) defines their language.
#[test]
fn not_lalr_runs_on_general_parser() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        // Not LR(1) at the character level: which digit is the last one.
        ("root ::= \"(\" root \")\" num [0-9] | \"x\"\nnum ::= [0-9]+\n", &["x", "(x)12", "((x)12)345"], &["(x)1", "(x)", "x1", "((x)12)3"]),
        // Ambiguous.
        ("root ::= x | y\nx ::= \"a\" x | \"a\"\ny ::= \"a\" y | \"a\"\n", &["a", "aaaa"], &["", "b", "aab"]),
    ];
    for (src, accept, reject) in cases {
        let cfg = crate::constraint::gbnf_cfg(src, "g.gbnf", Dialect::Gbnf, None).unwrap();
        assert_eq!(cfg.conflicts, crate::grammar::ConflictPolicy::General, "{src}");
        let r = crate::reference::recognizer::Recognizer::new(cfg).unwrap();
        for t in *accept {
            assert!(r.check(t.as_bytes()).is_ok(), "{src}: {t:?}");
        }
        for t in *reject {
            assert!(r.check(t.as_bytes()).is_err(), "{src}: {t:?}");
        }
    }
}

#[test]
fn start_rule_and_ebnf_layout() {
    // `start` picks another rule; a response format carries it.
    let rf = serde_json::json!({"type": "gbnf", "grammar": "root ::= item\nitem ::= [a-c]+\n", "start": "item"});
    let c = crate::constraint::Constraint::from_response_format(&rf).unwrap();
    let (cfg, _) = crate::constraint::to_cfg(&c, &Default::default()).unwrap();
    assert_eq!(cfg.nonterminal(cfg.start).name, "item");
    let e = crate::constraint::gbnf_cfg("root ::= \"a\"\n", "g.gbnf", Dialect::Gbnf, Some("nope")).unwrap_err();
    assert!(e.message().contains("no `nope` rule"), "{e:?}");
    // EBNF: a rule continues on lines that start with `|` or anything but `name ::=`.
    let src = "root ::= \"a\"\n  | \"b\" x\n  x\nx ::=\n \"c\"";
    let cfg = crate::constraint::gbnf_cfg(src, "g.ebnf", Dialect::Ebnf, None).unwrap();
    let o = Oracle::new(&cfg).unwrap();
    assert!(o.check(b"a").is_ok() && o.check(b"bcc").is_ok() && o.check(b"bc").is_err());
    // GBNF: the same text is an error (a line starting with `|`).
    assert_eq!(crate::constraint::gbnf_cfg(src, "g.gbnf", Dialect::Gbnf, None).unwrap_err().kind(), ErrorKind::GrammarSyntax);
}

#[test]
fn which_rules_become_terminals() {
    let src = "root ::= \"[\" (num | root) (\",\" (num | root))* \"]\"\nnum ::= [0-9]+\n";
    let cfg = crate::constraint::gbnf_cfg(src, "t.gbnf", Dialect::Gbnf, None).unwrap();
    let names: Vec<String> = cfg.terminals.iter().map(|t| t.display_name()).collect();
    assert!(names.contains(&"num".to_string()), "{names:?}");
    // `num` followed by a digit: split to single digits.
    let src = "root ::= \"(\" root \")\" num \".\" | \"x\"\nnum ::= [0-9]+ (\".\" [0-9]+)?\n";
    let cfg = crate::constraint::gbnf_cfg(src, "t.gbnf", Dialect::Gbnf, None).unwrap();
    assert!(cfg.terminals.iter().all(|t| t.name != "num"), "{:?}", cfg.terminals);
    agree(src, false, 3);
}

/// What docs/gbnf.md says of llama.cpp's json.gbnf (fetched by scripts/gbnf/fetch.sh).
#[test]
fn json_gbnf_terminals() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/gbnf/llama.cpp/json.gbnf");
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}: run bash scripts/gbnf/fetch.sh"));
    let cfg = crate::constraint::gbnf_cfg(&src, "json.gbnf", Dialect::Gbnf, None).unwrap();
    let mut names: Vec<String> = cfg.terminals.iter().map(|t| t.display_name()).collect();
    names.sort();
    assert_eq!(names, ["\",\"", "\":\"", "\"[\"", "\"]\"", "\"{\"", "\"}\"", "number", "string", "value__9", "ws"]);
    agree(&src, false, 11);
}

/// Nothing panics on malformed text: random edits of real grammars compile or
/// fail with an error.
#[test]
fn mutated_grammars_never_panic() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/gbnf/llama.cpp");
    let mut srcs: Vec<String> = ["json.gbnf", "c.gbnf", "chess.gbnf", "list.gbnf", "japanese.gbnf"]
        .iter()
        .map(|f| std::fs::read_to_string(format!("{path}/{f}")).unwrap_or_else(|e| panic!("{f}: {e}: run bash scripts/gbnf/fetch.sh")))
        .collect();
    srcs.push("root ::= a+ \"\" ( )\n  b\na ::= [\\-x]\nb ::= \"\\e\" | \"\\x1F600\"".into());
    let pieces = ["\"", "[", "]", "(", ")", "|", "*", "+", "?", "{2,", "}", "\\", "\\u12", "::=", "\n", "#", "^", "-", "<", "!", ".", "é", "x", " "];
    let mut rng = 12345u64;
    let mut ok = 0;
    for i in 0..1500 {
        let src: Vec<char> = srcs[i % srcs.len()].chars().collect();
        let mut t = src.clone();
        for _ in 0..1 + next(&mut rng) % 3 {
            let k = next(&mut rng) as usize % (t.len() + 1);
            if next(&mut rng) % 2 == 0 && k < t.len() {
                t.remove(k);
            } else {
                let p = pieces[next(&mut rng) as usize % pieces.len()];
                for (j, c) in p.chars().enumerate() {
                    t.insert(k + j, c);
                }
            }
        }
        let s: String = t.into_iter().collect();
        let d = if i % 2 == 0 { Dialect::Gbnf } else { Dialect::Ebnf };
        ok += crate::constraint::gbnf_cfg(&s, "m.gbnf", d, None).is_ok() as usize;
    }
    assert!(ok > 0, "some edits leave a valid grammar");
}
