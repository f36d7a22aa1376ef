//! The `grammask` command line with its defaults, on files as users have them
//! (Llama-3 tokenizer):
//! - every option of every subcommand has help text;
//! - `check` accepts a pretty-printed JSON file with a trailing newline, and a
//!   regex-constrained file, with default options;
//! - a refusal names the line:col, what was allowed, and the schema keyword and
//!   JSON pointer that refused it;
//! - `generate` with default options completes on realistic schemas (validated
//!   by python `jsonschema`, scripts/experiments/validate_generations.py), on
//!   regexes (python `re.fullmatch`) and on grammars/json.lark (`grammask
//!   parse` and python `json.loads`);
//! - `compile -o` for a constraint reports its progress and writes a blob that
//!   `check --store` reads.

use crate::common::root;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_grammask");

fn tokenizer() -> String {
    let t = root().join("models/llama3/tokenizer.json");
    assert!(t.exists(), "{} is missing: run scripts/setup/setup.sh", t.display());
    t.display().to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(root()).output().expect("cannot run grammask")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("grammask-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The option entries of a `--help` text and their help (empty: none).
/// Clap writes `  --name <V>  help` on one line, or the help on the indented
/// lines that follow; `[default: …]` and `[possible values: …]` are not help.
fn options_and_help(help: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut in_opts = false;
    for line in help.lines() {
        if line == "Options:" || line == "Arguments:" {
            in_opts = true;
            continue;
        }
        if !in_opts || line.trim().is_empty() {
            continue;
        }
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let is_entry = indent <= 6 && (t.starts_with('-') || t.starts_with('<') || t.starts_with('['));
        if is_entry {
            // Name: up to two spaces; the rest is help.
            let (name, rest) = match t.find("  ") {
                Some(i) => (&t[..i], t[i..].trim()),
                None => (t, ""),
            };
            out.push((name.to_string(), rest.to_string()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(' ');
            last.1.push_str(t.trim());
        }
    }
    for e in &mut out {
        let mut h = e.1.clone();
        for tag in ["[default:", "[possible values:"] {
            while let Some(i) = h.find(tag) {
                let j = h[i..].find(']').map_or(h.len(), |j| i + j + 1);
                h.replace_range(i..j, "");
            }
        }
        e.1 = h.trim().to_string();
    }
    out
}

#[test]
fn every_option_has_help() {
    let top = text(&run(&["--help"]));
    let subs: Vec<String> = top
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|s| s != "help")
        .collect();
    assert!(subs.len() >= 7, "subcommands not found in:\n{top}");
    let mut missing = Vec::new();
    for s in &subs {
        let o = run(&[s, "--help"]);
        assert!(o.status.success(), "grammask {s} --help failed");
        let help = String::from_utf8_lossy(&o.stdout).into_owned();
        let opts = options_and_help(&help);
        assert!(opts.len() >= 2, "no options parsed from `grammask {s} --help`:\n{help}");
        for (name, h) in opts {
            if h.is_empty() {
                missing.push(format!("{s} {name}"));
            }
        }
    }
    assert!(missing.is_empty(), "options without help text: {missing:?}");
}

#[test]
fn help_parser_sees_a_missing_help() {
    // The parser above must find an option without help (so the test can fail).
    let help = "Usage: x\n\nOptions:\n      --a <A>  has help\n      --b <B>\n          [default: 1]\n  -h, --help  Print help\n";
    let o = options_and_help(help);
    assert_eq!(o, vec![("--a <A>".into(), "has help".into()), ("--b <B>".into(), "".into()), ("-h, --help".into(), "Print help".into())]);
}

fn person_schema() -> String {
    root().join("docs/examples/person.schema.json").display().to_string()
}

#[test]
fn check_accepts_pretty_json_with_trailing_newline() {
    let d = tmp("pretty");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(root().join("docs/examples/person.json")).unwrap()).unwrap();
    let pretty = d.join("pretty.json");
    std::fs::write(&pretty, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
    let compact = d.join("compact.json");
    std::fs::write(&compact, serde_json::to_string(&v).unwrap() + "\n").unwrap();
    let t = tokenizer();
    let o = run(&["check", "--json-schema", &person_schema(), "--tokenizer", &t, pretty.to_str().unwrap(), compact.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2/2 files accepted"), "{}", text(&o));
    // Under the compact policy the pretty file is refused, and the error names the option that accepts it.
    let o = run(&["check", "--json-schema", &person_schema(), "--whitespace", "default", "--tokenizer", &t, pretty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--whitespace flexible"), "{}", text(&o));
    // A regex-constrained file with a trailing newline (ignored: the regex does not allow it).
    let date = d.join("date.txt");
    std::fs::write(&date, "2026-11-26\n").unwrap();
    let o = run(&["check", "--regex", r"\d{4}-\d{2}-\d{2}", "--tokenizer", &t, date.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("trailing newline ignored"), "{}", text(&o));
    std::fs::write(&date, "2026-11-26x\n").unwrap();
    let o = run(&["check", "--regex", r"\d{4}-\d{2}-\d{2}", "--tokenizer", &t, date.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("refused at 1:11"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn check_refusal_names_keyword_and_pointer() {
    let d = tmp("refuse");
    let t = tokenizer();
    // (instance, what the error must say)
    let cases: [(&str, &[&str]); 6] = [
        (r#"{"name": "Ann", "age": 200}"#, &["`maximum: 150` at #/properties/age", "instance /age"]),
        (r#"{"name": "Ann", "age": "x"}"#, &["`type: \"integer\"` at #/properties/age"]),
        (r#"{"name": "", "age": 3}"#, &["`minLength: 1` at #/properties/name"]),
        (r#"{"name": "Ann", "age": 3, "nick": "A"}"#, &["`additionalProperties: false` at #/additionalProperties"]),
        (r#"{"name": "Ann"}"#, &["`required` [\"age\"]", "#/required"]),
        (r#"{"name": "A", "age": 3, "tags": ["a", "b", "c", "d", "e", "f"]}"#, &["`maxItems: 5`", "#/properties/tags"]),
    ];
    for (i, (inst, want)) in cases.iter().enumerate() {
        let f = d.join(format!("bad{i}.json"));
        std::fs::write(&f, format!("{inst}\n")).unwrap();
        let o = run(&["check", "--json-schema", &person_schema(), "--tokenizer", &t, f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{inst}: {}", text(&o));
        let out = text(&o);
        assert!(out.contains("refused at 1:"), "{inst}: no line:col in {out}");
        for w in *want {
            assert!(out.contains(w), "{inst}: {w:?} not in {out}");
        }
    }
    // Schema order is grammask's serialization policy: said as such.
    let f = d.join("order.json");
    std::fs::write(&f, r#"{"age": 3, "name": "Ann"}"#).unwrap();
    let out = text(&run(&["check", "--json-schema", &person_schema(), "--tokenizer", &t, f.to_str().unwrap()]));
    assert!(out.contains("out of order") && out.contains("schema order"), "{out}");
    // Unmet dependencies: a key present without the keys it requires, and a
    // key whose required keys come before it in schema order.
    let cases = [
        (r#"{"a": ["b"]}"#, "{\"a\": 1}\n", r#"has "a" but lacks ["b"], which `dependentRequired` at #/dependentRequired/a requires"#),
        (
            r#"{"b": ["a"]}"#,
            "{\"b\": 1}\n",
            r#"key "b" in the object at instance (root) requires ["a"] (`dependentRequired` at #/dependentRequired/b), which come before it"#,
        ),
    ];
    for (i, (deps, instance, want)) in cases.into_iter().enumerate() {
        let s = d.join(format!("deps{i}.schema.json"));
        std::fs::write(&s, format!(r#"{{"type": "object", "properties": {{"a": {{}}, "b": {{}}}}, "dependentRequired": {deps}}}"#)).unwrap();
        let f = d.join(format!("deps{i}.json"));
        std::fs::write(&f, instance).unwrap();
        let out = text(&run(&["check", "--json-schema", s.to_str().unwrap(), "--tokenizer", &t, f.to_str().unwrap()]));
        assert!(out.contains(want), "{out}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn check_with_ref_registry() {
    // A schema whose `$ref` names a remote document, relative to its `$id`:
    // without --ref it is a named error (nothing is fetched); with --ref
    // URI=FILE the document is used; the metaschemas are built in.
    let d = tmp("ref");
    let t = tokenizer();
    let schema = d.join("order.schema.json");
    std::fs::write(&schema, r#"{"$id": "https://example.com/schemas/order.json", "type": "object",
        "properties": {"item": {"$ref": "common.json#/$defs/sku"}, "qty": {"type": "integer", "minimum": 1}},
        "required": ["item", "qty"], "additionalProperties": false}"#).unwrap();
    let common = d.join("common.json");
    std::fs::write(&common, r#"{"$defs": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"}}}"#).unwrap();
    let good = d.join("good.json");
    std::fs::write(&good, "{\"item\": \"ABC-1234\", \"qty\": 2}\n").unwrap();
    let bad = d.join("bad.json");
    std::fs::write(&bad, "{\"item\": \"abc\", \"qty\": 2}\n").unwrap();
    let (s, g, b, c) = (schema.to_str().unwrap(), good.to_str().unwrap(), bad.to_str().unwrap(), common.to_str().unwrap());
    let out = text(&run(&["check", "--json-schema", s, "--tokenizer", &t, g]));
    for w in ["remote `$ref` at #/properties/item/$ref", "\"https://example.com/schemas/common.json\"", "--ref URI=FILE", "nothing is fetched"] {
        assert!(out.contains(w), "{w:?} not in {out}");
    }
    let r = format!("https://example.com/schemas/common.json={c}");
    let o = run(&["check", "--json-schema", s, "--ref", &r, "--tokenizer", &t, g]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&["check", "--json-schema", s, "--ref", &r, "--tokenizer", &t, b]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("refused at 1:"), "{}", text(&o));
    // Bad --ref values are errors, not panics.
    for (arg, want) in [("no-equals-sign", "URI=FILE"), ("https://x/y.json=/nonexistent/file.json", "nonexistent")] {
        let o = run(&["check", "--json-schema", s, "--ref", arg, "--tokenizer", &t, g]);
        assert!(!o.status.success() && text(&o).contains(want), "{arg}: {}", text(&o));
    }
    let o = run(&["check", "--regex", "a", "--ref", &r, "--tokenizer", &t, g]);
    assert!(!o.status.success() && text(&o).contains("--ref applies to --json-schema"), "{}", text(&o));
    // Built-in metaschema: a draft-07 `definitions` entry, nothing given.
    let meta = d.join("meta.schema.json");
    std::fs::write(&meta, r#"{"$ref": "http://json-schema.org/draft-07/schema#/definitions/nonNegativeInteger"}"#).unwrap();
    let n = d.join("n.json");
    std::fs::write(&n, "7\n").unwrap();
    let o = run(&["check", "--json-schema", meta.to_str().unwrap(), "--tokenizer", &t, n.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(&n, "-7\n").unwrap();
    let o = run(&["check", "--json-schema", meta.to_str().unwrap(), "--tokenizer", &t, n.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

fn validate_schema_samples(schema: &Path, gen: &Path) {
    let python = root().join(".venv-schema/bin/python");
    assert!(python.is_file(), "{} is missing: run scripts/setup/setup.sh", python.display());
    let sd = gen.parent().unwrap().join("schemas");
    std::fs::create_dir_all(&sd).unwrap();
    let name = gen.file_name().unwrap().to_str().unwrap();
    std::fs::copy(schema, sd.join(format!("{name}.json"))).unwrap();
    let o = Command::new(&python).arg(root().join("scripts/experiments/validate_generations.py")).arg(&sd).arg(gen.parent().unwrap()).output().unwrap();
    assert!(o.status.success(), "generated instances failed validation:\n{}", text(&o));
    let _ = std::fs::remove_dir_all(&sd);
}

#[test]
fn generate_defaults_complete_on_schemas_regexes_and_grammars() {
    let d = tmp("gen");
    let t = tokenizer();
    // Realistic nested schemas: changie's configuration (SchemaStore via check-jsonschema), a tool call, the README's person.
    let schemas = [
        root().join("models/schema/corpus/check-jsonschema/changie.json"),
        root().join("models/schema/corpus/check-jsonschema/codecov.json"),
        root().join("tests/data/schemas/tool_call.json"),
        root().join("docs/examples/person.schema.json"),
    ];
    for s in &schemas {
        assert!(s.exists(), "{} is missing: run scripts/setup/setup.sh", s.display());
        let name = s.file_stem().unwrap().to_str().unwrap().replace('.', "_");
        let g = d.join(&name).join(&name);
        let o = run(&["generate", "--json-schema", s.to_str().unwrap(), "--tokenizer", &t, "--count", "5", "--out-dir", g.to_str().unwrap()]);
        assert!(o.status.success(), "{}: {}", s.display(), text(&o));
        assert!(text(&o).contains("5 completed samples"), "{}", text(&o));
        validate_schema_samples(s, &g);
    }
    for r in [r"\(\d{3}\) \d{3}-\d{4}", r"\d{4}-\d{2}-\d{2}", r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}"] {
        let g = d.join("regex");
        let _ = std::fs::remove_dir_all(&g);
        let o = run(&["generate", "--regex", r, "--tokenizer", &t, "--count", "5", "--out-dir", g.to_str().unwrap()]);
        assert!(o.status.success(), "{r}: {}", text(&o));
        let py = "import glob,re,sys\nfs=sorted(glob.glob(sys.argv[2]+'/*.txt'))\nbad=[f for f in fs if not re.fullmatch(sys.argv[1], open(f,encoding='utf-8').read())]\nprint(len(fs), bad)\nsys.exit(1 if bad or len(fs)!=5 else 0)";
        let v = Command::new("python3").args(["-c", py, r, g.to_str().unwrap()]).output().expect("python3");
        assert!(v.status.success(), "{r}: samples do not fullmatch: {}", text(&v));
    }
    let g = d.join("json-lark");
    let gl = root().join("grammars/json.lark");
    let o = run(&["generate", "--grammar", gl.to_str().unwrap(), "--tokenizer", &t, "--count", "5", "--out-dir", g.to_str().unwrap()]);
    assert!(o.status.success(), "json.lark: {}", text(&o));
    let p = run(&["parse", "--grammar", gl.to_str().unwrap(), g.to_str().unwrap()]);
    assert!(p.status.success() && text(&p).contains("5/5 files accepted"), "{}", text(&p));
    let py = "import glob,json,sys\nfs=sorted(glob.glob(sys.argv[1]+'/*.txt'))\n[json.loads(open(f,encoding='utf-8').read()) for f in fs]\nsys.exit(0 if len(fs)==5 else 1)";
    let v = Command::new("python3").args(["-c", py, g.to_str().unwrap()]).output().expect("python3");
    assert!(v.status.success(), "json.lark samples: {}", text(&v));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn compile_blob_for_a_constraint_reports_progress() {
    let d = tmp("blob");
    let t = tokenizer();
    let help = text(&run(&["compile", "--help"]));
    assert!(help.contains("needs no blob"), "{help}");
    let blob = d.join("date.gmask");
    let o = run(&["compile", "--regex", r"\d{4}-\d{2}-\d{2}", "--tokenizer", &t, "-o", blob.to_str().unwrap(), "--progress", "always"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.lines().rev().find(|l| l.contains("positions")).unwrap_or_else(|| panic!("no progress line in {err}"));
    // The last progress line has every position done: "N/N positions".
    let frac = last.split_whitespace().find(|w| w.contains('/')).unwrap();
    let (a, b) = frac.split_once('/').unwrap();
    assert!(a == b && a.parse::<usize>().unwrap() > 0, "{last}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("bytes ->"), "{}", text(&o));
    let f = d.join("date.txt");
    std::fs::write(&f, "2026-11-26").unwrap();
    let o = run(&["check", "--store", blob.to_str().unwrap(), "--tokenizer", &t, f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn grammar_files_by_extension_or_format() {
    // A .gbnf file is read as GBNF (by `parse`, `check`, `generate`); another
    // extension needs --format; the Lark options are refused with it.
    let d = tmp("gbnf");
    let t = tokenizer();
    let g = d.join("list.gbnf");
    std::fs::write(&g, "root ::= \"[\" num (\",\" num)* \"]\"\nnum ::= [0-9]+\n").unwrap();
    let same = d.join("list.txt");
    std::fs::copy(&g, &same).unwrap();
    let good = d.join("good.txt");
    std::fs::write(&good, "[1,22]").unwrap();
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "[1,,2]").unwrap();
    let (gs, ss, gd, bd) = (g.to_str().unwrap(), same.to_str().unwrap(), good.to_str().unwrap(), bad.to_str().unwrap());
    let o = run(&["parse", "--grammar", gs, gd, bd]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("1/2 files accepted"), "{}", text(&o));
    let o = run(&["parse", "--grammar", ss, "--format", "gbnf", gd]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&["parse", "--grammar", ss, gd]);
    assert!(!o.status.success(), "read as Lark: {}", text(&o));
    let o = run(&["parse", "--grammar", gs, "--lexer", "basic", gd]);
    assert!(!o.status.success() && text(&o).contains("apply to Lark grammars only"), "{}", text(&o));
    let o = run(&["check", "--grammar", gs, "--tokenizer", &t, gd]);
    assert!(o.status.success(), "{}", text(&o));
    let out = d.join("gen");
    let o = run(&["generate", "--grammar", gs, "--tokenizer", &t, "--count", "3", "--out-dir", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&["parse", "--grammar", gs, out.to_str().unwrap()]);
    assert!(o.status.success() && text(&o).contains("3/3 files accepted"), "{}", text(&o));
    // A syntax error names the place.
    std::fs::write(&g, "root ::= \"a\" (\n").unwrap();
    let o = run(&["parse", "--grammar", gs, gd]);
    assert!(text(&o).contains("list.gbnf:2:1: expected `)`"), "{}", text(&o));
}
