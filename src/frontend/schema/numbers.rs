//! Numbers: exact decimal bounds and `multipleOf` as regexes over JSON
//! number texts.
//!
//! Unconstrained numbers accept every RFC 8259 number. A number with a bound
//! or `multipleOf` is written in plain decimal notation (no exponent, no
//! `-0`), e.g. `12`, `-0.5`, `3.250`; the bound is then exact for any number
//! of digits. Integers (`type: integer`) are written without a fraction.
//! Schema numbers are read as the shortest decimal that round-trips their
//! f64 (so `0.1` is exactly one tenth), integers up to 2^64 exactly.

use std::cmp::Ordering;

/// A non-negative decimal: integer digits (no leading zeros, "0" for zero)
/// and fraction digits (no trailing zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mag {
    pub int: String,
    pub frac: String,
}

/// A signed decimal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dec {
    pub neg: bool,
    pub mag: Mag,
}

impl Mag {
    fn is_zero(&self) -> bool {
        self.int == "0" && self.frac.is_empty()
    }
    fn cmp_mag(&self, o: &Mag) -> Ordering {
        self.int.len().cmp(&o.int.len()).then_with(|| self.int.cmp(&o.int)).then_with(|| {
            let n = self.frac.len().max(o.frac.len());
            let a = format!("{:0<n$}", self.frac);
            let b = format!("{:0<n$}", o.frac);
            a.cmp(&b)
        })
    }
}

impl Dec {
    /// Parses a plain or exponent decimal text (`-1.5e3`).
    pub fn parse(s: &str) -> Option<Dec> {
        let (neg, s) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (mant, exp) = match s.find(['e', 'E']) {
            Some(p) => (&s[..p], s[p + 1..].parse::<i64>().ok()?),
            None => (s, 0),
        };
        let (ip, fp) = match mant.find('.') {
            Some(p) => (&mant[..p], &mant[p + 1..]),
            None => (mant, ""),
        };
        if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_digit()) || !fp.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if exp.abs() > 400 {
            return None;
        }
        let digits = format!("{ip}{fp}");
        let point = ip.len() as i64 + exp; // position of the decimal point in `digits`
        let (int, frac) = if point <= 0 {
            (String::new(), format!("{}{}", "0".repeat((-point) as usize), digits))
        } else if point as usize >= digits.len() {
            (format!("{}{}", digits, "0".repeat(point as usize - digits.len())), String::new())
        } else {
            (digits[..point as usize].to_string(), digits[point as usize..].to_string())
        };
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0".to_string() } else { int.to_string() };
        let frac = frac.trim_end_matches('0').to_string();
        let mag = Mag { int, frac };
        let neg = neg && !mag.is_zero();
        Some(Dec { neg, mag })
    }

    /// A JSON number as a decimal (see the module doc).
    pub fn from_json(n: &serde_json::Number) -> Option<Dec> {
        if let Some(u) = n.as_u64() {
            return Dec::parse(&u.to_string());
        }
        if let Some(i) = n.as_i64() {
            return Dec::parse(&i.to_string());
        }
        let f = n.as_f64()?;
        if !f.is_finite() {
            return None;
        }
        // serde_json's own shortest round-trip text (the digits of `{f:?}`;
        // core's float formatting would cost the wasm build about 8 KB gzip).
        Dec::parse(&n.to_string())
    }

    pub fn cmp(&self, o: &Dec) -> Ordering {
        match (self.neg, o.neg) {
            (false, false) => self.mag.cmp_mag(&o.mag),
            (true, true) => o.mag.cmp_mag(&self.mag),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }
    pub fn is_integer(&self) -> bool {
        self.mag.frac.is_empty()
    }
    /// The canonical text: plain decimal, no exponent.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if self.neg {
            s.push('-');
        }
        s.push_str(&self.mag.int);
        if !self.mag.frac.is_empty() {
            s.push('.');
            s.push_str(&self.mag.frac);
        }
        s
    }
    fn integer(neg: bool, int: String) -> Dec {
        let int = int.trim_start_matches('0').to_string();
        let int = if int.is_empty() { "0".into() } else { int };
        let neg = neg && int != "0";
        Dec { neg, mag: Mag { int, frac: String::new() } }
    }
    /// Smallest integer ≥ self.
    pub fn ceil(&self) -> Dec {
        if self.is_integer() {
            return self.clone();
        }
        if self.neg {
            Dec::integer(true, self.mag.int.clone())
        } else {
            Dec::integer(false, add_one(&self.mag.int))
        }
    }
    /// Largest integer ≤ self.
    pub fn floor(&self) -> Dec {
        if self.is_integer() {
            return self.clone();
        }
        if self.neg {
            Dec::integer(true, add_one(&self.mag.int))
        } else {
            Dec::integer(false, self.mag.int.clone())
        }
    }
    pub fn succ_int(&self) -> Dec {
        // self is an integer: self + 1
        if self.neg {
            Dec::integer(true, sub_one(&self.mag.int))
        } else {
            Dec::integer(false, add_one(&self.mag.int))
        }
    }
    pub fn pred_int(&self) -> Dec {
        if self.neg || self.mag.is_zero() {
            Dec::integer(true, add_one(&self.mag.int))
        } else {
            Dec::integer(false, sub_one(&self.mag.int))
        }
    }
}

