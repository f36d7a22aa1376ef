//! Python `re` → regex-syntax translation, and Lark string-literal escapes.
//!
//! Lark regexes (`/.../flags`) are Python `re` patterns. The translation keeps
//! their meaning under regex-syntax:
//! - `\Z` → `\z`; `\a`, `\0`/octal, `\xHH`, `\uHHHH`, `\UHHHHHHHH` → `\x{..}`;
//!   `\<`/`\>` (literal in Python, word boundaries in regex-syntax) → `<`/`>`;
//! - character sets are re-emitted item by item with every literal escaped, so
//!   Python's literal `[`, `&&`, `--`, `~~` and whitespace (under `x`) stay
//!   literal; `\b` in a set is a backspace;
//! - `{` that is not a valid Python quantifier is a literal; `{,n}` → `{0,n}`;
//! - named groups become non-capturing (names would clash once terminals are
//!   inlined into each other); `(?#...)` comments are dropped; the `u` flag is
//!   dropped (regex-syntax is Unicode-aware by default);
//! - verbose mode (`x` flag or a leading `(?x)`) is applied here: whitespace and
//!   `#` comments outside sets are removed, so the output never needs `x`.
//!
//! A negative lookahead `(?!body)` whose body translates (no nested
//! lookaround) is replaced by the empty group `(?:)` in the text and
//! returned as a typed [`Lookahead`] at that group's offset ([`Translated::lookaheads`]): the lexer
//! compiles it when it is exact and refuses it otherwise. Other lookaround (`(?=`,
//! `(?<=`, `(?<!`, a `(?!` that does not translate) and backreferences (`\1`,
//! `(?P=name)`) cannot be expressed; they are *reported* in
//! [`Translated::unsupported`] (so the caller can list every offending terminal
//! at once) rather than failing immediately. Anything else that cannot be
//! translated is an `Err` with a message.

use crate::grammar::{Lookahead, EMPTY_GROUP, MAX_LOOKAHEADS};

use super::lang::push_literal;
use super::look;

mod classes;
pub(crate) mod width;

/// A translated pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Translated {
    /// regex-syntax dialect (meaningless when `unsupported` is non-empty).
    pub regex: String,
    /// Constructs we cannot support, e.g. ``lookahead `(?=` ``.
    pub unsupported: Vec<String>,
    /// Negative lookaheads `(?!...)`, each replaced by `(?:)` in `regex` (at most
    /// [`MAX_LOOKAHEADS`]); the lexer compiles the exact forms and refuses
    /// the others.
    pub lookaheads: Vec<Lookahead>,
}

fn hex_char(chars: &[char], i: &mut usize, n: usize, what: &str) -> Result<char, String> {
    let end = *i + n;
    if end > chars.len() || !chars[*i..end].iter().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("incomplete escape {what}: expected {n} hex digits"));
    }
    let s: String = chars[*i..end].iter().collect();
    *i = end;
    let v = u32::from_str_radix(&s, 16).map_err(|e| format!("bad escape {what}{s}: {e}"))?;
    char::from_u32(v).ok_or_else(|| format!("escape {what}{s} is not a valid Unicode scalar value"))
}

/// Octal escape starting at `chars[*i]` (already known to be an octal digit), up to 3 digits.
fn octal_char(chars: &[char], i: &mut usize) -> Result<char, String> {
    let mut v = 0u32;
    let mut n = 0;
    while n < 3 && *i < chars.len() && ('0'..='7').contains(&chars[*i]) {
        v = v * 8 + (chars[*i] as u32 - '0' as u32);
        *i += 1;
        n += 1;
    }
    char::from_u32(v).ok_or_else(|| format!("octal escape {v:o} is out of range"))
}

/// Copies `\p{..}` / `\pL` bodies verbatim (after the `p`/`P`).
fn copy_unicode_class(chars: &[char], i: &mut usize, out: &mut String) -> Result<(), String> {
    match chars.get(*i) {
        Some('{') => {
            while *i < chars.len() {
                let c = chars[*i];
                out.push(c);
                *i += 1;
                if c == '}' {
                    return Ok(());
                }
            }
            Err("unterminated \\p{...}".into())
        }
        Some(&c) if c.is_ascii_alphabetic() => {
            out.push(c);
            *i += 1;
            Ok(())
        }
        _ => Err("\\p must be followed by a class name".into()),
    }
}

/// One item of a character set.
enum SetItem {
    Char(char),
    /// A class escape such as `\d`, copied verbatim.
    Class(String),
}

