//! The tests this binary does not run by default are declared: every
//! `#[ignore]`d test is listed, with its kind and reason, in
//! `tests/data/ignored.tsv`, and nothing else is ignored. libtest counts them
//! ("N ignored"); this test makes that count and those names the declared
//! ones. A test never skips itself at run time: a missing fixture fails.

use crate::common::root;
use std::collections::BTreeSet;

/// (name, kind) of the declared ignored tests.
pub fn declared() -> Vec<(String, String)> {
    let path = root().join("tests/data/ignored.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert!(f.len() == 3 && ["full", "bench"].contains(&f[1]) && !f[2].is_empty(), "{}: bad line {l:?}", path.display());
            (f[0].to_string(), f[1].to_string())
        })
        .collect()
}

#[test]
fn ignored_tests_are_the_declared_ones() {
    // This binary's own list of ignored tests (libtest: `--list --ignored`).
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--list", "--ignored", "--format", "terse"])
        .output()
        .expect("run the test binary with --list");
    assert!(out.status.success());
    let listed: BTreeSet<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_string)
        .collect();
    let declared: BTreeSet<String> = declared().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        listed, declared,
        "the #[ignore]d tests differ from tests/data/ignored.tsv (undeclared: {:?}; declared but not ignored: {:?})",
        listed.difference(&declared).collect::<Vec<_>>(),
        declared.difference(&listed).collect::<Vec<_>>()
    );
}