fn add_one(s: &str) -> String {
    let mut d: Vec<u8> = s.bytes().collect();
    let mut i = d.len();
    loop {
        if i == 0 {
            d.insert(0, b'1');
            break;
        }
        i -= 1;
        if d[i] == b'9' {
            d[i] = b'0';
        } else {
            d[i] += 1;
            break;
        }
    }
    String::from_utf8(d).unwrap_or_default()
}

fn sub_one(s: &str) -> String {
    // s > 0
    let mut d: Vec<u8> = s.bytes().collect();
    let mut i = d.len();
    while i > 0 {
        i -= 1;
        if d[i] == b'0' {
            d[i] = b'9';
        } else {
            d[i] -= 1;
            break;
        }
    }
    let t = String::from_utf8(d).unwrap_or_default();
    let t = t.trim_start_matches('0');
    if t.is_empty() {
        "0".into()
    } else {
        t.into()
    }
}

/// Any RFC 8259 number.
pub const ANY_NUMBER: &str = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+\-]?[0-9]+)?";
/// Any integer (plain digits; `-0` included).
pub const ANY_INTEGER: &str = r"-?(?:0|[1-9][0-9]*)";
/// Plain decimal numbers (no exponent, no negative zero).
const PLAIN_NUMBER: &str = r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?|-(?:0\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(?:\.[0-9]+)?)";
const PLAIN_INTEGER: &str = r"0|-?[1-9][0-9]*";

fn digit_class(lo: u8, hi: u8) -> String {
    match (lo, hi) {
        (a, b) if a == b => (a as char).to_string(),
        (b'0', b'9') => "[0-9]".into(),
        (a, b) => format!("[{}-{}]", a as char, b as char),
    }
}

/// Integer parts (canonical digit strings) > `int` (strict) or ≥.
fn int_gt(int: &str, strict: bool) -> Vec<String> {
    let n = int.len();
    let b = int.as_bytes();
    let mut alts = vec![format!("[1-9][0-9]{{{n},}}")];
    for k in 0..n {
        let lo = b[k] + 1;
        if lo > b'9' {
            continue;
        }
        let lo = if k == 0 && n > 1 { lo.max(b'1') } else { lo };
        let rest = n - k - 1;
        alts.push(format!("{}{}{}", &int[..k], digit_class(lo, b'9'), if rest > 0 { format!("[0-9]{{{rest}}}") } else { String::new() }));
    }
    if !strict {
        alts.push(int.to_string());
    }
    alts
}

/// Integer parts (canonical) < `int` (strict) or ≤.
fn int_lt(int: &str, strict: bool) -> Vec<String> {
    let n = int.len();
    let b = int.as_bytes();
    let mut alts = Vec::new();
    if n > 1 {
        alts.push("0".to_string());
        if n > 2 {
            alts.push(format!("[1-9][0-9]{{0,{}}}", n - 2));
        } else {
            alts.push("[1-9]".to_string());
        }
    }
    for k in 0..n {
        let hi = b[k];
        let lo = if k == 0 && n > 1 { b'1' } else { b'0' };
        if hi == lo {
            continue;
        }
        let rest = n - k - 1;
        alts.push(format!("{}{}{}", &int[..k], digit_class(lo, hi - 1), if rest > 0 { format!("[0-9]{{{rest}}}") } else { String::new() }));
    }
    if !strict {
        alts.push(int.to_string());
    }
    alts
}