/// Parses one set item at `chars[*i]` (Python `_class_escape` semantics).
fn set_item(chars: &[char], i: &mut usize) -> Result<SetItem, String> {
    let c = chars[*i];
    *i += 1;
    if c != '\\' {
        return Ok(SetItem::Char(c));
    }
    let Some(&e) = chars.get(*i) else { return Err("pattern ends with a lone backslash".into()) };
    *i += 1;
    Ok(match e {
        'd' | 'D' | 's' | 'S' | 'w' | 'W' => SetItem::Class(python_class(e)),
        'p' | 'P' => {
            let mut s = format!("\\{e}");
            copy_unicode_class(chars, i, &mut s)?;
            SetItem::Class(s)
        }
        'n' => SetItem::Char('\n'),
        't' => SetItem::Char('\t'),
        'r' => SetItem::Char('\r'),
        'f' => SetItem::Char('\x0c'),
        'v' => SetItem::Char('\x0b'),
        'a' => SetItem::Char('\x07'),
        'b' => SetItem::Char('\x08'),
        'x' => SetItem::Char(hex_char(chars, i, 2, "\\x")?),
        'u' => SetItem::Char(hex_char(chars, i, 4, "\\u")?),
        'U' => SetItem::Char(hex_char(chars, i, 8, "\\U")?),
        '0'..='7' => {
            *i -= 1;
            SetItem::Char(octal_char(chars, i)?)
        }
        'N' => return Err("named Unicode escapes \\N{...} are not supported".into()),
        c if c.is_ascii_alphanumeric() => return Err(format!("bad escape \\{c} in a character set")),
        c => SetItem::Char(c),
    })
}

/// Python's `\d`, `\s`, `\w` (and negations) for str patterns, as an explicit
/// (nested) class: regex-syntax's own classes differ (its `\w` has combining marks
/// and connector punctuation but not other numbers, its `\s` lacks `\x1c`-`\x1f`)
/// and follow another Unicode version. Tables: `pyclasses.rs`.
fn python_class(e: char) -> String {
    let (table, negated) = match e {
        'd' => (classes::DIGIT, false),
        'D' => (classes::DIGIT, true),
        's' => (classes::SPACE, false),
        'S' => (classes::SPACE, true),
        'w' => (classes::WORD, false),
        _ => (classes::WORD, true),
    };
    let mut out = String::from(if negated { "[^" } else { "[" });
    for &(a, b) in table {
        if a == b {
            out.push_str(&format!("\\x{{{a:x}}}"));
        } else {
            out.push_str(&format!("\\x{{{a:x}}}-\\x{{{b:x}}}"));
        }
    }
    out.push(']');
    out
}

fn push_set_item(out: &mut String, it: &SetItem) {
    match it {
        SetItem::Char(c) => push_literal(out, *c),
        SetItem::Class(s) => out.push_str(s),
    }
}

/// Translates a character set starting after `[`; `*i` ends after `]`.
fn translate_set(chars: &[char], i: &mut usize, out: &mut String) -> Result<(), String> {
    out.push('[');
    if chars.get(*i) == Some(&'^') {
        out.push('^');
        *i += 1;
    }
    let mut first = true;
    loop {
        let Some(&c) = chars.get(*i) else { return Err("unterminated character set '['".into()) };
        if c == ']' && !first {
            *i += 1;
            break;
        }
        first = false;
        let lo = set_item(chars, i)?;
        if chars.get(*i) == Some(&'-') {
            *i += 1;
            match chars.get(*i) {
                None => return Err("unterminated character set '['".into()),
                Some(']') => {
                    push_set_item(out, &lo);
                    push_literal(out, '-');
                    *i += 1;
                    break;
                }
                Some(_) => {
                    let hi = set_item(chars, i)?;
                    match (&lo, &hi) {
                        (SetItem::Char(a), SetItem::Char(b)) => {
                            if a > b {
                                return Err(format!("bad character range {a:?}-{b:?}"));
                            }
                            push_literal(out, *a);
                            out.push('-');
                            push_literal(out, *b);
                        }
                        _ => return Err("bad character range (a class like \\d cannot be a range end)".into()),
                    }
                }
            }
        } else {
            push_set_item(out, &lo);
        }
    }
    out.push(']');
    Ok(())
}

/// If `chars[i..]` starts with a Python quantifier `{m}`, `{m,}`, `{,n}`, `{m,n}`,
/// returns its regex-syntax form and length.
fn brace_quantifier(chars: &[char], i: usize) -> Option<(String, usize)> {
    let mut j = i + 1;
    let digits = |j: &mut usize| {
        let s = *j;
        while *j < chars.len() && chars[*j].is_ascii_digit() {
            *j += 1;
        }
        chars[s..*j].iter().collect::<String>()
    };
    if chars.get(j) == Some(&'}') {
        return None;
    }
    let lo = digits(&mut j);
    let (comma, hi) = if chars.get(j) == Some(&',') {
        j += 1;
        (true, digits(&mut j))
    } else {
        (false, String::new())
    };
    if chars.get(j) != Some(&'}') {
        return None;
    }
    let lo_n = if lo.is_empty() { "0".to_string() } else { lo };
    let q = if !comma { format!("{{{lo_n}}}") } else if hi.is_empty() { format!("{{{lo_n},}}") } else { format!("{{{lo_n},{hi}}}") };
    Some((q, j + 1 - i))
}

