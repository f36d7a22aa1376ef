//! The `format`s that are enforced, as regexes over the string *value*
//! (regex-syntax dialect). Every other format is an annotation (ignored and
//! listed in the warnings).

const DEC_OCTET: &str = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";

fn ipv4() -> String {
    format!(r"{o}\.{o}\.{o}\.{o}", o = DEC_OCTET)
}

fn ipv6() -> String {
    let h = r"[0-9A-Fa-f]{1,4}";
    let ls32 = format!(r"(?:{h}:{h}|{})", ipv4());
    // RFC 3986 IPv6address.
    let alts = [
        format!(r"(?:{h}:){{6}}{ls32}"),
        format!(r"::(?:{h}:){{5}}{ls32}"),
        format!(r"(?:{h})?::(?:{h}:){{4}}{ls32}"),
        format!(r"(?:(?:{h}:){{0,1}}{h})?::(?:{h}:){{3}}{ls32}"),
        format!(r"(?:(?:{h}:){{0,2}}{h})?::(?:{h}:){{2}}{ls32}"),
        format!(r"(?:(?:{h}:){{0,3}}{h})?::{h}:{ls32}"),
        format!(r"(?:(?:{h}:){{0,4}}{h})?::{ls32}"),
        format!(r"(?:(?:{h}:){{0,5}}{h})?::{h}"),
        format!(r"(?:(?:{h}:){{0,6}}{h})?::"),
    ];
    format!("(?:{})", alts.join("|"))
}

fn date() -> String {
    let y = r"[0-9]{4}";
    let md = r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))";
    // Leap years: divisible by 4 and not by 100, or by 400.
    let leap = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26]|00)00)";
    format!(r"(?:{y}-{md}|{leap}-02-29)")
}

fn time() -> String {
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[Zz]|[+\-](?:[01][0-9]|2[0-3]):[0-5][0-9])".to_string()
}

fn hostname() -> String {
    let label = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?";
    format!(r"{label}(?:\.{label})*")
}

fn email() -> String {
    let atext = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]";
    format!(r"{atext}+(?:\.{atext}+)*@(?:{}|\[{}\])", hostname(), ipv4())
}

fn uri() -> String {
    let unres = r"[A-Za-z0-9\-._~]";
    let pct = r"%[0-9A-Fa-f]{2}";
    let sub = r"[!$&'()*+,;=]";
    let pchar = format!(r"(?:{unres}|{pct}|{sub}|[:@])");
    let userinfo = format!(r"(?:{unres}|{pct}|{sub}|:)*@");
    let host = format!(r"(?:\[{}\]|{}|(?:{unres}|{pct}|{sub})*)", ipv6(), ipv4());
    let authority = format!(r"(?:{userinfo})?{host}(?::[0-9]*)?");
    let abempty = format!(r"(?:/{pchar}*)*");
    let absolute = format!(r"/(?:{pchar}+(?:/{pchar}*)*)?");
    let rootless = format!(r"{pchar}+(?:/{pchar}*)*");
    let hier = format!(r"(?://{authority}{abempty}|{absolute}|{rootless}|)");
    let qf = format!(r"(?:{pchar}|[/?])*");
    format!(r"[A-Za-z][A-Za-z0-9+\-.]*:{hier}(?:\?{qf})?(?:#{qf})?")
}

/// The value regex of an enforced format, or `None` (annotation only).
pub fn format_regex(name: &str) -> Option<String> {
    Some(match name {
        "date-time" => format!(r"{}[Tt]{}", date(), time()),
        "date" => date(),
        "time" => time(),
        "uuid" => r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}".to_string(),
        "email" => email(),
        "ipv4" => ipv4(),
        "ipv6" => ipv6(),
        "uri" => uri(),
        "hostname" => hostname(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regex::lang::Dfa;

    fn m(f: &str, s: &str) -> bool {
        Dfa::new(&format_regex(f).unwrap()).unwrap().full_match(s.as_bytes())
    }

    #[test]
    fn formats() {
        assert!(m("date", "2024-02-29") && !m("date", "2023-02-29") && m("date", "2000-02-29") && !m("date", "1900-02-29"));
        assert!(!m("date", "2024-04-31") && m("date", "2024-12-31") && !m("date", "2024-13-01"));
        assert!(m("date-time", "2024-01-02T03:04:05.123+01:00") && !m("date-time", "2024-01-02 03:04:05Z"));
        assert!(m("ipv4", "192.168.0.1") && !m("ipv4", "256.1.1.1") && !m("ipv4", "01.1.1.1"));
        assert!(m("ipv6", "::1") && m("ipv6", "2001:db8::8a2e:370:7334") && m("ipv6", "::ffff:1.2.3.4") && !m("ipv6", "1:2:3"));
        assert!(m("uuid", "123e4567-e89b-12d3-a456-426614174000") && !m("uuid", "123e4567e89b12d3a456426614174000"));
        assert!(m("email", "a.b@example.com") && !m("email", "a..b@example.com") && !m("email", "ab"));
        assert!(m("uri", "https://example.com/a?b#c") && m("uri", "urn:isbn:0451450523") && !m("uri", "/relative") && !m("uri", "http://a b"));
    }
}
