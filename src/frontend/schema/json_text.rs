//! Regexes over JSON string *text* (the schema front end): the canonical
//! escaping of a string value ([`quote`], [`CHAR`]), any JSON string
//! ([`ANY_STRING`]), and [`json_encode`]: a regex over string values → a
//! regex over their JSON text under canonical minimal escaping.

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Repetition};

use crate::regex::ecma::ecma_to_hir;
use crate::regex::lang::search_language;

/// One canonical JSON string character (the text of one character of a
/// string value): any character but `"`, `\` and U+0000–U+001F, or the
/// escapes `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, or `\u00XX` (lowercase
/// hex) for the other control characters.
pub const CHAR: &str = r#"(?:[^"\\\x00-\x1f]|\\["\\bfnrt]|\\u00(?:0[0-7bef]|1[0-9a-f]))"#;

/// Any JSON string (every escape RFC 8259 allows).
pub const ANY_STRING: &str = r#""(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#;

/// Canonical minimal JSON escaping of a string value (with the quotes).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The JSON text of one character under canonical escaping, as a HIR.
fn encoded_char(c: char) -> Hir {
    let q = quote(&c.to_string());
    Hir::literal(q[1..q.len() - 1].as_bytes().to_vec())
}

/// The alternation of sorted, distinct ASCII `texts`, factored by common
/// prefixes, with final single characters merged into classes (the 34
/// escapes of a class holding every control character become
/// `\\["\\bfnrt]|\\u00(?:0[0-7bef]|1[0-9a-f])`-like text, not 34
/// branches, which keeps the NFA, and the time to determinize it, small).
fn factored(texts: &[&[u8]]) -> Hir {
    let mut alts = Vec::new();
    let mut finals = Vec::new(); // one-character texts: merged into a class
    let mut i = 0;
    while i < texts.len() {
        let b = texts[i][0];
        let j = i + texts[i..].iter().take_while(|t| t[0] == b).count();
        if texts[i].len() == 1 && j == i + 1 {
            finals.push(ClassUnicodeRange::new(b as char, b as char));
        } else {
            let head = Hir::literal(vec![b]);
            let rest: Vec<&[u8]> = texts[i..j].iter().map(|t| &t[1..]).filter(|t| !t.is_empty()).collect();
            let tail = factored(&rest);
            let tail = if rest.len() < j - i { Hir::repetition(Repetition { min: 0, max: Some(1), greedy: true, sub: Box::new(tail) }) } else { tail };
            alts.push(Hir::concat(vec![head, tail]));
        }
        i = j;
    }
    if !finals.is_empty() {
        alts.insert(0, Hir::class(Class::Unicode(ClassUnicode::new(finals))));
    }
    Hir::alternation(alts)
}

/// A regex over string values → a regex over their JSON text (without the
/// quotes), canonical escaping.
pub fn json_encode(h: &Hir) -> Result<Hir, String> {
    Ok(match h.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => {
            let s = std::str::from_utf8(&l.0).map_err(|_| "a byte-level regex literal is not supported".to_string())?;
            // Loops, not iterator chains: each chain is its own code (wasm size).
            let mut hs = Vec::new();
            for c in s.chars() {
                hs.push(encoded_char(c));
            }
            Hir::concat(hs)
        }
        HirKind::Class(Class::Unicode(c)) => {
            // Plain characters stay a class; the escaped ones become alternatives.
            let mut special = ClassUnicode::new([ClassUnicodeRange::new('\0', '\x1f'), ClassUnicodeRange::new('"', '"'), ClassUnicodeRange::new('\\', '\\')]);
            let mut plain = c.clone();
            plain.difference(&special);
            special.intersect(c);
            let mut alts = Vec::new();
            if plain.ranges().first().is_some() {
                alts.push(Hir::class(Class::Unicode(plain)));
            }
            let mut escapes: Vec<String> = Vec::new();
            for r in special.ranges() {
                for ch in r.start()..=r.end() {
                    escapes.push(quote(&ch.to_string()));
                }
            }
            if !escapes.is_empty() {
                let mut texts: Vec<&[u8]> = escapes.iter().map(|q| &q.as_bytes()[1..q.len() - 1]).collect();
                // The crate's one cold sort, not a sort of its own (wasm size).
                crate::sort::sort_cold(&mut texts);
                alts.push(factored(&texts));
            }
            if alts.is_empty() {
                Hir::fail()
            } else {
                Hir::alternation(alts)
            }
        }
        HirKind::Class(Class::Bytes(b)) if b.ranges().is_empty() => Hir::fail(),
        HirKind::Class(Class::Bytes(_)) => return Err("a byte-level class is not supported".into()),
        HirKind::Look(_) => return Err("an assertion is not supported here".into()),
        HirKind::Repetition(r) => Hir::repetition(Repetition { min: r.min, max: r.max, greedy: r.greedy, sub: Box::new(json_encode(&r.sub)?) }),
        HirKind::Capture(c) => json_encode(&c.sub)?,
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(json_encode).collect::<Result<_, _>>()?),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(json_encode).collect::<Result<_, _>>()?),
    })
}

