//! Reference oracle for small cases: masks computed by brute force from the
//! definition, compared with [`Matcher::compute_mask`].
//!
//! Definition: after the text `p`, token `t` is allowed iff `p ++ t` is a
//! *viable prefix*, i.e. `p ++ t ++ w` is accepted by `Recognizer::check` for
//! some `w`; EOS is allowed iff `p` itself is accepted.
//!
//! The oracle finds `w` by iterative deepening over a small *completion
//! alphabet* `C`, up to a bound `B(s)`, memoizing every answer. Each grammar
//! below comes with a short argument that every viable string `s` has a
//! completion over `C` of length at most `B(s)`: then "no completion within
//! the bound" proves `s` dead, and since dead strings stay dead, a string whose
//! prefix is dead is dead without any search. The search also records the
//! longest shortest-completion it met; the test asserts it stays below
//! `B` (slack of at least one character), which would flag a wrong argument.
//! Where nesting makes completions long (brackets, JSON), each searched string
//! is also tried with a fixed *tail* (the closers of the open brackets, found
//! by a plain scan), so the search itself stays short; for the real
//! `json.lark` (large alphabet) the tails alone do the work (see
//! [`json_tails`] for the argument).
//!
//! Prefixes come from random walks over the matcher's own masks and from
//! random strings the oracle calls viable, split into vocabulary tokens in
//! random ways. Along the way: rollback restores masks, refused commits
//! change nothing, `forced_tokens` agrees with singleton oracle masks,
//! `is_accepting` agrees with the oracle's EOS, and a 2,000-token walk keeps
//! the number of configurations small.

use crate::common;
use common::bit;
use grammask::grammar::{Cfg, LexerMode, TerminalPattern};
use grammask::ids::TokenId;
use grammask::matcher::{Matcher, MatcherOptions};
use grammask::reference::recognizer::Recognizer;
use grammask::store::MaskStore;
use grammask::vocab::Vocab;
use std::collections::HashMap;
use std::rc::Rc;

/// Seeded SplitMix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy)]
enum Memo {
    /// Shortest completion length (exact).
    Dist(u8),
    /// No completion of length <= this.
    DeadUpTo(u8),
}

/// Brute-force viability oracle for one grammar.
struct Oracle {
    rec: Recognizer,
    compl: Vec<u8>,
    bound: fn(&[u8]) -> usize,
    tails: fn(&[u8]) -> Vec<Vec<u8>>,
    memo: HashMap<Vec<u8>, Memo>,
    truth: HashMap<Vec<u8>, bool>,
    checks: u64,
    max_dist: usize,
    max_dist_at: Vec<u8>,
}

impl Oracle {
    fn new(rec: Recognizer, spec: &Spec) -> Self {
        Oracle {
            rec,
            compl: spec.compl.to_vec(),
            bound: spec.bound,
            tails: spec.tails,
            memo: HashMap::new(),
            truth: HashMap::new(),
            checks: 0,
            max_dist: 0,
            max_dist_at: Vec::new(),
        }
    }

    fn sentence(&mut self, s: &[u8]) -> bool {
        self.checks += 1;
        self.rec.check(s).is_ok()
    }

    /// Is `s ++ t` a sentence for one of the grammar's fixed tails `t` of `s`?
    fn completes(&mut self, s: &[u8]) -> bool {
        let mut buf = s.to_vec();
        for t in (self.tails)(s) {
            buf.truncate(s.len());
            buf.extend_from_slice(&t);
            if self.sentence(&buf) {
                return true;
            }
        }
        false
    }

    /// Shortest completion of `s` if it is at most `b` long.
    fn within(&mut self, s: &mut Vec<u8>, b: usize) -> Option<usize> {
        match self.memo.get(s.as_slice()) {
            Some(&Memo::Dist(d)) => return (d as usize <= b).then_some(d as usize),
            Some(&Memo::DeadUpTo(k)) if k as usize >= b => return None,
            _ => {}
        }
        let found = if self.completes(s) {
            Some(0)
        } else if b == 0 {
            None
        } else {
            let mut best: Option<usize> = None;
            for i in 0..self.compl.len() {
                s.push(self.compl[i]);
                let r = self.within(s, b - 1);
                s.pop();
                if let Some(d) = r {
                    best = Some(best.map_or(d + 1, |x| x.min(d + 1)));
                }
            }
            best
        };
        let m = match found {
            Some(d) => Memo::Dist(d as u8),
            None => Memo::DeadUpTo(b as u8),
        };
        self.memo.insert(s.clone(), m);
        found
    }

    /// Shortest completion within `limit`, by iterative deepening.
    fn shortest(&mut self, s: &[u8], limit: usize) -> Option<usize> {
        let mut buf = s.to_vec();
        (0..=limit).find_map(|b| self.within(&mut buf, b))
    }

    /// Is `s` a viable prefix? (Exact under the grammar's bound argument;
    /// a string with a dead prefix is dead.)
    fn viable(&mut self, s: &[u8]) -> bool {
        if let Some(&v) = self.truth.get(s) {
            return v;
        }
        let v = if !s.is_empty() && !self.viable(&s[..s.len() - 1]) {
            false
        } else {
            match self.shortest(s, (self.bound)(s)) {
                Some(d) => {
                    if d > self.max_dist {
                        self.max_dist = d;
                        self.max_dist_at = s.to_vec();
                    }
                    true
                }
                None => false,
            }
        };
        self.truth.insert(s.to_vec(), v);
        v
    }
}

