//! The `oneOf` policy of the schema front end ([`one_of_disjoint`], passed
//! to the IR builder as its [`OneOfPolicy`](super::ir::OneOfPolicy)), and what it rests on: proving
//! two conjunctions disjoint (no value satisfies both).
//! Sound, not complete: `false` means "not proved".

use super::ir::{ConjId, Ir, Loc, T_ARR, T_BOOL, T_FRAC, T_INT, T_NULL, T_OBJ, T_STR};
use crate::regex::lang::set_nonempty;
use super::scalar::scalar_lang;
use crate::Result;

/// The `oneOf` policy ([`OneOfPolicy`](super::ir::OneOfPolicy)): a `oneOf`
/// is expanded like `anyOf` when its branches are pairwise [`disjoint`];
/// otherwise it is enforced as "exactly one" by its condition
/// ([`Ir::logic`]).
pub fn one_of_disjoint(ir: &mut Ir<'_>, _owner: Loc, branches: &[Loc]) -> Result<bool> {
    for i in 0..branches.len() {
        for j in i + 1..branches.len() {
            let a = ir.dnf(&[branches[i]])?;
            let b = ir.dnf(&[branches[j]])?;
            for &x in a.iter() {
                for &y in b.iter() {
                    if !disjoint(ir, x, y, 3)? {
                        return Ok(false);
                    }
                }
            }
        }
    }
    Ok(true)
}

pub fn disjoint(ir: &mut Ir<'_>, a: ConjId, b: ConjId, depth: usize) -> Result<bool> {
    if a == b {
        return Ok(false);
    }
    let (ma, mb) = (ir.merged(a)?, ir.merged(b)?);
    let common = ma.gen_types() & mb.gen_types();
    if common == 0 {
        return Ok(true);
    }
    // Scalars: exact, through the regex languages.
    if common & (T_NULL | T_BOOL | T_INT | T_FRAC | T_STR) != 0 {
        let (sa, sb) = (scalar_lang(ir, a)?, scalar_lang(ir, b)?);
        if (sa.null && sb.null) || (sa.t && sb.t) || (sa.f && sb.f) {
            return Ok(false);
        }
        let domains = [(&sa.num, &sb.num, &sa.num_lits, &sb.num_lits), (&sa.str, &sb.str, &sa.str_lits, &sb.str_lits)];
        for (x, y, lx, ly) in domains {
            if let (Some(x), Some(y)) = (x, y) {
                // Finite sides (enum/const texts, canonical) first: no DFA product.
                let meet = match (lx, ly) {
                    (Some(a), Some(b)) => a.iter().any(|t| b.contains(t)),
                    (Some(a), None) => lits_meet(a, y),
                    (None, Some(b)) => lits_meet(b, x),
                    (None, None) => {
                        let all: Vec<String> = x.iter().chain(y.iter()).cloned().collect();
                        !matches!(set_nonempty(&all, &[]), Ok(false))
                    }
                };
                if meet {
                    return Ok(false);
                }
            }
        }
    }
    if common & T_ARR != 0 {
        let lo = ma.min_items.max(mb.min_items);
        let hi = match (ma.max_items, mb.max_items) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let mut dis = hi.is_some_and(|h| h < lo);
        if !dis && depth > 0 {
            for i in 0..lo.min(16) as usize {
                let (va, vb) = (ir.item_value(&ma, i), ir.item_value(&mb, i));
                if sets_disjoint(ir, &va, &vb, depth - 1)? {
                    dis = true;
                    break;
                }
            }
        }
        if !dis {
            return Ok(false);
        }
    }
    if common & T_OBJ != 0 {
        let mut dis = false;
        let keys: Vec<String> = ma.required.iter().chain(mb.required.iter()).cloned().collect();
        for k in keys {
            let (va, vb) = (ir.key_value(&ma, &k)?, ir.key_value(&mb, &k)?);
            let both = ma.required.contains(&k) && mb.required.contains(&k);
            // Required in one, forbidden in the other.
            if (ma.required.contains(&k) && ir.is_false(&vb)) || (mb.required.contains(&k) && ir.is_false(&va)) {
                dis = true;
                break;
            }
            if both && depth > 0 && sets_disjoint(ir, &va, &vb, depth - 1)? {
                dis = true;
                break;
            }
        }
        if !dis {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Does some literal text match every regex of `list`? (`true` when a
/// regex does not compile: not proved disjoint.)
fn lits_meet(lits: &[String], list: &[String]) -> bool {
    let Ok(dfas) = list.iter().map(|r| crate::regex::lang::Dfa::cached(r)).collect::<std::result::Result<Vec<_>, _>>() else {
        return true;
    };
    lits.iter().any(|t| dfas.iter().all(|d| d.full_match(t.as_bytes())))
}

fn sets_disjoint(ir: &mut Ir<'_>, a: &[u32], b: &[u32], depth: usize) -> Result<bool> {
    let da = ir.dnf(a)?;
    let db = ir.dnf(b)?;
    for &x in da.iter() {
        for &y in db.iter() {
            if !disjoint(ir, x, y, depth)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
