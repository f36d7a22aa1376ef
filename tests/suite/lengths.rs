//! `minLength` / `maxLength` near their bounds, at the largest bound the
//! schema front end accepts (`Limits::max_string_length`): the Llama-3 masks
//! after string bodies a few characters short of the bound (whole, cut
//! inside a character, closed), compared token by token with an oracle
//! written from the definitions: RFC 8259 strings in the engine's canonical
//! escaping (`"` `\` and the control characters escaped, the short escapes
//! where JSON has one, else `\u00xx`; nothing else), lengths in code points.
//! The bound is the limit itself, so the cases grow with it.

use crate::common::bit;
use crate::schema_common::Tok;
use grammask::constraint::ConstraintOptions;
use grammask::matcher::Matcher;
use grammask::{Limits, TokenId};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The canonical text of one character in a string body.
fn canon(c: char) -> String {
    let s = serde_json::to_string(&c.to_string()).unwrap();
    s[1..s.len() - 1].to_string()
}

/// The escapes of the canonical escaping.
fn escapes() -> Vec<(String, char)> {
    let mut v: Vec<(String, char)> = ['"', '\\'].iter().map(|&c| (canon(c), c)).collect();
    v.extend((0..0x20u32).map(|u| char::from_u32(u).unwrap()).map(|c| (canon(c), c)));
    assert!(v.iter().all(|(e, _)| e.starts_with('\\')));
    v
}

/// One character text at the start of `b`: `Ok(Some((bytes, char)))`,
/// `Ok(None)` if `b` is a proper prefix of one, `Err` if `b` starts none.
fn char_at(b: &[u8], esc: &[(String, char)]) -> Result<Option<(usize, char)>, ()> {
    if b[0] == b'\\' {
        if let Some((e, c)) = esc.iter().find(|(e, _)| b.starts_with(e.as_bytes())) {
            return Ok(Some((e.len(), *c)));
        }
        return if esc.iter().any(|(e, _)| e.len() > b.len() && e.as_bytes().starts_with(b)) { Ok(None) } else { Err(()) };
    }
    if b[0] < 0x20 || b[0] == b'"' {
        return Err(());
    }
    let w = match b[0] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Err(()),
    };
    if b.len() >= w {
        return std::str::from_utf8(&b[..w]).map(|s| Some((w, s.chars().next().unwrap()))).map_err(|_| ());
    }
    match std::str::from_utf8(b) {
        Err(e) if e.error_len().is_none() => Ok(None),
        _ => Err(()),
    }
}

/// One schema: its instances are `open` + a string of `min..=max`
/// characters (of `chars`, when given) + one of `tails`.
struct Case {
    name: &'static str,
    schema: Value,
    open: &'static str,
    min: usize,
    max: usize,
    /// The characters the value may hold (`None`: any).
    chars: Option<Vec<char>>,
    tails: Vec<&'static [u8]>,
    /// Character texts the bodies are made of, and the body's fixed start.
    pool: Vec<String>,
    start: &'static str,
    /// Compare only the tokens this accepts (`None`: every token).
    judged: Option<fn(&[u8]) -> bool>,
}

struct Oracle<'a> {
    c: &'a Case,
    esc: Vec<(String, char)>,
}

impl Oracle<'_> {
    /// Can `s` (bytes after `n` whole characters of the body) be completed
    /// into an instance?
    fn viable(&self, mut n: usize, s: &[u8], max: usize) -> bool {
        let c = self.c;
        let mut i = 0;
        loop {
            if i == s.len() {
                return n <= max;
            }
            if s[i] == b'"' {
                return n >= c.min && n <= max && c.tails.iter().any(|t| t.starts_with(&s[i + 1..]));
            }
            match char_at(&s[i..], &self.esc) {
                Err(()) => return false,
                Ok(None) => {
                    let some = c.chars.as_ref().is_none_or(|cs| cs.iter().any(|&ch| canon(ch).as_bytes().starts_with(&s[i..])));
                    return n < max && some;
                }
                Ok(Some((w, ch))) => {
                    if c.chars.as_ref().is_some_and(|cs| !cs.contains(&ch)) {
                        return false;
                    }
                    n += 1;
                    if n > max {
                        return false;
                    }
                    i += w;
                }
            }
        }
    }

    /// Is `s` (after `n` whole characters) the rest of an instance?
    fn complete(&self, n: usize, s: &[u8]) -> bool {
        s.first() == Some(&b'"') && n >= self.c.min && n <= self.c.max && self.c.tails.iter().any(|t| **t == s[1..])
    }
}