/// One grammar under test.
struct Spec {
    name: &'static str,
    /// Applied to the parsed grammar (lexer mode, set terminals).
    patch: fn(&mut Cfg),
    lark: &'static str,
    /// Alphabet of random strings and of the length-<=2 tokens.
    alpha: &'static [u8],
    /// Completion alphabet and bound (see the per-grammar argument).
    compl: &'static [u8],
    bound: fn(&[u8]) -> usize,
    /// Fixed tails tried after each searched string (default: only the empty one).
    tails: fn(&[u8]) -> Vec<Vec<u8>>,
    extra: &'static [&'static str],
    /// Use `common::synthetic_vocab` (all bytes + grammar tokens) instead of
    /// the small vocabulary over `alpha`.
    synthetic: bool,
    /// Longest random prefix (bytes).
    max_len: usize,
    walks: usize,
    strings: usize,
}

fn no_patch(_: &mut Cfg) {}

/// The grammar of the lookahead specs.
const LOOKAHEAD_LARK: &str = r#"
start: item*
item: OP | RULE ";" | WORD "." | NUM "!"
OP: /[+*]|[?](?![a-z])/
RULE: /[?][a-z]+/
WORD: /[a-z]+(?![0-9])/
NUM: /[0-9]+/
%ignore " "
"#;

fn contextual(c: &mut Cfg) {
    c.lexer = LexerMode::Contextual;
}

fn basic(c: &mut Cfg) {
    c.lexer = LexerMode::Basic;
}

fn longest(c: &mut Cfg) {
    c.lexer = LexerMode::Longest;
}

fn longest_all(c: &mut Cfg) {
    c.lexer = LexerMode::LongestAll;
}

/// LongestAll, and terminal `W` becomes a set: 1 to 3 letters, never `if`.
fn word_set(c: &mut Cfg) {
    c.lexer = LexerMode::LongestAll;
    let w = c.terminal_by_name("W").unwrap();
    c.terminals[w.index()].pattern =
        TerminalPattern::Set { all: vec!["[a-z]+".into(), "[a-z]{0,3}".into()], none: vec!["if".into()] };
}

/// Tails of the `overlap` grammar: every viable string is a prefix of
/// `{"k…":"…"}`, and one of these finishes whatever is in progress.
fn overlap_tails(_: &[u8]) -> Vec<Vec<u8>> {
    ["", "}", "\"}", "\"\"}", ":\"\"}", "\":\"\"}", "k\":\"\"}", "\"k\":\"\"}", "{\"k\":\"\"}"].iter().map(|t| t.as_bytes().to_vec()).collect()
}

/// Tails of `basic_first`: a viable string ends after an item (nothing),
/// inside `a+` (`b!`), after `a+ b` (`!`), after `if` (` x.`), after `if `
/// or inside the NAME after `if` (`x.` / `.`), or inside a NAME (`;`).
fn basic_first_tails(_: &[u8]) -> Vec<Vec<u8>> {
    ["", "!", "b!", ".", "x.", " x.", ";"].iter().map(|t| t.as_bytes().to_vec()).collect()
}

fn no_tail(_: &[u8]) -> Vec<Vec<u8>> {
    vec![Vec::new()]
}

/// The closing brackets for the brackets `([{` left open in `s`, innermost
/// first, by a plain scan (skipping JSON strings if `strings`). For a viable
/// string of the bracket grammars this is exactly the stack of open
/// constructs; for other strings any answer is fine (they are dead anyway).
fn closers(s: &[u8], strings: bool) -> Vec<u8> {
    let (mut stack, mut in_str, mut esc) = (Vec::new(), false, false);
    for &b in s {
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' if strings => in_str = true,
            b'(' => stack.push(b')'),
            b'[' => stack.push(b']'),
            b'{' => stack.push(b'}'),
            b')' | b']' | b'}' => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.reverse();
    stack
}

/// Tails for `json.lark`: finish the lexeme in progress, then close the open
/// brackets. A viable JSON prefix ends (after any whitespace) in one of:
/// a partial string (`"` finishes it; after `\\` `n"`; after `\\u` and k hex
/// digits, 4-k `0`s and `"`; a partial UTF-8 character first needs its
/// continuation bytes), possibly a key (then `:0` more); a partial number
/// (`-`, `1.`, `1e`, `1e+` take `0`); a partial literal (the rest of
/// `true`/`false`/`null`); a complete value (nothing); or a structural
/// position: start/`[`/`,` in an array/`:` take `0`, `{` takes nothing (the
/// closer), `,` in an object takes `"":0`, a finished key takes `:0`.
fn json_tails(s: &[u8]) -> Vec<Vec<u8>> {
    // Continuation bytes owed by a trailing partial UTF-8 character.
    let mut owed = 0;
    for (back, &b) in s.iter().rev().take(3).enumerate() {
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            0x80..=0xBF => continue,
            _ => break,
        };
        owed = (need - 1usize).saturating_sub(back);
        break;
    }
    let mut utf: Vec<Vec<u8>> = vec![Vec::new()];
    if owed > 0 {
        utf = [0x80u8, 0x90, 0xA0].iter().map(|&f| std::iter::once(f).chain(std::iter::repeat(0x80).take(owed - 1)).collect()).collect();
    }
    let mut finish: Vec<String> = vec![String::new(), "0".into(), "\"\":0".into()];
    for f in ["\"", "n\"", "0\"", "00\"", "000\"", "0000\""] {
        finish.push(f.into());
        finish.push(format!("{f}:0"));
    }
    finish.push(":0".into());
    for lit in ["true", "false", "null"] {
        for k in 1..lit.len() {
            finish.push(lit[k..].into());
        }
    }
    let mut out = Vec::new();
    for u in &utf {
        for f in &finish {
            let mut t = u.clone();
            t.extend_from_slice(f.as_bytes());
            let mut full = s.to_vec();
            full.extend_from_slice(&t);
            t.extend(closers(&full, true));
            out.push(t);
        }
    }
    out
}

