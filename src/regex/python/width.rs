//! The width of a Python regex as Lark computes it (`lark.utils.get_regexp_width`):
//! `sre_parse.parse(pattern).getwidth()` of CPython 3.11.7's `re._parser`,
//! after Lark's substitution of `\p{Name}` by `A` (done when the `regex`
//! module is installed), with `re._parser.MAXWIDTH` (2^64) saturation; a
//! pattern that `sre_parse` rejects but `regex` accepts (e.g. `\P{L}`, `\pL`)
//! gets Lark's fallback `(0 or 1, MAXWIDTH)`, 0 when it matches the empty string.
//!
//! Width rules (`SubPattern.getwidth`): a literal, `.`, a class or a class
//! escape is 1; an anchor (`^ $ \A \Z \b \B`) or a lookaround is 0; a
//! branch is the min/max over its alternatives; a group is its contents; a
//! repeat `{m,n}` of an item of width `(i, j)` adds `i*m` and `j*n`, or
//! makes the maximum MAXWIDTH when `n` is unbounded and `j > 0`. Every
//! (sub)pattern's width is saturated at MAXWIDTH when it is computed.

/// `re._parser.MAXWIDTH`.
pub(crate) const MAXWIDTH: u128 = 1 << 64;
/// `_sre.MAXREPEAT`.
const MAXREPEAT: u128 = u32::MAX as u128;

/// What [`width`] can say about a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Width {
    /// `(min, max)`, each at most [`MAXWIDTH`].
    Exact(u128, u128),
    /// `sre_parse` rejects the pattern but the `regex` module may accept it:
    /// Lark uses `(0 or 1, MAXWIDTH)` by whether it matches the empty string.
    Fallback,
}

struct P<'a> {
    c: &'a [char],
    i: usize,
    verbose: bool,
    /// End of the leading global flag groups (`(?x)` etc.; Python 3.11 refuses them elsewhere).
    lead_end: usize,
}

fn sat(x: u128) -> u128 {
    x.min(MAXWIDTH)
}