fn alt(v: &[String]) -> String {
    if v.is_empty() {
        return r"[^\s\S]".into();
    }
    format!("(?:{})", v.join("|"))
}

const FRAC_ANY: &str = r"(?:\.[0-9]+)?";

/// Fraction parts (`""` = none, else `.digits`) whose value is ≥ / > 0.f.
fn frac_ge(f: &str, strict: bool) -> String {
    let b = f.as_bytes();
    let mut alts = Vec::new();
    for k in 0..b.len() {
        if b[k] < b'9' {
            alts.push(format!("{}{}[0-9]*", &f[..k], digit_class(b[k] + 1, b'9')));
        }
    }
    // f itself followed by more digits: ≥ always; > needs a non-zero digit.
    alts.push(if strict { format!("{f}[0-9]*[1-9][0-9]*") } else { format!("{f}[0-9]*") });
    let body = alt(&alts);
    if f.is_empty() && !strict {
        format!(r"(?:\.{body})?")
    } else {
        format!(r"\.{body}")
    }
}

/// Fraction parts whose value is ≤ / < 0.f.
fn frac_le(f: &str, strict: bool) -> String {
    let b = f.as_bytes();
    let mut alts = Vec::new();
    for k in 0..b.len() {
        if b[k] > b'0' {
            alts.push(format!("{}{}[0-9]*", &f[..k], digit_class(b'0', b[k] - 1)));
        }
        // stop after a prefix of f: the rest of f is non-zero (no trailing zeros), so strictly less.
        if k > 0 {
            alts.push(f[..k].to_string());
        }
    }
    if !strict {
        alts.push(format!("{f}0*"));
    } else if !f.is_empty() {
        // f's proper prefixes followed by zeros are strictly less (f ends in a non-zero digit).
        for k in 0..b.len() {
            alts.push(format!("{}0+", &f[..k]));
        }
    }
    alts.retain(|a| !a.is_empty());
    let has_frac = if alts.is_empty() { None } else { Some(format!(r"\.{}", alt(&alts))) };
    // No fraction at all = .0, which is < 0.f when f is non-empty (and ≤ always).
    if !strict || !f.is_empty() {
        match has_frac {
            Some(h) => format!("(?:{h})?"),
            None => String::new(),
        }
    } else {
        has_frac.unwrap_or_else(|| r"[^\s\S]".into())
    }
}

/// Magnitudes (canonical int part + optional fraction) ≥ / > m.
fn mag_ge(m: &Mag, strict: bool, frac_ok: bool) -> String {
    let f = if frac_ok { FRAC_ANY } else { "" };
    let mut alts: Vec<String> = int_gt(&m.int, true).into_iter().map(|i| format!("{i}{f}")).collect();
    if frac_ok {
        alts.push(format!("{}{}", m.int, frac_ge(&m.frac, strict)));
    } else if !strict && m.frac.is_empty() {
        alts.push(m.int.clone());
    }
    alt(&alts)
}

/// Magnitudes ≤ / < m (zero included; negative zero is excluded by the
/// caller's intersection with the plain-decimal syntax).
fn mag_le(m: &Mag, strict: bool, frac_ok: bool) -> String {
    let f = if frac_ok { FRAC_ANY } else { "" };
    let mut alts: Vec<String> = int_lt(&m.int, true).into_iter().map(|i| format!("{i}{f}")).collect();
    if frac_ok {
        alts.push(format!("{}{}", m.int, frac_le(&m.frac, strict)));
    } else if !(strict && m.frac.is_empty()) {
        alts.push(m.int.clone());
    }
    alt(&alts)
}

/// Bounds of a number: (value, exclusive).
#[derive(Clone, Debug, Default)]
pub struct Bounds {
    pub lo: Option<(Dec, bool)>,
    pub hi: Option<(Dec, bool)>,
}