/// One-character negative lookaheads (Lark's `(?!...)`) under a lexer mode
/// (`no_patch`: contextual, Lark's default): `?` is OP only if no letter
/// follows (else RULE); WORD may not be followed by a digit (Python
/// backtracks to a shorter WORD). Every partial item needs one of `;` `.`
/// `!`: B = 1 (+1).
fn lookahead_spec(name: &'static str, patch: fn(&mut Cfg)) -> Spec {
    Spec {
        name,
        patch,
        lark: LOOKAHEAD_LARK,
        alpha: b"?ab1+.;! ",
        compl: b".;!",
        bound: |_| 2,
        tails: no_tail,
        extra: &["?a", "ab1", "a.", "?+", "1!"],
        synthetic: false,
        max_len: 10,
        walks: 40,
        strings: 40,
    }
}

fn specs() -> Vec<Spec> {
    vec![
        // Keyword vs NAME, maximal munch. Any viable string ends after `;`
        // (done), or inside a statement, where `;` completes it (a partial
        // keyword is a NAME; `return` alone takes `;`), except after a second
        // `return` as the argument, which must grow into a NAME (`e;`): B = 2 (+1).
        Spec {
            name: "keyword",
            patch: no_patch,
            lark: r#"
start: stmt*
stmt: "return" [NAME] ";" | NAME ";"
NAME: /[a-z][a-z0-9]*/
%ignore " "
"#,
            alpha: b"retund1; ",
            compl: b"; e",
            bound: |_| 3,
            tails: no_tail,
            extra: &["return", "returned", "return1", " return", "return ", "turn", "ed;", "n;"],
            synthetic: false,
            max_len: 12,
            walks: 60,
            strings: 60,
        },
        // Numbers with fraction/exponent backtracking and a `..` range.
        // Completions: `1.`/`1..`/`1e`/`1.5e` take `5`; ` .` takes `.5`: B = 2 (+1).
        Spec {
            name: "numbers",
            patch: no_patch,
            lark: r#"
start: item*
item: NUMBER | NUMBER ".." NUMBER
NUMBER: /[0-9]+(\.[0-9]+)?([eE][0-9]+)?/
%ignore " "
"#,
            alpha: b"15.e ",
            compl: b"5. ",
            bound: |_| 3,
            tails: no_tail,
            extra: &["1.", "1e", "1e5", "1..2", "..", "...", ".5e"],
            synthetic: false,
            max_len: 9,
            walks: 60,
            strings: 60,
        },
        // Operators with shared prefixes. After an operator (or the start) `a`
        // completes; a lone `..` needs `.a`: B = 2 (+1).
        Spec {
            name: "operators",
            patch: no_patch,
            lark: r#"
start: NAME (op NAME)*
op: "*" | "**" | "**=" | "..." | "."
NAME: /a+/
"#,
            alpha: b"a*=.",
            compl: b"a.",
            bound: |_| 3,
            tails: no_tail,
            extra: &["**=", "**", "...", "a**", "=a", ".."],
            synthetic: false,
            max_len: 10,
            walks: 60,
            strings: 60,
        },
        // Lazy regex: inside a string `"` completes; outside, nothing: B = 1 (+1).
        Spec {
            name: "lazy_string",
            patch: no_patch,
            lark: r#"
start: (STR | NAME)*
STR: /"(.|\n)*?"/
NAME: /a+/
%ignore " "
"#,
            alpha: b"\"a\n ",
            compl: b"\"a",
            bound: |_| 2,
            tails: no_tail,
            extra: &["\"\"", "\"a\"", "a\"", "\"\n", "\"\"\""],
            synthetic: false,
            max_len: 9,
            walks: 60,
            strings: 60,
        },
        // Ignored whitespace and comments. A statement takes `;`; a comment
        // ends at EOF or needs `\n;`: B = 2 (+1).
        Spec {
            name: "comments",
            patch: no_patch,
            lark: r#"
start: (NAME ";")*
NAME: /[a-z]+/
COMMENT: /#[^\n]*/
%ignore COMMENT
%ignore /[ \n]+/
"#,
            alpha: b"a;# \n",
            compl: b";\n",
            bound: |_| 3,
            tails: no_tail,
            extra: &["#a", "# ", " #", "\n#", "a;\n", "  "],
            synthetic: false,
            max_len: 10,
            walks: 60,
            strings: 60,
        },
        // Priorities: IF.2 beats NAME on `if`, DIG.1 beats NUM on one digit.
        // Every partial item completes with one of `.;:!`: B = 1 (+1).
        Spec {
            name: "priorities",
            patch: no_patch,
            lark: r#"
start: item*
item: IF ";" | NAME "." | DIG ":" | NUM "!"
IF.2: /if/
NAME: /[fi]+/
DIG.1: /[0-9]/
NUM: /[0-9]+/
"#,
            alpha: b"if1;.:!",
            compl: b";.:!",
            bound: |_| 2,
            tails: no_tail,
            extra: &["if;", "iff", "if.", "12", "1:", "12!"],
            synthetic: false,
            max_len: 9,
            walks: 60,
            strings: 60,
        },
        // Literal vs regex ties: "a" and "ab" beat ABS on equal length.
        // Every partial item completes with one of `.!?`: B = 1 (+1).
        Spec {
            name: "literal_ties",
            patch: no_patch,
            lark: r#"
start: item*
item: "ab" "!" | ABS "?" | "a" "."
ABS: /ab*/
"#,
            alpha: b"ab!?.",
            compl: b"!?.",
            bound: |_| 2,
            tails: no_tail,
            extra: &["ab!", "abb", "abb?", "a.", "ab?"],
            synthetic: false,
            max_len: 9,
            walks: 60,
            strings: 60,
        },
        // %indent. `if` takes `:x`, `if:` takes `x`, `if:\n` takes ` x`, a
        // NAME or a finished line needs nothing (EOF closes lines and blocks),
        // `i`/`f` are NAMEs; `if:\n x\n  ` (a deeper blank tail) needs
        // nothing either: B = 2 (+1).
        Spec {
            name: "indent",
            patch: no_patch,
            lark: r#"
start: (_NL | stmt)*
stmt: "if" ":" suite | NAME _NL
suite: NAME _NL | _NL _INDENT stmt+ _DEDENT
NAME: /[a-z]+/
_NL: /(\n *)+/
%ignore / +/
%indent _NL _INDENT _DEDENT
%declare _INDENT _DEDENT
%lexer longest
"#,
            alpha: b"\n :ifx",
            compl: b"\n x:",
            bound: |_| 3,
            tails: no_tail,
            extra: &["\n  ", ":\n", "  ", "if", "if:", ":\n  ", "\n    ", "x\n"],
            synthetic: false,
            max_len: 12,
            walks: 60,
            strings: 60,
        },
        // Balanced brackets: the tail `closers(s)` completes, u = "": B = 0 (+1).
        Spec {
            name: "brackets",
            patch: no_patch,
            lark: r#"
start: b*
b: "(" b* ")" | "[" b* "]"
"#,
            alpha: b"()[]",
            compl: b")]",
            bound: |_| 1,
            tails: |s| vec![closers(s, false)],
            extra: &["((", "))", "()", "[]", "([", "])", "()[]"],
            synthetic: false,
            max_len: 10,
            walks: 60,
            strings: 60,
        },
        // JSON-like. Inside a string `"`; after a key `:1`; after `,` or `{`
        // in an object `"":1` (or `}`); after `[`, `:` or `,` in an array `1`;
        // then the closers of the open brackets (the tail): B = 4 (+1).
        Spec {
            name: "json_like",
            patch: no_patch,
            lark: r#"
start: value
value: "[" [value ("," value)*] "]" | "{" [pair ("," pair)*] "}" | STRING | NUMBER
pair: STRING ":" value
STRING: /"a*"/
NUMBER: /1+/
"#,
            alpha: b"[]{}\":,1a",
            compl: b"\":1",
            bound: |_| 5,
            tails: |s| vec![closers(s, false)],
            extra: &["[1", "{\"", "\":", "\"a\"", ",\"", "]}", "[[", "11"],
            synthetic: false,
            max_len: 8,
            walks: 30,
            strings: 30,
        },
        // Only the empty text (plus ignored spaces): nothing needs completing, B = 0 (+1).
        Spec {
            name: "empty",
            patch: no_patch,
            lark: r#"
start:
%ignore " "
"#,
            alpha: b" a",
            compl: b" ",
            bound: |_| 1,
            tails: no_tail,
            extra: &["  "],
            synthetic: false,
            max_len: 4,
            walks: 10,
            strings: 10,
        },
        // Forced continuations: after `key` only `;` fits, then only EOS.
        // Every viable string completes within the rest of `key;`: B = 4 (+1).
        Spec {
            name: "forced",
            patch: no_patch,
            lark: r#"
start: "k" "e" "y" ";"
"#,
            alpha: b"key;",
            compl: b"key;",
            bound: |_| 5,
            tails: no_tail,
            extra: &["key", "ey;"],
            synthetic: false,
            max_len: 5,
            walks: 20,
            strings: 20,
        },
        // Contextual lexing (Lark's default): `return` is a keyword where a
        // statement starts and a NAME after `return` (Lark retypes NAME's
        // match to RETURN only where RETURN competes). Completions as for
        // `keyword`, without the `return return` case: B = 1 (+1).
        Spec {
            name: "contextual_keyword",
            patch: contextual,
            lark: r#"
start: stmt*
stmt: "return" [NAME] ";" | NAME ";"
NAME: /[a-z][a-z0-9]*/
%ignore " "
"#,
            alpha: b"retund1; ",
            compl: b"; e",
            bound: |_| 3,
            tails: no_tail,
            extra: &["return", "returned", "return1", " return", "return ", "turn", "ed;", "n;"],
            synthetic: false,
            max_len: 14,
            walks: 60,
            strings: 60,
        },
        // Contextual lexing separates overlapping terminals: a value "k" is a
        // STR (a KEY under global lexing). No search: `overlap_tails`.
        Spec {
            name: "overlap",
            patch: contextual,
            lark: r#"
start: "{" KEY ":" STR "}"
KEY: /"k[a-z]*"/
STR: /"[a-z]*"/
"#,
            alpha: b"{}\":ka",
            compl: b"",
            bound: |_| 1,
            tails: overlap_tails,
            extra: &["{\"", "\":\"", "\"}", "k\"", "\"k"],
            synthetic: false,
            max_len: 12,
            walks: 60,
            strings: 60,
        },
        // Lark's basic lexer: the first terminal in Lark's order that matches
        // wins (AS before AB: "ab" is AS B, so `ab?` is never valid), and a
        // NAME equal to "if" is retyped to IF. `basic_first_tails` finish
        // every partial item; the search (B = 1, +1) only backs them up.
        Spec {
            name: "basic_first",
            patch: basic,
            lark: r#"
start: item*
item: AS B "!" | AB "?" | "if" NAME "." | NAME ";"
AS: /a+/
AB: "ab"
B: "b"
NAME: /[c-z]+/
%ignore " "
"#,
            alpha: b"abif!?.; ",
            compl: b"b!.;",
            bound: |_| 2,
            tails: basic_first_tails,
            extra: &["ab", "ab!", "ab?", "if", "iff", "if i"],
            synthetic: false,
            max_len: 10,
            walks: 40,
            strings: 40,
        },
        // LongestAll: "bb" is both P and Q. Every partial item takes `!` or `?`: B = 1 (+1).
        Spec {
            name: "longest_all",
            patch: longest_all,
            lark: r#"
start: item*
item: P "!" | Q "?"
P: /[ab]+/
Q: /[bc]+/
%ignore " "
"#,
            alpha: b"abc!? ",
            compl: b"!?",
            bound: |_| 2,
            tails: no_tail,
            extra: &["bb", "bb!", "bb?", "ab", "bc"],
            synthetic: false,
            max_len: 12,
            walks: 60,
            strings: 60,
        },
        // A set terminal (1-3 letters, not `if`) next to the literal `if`.
        // A partial item takes `.` or `;` (`if` is never a W): B = 1 (+1).
        Spec {
            name: "sets",
            patch: word_set,
            lark: r#"
start: item*
item: W "." | "if" ";"
W: /[a-z]+/
%ignore " "
"#,
            alpha: b"aif.; ",
            compl: b".;",
            bound: |_| 2,
            tails: no_tail,
            extra: &["if", "iff", "aaa", "aaaa", "if;", "fi."],
            synthetic: false,
            max_len: 12,
            walks: 60,
            strings: 60,
        },
        lookahead_spec("lookahead", no_patch),
        lookahead_spec("lookahead_basic", basic),
        lookahead_spec("lookahead_longest", longest),
        // The real json.lark under contextual lexing (same language).
        Spec {
            name: "json_contextual",
            patch: contextual,
            lark: "@json.lark",
            alpha: b"{}[]\":, 0-1.e+tfnrul\\",
            compl: b"",
            bound: |_| 1,
            tails: json_tails,
            extra: &[],
            synthetic: true,
            max_len: 10,
            walks: 30,
            strings: 30,
        },
        // The real grammars/json.lark with a ~300-token synthetic vocabulary.
        // No search (B = 0): the tails of `json_tails` are complete by its argument.
        Spec {
            name: "json",
            patch: no_patch,
            lark: "@json.lark",
            alpha: b"{}[]\":, 0-1.e+tfnrul\\",
            compl: b"",
            bound: |_| 1,
            tails: json_tails,
            extra: &[],
            synthetic: true,
            max_len: 10,
            walks: 30,
            strings: 30,
        },
    ]
}