/// `"` + the JSON text of the strings of `values` + `"`, as regex-syntax text.
pub fn quoted_regex(values: &Hir) -> Result<String, String> {
    let enc = json_encode(values)?;
    Ok(format!("\"(?:{enc})\""))
}

/// A JSON Schema `pattern` → the regex over JSON string texts (quotes included)
/// whose values contain a match.
pub fn pattern_string_regex(pattern: &str) -> Result<String, String> {
    let h = ecma_to_hir(pattern)?;
    let s = search_language(&h)?;
    quoted_regex(&s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regex::lang::Dfa;

    fn full(re: &str, s: &str) -> bool {
        Dfa::new(re).unwrap().full_match(s.as_bytes())
    }

    #[test]
    fn search_semantics() {
        let r = pattern_string_regex("^a+$").unwrap();
        assert!(full(&r, "\"aaa\""));
        assert!(!full(&r, "\"aab\""));
        let r = pattern_string_regex("b").unwrap();
        assert!(full(&r, "\"abc\""));
        assert!(!full(&r, "\"ac\""));
        let r = pattern_string_regex("^x|y$").unwrap();
        assert!(full(&r, "\"x1\""));
        assert!(full(&r, "\"1y\""));
        assert!(!full(&r, "\"1x\""));
        let r = pattern_string_regex("a$b").unwrap();
        assert!(!full(&r, "\"ab\""));
        let r = pattern_string_regex("\\d").unwrap();
        assert!(!full(&r, "\"\u{0664}\""), "ECMA \\d is ASCII");
        let r = pattern_string_regex("^\\p{L}+$").unwrap();
        assert!(full(&r, "\"é\""));
        assert!(pattern_string_regex("a\\1").is_err());
        let r = pattern_string_regex("^(?!org\\.bukkit\\.)[a-zA-Z0-9_.]+$").unwrap();
        assert!(full(&r, "\"org.x\"") && !full(&r, "\"org.bukkit.x\"") && !full(&r, "\"a-b\""));
        let r = pattern_string_regex("\\bfoo").unwrap();
        assert!(full(&r, "\"a foo\"") && !full(&r, "\"afoo\""));
        assert!(pattern_string_regex("(?<=(?=a))").is_err());
        assert!(pattern_string_regex("[").is_err());
    }

    #[test]
    fn escapes_factored() {
        // Every escaped character in one class: factored, not 34 branches.
        let r = pattern_string_regex("^[\\x00-\\x1f\"\\\\]$").unwrap();
        assert!(r.len() < 120, "{r}");
        for c in (0u8..0x20).chain([b'"', b'\\']) {
            assert!(full(&r, &quote(&(c as char).to_string())), "{c:#x} in {r}");
        }
        for bad in [r#""\u0008""#, r#""\/""#, r#""\u001F""#, r#""\u0020""#, r#""a""#, "\"\u{1}\""] {
            assert!(!full(&r, bad), "{bad} in {r}");
        }
    }

    #[test]
    fn escaping() {
        let r = pattern_string_regex("^\"\\\\\\n$").unwrap();
        assert!(full(&r, r#""\"\\\n""#));
        assert!(!full(&r, "\"\"\\\n\""));
        let r = pattern_string_regex("^.$").unwrap();
        assert!(full(&r, r#""\u001f""#));
        assert!(!full(&r, r#""\u001F""#), "canonical escapes are lowercase");
        assert!(!full(&r, r#""\n""#), "ECMA . excludes line terminators");
        assert_eq!(quote("a\"\u{1}"), r#""a\"\u0001""#);
        assert!(full(CHAR, "\\u001f") && full(CHAR, "\\t") && !full(CHAR, "\\u0009"));
    }
}