/// The index just past the atom at `chars[i]` when it is an escape (`\x`)
/// or a character set (`[...]`, Python's rules for a leading `^` and `]`);
/// `i + 1` otherwise.
fn atom_end(chars: &[char], mut i: usize) -> usize {
    match chars[i] {
        '\\' => i += 1,
        '[' => {
            i += 1;
            if chars.get(i) == Some(&'^') {
                i += 1;
            }
            if chars.get(i) == Some(&']') {
                i += 1;
            }
            while i < chars.len() && chars[i] != ']' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
        }
        _ => {}
    }
    (i + 1).min(chars.len())
}

/// The index of the `)` that closes a group whose content starts at
/// `chars[i]` (escapes and character sets skipped), if any.
fn group_end(chars: &[char], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < chars.len() {
        match chars[i] {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
        i = atom_end(chars, i);
    }
    None
}

/// The pattern that follows a point inside a pattern, given the text after
/// it: the rest of its own alternative (a `|` skips to the end of the
/// enclosing group), then what follows each enclosing group.
fn continuation(rest: &[char]) -> String {
    let mut out = String::new();
    let mut i = 0;
    let mut depth = 0usize;
    let mut skipping = false; // inside an alternative that is not taken
    let mut skip_depth = 0usize;
    while i < rest.len() {
        let c = rest[i];
        let start = i;
        i = atom_end(rest, i);
        let piece: String = rest[start..i].iter().collect();
        if skipping {
            match c {
                '(' => skip_depth += 1,
                ')' if skip_depth == 0 => skipping = false, // the enclosing group ends
                ')' => skip_depth -= 1,
                _ => {}
            }
            continue;
        }
        match c {
            '(' => {
                depth += 1;
                out.push_str(&piece);
            }
            ')' if depth == 0 => {} // closes a group opened before the point
            ')' => {
                depth -= 1;
                out.push_str(&piece);
            }
            '|' if depth == 0 => {
                skipping = true;
                skip_depth = 0;
            }
            _ => out.push_str(&piece),
        }
    }
    out
}

/// Whether a Python pattern (without lookaround) can match the empty
/// string, so that it never fails to match.
fn always_matches(pattern: &str) -> bool {
    let Ok(t) = translate(pattern, false) else { return false };
    if !t.unsupported.is_empty() || !t.lookaheads.is_empty() {
        return false;
    }
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(&t.regex)
        .is_ok_and(|h| h.properties().minimum_len() == Some(0))
}

/// Whether `.` matches a newline in the whole pattern: `Some(true)` for a
/// leading `(?s)` or a `(?..s..:...)` group around everything (Lark writes
/// flags so), `Some(false)` without any `s` flag, `None` when an `s` flag
/// covers only part of the pattern (or is switched off).
fn dotall(chars: &[char]) -> Option<bool> {
    let mut found = false;
    let mut i = 0;
    while i + 1 < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == '(' && chars[i + 1] == '?' {
            let mut j = i + 2;
            while j < chars.len() && "aiLmsux-".contains(chars[j]) {
                j += 1;
            }
            let flags: String = chars[i + 2..j].iter().collect();
            if matches!(chars.get(j), Some(':') | Some(')')) && flags.contains('s') {
                let whole = i == 0
                    && !flags.split('-').nth(1).is_some_and(|neg| neg.contains('s'))
                    && (chars[j] == ')' || group_end(chars, j + 1) == Some(chars.len() - 1));
                if !whole {
                    return None;
                }
                found = true;
            }
        }
        i += 1;
    }
    Some(found)
}

/// A lookbehind `(?<!C)` / `(?<=C)` at `chars[at]` (the `(`) right after a
/// literal character `c` of the pattern (a quote or an ASCII letter or
/// digit, not escaped, so the text before the lookbehind ends with exactly
/// `c`), where `C` is one character or a class: it always holds or always
/// fails, whatever the text (syncode's `"""(?<!\\)`). Returns the index of
/// the closing `)` and whether it holds; `None` for any other lookbehind.
fn settled_lookbehind(chars: &[char], at: usize) -> Option<(usize, bool)> {
    let negative = match (chars.get(at + 1), chars.get(at + 2), chars.get(at + 3)) {
        (Some('?'), Some('<'), Some('!')) => true,
        (Some('?'), Some('<'), Some('=')) => false,
        _ => return None,
    };
    let c = *chars.get(at.checked_sub(1)?)?;
    if !(matches!(c, '"' | '\'' | '`') || c.is_ascii_alphanumeric()) || at >= 2 && chars[at - 2] == '\\' {
        return None;
    }
    let end = group_end(chars, at + 4)?;
    let body: String = chars[at + 4..end].iter().collect();
    let t = translate(&body, false).ok().filter(|t| t.unsupported.is_empty() && t.lookaheads.is_empty())?;
    // One character, with or without the case-insensitive flag (both must agree).
    let member = |re: &str| -> Option<bool> {
        let hir = regex_syntax::ParserBuilder::new().build().parse(re).ok()?;
        let one = matches!(hir.kind(), regex_syntax::hir::HirKind::Class(_))
            || matches!(hir.kind(), regex_syntax::hir::HirKind::Literal(l) if std::str::from_utf8(&l.0).is_ok_and(|s| s.chars().count() == 1));
        if !one {
            return None;
        }
        let mut buf = [0u8; 4];
        let text = c.encode_utf8(&mut buf);
        Some(match hir.kind() {
            regex_syntax::hir::HirKind::Literal(l) => l.0.as_ref() == text.as_bytes(),
            regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(u)) => u.ranges().iter().any(|r| r.start() <= c && c <= r.end()),
            regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Bytes(b)) => {
                c.is_ascii() && b.ranges().iter().any(|r| r.start() <= c as u8 && c as u8 <= r.end())
            }
            _ => return None,
        })
    };
    let (plain, folded) = (member(&t.regex)?, member(&format!("(?i:{})", t.regex))?);
    (plain == folded).then_some((end, plain != negative))
}