/// Splits a body into (whole characters before the last boundary, the bytes from it).
fn split(body: &[u8], esc: &[(String, char)]) -> (usize, usize) {
    let (mut i, mut n) = (0, 0);
    while i < body.len() && body[i] != b'"' {
        match char_at(&body[i..], esc) {
            Ok(Some((w, _))) => {
                i += w;
                n += 1;
            }
            _ => break,
        }
    }
    (n, i)
}

/// Seeded SplitMix64.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// Greedy longest-match ids of `text` over the vocabulary's byte strings.
fn tokenize(by_bytes: &HashMap<&[u8], u32>, longest: usize, text: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let (l, id) = (1..=longest.min(text.len() - i)).rev().find_map(|l| by_bytes.get(&text[i..i + l]).map(|&id| (l, id))).expect("byte tokens");
        out.push(id);
        i += l;
    }
    out
}

/// Mismatches of the masks after each body with the oracle's (for `max`).
fn mismatches(tok: &Tok, c: &Case, bodies: &[Vec<u8>], max: usize) -> Vec<String> {
    let o = Oracle { c, esc: escapes() };
    let opts = ConstraintOptions::default();
    let store = tok.compile_with(&c.schema, &opts);
    let vocab = store.vocab();
    let mut by_bytes: HashMap<&[u8], u32> = HashMap::new();
    for id in 0..vocab.len() as u32 {
        let b = vocab.token_bytes(TokenId(id));
        if !b.is_empty() && !vocab.is_special(TokenId(id)) {
            by_bytes.entry(b).or_insert(id);
        }
    }
    let longest = by_bytes.keys().map(|b| b.len()).max().unwrap();
    let mut bad = Vec::new();
    for body in bodies {
        let mut text = c.open.as_bytes().to_vec();
        text.extend_from_slice(body);
        let mut m = Matcher::new(store.clone());
        m.commit_tokens(&tokenize(&by_bytes, longest, &text)).unwrap_or_else(|e| panic!("{}: {:?} refused: {e}", c.name, String::from_utf8_lossy(body)));
        let mask = m.compute_mask();
        let (n, at) = split(body, &o.esc);
        let rest = &body[at..];
        let done = o.complete(n, rest);
        let mut wrong = 0;
        let mut first = None;
        for id in 0..vocab.len() as u32 {
            let t = TokenId(id);
            let want = if vocab.is_special(t) {
                done && vocab.eos_ids().contains(&t)
            } else {
                let b = vocab.token_bytes(t);
                if b.is_empty() || c.judged.is_some_and(|j| !j(b)) {
                    continue;
                }
                let mut s = rest.to_vec();
                s.extend_from_slice(b);
                o.viable(n, &s, max)
            };
            if bit(&mask, id) != want {
                wrong += 1;
                first.get_or_insert((id, want));
            }
        }
        if let Some((id, want)) = first {
            bad.push(format!(
                "{}: after {n} characters + {:?}: {wrong} tokens differ, e.g. {:?} (oracle: {want})",
                c.name,
                String::from_utf8_lossy(rest),
                String::from_utf8_lossy(vocab.token_bytes(TokenId(id)))
            ));
        }
    }
    bad
}

/// Bodies of `k` characters for each `k` in `counts`: whole, cut inside a
/// character (`cuts`), and closed.
fn bodies(c: &Case, counts: &[usize], cuts: &[&[u8]], rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for &k in counts {
        let mut b = c.start.as_bytes().to_vec();
        let fixed = split(&b, &escapes()).0;
        for _ in fixed..k {
            b.extend_from_slice(c.pool[rng.below(c.pool.len())].as_bytes());
        }
        assert_eq!(split(&b, &escapes()), (k, b.len()));
        if k < c.max {
            for cut in cuts {
                let mut p = b.clone();
                p.extend_from_slice(cut);
                out.push(p);
            }
        }
        if k >= c.min && k <= c.max {
            let mut p = b.clone();
            p.push(b'"');
            out.push(p);
        }
        out.push(b);
    }
    out
}

