//! The crate's layers, checked from the source: every `crate::` / `super::`
//! path in non-test code of `src/` (the library; `src/bin` is a client)
//! points down the table below or stays inside its own top-level module, no
//! root re-export is used as a shortcut, and no two sibling modules import
//! each other, directly or in a circle. The layer order is documented in
//! `src/constraint.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level modules and their layers: a module may use only modules of a
/// strictly lower layer (and itself). Front ends and the engine are two
/// branches over the regex layer; putting the front ends below the engine
/// keeps both directions apart (the engine never imports a front end, a
/// front end never imports the engine).
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("limits", 0),
    ("hash", 0),
    ("ids", 1),
    ("sort", 1),
    ("cache", 1),
    ("time", 1),
    ("grammar", 2),
    ("regex", 3),
    ("frontend", 4),
    ("vocab", 5),
    ("parser", 5),
    ("lexer", 6),
    ("store", 7),
    ("matcher", 8),
    ("reference", 9),
    ("constraint", 10),
    ("wasm", 11),
];

/// Crate-root names that are the error module's (`crate::Result` etc.).
const ROOT_ERROR: &[&str] = &["err", "Error", "ErrorKind", "Result"];

fn rank(top: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == top).map(|&(_, r)| r)
}

/// `src/a/b.rs` and `src/a/b/mod.rs` → `a::b`.
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts.join("::")
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().unwrap() != "bin" {
                files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") && p.file_name().unwrap() != "tests.rs" {
            out.push(p);
        }
    }
}

/// The code of a file without comments and without `#[cfg(test)]` modules.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim() == "#[cfg(test)]" && lines.peek().is_some_and(|n| n.trim_start().starts_with("mod ") && n.trim_end().ends_with('{')) {
            let indent = lines.peek().unwrap().len() - lines.peek().unwrap().trim_start().len();
            let close = format!("{}}}", " ".repeat(indent));
            for m in lines.by_ref() {
                if m.trim_end() == close {
                    break;
                }
            }
            continue;
        }
        let l = l.split("//").next().unwrap();
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// The paths a piece of code names after `crate::` and `super::`, made
/// absolute (`a::b::item`); braces are expanded.
fn paths(code: &str, module: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !(ident(b[i - 1]) || b[i - 1] == b'$' || b[i - 1] == b':');
        let (start, mut base): (usize, Vec<&str>) = if at_word && b[i..].starts_with(b"crate::") {
            (i + 7, Vec::new())
        } else if at_word && b[i..].starts_with(b"super::") {
            let mut base: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
            let mut j = i;
            while b[j..].starts_with(b"super::") {
                base.pop();
                j += 7;
            }
            (j, base)
        } else {
            i += 1;
            continue;
        };
        // Read `a::b::{c, d::e}` from `start`.
        let mut j = start;
        while j < b.len() && (ident(b[j]) || b[j] == b':') {
            j += 1;
        }
        let head = code[start..j].trim_end_matches(':');
        base.extend(head.split("::").filter(|s| !s.is_empty()));
        if b.get(j) == Some(&b'{') {
            let mut depth = 0;
            let mut k = j;
            while k < b.len() {
                match b[k] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            let inner = &code[j + 1..k];
            let mut depth = 0;
            let mut last = 0;
            let mut items = Vec::new();
            for (n, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&inner[last..n]);
                        last = n + 1;
                    }
                    _ => {}
                }
            }
            items.push(&inner[last..]);
            for it in items {
                let first = it.trim().split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
                let mut full = base.clone();
                if !first.is_empty() && first != "self" {
                    full.push(first);
                }
                out.push(full.join("::"));
            }
            i = k;
        } else {
            out.push(base.join("::"));
            i = j;
        }
    }
    out
}

/// The longest known module that `path` starts with.
fn resolve<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a str> {
    let segs: Vec<&str> = path.split("::").collect();
    (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find_map(|p| modules.get(&p).map(|s| s.as_str()))
}

fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() || b.starts_with(&format!("{a}::")) || a == b
}

#[test]
fn imports_go_down_the_layers_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut fs = Vec::new();
    files(&src, &mut fs);
    let modules: BTreeSet<String> = fs.iter().map(|p| module_of(p.strip_prefix(&src).unwrap())).collect();
    let mut bad = Vec::new();
    // Edges between modules of which neither contains the other.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &fs {
        let module = module_of(f.strip_prefix(&src).unwrap());
        let top = module.split("::").next().unwrap().to_string();
        if module.is_empty() {
            continue; // lib.rs: the module list and the front door.
        }
        let Some(r) = rank(&top) else {
            bad.push(format!("{}: top-level module `{top}` has no layer in tests/suite/layers.rs", f.display()));
            continue;
        };
        for p in paths(&code(&std::fs::read_to_string(f).unwrap()), &module) {
            let first = p.split("::").next().unwrap();
            let target = match resolve(&p, &modules) {
                Some(t) => t.to_string(),
                None if ROOT_ERROR.contains(&first) => "error".to_string(),
                None => {
                    bad.push(format!("{module}: `crate::{p}` goes through the crate root; name the module"));
                    continue;
                }
            };
            let ttop = target.split("::").next().unwrap();
            if ttop != top && rank(ttop).is_none_or(|t| t >= r) {
                bad.push(format!("{module} (layer {r}) imports {target} (layer {:?}): upward or sideways", rank(ttop)));
            }
            if !is_ancestor(&target, &module) && !is_ancestor(&module, &target) {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    // Circles: depth-first search for a back edge.
    fn visit(n: &str, edges: &BTreeMap<String, BTreeSet<String>>, state: &mut BTreeMap<String, u8>, stack: &mut Vec<String>, bad: &mut Vec<String>) {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| s == m).unwrap();
                    bad.push(format!("import circle: {} -> {m}", stack[from..].join(" -> ")));
                }
                Some(_) => {}
                None => visit(m, edges, state, stack, bad),
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n.as_str()) {
            visit(n, &edges, &mut state, &mut Vec::new(), &mut bad);
        }
    }
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
    // The check sees the crate: every layer is a module, and edges were found.
    for (m, _) in LAYERS {
        assert!(modules.iter().any(|x| x == m || x.starts_with(&format!("{m}::"))), "layer {m} names no module");
    }
    assert!(edges.values().map(|s| s.len()).sum::<usize>() > 50, "too few imports found: the scanner is broken");
}

#[test]
fn the_scanner_sees_what_it_should() {
    let code = code("use crate::{err, lexer::Lexer};\nuse super::ir::{Ir, T_A};\n// crate::matcher::x\nfn f() { crate::store::build::compile(); }\n#[cfg(test)]\nmod tests {\n    use crate::wasm;\n}\n");
    let p = paths(&code, "frontend::schema::gen");
    assert_eq!(p, ["err", "lexer", "frontend::schema::ir::Ir", "frontend::schema::ir::T_A", "store::build::compile"]);
}
