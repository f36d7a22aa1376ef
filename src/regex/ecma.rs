//! The ECMA-262 dialect (JSON Schema's `pattern` and `patternProperties`,
//! Unicode mode, no flags) → regex-syntax text and HIR. Anchors stay in the
//! HIR; [`super::lang::search_language`] resolves them.

use regex_syntax::hir::Hir;

use super::lang::{parse_translated, push_literal};
use super::look;

/// ECMA-262 `\s`.
const ECMA_WS: &str = r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

fn hex(chars: &[char], i: &mut usize, n: usize) -> Result<u32, String> {
    if *i + n > chars.len() || !chars[*i..*i + n].iter().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("expected {n} hex digits"));
    }
    let s: String = chars[*i..*i + n].iter().collect();
    *i += n;
    Ok(u32::from_str_radix(&s, 16).unwrap_or(0))
}

/// `\u` escape (after the `u`): `HHHH`, a surrogate pair `HHHH\uHHHH`, or `{H...}`.
fn unicode_escape(chars: &[char], i: &mut usize) -> Result<char, String> {
    if chars.get(*i) == Some(&'{') {
        *i += 1;
        let s = *i;
        while *i < chars.len() && chars[*i].is_ascii_hexdigit() {
            *i += 1;
        }
        if chars.get(*i) != Some(&'}') || *i == s {
            return Err("bad \\u{...} escape".into());
        }
        let v = u32::from_str_radix(&chars[s..*i].iter().collect::<String>(), 16).map_err(|e| e.to_string())?;
        *i += 1;
        return char::from_u32(v).ok_or_else(|| format!("\\u{{{v:x}}} is not a Unicode scalar value"));
    }
    let hi = hex(chars, i, 4)?;
    if (0xD800..0xDC00).contains(&hi) && chars.get(*i) == Some(&'\\') && chars.get(*i + 1) == Some(&'u') {
        let mut j = *i + 2;
        if let Ok(lo) = hex(chars, &mut j, 4) {
            if (0xDC00..0xE000).contains(&lo) {
                *i = j;
                return Ok(char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)).unwrap_or('\u{FFFD}'));
            }
        }
    }
    char::from_u32(hi).ok_or_else(|| format!("lone surrogate \\u{hi:04X} is not supported"))
}

/// A class escape (`\d` ...) as the *body* of a regex-syntax class.
fn class_escape(e: char) -> Option<(&'static str, bool)> {
    Some(match e {
        'd' => ("0-9", false),
        'D' => ("0-9", true),
        'w' => ("A-Za-z0-9_", false),
        'W' => ("A-Za-z0-9_", true),
        's' => (ECMA_WS, false),
        'S' => (ECMA_WS, true),
        _ => return None,
    })
}

/// A character escape valid both inside and outside classes (after the `\`).
fn char_escape(chars: &[char], i: &mut usize, e: char) -> Result<Option<char>, String> {
    Ok(Some(match e {
        't' => '\t',
        'n' => '\n',
        'v' => '\x0b',
        'f' => '\x0c',
        'r' => '\r',
        '0' if !chars.get(*i).is_some_and(|c| c.is_ascii_digit()) => '\0',
        'c' => match chars.get(*i) {
            Some(c) if c.is_ascii_alphabetic() => {
                *i += 1;
                char::from_u32(*c as u32 % 32).unwrap_or('\0')
            }
            _ => return Err("bad \\c escape".into()),
        },
        'x' => char::from_u32(hex(chars, i, 2)?).unwrap_or('\0'),
        'u' => unicode_escape(chars, i)?,
        _ => return Ok(None),
    }))
}