/// All strings of length 1..=2 over `alpha`, the extras, a foreign byte, and EOS (last).
fn small_vocab(alpha: &[u8], extra: &[&str]) -> Vocab {
    let mut toks: Vec<Vec<u8>> = Vec::new();
    for &a in alpha {
        toks.push(vec![a]);
    }
    for &a in alpha {
        for &b in alpha {
            toks.push(vec![a, b]);
        }
    }
    toks.extend(extra.iter().map(|e| e.as_bytes().to_vec()));
    toks.push(b"~".to_vec());
    let mut seen = std::collections::HashSet::new();
    toks.retain(|t| seen.insert(t.clone()));
    let mut all: Vec<(Vec<u8>, bool)> = toks.into_iter().map(|t| (t, false)).collect();
    all.push((b"<eos>".to_vec(), true));
    let eos = TokenId((all.len() - 1) as u32);
    Vocab::from_tokens(all, &[eos]).expect("vocab")
}

#[derive(Default)]
struct Tally {
    cases: u64,
    prefixes: u64,
    forced: u64,
    rollbacks: u64,
    refused: u64,
    failures: Vec<String>,
}

/// The oracle's mask for prefix `p` (bit per token id; EOS by `sentence`).
fn oracle_mask(o: &mut Oracle, vocab: &Vocab, p: &[u8]) -> Vec<bool> {
    let mut buf = p.to_vec();
    (0..vocab.len() as u32)
        .map(|id| {
            let t = TokenId(id);
            if vocab.is_eos(t) {
                return o.sentence(p);
            }
            buf.truncate(p.len());
            buf.extend_from_slice(vocab.token_bytes(t));
            o.viable(&buf)
        })
        .collect()
}