/// Lark's escaped-string idioms, lazy matches that end at the first closing
/// quote preceded by an even number of backslashes (`Q` is `"`, `'` or
/// `` ` ``, not escaped; after the closing quote only pattern that can match
/// the empty string, so it never fails and the lazy part never extends):
/// - `Q.*?(?<!\\)(\\\\)*?Q` (common.lark's `ESCAPED_STRING`, lark.lark's
///   `STRING: _STRING "i"?`) is exactly `Q(?:X)*Q`, where `X` is one
///   character other than `Q` and `\`, or `\` and any character (`.`'s
///   newline rule applies: without the `s` flag neither is a newline);
/// - `Q(?!QQ).*?(?<!\\)(\\\\)*?Q` (Lark's python.lark `STRING`) is
///   `Q(?:(?:X)+Q|Q(?!Q))`: the lookahead matters only for the empty string,
///   which must not be followed by a third `Q` (a one-character lookahead
///   the lexer compiles);
/// - `QQQ.*?(?<!\\)(\\\\)*?QQQ` (python.lark's `LONG_STRING`) is
///   `QQQ(?:X|QX|QQX)*QQQ`: the body holds no unescaped `QQQ`.
///
/// `at` is the index of the `.` after the opening quote(s) or of the `(` of
/// the `(?!QQ)`; returns how many characters the translation covers from
/// `at` on, the regex-syntax text, and the lookahead it uses (its offset in
/// that text and its body), if any.
fn string_idiom(chars: &[char], at: usize, lookaheads: usize) -> Option<(usize, String, Option<(usize, String)>)> {
    const IDIOM: &str = r".*?(?<!\\)(\\\\)*?";
    let n = IDIOM.chars().count();
    let starts = |k: usize, s: &str| s.chars().enumerate().all(|(m, c)| chars.get(k + m) == Some(&c));
    let is_q = |c: char| matches!(c, '"' | '\'' | '`');
    let unescaped = |k: usize| k == 0 || chars[k - 1] != '\\';
    let q = *chars.get(at.checked_sub(1)?)?;
    if !is_q(q) || !(starts(at, IDIOM) || starts(at, "(?!")) {
        return None;
    }
    let dot = dotall(chars)?;
    let mut ql = String::new();
    push_literal(&mut ql, q);
    let x = if dot { format!(r"(?:[^{ql}\\]|\\[\s\S])") } else { format!(r"(?:[^{ql}\\\n]|\\[^\n])") };
    let nullable_after = |k: usize| always_matches(&continuation(&chars[k.min(chars.len())..]));
    match chars[at] {
        '.' if at >= 3 && chars[at - 2] == q && chars[at - 3] == q && unescaped(at - 3) => {
            let close = at + n;
            let qqq: String = std::iter::repeat_n(q, 3).collect();
            (starts(at, IDIOM) && starts(close, &qqq) && nullable_after(close + 3))
                .then(|| (n, format!("(?:{x}|{ql}{x}|{ql}{ql}{x})*"), None))
        }
        '.' if unescaped(at - 1) => {
            (starts(at, IDIOM) && chars.get(at + n) == Some(&q) && nullable_after(at + n + 1)).then(|| (n, format!("{x}*"), None))
        }
        '(' if unescaped(at - 1) => {
            let la: String = format!("(?!{q}{q})");
            let p = at + la.chars().count();
            if !starts(at, &la) {
                return None;
            }
            // With the backslash idiom, or a plain lazy `.*?` to the first `Q`.
            let (len, body) = if starts(p, IDIOM) {
                (n, x)
            } else if starts(p, ".*?") {
                (3, if dot { format!("[^{ql}]") } else { format!(r"[^{ql}\n]") })
            } else {
                return None;
            };
            if !(chars.get(p + len) == Some(&q) && nullable_after(p + len + 1)) {
                return None;
            }
            if lookaheads >= MAX_LOOKAHEADS {
                return None;
            }
            let before = format!("(?:{body}+{ql}|{ql}");
            Some((p + len + 1 - at, format!("{before}{EMPTY_GROUP})"), Some((before.len(), ql))))
        }
        _ => None,
    }
}