/// The regexes (to intersect) of the numbers within `b`; `integer`: integers
/// only. Empty list = no bound (caller uses the unconstrained number regex).
pub fn bound_regexes(b: &Bounds, integer: bool) -> Vec<String> {
    let mut out = Vec::new();
    let (mut lo, mut hi) = (b.lo.clone(), b.hi.clone());
    if integer {
        lo = lo.map(|(d, x)| (if x { if d.is_integer() { d.succ_int() } else { d.ceil() } } else { d.ceil() }, false));
        hi = hi.map(|(d, x)| (if x { if d.is_integer() { d.pred_int() } else { d.floor() } } else { d.floor() }, false));
    }
    if let Some((d, strict)) = &lo {
        out.push(ge_regex(d, *strict, !integer));
    }
    if let Some((d, strict)) = &hi {
        out.push(le_regex(d, *strict, !integer));
    }
    out
}

/// Numbers (plain decimal) ≥ / > d.
fn ge_regex(d: &Dec, strict: bool, frac_ok: bool) -> String {
    if !d.neg {
        return mag_ge(&d.mag, strict, frac_ok);
    }
    // x ≥ -m: every non-negative number, and negatives with magnitude ≤ / < m.
    let nonneg = if frac_ok { r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?" } else { r"(?:0|[1-9][0-9]*)" };
    let neg = mag_le(&d.mag, strict, frac_ok);
    format!("(?:{nonneg}|-(?:{neg}))")
}

/// Numbers (plain decimal) ≤ / < d.
fn le_regex(d: &Dec, strict: bool, frac_ok: bool) -> String {
    if d.neg {
        return format!("-(?:{})", mag_ge(&d.mag, strict, frac_ok));
    }
    let neg = if frac_ok { r"-(?:0\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(?:\.[0-9]+)?)" } else { r"-[1-9][0-9]*" };
    if d.mag.is_zero() && strict {
        return neg.to_string();
    }
    format!("(?:{neg}|{})", mag_le(&d.mag, strict, frac_ok))
}

/// The plain-decimal number syntax (every bounded number regex is intersected with it).
pub fn plain(integer: bool) -> &'static str {
    if integer {
        PLAIN_INTEGER
    } else {
        PLAIN_NUMBER
    }
}

/// Limit on the suffixes enumerated for `multipleOf`.
const MAX_SUFFIXES: usize = crate::limits::Limits::DEFAULT.max_multiple_of_residues;