fn cases(l: usize) -> Vec<Case> {
    let any: Vec<String> = ["a", "Z", " ", "~", "é", "中", "😀", "\\n", "\\\"", "\\\\", "\\u0001", "\\u001f"].iter().map(|s| s.to_string()).collect();
    let letters: Vec<char> = ('a'..='z').chain(['é']).collect();
    let base = |name, schema, min, max| Case {
        name,
        schema,
        open: "\"",
        min,
        max,
        chars: None,
        tails: vec![b""],
        pool: any.clone(),
        start: "",
        judged: None,
    };
    vec![
        base("maxLength", json!({"type": "string", "maxLength": l}), 0, l),
        base("minLength and maxLength", json!({"type": "string", "minLength": l - 2, "maxLength": l}), l - 2, l),
        base("minLength", json!({"type": "string", "minLength": l}), l, usize::MAX),
        Case {
            chars: Some(letters.clone()),
            pool: letters.iter().map(|&c| c.to_string()).collect(),
            ..base("pattern and maxLength", json!({"type": "string", "pattern": "^[a-zé]*$", "maxLength": l}), 0, l)
        },
        // A URI's path: only letter tokens and the closing quote are judged.
        // At most 250 characters: the lexer's table of a set terminal is
        // the product of its regexes' tables (a URI's × one state per
        // count), refused past `max_set_product_states` from about 280.
        Case {
            pool: ('a'..='z').map(|c| c.to_string()).collect(),
            start: "http://e.com/",
            judged: Some(|b| b.iter().all(u8::is_ascii_lowercase) || b.split_last().is_some_and(|(q, r)| *q == b'"' && r.iter().all(u8::is_ascii_lowercase))),
            ..base("format and maxLength", json!({"type": "string", "format": "uri", "maxLength": l.min(250)}), 0, l.min(250))
        },
        Case {
            open: "{\"description\":\"",
            tails: vec![b"}"],
            ..base(
                "a property's maxLength",
                json!({"type": "object", "properties": {"description": {"type": "string", "maxLength": l}}, "required": ["description"], "additionalProperties": false}),
                0,
                l,
            )
        },
        Case {
            open: "{\"",
            tails: vec![b":1}", b": 1}"],
            ..base(
                "propertyNames maxLength",
                json!({"type": "object", "propertyNames": {"maxLength": l}, "additionalProperties": {"const": 1}, "minProperties": 1, "maxProperties": 1}),
                0,
                l,
            )
        },
    ]
}

/// Near the largest bound: every case's masks equal the oracle's; and the
/// comparison tells a bound one off.
#[test]
fn lengths_near_the_bound_match_the_oracle() {
    let l = Limits::DEFAULT.max_string_length;
    let tok = Tok::llama3();
    let cuts: [&[u8]; 5] = [b"\xe4\xb8", b"\\", b"\\u00", b"\xf0\x9f\x98", b"\xc3"];
    let mut rng = Rng(7);
    let mut bad = Vec::new();
    for c in cases(l) {
        let counts: Vec<usize> = if c.max == usize::MAX { (l - 2..=l + 2).collect() } else { (c.max - 3..=c.max).collect() };
        let cuts: Vec<&[u8]> = if c.chars.is_some() { vec![b"\xc3"] } else if c.judged.is_some() { vec![] } else { cuts.to_vec() };
        let b = bodies(&c, &counts, &cuts, &mut rng);
        bad.extend(mismatches(&tok, &c, &b, c.max));
        if c.name == "maxLength" {
            assert!(!mismatches(&tok, &c, &b, c.max - 1).is_empty(), "the oracle with maxLength {} agrees too", c.max - 1);
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// One more than the limit is refused, naming the bound and the pointer.
#[test]
fn lengths_over_the_limit_are_refused() {
    let l = Limits::DEFAULT.max_string_length;
    let tok = Tok::llama3();
    for schema in [
        json!({"properties": {"d": {"type": "string", "maxLength": l + 1}}}),
        json!({"properties": {"d": {"type": "string", "minLength": l + 1}}}),
    ] {
        let Err(e) = grammask::constraint::compile(&tok.pv, &grammask::Constraint::JsonSchema(schema.clone()), &ConstraintOptions::default()) else {
            panic!("{schema} compiled");
        };
        assert_eq!(e.kind(), grammask::ErrorKind::Limit, "{e}");
        assert!(e.to_string().contains(&format!("{}", l + 1)) && e.to_string().contains("#/properties/d"), "{e}");
    }
}