impl<'a> P<'a> {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }
    fn eat(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if self.c.len() >= self.i + n && s.chars().zip(&self.c[self.i..]).all(|(a, b)| a == *b) {
            self.i += n;
            true
        } else {
            false
        }
    }
    /// Skips whitespace and comments in verbose mode.
    fn skip(&mut self) {
        while self.verbose {
            match self.peek() {
                Some(' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') => self.i += 1,
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// `_parse_sub`: alternatives up to `)` or the end.
    fn sub(&mut self, depth: usize) -> Result<(u128, u128), String> {
        if depth > crate::limits::Limits::DEFAULT.max_regex_width_nesting {
            return Err("nested too deeply".into());
        }
        let (mut lo, mut hi) = self.seq(depth)?;
        let mut branches = 1;
        while self.peek() == Some('|') {
            self.i += 1;
            let (l, h) = self.seq(depth)?;
            lo = lo.min(l);
            hi = hi.max(h);
            branches += 1;
        }
        let _ = branches;
        Ok((sat(lo), sat(hi)))
    }

    /// One alternative: a sequence of items (each possibly repeated).
    fn seq(&mut self, depth: usize) -> Result<(u128, u128), String> {
        let (mut lo, mut hi) = (0u128, 0u128);
        loop {
            self.skip();
            let Some(c) = self.peek() else { break };
            if c == '|' || c == ')' {
                break;
            }
            let (il, ih, repeatable) = self.item(depth)?;
            // Quantifiers.
            self.skip();
            let q = match self.peek() {
                Some('*') => {
                    self.i += 1;
                    Some((0, MAXREPEAT))
                }
                Some('+') => {
                    self.i += 1;
                    Some((1, MAXREPEAT))
                }
                Some('?') => {
                    self.i += 1;
                    Some((0, 1))
                }
                Some('{') => self.brace(),
                _ => None,
            };
            match q {
                None => {
                    lo += il;
                    hi += ih;
                }
                Some((mn, mx)) => {
                    if !repeatable {
                        return Err("nothing to repeat".into());
                    }
                    // Lazy `?` / possessive `+` suffix.
                    if self.peek() == Some('?') || self.peek() == Some('+') {
                        self.i += 1;
                    }
                    lo += il * mn;
                    if mx == MAXREPEAT && ih > 0 {
                        hi = MAXWIDTH;
                    } else {
                        hi += ih * mx;
                    }
                    self.skip();
                    if matches!(self.peek(), Some('*' | '+' | '?')) || (self.peek() == Some('{') && self.is_brace()) {
                        return Err("multiple repeat".into());
                    }
                }
            }
            // Keep the running sums bounded (saturation is applied per subpattern; sums stay far below u128).
            lo = lo.min(MAXWIDTH * 4);
            hi = hi.min(MAXWIDTH * 4);
        }
        Ok((lo, hi))
    }

    fn is_brace(&self) -> bool {
        let mut q = P { c: self.c, i: self.i, verbose: false, lead_end: 0 };
        q.brace().is_some()
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}` (else `{` is a literal and nothing is consumed).
    fn brace(&mut self) -> Option<(u128, u128)> {
        let start = self.i;
        self.i += 1;
        if self.peek() == Some('}') {
            self.i = start;
            return None;
        }
        let digits = |p: &mut Self| {
            let s = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.c[s..p.i].iter().collect::<String>()
        };
        let lo = digits(self);
        let (hi, comma) = if self.peek() == Some(',') {
            self.i += 1;
            (digits(self), true)
        } else {
            (lo.clone(), false)
        };
        if self.peek() != Some('}') {
            self.i = start;
            return None;
        }
        self.i += 1;
        let mn: u128 = if lo.is_empty() { 0 } else { lo.parse().unwrap_or(u128::MAX) };
        let mx: u128 = if comma && hi.is_empty() { MAXREPEAT } else { hi.parse().unwrap_or(u128::MAX) };
        Some((mn.min(MAXREPEAT), mx.min(MAXREPEAT)))
    }

    /// One item: returns its width and whether a quantifier may follow.
    fn item(&mut self, depth: usize) -> Result<(u128, u128, bool), String> {
        let c = self.peek().ok_or("unexpected end")?;
        self.i += 1;
        match c {
            '[' => {
                self.class()?;
                Ok((1, 1, true))
            }
            '.' => Ok((1, 1, true)),
            '^' | '$' => Ok((0, 0, true)),
            '\\' => self.escape(),
            '*' | '+' | '?' => Err("nothing to repeat".into()),
            '{' => Ok((1, 1, true)),
            '(' => {
                let saved = self.verbose;
                let r = self.group(depth);
                self.verbose = saved;
                r
            }
            _ => Ok((1, 1, true)),
        }
    }

    fn escape(&mut self) -> Result<(u128, u128, bool), String> {
        let e = self.peek().ok_or("bad escape (end of pattern)")?;
        self.i += 1;
        match e {
            'A' | 'Z' | 'b' | 'B' => Ok((0, 0, true)),
            '1'..='9' => {
                // Octal escape (three octal digits) or a group reference.
                let oct = |k: usize| self.c.get(k).is_some_and(|c| ('0'..='7').contains(c));
                if e <= '7' && oct(self.i) && oct(self.i + 1) {
                    self.i += 2;
                    Ok((1, 1, true))
                } else {
                    Err("group reference".into())
                }
            }
            'P' | 'p' => Err("\\p / \\P".into()),
            'N' => {
                if self.peek() != Some('{') {
                    return Err("bad \\N".into());
                }
                while self.peek().is_some_and(|c| c != '}') {
                    self.i += 1;
                }
                self.i += 1;
                Ok((1, 1, true))
            }
            _ => {
                self.literal_escape_tail(e);
                Ok((1, 1, true))
            }
        }
    }

    /// Consumes the rest of `\x..`, `\u....`, `\U........`, `\0..` (validity is
    /// checked by the translation).
    fn literal_escape_tail(&mut self, e: char) {
        let n = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            '0' => {
                let mut k = 0;
                while k < 2 && self.peek().is_some_and(|c| ('0'..='7').contains(&c)) {
                    self.i += 1;
                    k += 1;
                }
                return;
            }
            _ => 0,
        };
        for _ in 0..n {
            if self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.i += 1;
            }
        }
    }

    fn class(&mut self) -> Result<(), String> {
        if self.peek() == Some('^') {
            self.i += 1;
        }
        let mut first = true;
        loop {
            let c = self.peek().ok_or("unterminated character set")?;
            self.i += 1;
            match c {
                ']' if !first => return Ok(()),
                '\\' => {
                    let e = self.peek().ok_or("bad escape")?;
                    self.i += 1;
                    match e {
                        'p' | 'P' => return Err("\\p / \\P".into()),
                        'N' => {
                            while self.peek().is_some_and(|c| c != '}') {
                                self.i += 1;
                            }
                            self.i += 1;
                        }
                        '1'..='7' => {
                            while self.peek().is_some_and(|c| ('0'..='7').contains(&c)) {
                                self.i += 1;
                            }
                        }
                        _ => self.literal_escape_tail(e),
                    }
                }
                _ => {}
            }
            first = false;
        }
    }

    fn group(&mut self, depth: usize) -> Result<(u128, u128, bool), String> {
        let group_start = self.i - 1;
        let mut assertion = false;
        if self.peek() == Some('?') {
            self.i += 1;
            if self.eat("P<") {
                while self.peek().is_some_and(|c| c != '>') {
                    self.i += 1;
                }
                self.i += 1;
            } else if self.eat("P=") {
                return Err("group reference".into());
            } else if self.eat("#") {
                while self.peek().is_some_and(|c| c != ')') {
                    self.i += 1;
                }
                if self.peek().is_none() {
                    return Err("missing ), unterminated comment".into());
                }
                self.i += 1;
                return Ok((0, 0, false));
            } else if self.eat(":") || self.eat(">") {
            } else if self.eat("=") || self.eat("!") || self.eat("<=") || self.eat("<!") {
                assertion = true;
            } else if self.peek() == Some('(') {
                return Err("conditional group".into());
            } else {
                // Flags: (?aiLmsux) global or (?aiLmsux-imsx:...) scoped.
                let mut on = true;
                let mut verbose = None;
                while let Some(f) = self.peek() {
                    match f {
                        'a' | 'i' | 'L' | 'm' | 's' | 'u' => {}
                        'x' => verbose = Some(on),
                        '-' => on = false,
                        _ => break,
                    }
                    self.i += 1;
                }
                match self.peek() {
                    Some(')') => {
                        self.i += 1;
                        // Global flags: only at the start in Python 3.11 (a leading (?x)
                        // already made the whole pattern verbose).
                        if group_start >= self.lead_end {
                            return Err("global flags not at the start of the expression".into());
                        }
                        return Ok((0, 0, false));
                    }
                    Some(':') => {
                        self.i += 1;
                        if let Some(v) = verbose {
                            self.verbose = v;
                        }
                    }
                    _ => return Err("bad flags".into()),
                }
            }
        }
        let (lo, hi) = self.sub(depth + 1)?;
        if self.peek() != Some(')') {
            return Err("missing ), unterminated subpattern".into());
        }
        self.i += 1;
        if assertion {
            Ok((0, 0, true))
        } else {
            Ok((lo, hi, true))
        }
    }
}

/// Lark's `categ_pattern` substitution: `\p{Name}` → `A`.
fn substitute_categories(s: &str) -> String {
    let c: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < c.len() {
        if c[i] == '\\' && c.get(i + 1) == Some(&'p') && c.get(i + 2) == Some(&'{') {
            let mut j = i + 3;
            while j < c.len() && (c[j].is_ascii_alphabetic() || c[j] == '_') {
                j += 1;
            }
            if j > i + 3 && c.get(j) == Some(&'}') {
                out.push('A');
                i = j + 1;
                continue;
            }
        }
        out.push(c[i]);
        i += 1;
    }
    out
}

/// Python's `re.escape` (3.7+): only these characters are escaped.
pub(crate) fn re_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\x0b\x0c".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The width of Python regex `pattern` as Lark computes it (see the module doc).
pub(crate) fn width(pattern: &str) -> Width {
    let s = substitute_categories(pattern);
    let c: Vec<char> = s.chars().collect();
    // A leading global (?x) makes the whole pattern verbose.
    let (verbose, lead_end) = global_flags(&c);
    let mut p = P { c: &c, i: 0, verbose, lead_end };
    match p.sub(0) {
        Ok((lo, hi)) if p.i == c.len() => Width::Exact(lo, hi),
        _ => Width::Fallback,
    }
}

/// Whether the pattern's leading global flag groups include `x`, and where they end.
fn global_flags(c: &[char]) -> (bool, usize) {
    let mut i = 0;
    let mut verbose = false;
    while c.get(i) == Some(&'(') && c.get(i + 1) == Some(&'?') {
        let mut j = i + 2;
        let mut x = false;
        while let Some(&f) = c.get(j) {
            if "aiLmsux".contains(f) {
                x |= f == 'x';
                j += 1;
            } else {
                break;
            }
        }
        if c.get(j) != Some(&')') || j == i + 2 {
            break;
        }
        verbose |= x;
        i = j + 1;
    }
    (verbose, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(p: &str) -> (u128, u128) {
        match width(p) {
            Width::Exact(a, b) => (a, b),
            Width::Fallback => panic!("{p}: fallback"),
        }
    }

    #[test]
    fn widths_like_sre_parse() {
        // Values from CPython 3.11.7: re._parser.parse(p).getwidth().
        assert_eq!(w("abc"), (3, 3));
        assert_eq!(w("a|bc"), (1, 2));
        assert_eq!(w("(?:a|bc)+"), (1, MAXWIDTH));
        assert_eq!(w("x{2,5}"), (2, 5));
        assert_eq!(w("x{,5}"), (0, 5));
        assert_eq!(w("x{3,}"), (3, MAXWIDTH));
        assert_eq!(w("a{}"), (3, 3));
        assert_eq!(w("a{x}"), (4, 4));
        assert_eq!(w("(?=ab)c"), (1, 1));
        assert_eq!(w("(?<!\\\\)\"" ), (1, 1));
        assert_eq!(w("[a-z]*?"), (0, MAXWIDTH));
        assert_eq!(w("\\b\\d+\\Z"), (1, MAXWIDTH));
        assert_eq!(w("(?i:ab)(?#c)"), (2, 2));
        assert_eq!(w("(?x: a b # c\n )"), (2, 2));
        assert_eq!(w("(?:)*"), (0, 0));
        assert_eq!(w("\\p{L}+"), (1, MAXWIDTH));
        assert_eq!(width("\\pL"), Width::Fallback);
        assert_eq!(w("(?:(?:x{65536}){65536}){65536}"), (1 << 48, 1 << 48));
        assert_eq!(w("(?:(?:(?:x{65536}){65536}){65536}){65536}y"), (MAXWIDTH, MAXWIDTH));
    }

    #[test]
    fn escape_like_python() {
        assert_eq!(re_escape("a.b-c d\"'/"), "a\\.b\\-c\\ d\"'/");
    }
}
