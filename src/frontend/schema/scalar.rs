//! The scalar part of a conjunction (null, booleans, numbers, strings) as
//! per-domain regex lists over JSON texts (each list is an intersection).

use serde_json::Value;

use super::ir::{ConjId, Ir, T_BOOL, T_FRAC, T_INT, T_NULL, T_STR};
use super::numbers::{self, Dec};
use crate::regex::lang;
use super::json_text;
use crate::{err, Result};

/// Longest `maxLength` (and `minLength`) enforced (the lexer DFA grows linearly).
pub const MAX_LENGTH: u64 = crate::limits::Limits::DEFAULT.max_string_length as u64;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScalarLang {
    pub null: bool,
    pub t: bool,
    pub f: bool,
    /// Numbers: regexes that must all match (None: no numbers).
    pub num: Option<Vec<String>>,
    /// Strings (quotes included).
    pub str: Option<Vec<String>>,
    /// Numbers/strings are a finite set of literal texts (from enum/const).
    pub num_lits: Option<Vec<String>>,
    pub str_lits: Option<Vec<String>>,
}

impl ScalarLang {
    pub fn is_empty(&self) -> bool {
        !self.null && !self.t && !self.f && self.num.is_none() && self.str.is_none()
    }
    /// The finite set of texts, when the language is finite.
    pub fn literals(&self) -> Option<Vec<String>> {
        if (self.num.is_some() && self.num_lits.is_none()) || (self.str.is_some() && self.str_lits.is_none()) {
            return None;
        }
        let mut v = Vec::new();
        if self.null {
            v.push("null".to_string());
        }
        if self.t {
            v.push("true".to_string());
        }
        if self.f {
            v.push("false".to_string());
        }
        v.extend(self.num_lits.iter().flatten().cloned());
        v.extend(self.str_lits.iter().flatten().cloned());
        Some(v)
    }
}

fn lit_alt(texts: &[String]) -> String {
    let v: Vec<String> = texts.iter().map(|t| lang::escape(t)).collect();
    format!("(?:{})", v.join("|"))
}

/// Keeps the literal texts that every regex of `list` matches.
fn filter_lits(texts: Vec<String>, list: &[String]) -> Result<Vec<String>> {
    let dfas: Vec<std::rc::Rc<lang::Dfa>> = list.iter().map(|r| lang::Dfa::cached(r).map_err(|e| err!(Limit, "JSON Schema: {e}"))).collect::<Result<_>>()?;
    Ok(texts.into_iter().filter(|t| dfas.iter().all(|d| d.full_match(t.as_bytes()))).collect())
}

pub fn scalar_lang(ir: &mut Ir<'_>, c: ConjId) -> Result<ScalarLang> {
    let m = ir.merged(c)?;
    let eff = m.gen_types();
    let mut out = ScalarLang::default();
    let consts: Option<Vec<&Value>> = m.consts.clone();
    let has = |v: &Value| consts.as_ref().is_none_or(|cs| cs.iter().any(|w| super::ir::json_eq(v, w)));
    out.null = eff & T_NULL != 0 && has(&Value::Null);
    out.t = eff & T_BOOL != 0 && has(&Value::Bool(true));
    out.f = eff & T_BOOL != 0 && has(&Value::Bool(false));
    if eff & (T_INT | T_FRAC) != 0 {
        let integer = eff & T_FRAC == 0;
        let mut list = Vec::new();
        let constrained = m.bounds.lo.is_some() || m.bounds.hi.is_some() || !m.multiple_of.is_empty();
        if constrained {
            list.push(numbers::plain(integer).to_string());
            list.extend(numbers::bound_regexes(&m.bounds, integer));
            for (k, ptr) in &m.multiple_of {
                match numbers::multiple_of_regex(k) {
                    Ok(r) => list.push(r),
                    Err(e) => {
                        if ir.opts.lenient {
                            ir.warnings.push(format!("ignored multipleOf at {ptr}: {e}"));
                        } else {
                            return Err(err!(Schema, "JSON Schema: unsupported keyword `multipleOf` at {ptr}: {e}"));
                        }
                    }
                }
            }
        } else {
            list.push(if integer { numbers::ANY_INTEGER } else { numbers::ANY_NUMBER }.to_string());
        }
        if let Some(cs) = &consts {
            let texts: Vec<String> = cs
                .iter()
                .filter_map(|v| v.as_number().and_then(Dec::from_json))
                .filter(|d| !integer || d.is_integer())
                .map(|d| d.text())
                .collect();
            let kept = filter_lits(texts, &list)?;
            if !kept.is_empty() {
                out.num = Some(vec![lit_alt(&kept)]);
                out.num_lits = Some(kept);
            }
        } else {
            out.num = Some(list);
        }
    }
    if eff & T_STR != 0 {
        let mut list = Vec::new();
        for (p, ptr) in &m.patterns {
            match json_text::pattern_string_regex(p) {
                Ok(r) => list.push(r),
                Err(e) => {
                    if ir.opts.lenient {
                        ir.warnings.push(format!("ignored pattern at {ptr}: {e}"));
                    } else {
                        return Err(err!(Regex, "JSON Schema: unsupported `pattern` {p:?} at {ptr}: {e}"));
                    }
                }
            }
        }
        for (f, ptr) in &m.formats {
            let h = lang::parse_hir(f).map_err(|e| err!(Regex, "JSON Schema: format at {ptr}: {e}"))?;
            list.push(json_text::quoted_regex(&h).map_err(|e| err!(Regex, "JSON Schema: format at {ptr}: {e}"))?);
        }
        if m.min_len > 0 || m.max_len.is_some() {
            let big = m.max_len.unwrap_or(m.min_len).max(m.min_len);
            if big > MAX_LENGTH {
                return Err(err!(
                    Limit,
                    "JSON Schema: string length bound {big} at {} exceeds the limit of {MAX_LENGTH} characters",
                    m.ptr
                ));
            }
            let q = match m.max_len {
                Some(x) => format!("{{{},{x}}}", m.min_len),
                None => format!("{{{},}}", m.min_len),
            };
            list.push(format!("\"{}{q}\"", json_text::CHAR));
        }
        if list.is_empty() {
            list.push(json_text::ANY_STRING.to_string());
        }
        if let Some(cs) = &consts {
            let texts: Vec<String> = cs.iter().filter_map(|v| v.as_str()).map(json_text::quote).collect();
            let kept = filter_lits(texts, &list)?;
            if !kept.is_empty() {
                out.str = Some(vec![lit_alt(&kept)]);
                out.str_lits = Some(kept);
            }
        } else {
            out.str = Some(list);
        }
    }
    Ok(out)
}

/// Union of intersections (one list per alternative) as one intersection
/// (distributivity); `None` if it would need more than `limit` regexes.
pub fn cnf_union(lists: &[&Vec<String>], universal: &str, limit: usize) -> Option<Vec<String>> {
    if lists.iter().any(|l| l.len() == 1 && l[0] == universal) {
        return Some(vec![universal.to_string()]);
    }
    let mut acc: Vec<Vec<&String>> = vec![Vec::new()];
    for l in lists {
        let mut next = Vec::new();
        for a in &acc {
            for r in l.iter() {
                let mut b = a.clone();
                if !b.contains(&r) {
                    b.push(r);
                }
                next.push(b);
            }
        }
        if next.len() > limit {
            return None;
        }
        acc = next;
    }
    let mut out: Vec<String> = acc.into_iter().map(|v| format!("(?:{})", v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("|"))).collect();
    crate::sort::sort_cold(&mut out);
    out.dedup();
    Some(out)
}