/// Compare the matcher at prefix `p` with the oracle (both directions), plus
/// `is_accepting` and `forced_tokens`.
fn compare(o: &mut Oracle, m: &Matcher, p: &[u8], tally: &mut Tally, what: &str) -> Vec<bool> {
    let vocab = m.store().vocab();
    let want = oracle_mask(o, vocab, p);
    let got = m.compute_mask();
    tally.prefixes += 1;
    for (id, &w) in want.iter().enumerate() {
        tally.cases += 1;
        let g = bit(&got, id as u32);
        if g == w {
            continue;
        }
        let tb = vocab.token_bytes(TokenId(id as u32)).to_vec();
        tally.failures.push(format!(
            "{what}: prefix {:?} token {:?}: matcher {}, oracle {}",
            String::from_utf8_lossy(p),
            String::from_utf8_lossy(&tb),
            if g { "allows" } else { "refuses" },
            if w { "allows" } else { "refuses" }
        ));
    }
    let eos = vocab.eos_ids()[0].index();
    if m.is_accepting() != want[eos] {
        tally.failures.push(format!("{what}: prefix {:?}: is_accepting {} but oracle {}", String::from_utf8_lossy(p), m.is_accepting(), want[eos]));
    }
    // forced_tokens: the unique continuation, or nothing.
    let forced = m.forced_tokens(4);
    let allowed: Vec<usize> = want.iter().enumerate().filter(|x| *x.1).map(|x| x.0).collect();
    if allowed.len() == 1 {
        tally.forced += 1;
        if forced.first().map(|&t| t as usize) != Some(allowed[0]) {
            tally.failures.push(format!("{what}: prefix {:?}: oracle forces token {} but forced_tokens = {forced:?}", String::from_utf8_lossy(p), allowed[0]));
        } else if allowed[0] != eos {
            // Each further forced token must be the oracle's unique one too.
            let mut q = p.to_vec();
            for w in forced.windows(2) {
                q.extend_from_slice(vocab.token_bytes(TokenId(w[0])));
                let next = oracle_mask(o, vocab, &q);
                let only: Vec<usize> = next.iter().enumerate().filter(|x| *x.1).map(|x| x.0).collect();
                if only != [w[1] as usize] {
                    tally.failures.push(format!("{what}: forced continuation {forced:?} after {:?} disagrees with oracle", String::from_utf8_lossy(p)));
                    break;
                }
            }
        }
    } else if !forced.is_empty() && want != vec![false; want.len()] {
        tally.failures.push(format!("{what}: prefix {:?}: {} tokens allowed but forced_tokens = {forced:?}", String::from_utf8_lossy(p), allowed.len()));
    }
    want
}