/// Translates an ECMA-262 regex (as used by JSON Schema's `pattern` and
/// `patternProperties`, Unicode mode, no flags) into regex-syntax text.
/// Lookaround and `\b`/`\B` become lookaround groups ([`look::open`],
/// compiled when the anchors are resolved). Unsupported: backreferences,
/// `\k<name>`.
pub fn ecma_to_regex(src: &str) -> Result<String, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '\\' => {
                let Some(&e) = chars.get(i) else { return Err("pattern ends with a lone backslash".into()) };
                i += 1;
                if let Some((body, neg)) = class_escape(e) {
                    out.push_str(if neg { "[^" } else { "[" });
                    out.push_str(body);
                    out.push(']');
                } else if let Some(ch) = char_escape(&chars, &mut i, e)? {
                    push_literal(&mut out, ch);
                } else {
                    match e {
                        // Word boundaries (ASCII `\w`) as lookaround.
                        'b' | 'B' => {
                            let w = "[0-9A-Za-z_])";
                            let (p, q) = if e == 'b' { ('n', 'a') } else { ('a', 'n') };
                            let n = out.len();
                            out.push_str(&format!(
                                "(?:{}{w}{}{w}|{}{w}{}{w})",
                                look::open('b', n),
                                look::open(p, n + 1),
                                look::open('c', n + 2),
                                look::open(q, n + 3)
                            ));
                        }
                        'p' | 'P' => {
                            out.push('\\');
                            out.push(e);
                            if chars.get(i) != Some(&'{') {
                                return Err("\\p must be followed by {...}".into());
                            }
                            while i < chars.len() {
                                let c = chars[i];
                                i += 1;
                                out.push(c);
                                if c == '}' {
                                    break;
                                }
                            }
                        }
                        '1'..='9' => return Err(format!("backreference \\{e} is not supported")),
                        'k' => return Err("named backreference \\k<...> is not supported".into()),
                        e if e.is_ascii_alphanumeric() => return Err(format!("unknown escape \\{e}")),
                        e => push_literal(&mut out, e),
                    }
                }
            }
            '[' => {
                let neg = chars.get(i) == Some(&'^');
                if neg {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                    // `[]` matches nothing, `[^]` any character.
                    out.push_str(if neg { r"[\s\S]" } else { r"[^\s\S]" });
                    continue;
                }
                out.push_str(if neg { "[^" } else { "[" });
                // Items: a char (with escapes) or a class escape; ranges a-b.
                enum It {
                    C(char),
                    K(&'static str, bool),
                }
                let item = |i: &mut usize| -> Result<It, String> {
                    let c = chars[*i];
                    *i += 1;
                    if c != '\\' {
                        return Ok(It::C(c));
                    }
                    let Some(&e) = chars.get(*i) else { return Err("unterminated character class".into()) };
                    *i += 1;
                    if let Some((b, n)) = class_escape(e) {
                        return Ok(It::K(b, n));
                    }
                    if e == 'b' {
                        return Ok(It::C('\x08'));
                    }
                    if e == 'p' || e == 'P' {
                        return Err("\\p{...} inside a character class is not supported".into());
                    }
                    if let Some(ch) = char_escape(&chars, i, e)? {
                        return Ok(It::C(ch));
                    }
                    if e.is_ascii_alphanumeric() {
                        return Err(format!("unknown escape \\{e} in a character class"));
                    }
                    Ok(It::C(e))
                };
                let push = |out: &mut String, it: &It| match it {
                    It::C(c) => push_literal(out, *c),
                    It::K(b, false) => out.push_str(b),
                    It::K(b, true) => {
                        out.push_str("[^");
                        out.push_str(b);
                        out.push(']');
                    }
                };
                loop {
                    let Some(&c) = chars.get(i) else { return Err("unterminated character class".into()) };
                    if c == ']' {
                        i += 1;
                        break;
                    }
                    let lo = item(&mut i)?;
                    if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&c| c != ']') {
                        i += 1;
                        let hi = item(&mut i)?;
                        match (&lo, &hi) {
                            (It::C(a), It::C(b)) if a <= b => {
                                push_literal(&mut out, *a);
                                out.push('-');
                                push_literal(&mut out, *b);
                            }
                            (It::C(_), It::C(_)) => return Err("character class range out of order".into()),
                            _ => return Err("a class escape cannot be a range end".into()),
                        }
                    } else {
                        push(&mut out, &lo);
                    }
                }
                out.push(']');
            }
            '(' if chars.get(i) == Some(&'?') => {
                match (chars.get(i + 1), chars.get(i + 2)) {
                    (Some(':'), _) => {
                        i += 2;
                        out.push_str("(?:");
                    }
                    (Some('='), _) | (Some('!'), _) => {
                        out.push_str(&look::open(if chars[i + 1] == '=' { 'a' } else { 'n' }, out.len()));
                        i += 2;
                    }
                    (Some('<'), Some('=')) | (Some('<'), Some('!')) => {
                        out.push_str(&look::open(if chars[i + 2] == '=' { 'b' } else { 'c' }, out.len()));
                        i += 3;
                    }
                    (Some('<'), _) => {
                        i += 2;
                        while i < chars.len() && chars[i] != '>' {
                            i += 1;
                        }
                        if i >= chars.len() {
                            return Err("unterminated group name".into());
                        }
                        i += 1;
                        out.push_str("(?:");
                    }
                    _ => return Err("unsupported group syntax (?...".into()),
                }
            }
            '{' => {
                // A quantifier {n}, {n,}, {n,m}; otherwise a literal brace (Annex B).
                let mut j = i;
                let d0 = j;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                let ok = j > d0 && {
                    if chars.get(j) == Some(&',') {
                        j += 1;
                        while j < chars.len() && chars[j].is_ascii_digit() {
                            j += 1;
                        }
                    }
                    chars.get(j) == Some(&'}')
                };
                if ok {
                    out.push('{');
                    out.extend(&chars[i..=j]);
                    i = j + 1;
                } else {
                    out.push_str("\\{");
                }
            }
            '}' => out.push_str("\\}"),
            ']' => out.push_str("\\]"),
            '.' => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            '#' | '&' | '~' | '-' | ' ' => push_literal(&mut out, c),
            c if c.is_whitespace() || c.is_control() => push_literal(&mut out, c),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// An ECMA-262 pattern as a HIR (anchors still in it).
pub fn ecma_to_hir(src: &str) -> Result<Hir, String> {
    let re = ecma_to_regex(src)?;
    parse_translated(src, &re)
}