/// The regex of numbers that are multiples of `k` (> 0), to be intersected
/// with [`plain`]: exact when k = M·10^-d with M = 2^a·5^b (then the last
/// max(a, b) digits of x·10^d decide). `Err` otherwise.
pub fn multiple_of_regex(k: &Dec) -> Result<String, String> {
    if k.neg || k.mag.is_zero() {
        return Err("multipleOf must be > 0".into());
    }
    let d = k.mag.frac.len();
    let m_str = format!("{}{}", k.mag.int, k.mag.frac);
    let Ok(mut m) = m_str.trim_start_matches('0').parse::<u128>() else { return Err("multipleOf has too many digits".into()) };
    let (mut a, mut b) = (0u32, 0u32);
    while m % 2 == 0 {
        m /= 2;
        a += 1;
    }
    while m % 5 == 0 {
        m /= 5;
        b += 1;
    }
    if m != 1 {
        return Err(format!("only multiples of 2^a·5^b·10^-d can be enforced exactly ({} has the factor {m})", k.text()));
    }
    let full: u128 = 2u128.pow(a) * 5u128.pow(b);
    let r = a.max(b) as usize;
    if r > 30 {
        return Err("multipleOf: too many digits".into());
    }
    let count = 10u128.pow(r as u32) / full;
    if count > MAX_SUFFIXES as u128 {
        return Err(format!("multipleOf {}: too many residues to enumerate ({count})", k.text()));
    }
    const ANY_INT: &str = "(?:0|[1-9][0-9]*)";
    let mut alts = Vec::new();
    for i in 0..count {
        let s = if r == 0 { String::new() } else { format!("{:0r$}", i * full) };
        if r >= d {
            let (si, sf) = (&s[..r - d], &s[r - d..]);
            let ipart = if si.is_empty() {
                ANY_INT.to_string()
            } else {
                let st = si.trim_start_matches('0');
                format!("(?:[1-9][0-9]*{si}|{})", if st.is_empty() { "0" } else { st })
            };
            let ft = sf.trim_end_matches('0');
            let fpart = if ft.is_empty() { r"(?:\.0+)?".to_string() } else { format!(r"\.{ft}0*") };
            alts.push(format!("{ipart}{fpart}"));
        } else {
            let free = d - r;
            let st = s.trim_end_matches('0');
            let fpart = if st.is_empty() { format!(r"(?:\.[0-9]{{1,{free}}}0*)?") } else { format!(r"\.[0-9]{{{free}}}{st}0*") };
            alts.push(format!("{ANY_INT}{fpart}"));
        }
    }
    Ok(format!("-?{}", alt(&alts)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regex::lang::Dfa;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    fn check_bounds(lo: Option<(&str, bool)>, hi: Option<(&str, bool)>, integer: bool) {
        let b = Bounds { lo: lo.map(|(s, x)| (d(s), x)), hi: hi.map(|(s, x)| (d(s), x)) };
        let mut res: Vec<String> = bound_regexes(&b, integer);
        res.push(plain(integer).to_string());
        let dfas: Vec<Dfa> = res.iter().map(|r| Dfa::new(r).unwrap()).collect();
        let samples = [
            "0", "1", "2", "9", "10", "11", "99", "100", "101", "0.5", "0.05", "0.50", "1.0", "1.5", "2.25", "10.01", "-0.5", "-1", "-1.5",
            "-2", "-10", "-100", "-0.01", "3", "3.0", "3.00", "3.000001", "2.999", "-3", "-3.0", "-2.9999", "1000", "12345.6789",
        ];
        for s in samples {
            let v = d(s);
            let mut want = !(integer && !v.is_integer());
            if let Some((l, x)) = &b.lo {
                let c = v.cmp(l);
                want &= if *x { c == Ordering::Greater } else { c != Ordering::Less };
            }
            if let Some((h, x)) = &b.hi {
                let c = v.cmp(h);
                want &= if *x { c == Ordering::Less } else { c != Ordering::Greater };
            }
            // integer texts never have a fraction
            if integer && s.contains('.') {
                want = false;
            }
            let got = dfas.iter().all(|f| f.full_match(s.as_bytes()));
            assert_eq!(got, want, "{s} in {lo:?}..{hi:?} integer={integer}: {res:?}");
        }
    }

    #[test]
    fn bounds_are_exact() {
        for integer in [false, true] {
            for lo in [None, Some(("0", false)), Some(("0", true)), Some(("1.5", false)), Some(("1.5", true)), Some(("-2", false)), Some(("-2", true)), Some(("-0.5", true)), Some(("3", false)), Some(("10", true))] {
                for hi in [None, Some(("0", false)), Some(("0", true)), Some(("3", false)), Some(("3", true)), Some(("2.25", false)), Some(("-1", true)), Some(("100", false)), Some(("0.05", false))] {
                    check_bounds(lo, hi, integer);
                }
            }
        }
    }

    #[test]
    fn multiples() {
        let m = |k: &str, int: bool, s: &str| {
            let a = Dfa::new(&multiple_of_regex(&d(k)).unwrap()).unwrap().full_match(s.as_bytes());
            a && Dfa::new(plain(int)).unwrap().full_match(s.as_bytes())
        };
        assert!(m("2", true, "10") && m("2", true, "0") && !m("2", true, "7") && m("2", true, "-4"));
        assert!(m("0.01", false, "1.25") && m("0.01", false, "3") && !m("0.01", false, "1.255") && m("0.01", false, "1.2500"));
        assert!(m("0.5", false, "1.5") && !m("0.5", false, "1.25") && m("0.5", false, "2"));
        assert!(m("25", true, "75") && m("25", true, "100") && !m("25", true, "110"));
        assert!(multiple_of_regex(&d("3")).is_err());
        assert!(m("0.5", true, "3"), "every integer is a multiple of 0.5");
        assert!(m("2.5", true, "5") && !m("2.5", true, "3"));
        assert!(m("0.0001", false, "0.0075") && !m("0.0001", false, "0.00751"));
    }

    #[test]
    fn decimals() {
        assert_eq!(d("1e2").text(), "100");
        assert_eq!(d("-0.00").text(), "0");
        assert_eq!(d("1.50").text(), "1.5");
        assert_eq!(d("1.5").ceil().text(), "2");
        assert_eq!(d("-1.5").floor().text(), "-2");
        assert_eq!(d("-1.5").ceil().text(), "-1");
        assert_eq!(d("0").pred_int().text(), "-1");
        assert_eq!(Dec::from_json(&serde_json::Number::from_f64(0.1).unwrap()).unwrap().text(), "0.1");
    }
}