fn pick_allowed(rng: &mut Rng, mask: &[bool], vocab: &Vocab) -> Option<u32> {
    let ids: Vec<u32> = (0..mask.len() as u32).filter(|&i| mask[i as usize] && !vocab.is_eos(TokenId(i))).collect();
    (!ids.is_empty()).then(|| ids[rng.below(ids.len())])
}

/// Random walk over the matcher's masks (random lengths up to `max_len`
/// bytes), comparing at every step; also rollback and refused commits.
fn walk(o: &mut Oracle, store: &Rc<MaskStore>, rng: &mut Rng, max_len: usize, tally: &mut Tally, what: &str) {
    let vocab = store.vocab();
    // Every mask goes through a small mask cache (states come back after
    // rollbacks and in repeated list items): cached masks meet the oracle too.
    let opts = MatcherOptions { mask_cache: 4, mask_cache_min_entries: 0, ..MatcherOptions::default() };
    let mut m = Matcher::with_options(store.clone(), opts);
    let mut p: Vec<u8> = Vec::new();
    let target = rng.below(max_len + 1);
    let mut lens = Vec::new();
    loop {
        let want = compare(o, &m, &p, tally, what);
        let mask = m.compute_mask();
        // A refused token leaves the state and mask unchanged.
        let refused: Vec<u32> = (0..vocab.len() as u32).filter(|&i| !bit(&mask, i)).collect();
        if !refused.is_empty() {
            let t = refused[rng.below(refused.len())];
            tally.refused += 1;
            if m.commit_token(t).is_ok() {
                tally.failures.push(format!("{what}: prefix {:?}: refused token {t} was committed", String::from_utf8_lossy(&p)));
                return;
            }
            if m.compute_mask() != mask {
                tally.failures.push(format!("{what}: prefix {:?}: refused commit changed the mask", String::from_utf8_lossy(&p)));
            }
        }
        if p.len() >= target {
            break;
        }
        let Some(t) = pick_allowed(rng, &want, vocab) else { break };
        if !bit(&mask, t) {
            break; // already reported as a disagreement
        }
        m.commit_token(t).expect("allowed token commits");
        p.extend_from_slice(vocab.token_bytes(TokenId(t)));
        lens.push(p.len());
        // Sometimes: look ahead a few tokens and roll back.
        if rng.below(4) == 0 {
            let before = m.compute_mask();
            let k = 1 + rng.below(3);
            let mut n = 0;
            for _ in 0..k {
                let cur = m.compute_mask();
                let ids: Vec<u32> = (0..vocab.len() as u32).filter(|&i| bit(&cur, i) && !vocab.is_eos(TokenId(i))).collect();
                if ids.is_empty() {
                    break;
                }
                m.commit_token(ids[rng.below(ids.len())]).expect("mask token commits");
                n += 1;
            }
            m.rollback(n).expect("rollback");
            tally.rollbacks += 1;
            if m.compute_mask() != before {
                tally.failures.push(format!("{what}: prefix {:?}: rollback({n}) did not restore the mask", String::from_utf8_lossy(&p)));
            }
        }
    }
    // Roll back to a random earlier point; its mask must match the oracle again.
    if !lens.is_empty() {
        let n = 1 + rng.below(lens.len());
        m.rollback(n).expect("rollback within history");
        let keep = if n == lens.len() { 0 } else { lens[lens.len() - n - 1] };
        compare(o, &m, &p[..keep], tally, what);
    }
}

