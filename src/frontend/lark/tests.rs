//! Unit tests of normalization internals: Lark's factorized repeats.
use super::normalize::small_factors;
use super::*;
use crate::grammar::Symbol;
use std::collections::BTreeSet;

fn cfg(text: &str) -> Cfg {
    crate::constraint::parse_lark(text, "t.lark", None, &|_| None).unwrap_or_else(|e| panic!("{e:?}"))
}

/// The set of word lengths (up to `cap`) each nonterminal derives, by fixpoint.
fn lengths(c: &Cfg, cap: usize) -> Vec<BTreeSet<usize>> {
    let mut l = vec![BTreeSet::new(); c.nonterminals.len()];
    loop {
        let mut changed = false;
        for r in &c.rules {
            let mut acc: BTreeSet<usize> = [0].into();
            for s in &r.rhs {
                let next: BTreeSet<usize> = match s {
                    Symbol::T(_) => [1].into(),
                    Symbol::N(n) => l[n.index()].clone(),
                };
                acc = acc.iter().flat_map(|a| next.iter().map(move |b| a + b)).filter(|&x| x <= cap).collect();
            }
            for x in acc {
                changed |= l[r.lhs.index()].insert(x);
            }
        }
        if !changed {
            return l;
        }
    }
}

#[test]
fn small_factors_reconstruct_n() {
    for n in 0..2000u32 {
        let f = small_factors(n, 5);
        assert_eq!(f.iter().fold(1u32, |acc, &(a, b)| acc * a + b), n, "{n}: {f:?}");
        assert!(f.iter().all(|&(a, b)| a + b <= 5), "{n}: {f:?}");
    }
}

#[test]
fn large_repeats_derive_exactly_the_range() {
    for (mn, mx) in [(50, 50), (0, 57), (3, 120), (61, 64), (49, 50)] {
        let c = cfg(&format!("start: \"a\"~{mn}..{mx}\n"));
        let got = &lengths(&c, 200)[c.start.index()];
        let want: BTreeSet<usize> = (mn as usize..=mx as usize).collect();
        assert_eq!(got, &want, "~{mn}..{mx}");
        assert!(c.rules.len() < 40, "~{mn}..{mx}: {} rules", c.rules.len());
    }
}

#[test]
fn plus_and_star_derive_the_right_lengths() {
    let c = cfg("start: \"a\"+ \"b\"* [\"c\"] \"d\"~2\n");
    let got = &lengths(&c, 6)[c.start.index()];
    assert_eq!(got, &(3..=6).collect::<BTreeSet<usize>>());
}

#[test]
fn huge_repeat_counts_do_not_overflow() {
    let e = crate::constraint::parse_lark("start: \"a\"~0..4294967295\n", "t.lark", None, &|_| None).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Limit);
    let c = cfg("start: \"a\"~1..4294967295\n");
    assert!(c.rules.len() < 200);
    let c = cfg("start: \"a\"~4294967295\n");
    assert!(c.rules.len() < 200);
}