/// Translates a Python regex (the text between the slashes, Lark escapes
/// included) into regex-syntax. `verbose` is the `x` flag.
pub(crate) fn translate(src: &str, verbose: bool) -> Result<Translated, String> {
    translate_in(src, verbose, false)
}

/// [`translate`] for a pattern whose subject is the whole text (the regex
/// constraint): every lookaround, and `\b`/`\B`, becomes a lookaround
/// group ([`look::open`]), compiled exactly by the regex layer; Lark's
/// string idioms (lexer semantics) are not applied.
pub(crate) fn translate_whole(src: &str) -> Result<Translated, String> {
    translate_in(src, false, true)
}

fn translate_in(src: &str, mut verbose: bool, look: bool) -> Result<Translated, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + 8);
    let mut unsupported = Vec::new();
    let mut lookaheads: Vec<Lookahead> = Vec::new();
    // Verbose mode of the enclosing groups (`(?x:...)` is scoped).
    let mut groups: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if (c == '.' || c == '(') && !look {
            if let Some((n, emit, guard)) = string_idiom(&chars, i - 1, lookaheads.len()) {
                if let Some((at, not)) = guard {
                    lookaheads.push(Lookahead { at: out.len() + at, not });
                }
                out.push_str(&emit);
                i += n - 1;
                continue;
            }
        }
        if c == '(' && !(chars.get(i) == Some(&'?') && chars.get(i + 1) == Some(&'#')) {
            groups.push(verbose);
        }
        match c {
            '\\' => {
                let Some(&e) = chars.get(i) else { return Err("pattern ends with a lone backslash".into()) };
                i += 1;
                match e {
                    'Z' => out.push_str("\\z"),
                    'd' | 'D' | 's' | 'S' | 'w' | 'W' => out.push_str(&python_class(e)),
                    'b' | 'B' if look => {
                        // Word boundaries (Python's `\w`) as lookaround.
                        let w = python_class('w') + ")";
                        let (p, q) = if e == 'b' { ('n', 'a') } else { ('a', 'n') };
                        let n = out.len();
                        let t = format!("(?:{}{w}{}{w}|{}{w}{}{w})", look::open('b', n), look::open(p, n + 1), look::open('c', n + 2), look::open(q, n + 3));
                        out.push_str(&t);
                    }
                    'A' | 'b' | 'B' => {
                        out.push('\\');
                        out.push(e);
                    }
                    'p' | 'P' => {
                        out.push('\\');
                        out.push(e);
                        copy_unicode_class(&chars, &mut i, &mut out)?;
                    }
                    'n' => push_literal(&mut out, '\n'),
                    't' => push_literal(&mut out, '\t'),
                    'r' => push_literal(&mut out, '\r'),
                    'f' => push_literal(&mut out, '\x0c'),
                    'v' => push_literal(&mut out, '\x0b'),
                    'a' => push_literal(&mut out, '\x07'),
                    'x' => push_literal(&mut out, hex_char(&chars, &mut i, 2, "\\x")?),
                    'u' => push_literal(&mut out, hex_char(&chars, &mut i, 4, "\\u")?),
                    'U' => push_literal(&mut out, hex_char(&chars, &mut i, 8, "\\U")?),
                    '0' => {
                        i -= 1;
                        push_literal(&mut out, octal_char(&chars, &mut i)?);
                    }
                    '1'..='9' => {
                        // Python: three octal digits are an octal escape, else a group reference.
                        let oct = |k: usize| chars.get(k).is_some_and(|c| ('0'..='7').contains(c));
                        if e <= '7' && oct(i) && oct(i + 1) {
                            i -= 1;
                            push_literal(&mut out, octal_char(&chars, &mut i)?);
                        } else {
                            let mut r = format!("\\{e}");
                            if chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                                r.push(chars[i]);
                                i += 1;
                            }
                            unsupported.push(format!("backreference `{r}`"));
                        }
                    }
                    'N' => return Err("named Unicode escapes \\N{...} are not supported".into()),
                    e if e.is_ascii_alphabetic() => return Err(format!("bad escape \\{e}")),
                    e => push_literal(&mut out, e),
                }
            }
            '[' => translate_set(&chars, &mut i, &mut out)?,
            '(' if chars.get(i) == Some(&'?') => {
                i += 1;
                let rest = |k: usize, s: &str| s.chars().enumerate().all(|(n, c)| chars.get(k + n) == Some(&c));
                let kind = ["=", "!", "<=", "<!"].iter().position(|p| rest(i, p)).filter(|_| look);
                if let Some(k) = kind {
                    if k >= 2 {
                        let end = group_end(&chars, i + 2).ok_or("missing ), unterminated subpattern")?;
                        let body: String = chars[i + 2..end].iter().collect();
                        if !matches!(width::width(&body), width::Width::Exact(a, b) if a == b) {
                            return Err("look-behind requires fixed-width pattern".into());
                        }
                    }
                    out.push_str(&look::open(b"anbc"[k] as char, out.len()));
                    i += 1 + k / 2;
                    continue;
                }
                let body = if rest(i, "!") { group_end(&chars, i + 1) } else { None };
                let body = body.filter(|_| lookaheads.len() < MAX_LOOKAHEADS).and_then(|end| {
                    let text: String = chars[i + 1..end].iter().collect();
                    let inner = translate_in(&text, verbose, false).ok().filter(|t| t.unsupported.is_empty() && t.lookaheads.is_empty())?;
                    Some((end, inner.regex))
                });
                if let Some((end, not)) = body {
                    // One-character negative lookahead: the lexer decides
                    // whether it compiles exactly (lexer::table).
                    lookaheads.push(Lookahead { at: out.len(), not });
                    out.push_str(EMPTY_GROUP);
                    i = end + 1;
                    groups.pop();
                } else if rest(i, "=") || rest(i, "!") {
                    let why = match chars[i] {
                        '=' => "",
                        _ if lookaheads.len() >= MAX_LOOKAHEADS => " (more than 4 in one terminal)",
                        _ => " (with lookaround inside)",
                    };
                    unsupported.push(format!("lookahead `(?{}`{why}", chars[i]));
                    i += 1;
                    out.push_str("(?:");
                } else if let Some((end, holds)) = settled_lookbehind(&chars, i - 2) {
                    // A lookbehind on the literal character just before it:
                    // always true (dropped) or always false (never matches).
                    if !holds {
                        out.push_str(r"[^\s\S]");
                    }
                    i = end + 1;
                    groups.pop();
                } else if rest(i, "<=") || rest(i, "<!") {
                    unsupported.push(format!("lookbehind `(?<{}`", chars[i + 1]));
                    i += 2;
                    out.push_str("(?:");
                } else if rest(i, "P<") {
                    i += 2;
                    while i < chars.len() && chars[i] != '>' {
                        if !(chars[i].is_alphanumeric() || chars[i] == '_') {
                            return Err("bad group name in (?P<...>".into());
                        }
                        i += 1;
                    }
                    if i >= chars.len() {
                        return Err("unterminated group name in (?P<...>".into());
                    }
                    i += 1;
                    out.push_str("(?:");
                } else if rest(i, "P=") {
                    let start = i - 2;
                    while i < chars.len() && chars[i] != ')' {
                        i += 1;
                    }
                    i = (i + 1).min(chars.len());
                    groups.pop();
                    unsupported.push(format!("backreference `{}`", chars[start..i].iter().collect::<String>()));
                } else if rest(i, "#") {
                    while i < chars.len() && chars[i] != ')' {
                        i += 1;
                    }
                    if i >= chars.len() {
                        return Err("unterminated comment (?#...".into());
                    }
                    i += 1;
                } else if rest(i, ":") {
                    i += 1;
                    out.push_str("(?:");
                } else if rest(i, ">") {
                    return Err("atomic groups (?>...) are not supported".into());
                } else if rest(i, "(") {
                    return Err("conditional groups (?(...)...) are not supported".into());
                } else {
                    // Flags: (?aiLmsux-imsx:...) or global (?aiLmsux)
                    let mut flags = String::new();
                    while let Some(&f) = chars.get(i) {
                        match f {
                            'i' | 'm' | 's' | 'x' | '-' => flags.push(f),
                            'u' => {}
                            'a' | 'L' => return Err(format!("the `{f}` regex flag is not supported")),
                            ':' | ')' => break,
                            _ => return Err(format!("unknown extension (?{f}")),
                        }
                        i += 1;
                    }
                    match chars.get(i) {
                        Some(':') => {
                            i += 1;
                            if let Some(pos) = flags.find('x') {
                                verbose = !flags[..pos].contains('-');
                                flags.retain(|f| f != 'x');
                            }
                            if flags.is_empty() || flags == "-" {
                                out.push_str("(?:");
                            } else {
                                out.push_str(&format!("(?{}:", flags.trim_end_matches('-')));
                            }
                        }
                        Some(')') => {
                            i += 1;
                            // A global flag group opens no group.
                            groups.pop();
                            if flags.contains('x') && !flags.contains('-') {
                                verbose = true;
                                flags.retain(|f| f != 'x');
                            }
                            if !flags.is_empty() && flags != "-" {
                                out.push_str(&format!("(?{flags})"));
                            }
                        }
                        _ => return Err("unterminated group flags (?...".into()),
                    }
                }
            }
            '{' => match brace_quantifier(&chars, i - 1) {
                Some((q, len)) => {
                    out.push_str(&q);
                    i += len - 1;
                }
                None => out.push_str("\\{"),
            },
            '}' => out.push_str("\\}"),
            ')' => {
                if let Some(v) = groups.pop() {
                    verbose = v;
                }
                out.push(')');
            }
            '#' if verbose => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            c if verbose && " \t\n\r\x0b\x0c".contains(c) => {}
            '#' | '&' | '~' | '-' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_whitespace() || c.is_control() => push_literal(&mut out, c),
            c => out.push(c),
        }
    }
    Ok(Translated { regex: out, unsupported, lookaheads })
}