/// A random viable string (oracle-guided), split into tokens in random ways.
fn viable_string(o: &mut Oracle, store: &Rc<MaskStore>, alpha: &[u8], rng: &mut Rng, max_len: usize, tally: &mut Tally, what: &str) {
    let vocab = store.vocab();
    let len = rng.below(max_len + 1);
    let mut s: Vec<u8> = Vec::new();
    while s.len() < len {
        let start = rng.below(alpha.len());
        let next = (0..alpha.len()).map(|i| alpha[(start + i) % alpha.len()]).find(|&c| {
            s.push(c);
            let v = o.viable(&s);
            s.pop();
            v
        });
        match next {
            Some(c) => s.push(c),
            None => break,
        }
    }
    // Index tokens by bytes.
    let by_bytes: HashMap<&[u8], u32> = (0..vocab.len() as u32)
        .filter(|&i| !vocab.is_special(TokenId(i)))
        .map(|i| (vocab.token_bytes(TokenId(i)), i))
        .collect();
    for _ in 0..3 {
        let mut m = Matcher::new(store.clone());
        let mut i = 0;
        while i < s.len() {
            // Random piece length among those that are tokens (1 always is).
            let lens: Vec<usize> = (1..=(s.len() - i).min(8)).filter(|&l| by_bytes.contains_key(&s[i..i + l])).collect();
            let l = lens[rng.below(lens.len())];
            let t = by_bytes[&s[i..i + l]];
            if m.commit_token(t).is_err() {
                tally.failures.push(format!("{what}: viable {:?}: token {:?} at {i} refused (prefix {:?})",
                    String::from_utf8_lossy(&s), String::from_utf8_lossy(&s[i..i + l]), String::from_utf8_lossy(&s[..i])));
                break;
            }
            i += l;
            if rng.below(3) == 0 {
                compare(o, &m, &s[..i], tally, what);
            }
        }
        if i == s.len() {
            compare(o, &m, &s, tally, what);
        }
    }
}

fn run_spec(spec: &Spec, seed: u64, tally: &mut Tally) -> (u64, usize) {
    let cfg = match spec.lark.strip_prefix('@') {
        Some(file) => grammask::constraint::load_lark_file(&common::root().join("grammars").join(file), None),
        None => grammask::constraint::parse_lark(spec.lark, spec.name, None, &|_| None),
    }
    .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    let mut cfg = cfg;
    (spec.patch)(&mut cfg);
    let rec = Recognizer::new(cfg.clone()).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    let mut o = Oracle::new(rec, spec);
    let vocab = if spec.synthetic { common::synthetic_vocab(&common::grammar_tokens(&cfg)) } else { small_vocab(spec.alpha, spec.extra) };
    let stores = [
        common::compile_store(&cfg, vocab.clone(), true),
        common::compile_store(&cfg, vocab.clone(), false),
        common::compile_lazy_store(&cfg, vocab),
    ];
    let mut rng = Rng(seed);
    for (k, store) in stores.iter().enumerate() {
        let what = format!("{}/{}", spec.name, ["streamlined", "raw", "lazy"][k]);
        for _ in 0..spec.walks {
            walk(&mut o, store, &mut rng, spec.max_len, tally, &what);
        }
        for _ in 0..spec.strings {
            viable_string(&mut o, store, spec.alpha, &mut rng, spec.max_len, tally, &what);
        }
    }
    // The bound argument must hold with slack.
    let b = (spec.bound)(&o.max_dist_at);
    assert!(o.max_dist < b, "{}: a completion of length {} was needed at {:?} (bound {b}): the bound argument is wrong", spec.name, o.max_dist, String::from_utf8_lossy(&o.max_dist_at));
    (o.checks, o.max_dist)
}

fn report(tally: &Tally, label: &str) {
    eprintln!(
        "{label}: {} (prefix, token) cases at {} prefixes; {} forced checks, {} rollbacks, {} refused commits; {} disagreements",
        tally.cases, tally.prefixes, tally.forced, tally.rollbacks, tally.refused, tally.failures.len()
    );
    if !tally.failures.is_empty() {
        let shown: Vec<&String> = tally.failures.iter().take(20).collect();
        panic!("{label}: {} disagreements, first ones:\n{}", tally.failures.len(), shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
    }
}

macro_rules! oracle_test {
    ($fn:ident, $name:literal, $seed:literal) => {
        #[test]
        fn $fn() {
            let spec = specs().into_iter().find(|s| s.name == $name).unwrap();
            let mut tally = Tally::default();
            let t = std::time::Instant::now();
            let (checks, maxd) = run_spec(&spec, $seed, &mut tally);
            eprintln!("{}: {checks} recognizer checks, longest completion needed {maxd}, {:?}", $name, t.elapsed());
            report(&tally, $name);
        }
    };
}

oracle_test!(oracle_keyword, "keyword", 1);
oracle_test!(oracle_numbers, "numbers", 2);
oracle_test!(oracle_operators, "operators", 3);
oracle_test!(oracle_lazy_string, "lazy_string", 4);
oracle_test!(oracle_comments, "comments", 5);
oracle_test!(oracle_priorities, "priorities", 6);
oracle_test!(oracle_literal_ties, "literal_ties", 7);
oracle_test!(oracle_indent, "indent", 8);
oracle_test!(oracle_brackets, "brackets", 9);
oracle_test!(oracle_json_like, "json_like", 10);
oracle_test!(oracle_empty_language, "empty", 11);
oracle_test!(oracle_json_lark, "json", 12);
oracle_test!(oracle_forced, "forced", 13);
oracle_test!(oracle_contextual_keyword, "contextual_keyword", 14);
oracle_test!(oracle_overlap, "overlap", 15);
oracle_test!(oracle_basic_first, "basic_first", 16);
oracle_test!(oracle_longest_all, "longest_all", 17);
oracle_test!(oracle_sets, "sets", 18);
oracle_test!(oracle_json_contextual, "json_contextual", 19);
oracle_test!(oracle_lookahead, "lookahead", 20);
oracle_test!(oracle_lookahead_basic, "lookahead_basic", 21);
oracle_test!(oracle_lookahead_longest, "lookahead_longest", 22);

/// The harness must see a wrong matcher: the oracle of the keyword grammar
/// against the matcher of a variant whose NAMEs cannot contain digits.
#[test]
fn oracle_detects_a_wrong_grammar() {
    let spec = specs().into_iter().find(|s| s.name == "keyword").unwrap();
    let cfg = grammask::constraint::parse_lark(spec.lark, "k", None, &|_| None).unwrap();
    let wrong = grammask::constraint::parse_lark(&spec.lark.replace("[a-z0-9]*", "[a-z]*"), "k2", None, &|_| None).unwrap();
    let mut o = Oracle::new(Recognizer::new(cfg).unwrap(), &spec);
    let store = common::compile_store(&wrong, small_vocab(spec.alpha, spec.extra), true);
    let mut tally = Tally::default();
    let mut rng = Rng(99);
    for _ in 0..20 {
        walk(&mut o, &store, &mut rng, spec.max_len, &mut tally, "wrong");
    }
    assert!(tally.failures.iter().any(|f| f.contains("matcher refuses, oracle allows")), "too-strict masks went unnoticed");
    // And the other direction: the wrong grammar's oracle against the right matcher.
    let cfg = grammask::constraint::parse_lark(spec.lark, "k", None, &|_| None).unwrap();
    let wrong = grammask::constraint::parse_lark(&spec.lark.replace("[a-z0-9]*", "[a-z]*"), "k2", None, &|_| None).unwrap();
    let mut o = Oracle::new(Recognizer::new(wrong).unwrap(), &spec);
    let store = common::compile_store(&cfg, small_vocab(spec.alpha, spec.extra), true);
    let mut tally = Tally::default();
    for _ in 0..20 {
        walk(&mut o, &store, &mut rng, spec.max_len, &mut tally, "wrong");
    }
    assert!(tally.failures.iter().any(|f| f.contains("matcher allows, oracle refuses")), "too-loose masks went unnoticed");
}

/// A 2,000-token random walk on recursive grammars: the number of live
/// configurations stays small, masks agree with `is_allowed`, `is_accepting`
/// agrees with the recognizer, and the rollback history is capped.
#[test]
fn long_walk_keeps_matcher_small() {
    for name in ["brackets", "json_like", "indent", "keyword"] {
        let spec = specs().into_iter().find(|s| s.name == name).unwrap();
        // A sequence of values, so that the walk never has to stop.
        let lark = spec.lark.replace("start: value\n", "start: value*\n");
        let cfg = grammask::constraint::parse_lark(&lark, name, None, &|_| None).unwrap();
        let rec = Recognizer::new(cfg.clone()).unwrap();
        let store = common::compile_store(&cfg, small_vocab(spec.alpha, spec.extra), true);
        let vocab = store.vocab();
        let mut m = Matcher::new(store.clone());
        let mut rng = Rng(7);
        let (mut text, mut max_configs, mut steps) = (Vec::new(), 0, 0);
        while steps < 2000 {
            let mask = m.compute_mask();
            let ids: Vec<u32> = (0..vocab.len() as u32).filter(|&i| bit(&mask, i) && !vocab.is_eos(TokenId(i))).collect();
            assert!(!ids.is_empty(), "{name}: dead end after {:?}", String::from_utf8_lossy(&text));
            if steps % 50 == 0 {
                common::check_mask_vs_commit(&m, &mask);
                assert_eq!(m.is_accepting(), rec.check(&text).is_ok(), "{name}: is_accepting at {:?}", String::from_utf8_lossy(&text));
            }
            // Prefer closing brackets half of the time so that nesting stays moderate.
            let closing: Vec<u32> = ids.iter().copied().filter(|&i| vocab.token_bytes(TokenId(i)).iter().all(|b| b"]})".contains(b))).collect();
            let t = if !closing.is_empty() && rng.below(2) == 0 { closing[rng.below(closing.len())] } else { ids[rng.below(ids.len())] };
            m.commit_token(t).unwrap();
            text.extend_from_slice(vocab.token_bytes(TokenId(t)));
            max_configs = max_configs.max(m.n_configs());
            steps += 1;
        }
        assert!(max_configs <= 4, "{name}: {max_configs} configurations after a 2,000-token walk");
        assert!(m.rollback(65).is_err(), "{name}: history should be capped at 64");
        m.rollback(64).unwrap();
        eprintln!("{name}: 2000 tokens, {} bytes, at most {max_configs} configurations", text.len());
    }
}