/// Lark's `eval_escaping`: the text between the quotes or slashes of a
/// literal → the pattern value. Backslash escapes `\x.. \u.... \U........ \n
/// \f \t \r` are evaluated, `\\` stays `\\`, any other `\c` stays `\c`; then
/// (Lark's `replace('\\"', '"')` before its `literal_eval`) a backslash right
/// before a quote is dropped, even the second of `\\"`.
pub(crate) fn lark_eval_escaping(raw: &str) -> Result<String, String> {
    // Build Lark's intermediate `w`.
    let mut w: Vec<char> = Vec::with_capacity(raw.len() + 8);
    let mut it = raw.chars();
    while let Some(n) = it.next() {
        w.push(n);
        if n == '\\' {
            let n2 = it.next().ok_or("literal ended unexpectedly (bad escaping)")?;
            if n2 == '\\' {
                w.push('\\');
                w.push('\\');
            } else if !"Uuxnftr".contains(n2) {
                w.push('\\');
            }
            w.push(n2);
        }
    }
    // w.replace('\\"', '"'): left to right, non-overlapping.
    let mut w2: Vec<char> = Vec::with_capacity(w.len());
    let mut i = 0;
    while i < w.len() {
        if w[i] == '\\' && w.get(i + 1) == Some(&'"') {
            w2.push('"');
            i += 2;
        } else {
            w2.push(w[i]);
            i += 1;
        }
    }
    // .replace("'", "\\'") only protects the triple quotes: `\'` evaluates to `'`
    // below, so it is a no-op on the result. Now Python's literal_eval of the
    // string body.
    let c = w2;
    let mut out = String::with_capacity(c.len());
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        i += 1;
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        let Some(&e) = c.get(i) else { return Err("literal ended unexpectedly (bad escaping)".into()) };
        i += 1;
        match e {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            'x' => out.push(hex_char(&c, &mut i, 2, "\\x")?),
            'u' => out.push(hex_char(&c, &mut i, 4, "\\u")?),
            'U' => out.push(hex_char(&c, &mut i, 8, "\\U")?),
            '0'..='7' => {
                i -= 1;
                out.push(octal_char(&c, &mut i)?);
            }
            'N' => return Err("named Unicode escapes \\N{...} are not supported".into()),
            e => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    Ok(out)
}

/// A Lark string literal's value: [`lark_eval_escaping`], then `\\` → `\`.
pub(crate) fn eval_string(raw: &str) -> Result<String, String> {
    Ok(lark_eval_escaping(raw)?.replace("\\\\", "\\"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(s: &str) -> String {
        let t = translate(s, false).unwrap();
        assert!(t.unsupported.is_empty(), "{s}: {:?}", t.unsupported);
        regex_syntax::Parser::new().parse(&t.regex).unwrap_or_else(|e| panic!("{s} -> {}: {e}", t.regex));
        t.regex
    }

    fn matches(py: &str, text: &str) -> bool {
        let re = regex_automata::meta::Regex::new(&format!("^(?:{})$", tr(py))).unwrap();
        re.is_match(text)
    }

    #[test]
    fn translations() {
        assert_eq!(tr(r"a\Z"), r"a\z");
        assert_eq!(tr(r"x{,3}"), "x{0,3}");
        assert_eq!(tr(r"x{2,}y{3}"), "x{2,}y{3}");
        assert_eq!(tr(r"a{b}"), r"a\{b\}");
        assert_eq!(tr(r"(?P<n>a)"), "(?:a)");
        assert_eq!(tr(r"a(?#comment)b"), "ab");
        assert_eq!(tr(r"\<"), "<");
        assert!(matches(r"[[]", "["));
        assert!(matches(r"[a&&b]", "&"));
        assert!(matches(r"[+--]", ","));
        assert!(matches(r"[a-]", "-"));
        assert!(matches(r"[]a]", "]"));
        assert!(matches(r"[^]a]", "b"));
        assert!(!matches(r"[^]a]", "]"));
        assert!(matches(r"[\b]", "\x08"));
        assert!(matches(r"\101\0", "A\0"));
        assert!(matches(r"\x41\u00e9", "Aé"));
        assert!(matches(r"[^\W\d]\w*", "héllo_1"));
        assert!(!matches(r"[^\W\d]\w*", "1a"));
        assert!(matches(r"(?i)abc", "ABC"));
        assert!(matches(r"\/\/", "//"));
    }

    #[test]
    fn verbose() {
        let t = translate("a b # comment\n c [ ]", true).unwrap();
        assert_eq!(t.regex, r"abc[\x{20}]");
        let t = translate("(?x) a  b", false).unwrap();
        assert_eq!(t.regex, "ab");
    }

    #[test]
    fn escaped_string_idiom_with_a_suffix() {
        let body = r#"(?:[^\"\\\n]|\\[^\n])*"#;
        // Lark's lark.lark STRING: the idiom, then an optional flag.
        let t = translate(r#"".*?(?<!\\)(\\\\)*?"(?:i)?"#, false).unwrap();
        assert!(t.unsupported.is_empty(), "{t:?}");
        assert_eq!(t.regex, format!(r#""{body}"(?:i)?"#));
        // A suffix that can fail would make the lazy match go on: refused.
        let t = translate(r#"".*?(?<!\\)(\\\\)*?"x"#, false).unwrap();
        assert_eq!(t.unsupported, vec!["lookbehind `(?<!`"]);
        // Lark's python.lark STRING: the empty string keeps a one-character lookahead.
        let t = translate(r#"([ubf]?r?|r[ubf])("(?!"").*?(?<!\\)(\\\\)*?"|'(?!'').*?(?<!\\)(\\\\)*?')"#, false).unwrap();
        assert!(t.unsupported.is_empty(), "{t:?}");
        assert_eq!(t.lookaheads.len(), 2);
        // LONG_STRING, with Lark's flag group: `.` matches newlines.
        let t = translate(r#"(?is:([ubf]?r?|r[ubf])(""".*?(?<!\\)(\\\\)*?"""|'''.*?(?<!\\)(\\\\)*?'''))"#, false).unwrap();
        assert!(t.unsupported.is_empty(), "{t:?}");
        assert!(t.regex.contains(r#""""(?:(?:[^\"\\]|\\[\s\S])|\"(?:[^\"\\]|\\[\s\S])|"#), "{}", t.regex);
        // An `s` flag over part of the pattern: not the idiom.
        let t = translate(r#"(?s:a)".*?(?<!\\)(\\\\)*?""#, false).unwrap();
        assert_eq!(t.unsupported, vec!["lookbehind `(?<!`"]);
        // A lookbehind on the literal character just before it is settled.
        let t = translate(r#""""(?<!\\).*?""""#, false).unwrap();
        assert!(t.unsupported.is_empty(), "{t:?}");
        assert_eq!(t.regex, r#""""(?:.*?)""""#.replace("(?:.*?)", ".*?"));
        let t = translate(r"a\\(?<!\\)b", false).unwrap();
        assert_eq!(t.unsupported, vec!["lookbehind `(?<!`"]);
        let t = translate(r"x(?<=[a-z])y", false).unwrap();
        assert_eq!((t.regex.as_str(), t.unsupported.len()), ("xy", 0));
        let t = translate(r"x(?<![a-z])y", false).unwrap();
        assert_eq!(t.regex, r"x[^\s\S]y");
        let t = translate(r"x+(?<!x)", false).unwrap();
        assert_eq!(t.unsupported, vec!["lookbehind `(?<!`"]);
        // syncode's STRING: `(?!QQ)` then a plain lazy `.*?` to the quote.
        let t = translate(r#"(?is:[ubf]?r?("(?!"").*?"|'(?!'').*?'))"#, false).unwrap();
        assert!(t.unsupported.is_empty() && t.lookaheads.len() == 2, "{t:?}");
        assert_eq!(continuation(&"a|b)c?".chars().collect::<Vec<_>>()), "ac?");
        assert_eq!(continuation(&"(?:x|y)z)|w".chars().collect::<Vec<_>>()), "(?:x|y)z");
    }

    #[test]
    fn unsupported_reported() {
        // `(?!` is encoded for the lexer (which decides), the rest reported.
        let t = translate(r#""(?!"").*?(?<!\\)""#, false).unwrap();
        assert_eq!(t.unsupported, vec!["lookbehind `(?<!`"]);
        assert_eq!(t.lookaheads.len(), 1);
        let t = translate(r"a(?=b)", false).unwrap();
        assert_eq!(t.unsupported, vec!["lookahead `(?=`"]);
        // A lookahead holding lookaround is reported, not encoded.
        let t = translate(r"a(?!b(?!c))", false).unwrap();
        assert_eq!(t.unsupported, vec!["lookahead `(?!` (with lookaround inside)"]);
        let t = translate(r"(a)\1", false).unwrap();
        assert_eq!(t.unsupported, vec![r"backreference `\1`"]);
        let t = translate(r"(?P<x>a)(?P=x)", false).unwrap();
        assert_eq!(t.unsupported, vec!["backreference `(?P=x)`"]);
        assert!(translate(r"(?>a)", false).is_err());
        assert!(translate(r"[a", false).is_err());
        assert!(translate(r"\N{DIGIT ONE}", false).is_err());
        assert!(translate("\\", false).is_err());
        assert!(translate(r"[z-a]", false).is_err());
    }

    #[test]
    fn string_escapes() {
        assert_eq!(eval_string(r#"a\"b\\c\n\x41\d"#).unwrap(), "a\"b\\c\nA\\d");
        assert!(eval_string(r"\x4").is_err());
        assert!(eval_string("\\").is_err());
    }
}
