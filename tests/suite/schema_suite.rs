//! The official JSON Schema Test Suite (draft2020-12 and draft7 whole, the
//! reference files (`ref`, `refRemote`, `anchor`, `defs`/`definitions`, `id`)
//! of draft2019-09, draft6 and draft4, and draft2019-09's `unevaluated*`
//! files (its `items`/`additionalItems` roles) and `recursiveRef`, from
//! models/schema/suite, fetched by scripts/setup/fetch-schemas.sh) against the
//! schema front end.
//!
//! For every test group: the schema compiles, or fails with an error that
//! names an unsupported keyword (or a limit). For every compiled schema:
//! valid instances, serialized compact and spaced under the policy
//! (`grammask::frontend::schema::serialize`), are accepted; invalid instances are
//! refused (0 invalidation errors is asserted). What is not yet supported
//! ratchets: per draft and keyword file, the schemas refused (groups failed)
//! and the valid instances refused may not exceed the counts recorded in
//! `tests/data/schema_suite_refusals.tsv`, and a count below its record fails
//! too, asking for the record to be lowered (so it can only go down).
//! Acceptance is checked with
//! the schema oracle (whole text, `LexerMode::LongestAll` from the
//! definitions) and, token by token with the Llama-3 tokenizer and EOS at the
//! end, through `constraint::compile` + `Matcher` (`GRAMMASK_SUITE_TOKENS=1`;
//! default in the full tier).
//!
//! The table (per keyword file: groups compiled / failed, valid instances
//! accepted / refused, invalid refused / accepted) is printed with
//! `cargo test --profile ci --test suite schema_suite:: -- --nocapture`.
//!
//! The suite's `remotes/` folder, served at `http://localhost:1234/` by its
//! own runner, is passed as the schemas' registry (`SchemaOptions::refs`):
//! nothing is fetched.
//!
//! `format.json` of the main directories is replaced by optional/format/
//! (grammask enforces formats; the main files treat them as annotations).

use crate::schema_common;
use schema_common as common;

use grammask::frontend::schema::{key_rank, serialize, to_cfg, SchemaOptions};
use grammask::reference::oracle::Oracle;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Default, Debug, Clone)]
struct Row {
    groups_ok: usize,
    groups_failed: usize,
    valid_ok: usize,
    valid_refused: usize,
    invalid_refused: usize,
    invalid_accepted: usize,
    /// Oracle (whole text) and masks (token by token) disagree.
    disagree: usize,
    failures: BTreeMap<String, usize>,
}

const FORMATS: &[&str] = &["date-time", "date", "time", "uuid", "email", "ipv4", "ipv6", "uri", "hostname"];

fn suite_files(root: &Path, draft: &str, full: bool) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let dir = root.join(draft);
    let mut main: Vec<PathBuf> = std::fs::read_dir(&dir).map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    main.sort();
    for p in main {
        if p.extension().is_some_and(|e| e == "json") && p.file_stem().is_some_and(|s| s != "format") {
            out.push((p.file_stem().unwrap().to_string_lossy().into_owned(), p));
        }
    }
    for f in FORMATS {
        let p = dir.join("optional/format").join(format!("{f}.json"));
        if p.exists() {
            out.push((format!("format:{f}"), p));
        }
    }
    if full {
        let mut opt: Vec<PathBuf> =
            std::fs::read_dir(dir.join("optional")).map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
        opt.sort();
        for p in opt {
            // optional/content.json (draft 7 and older) asserts contentMediaType/contentEncoding,
            // which the specification leaves optional and grammask treats as annotations, as
            // 2019-09 and 2020-12 do (docs/structured-output.md): not read.
            if p.file_stem().is_some_and(|s| s == "content") {
                continue;
            }
            if p.extension().is_some_and(|e| e == "json") {
                out.push((format!("optional:{}", p.file_stem().unwrap().to_string_lossy()), p));
            }
        }
    }
    out
}

/// The keyword an error names (`unsupported keyword `X``), else its kind.
fn failure_class(e: &grammask::Error) -> String {
    let m = e.message();
    if let Some(i) = m.find("unsupported keyword `") {
        let rest = &m[i + 21..];
        return rest.split('`').next().unwrap_or("?").to_string();
    }
    if m.contains("unsupported `pattern`") {
        return "pattern".into();
    }
    if m.contains("nothing is fetched") {
        return "$ref (remote)".into();
    }
    format!("{:?}", e.kind())
}

/// `GRAMMASK_SUITE_DUMP=FILE`: one JSON line per (schema, instance, layout)
/// with grammask's verdict, for scripts/experiments/llguidance_agreement.py.
fn dump_line(v: serde_json::Value) {
    use std::io::Write;
    if let Some(p) = std::env::var_os("GRAMMASK_SUITE_DUMP") {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(p).expect("dump file");
        writeln!(f, "{v}").expect("write");
    }
}

/// The suite's `remotes/` as a registry: `http://localhost:1234/PATH` → the
/// schema in `remotes/PATH`.
pub fn remotes() -> std::sync::Arc<Vec<(String, Value)>> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, Value)>) {
        let mut es: Vec<PathBuf> = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).collect();
        es.sort();
        for p in es {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                walk(&p, &format!("{rel}{name}/"), out);
            } else if name.ends_with(".json") {
                let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                out.push((format!("http://localhost:1234/{rel}{name}"), v));
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("models/schema/suite/remotes"), "", &mut out);
    assert!(out.len() > 20, "models/schema/suite/remotes: {} files", out.len());
    std::sync::Arc::new(out)
}

/// The `$schema` a draft's schemas get where they have none.
fn meta_uri(draft: &str) -> Option<&'static str> {
    match draft {
        "draft7" => Some("http://json-schema.org/draft-07/schema#"),
        "draft6" => Some("http://json-schema.org/draft-06/schema#"),
        "draft4" => Some("http://json-schema.org/draft-04/schema#"),
        "draft2019-09" => Some("https://json-schema.org/draft/2019-09/schema"),
        _ => None,
    }
}

/// The keyword files of the references (read for every draft).
const REF_FILES: &[&str] = &["ref", "refRemote", "anchor", "defs", "definitions", "id"];
/// Draft2019-09's: the reference files, `unevaluated*` and `recursiveRef`.
const FILES_2019: &[&str] = &["ref", "refRemote", "anchor", "defs", "definitions", "id", "unevaluatedProperties", "unevaluatedItems", "recursiveRef"];

/// `only`: the keyword files to read (None: all).
fn run_draft(draft: &str, only: Option<&[&str]>, full: bool, tokens: Option<&common::Tok>) -> BTreeMap<String, Row> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/schema/suite/tests");
    let refs = remotes();
    let opts = SchemaOptions { refs: refs.clone(), ..Default::default() };
    let copts = grammask::constraint::ConstraintOptions { refs, ..Default::default() };
    let mut table: BTreeMap<String, Row> = BTreeMap::new();
    let mut files = suite_files(&root, draft, full);
    if let Some(only) = only {
        files.retain(|(kw, _)| only.contains(&kw.as_str()));
    }
    assert!(!files.is_empty(), "no suite files under {} (run scripts/setup/fetch-schemas.sh)", root.display());
    for (kw, path) in files {
        let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let row = table.entry(kw.clone()).or_default();
        for g in groups {
            let mut schema = g["schema"].clone();
            if let Some(m) = meta_uri(draft).filter(|_| schema.is_object() && schema.get("$schema").is_none()) {
                schema["$schema"] = Value::String(m.into());
            }
            let compiled = to_cfg(&schema, &opts);
            let cfg = match compiled {
                Ok(c) => c.cfg,
                Err(e) => {
                    // Unsupported constructs must be named; unsatisfiable schemas are fine.
                    let class = failure_class(&e);
                    if std::env::var_os("GRAMMASK_SUITE_VERBOSE").is_some() {
                        eprintln!("compile error {kw}: {}: {e:?}", g["description"]);
                    }
                    assert!(
                        !matches!(class.as_str(), "Regex"),
                        "{kw}: {}: an unclear error: {e:?}",
                        g["description"]
                    );
                    dump_line(serde_json::json!({"draft": draft, "file": kw, "group": g["description"], "schema": schema, "compiled": false, "error": e.message()}));
                    row.groups_failed += 1;
                    *row.failures.entry(class).or_default() += 1;
                    continue;
                }
            };
            row.groups_ok += 1;
            let oracle = Oracle::new(&cfg).unwrap_or_else(|e| panic!("{kw}: {}: {e:?}", g["description"]));
            let store = tokens.map(|t| t.compile_with(&schema, &copts));
            let rank = key_rank(&schema);
            for t in g["tests"].as_array().unwrap() {
                let valid = t["valid"].as_bool().unwrap();
                let mut accepted_all = true;
                let mut accepted_any = false;
                for spaced in [false, true] {
                    let text = serialize(&t["data"], spaced, &rank);
                    let ok = oracle.check(text.as_bytes()).is_ok();
                    if let Some((s, tok)) = store.as_ref().zip(tokens) {
                        let by_tokens = tok.replay(s, &text);
                        if by_tokens != ok {
                            eprintln!("DISAGREE {kw}: {} / {}: oracle {ok}, masks {by_tokens}: {text}", g["description"], t["description"]);
                            row.disagree += 1;
                        }
                    }
                    dump_line(serde_json::json!({"draft": draft, "file": kw, "group": g["description"], "test": t["description"],
                        "schema": schema, "compiled": true, "spaced": spaced, "text": text, "valid": valid, "grammask": ok}));
                    accepted_all &= ok;
                    accepted_any |= ok;
                    if !valid && ok {
                        eprintln!("INVALIDATION {kw}: {} / {}: accepted {text}", g["description"], t["description"]);
                    }
                    if valid && !ok && std::env::var_os("GRAMMASK_SUITE_VERBOSE").is_some() {
                        eprintln!("refused valid {kw}: {} / {}: {text}", g["description"], t["description"]);
                    }
                }
                match (valid, accepted_all, accepted_any) {
                    (true, true, _) => row.valid_ok += 1,
                    (true, false, _) => row.valid_refused += 1,
                    (false, _, false) => row.invalid_refused += 1,
                    (false, _, true) => row.invalid_accepted += 1,
                }
            }
        }
    }
    table
}

fn print(draft: &str, table: &BTreeMap<String, Row>) {
    println!("\n{draft}: keyword | groups compiled | groups failed (by keyword) | valid accepted | valid refused | invalid refused | invalid ACCEPTED");
    let mut tot = Row::default();
    for (kw, r) in table {
        let f: Vec<String> = r.failures.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "{draft} | {kw} | {} | {}{} | {} | {} | {} | {}",
            r.groups_ok,
            r.groups_failed,
            if f.is_empty() { String::new() } else { format!(" ({})", f.join(", ")) },
            r.valid_ok,
            r.valid_refused,
            r.invalid_refused,
            r.invalid_accepted
        );
        tot.groups_ok += r.groups_ok;
        tot.groups_failed += r.groups_failed;
        tot.valid_ok += r.valid_ok;
        tot.valid_refused += r.valid_refused;
        tot.invalid_refused += r.invalid_refused;
        tot.invalid_accepted += r.invalid_accepted;
    }
    println!(
        "{draft} | TOTAL | {} | {} | {} | {} | {} | {}",
        tot.groups_ok, tot.groups_failed, tot.valid_ok, tot.valid_refused, tot.invalid_refused, tot.invalid_accepted
    );
}

/// The recorded refusals: (draft, keyword) -> (groups failed, valid refused).
fn recorded_refusals() -> BTreeMap<(String, String), (usize, usize)> {
    let path = common::root().join("tests/data/schema_suite_refusals.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for l in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let f: Vec<&str> = l.split('\t').collect();
        let n = |i: usize| f.get(i).and_then(|x| x.parse::<usize>().ok()).unwrap_or_else(|| panic!("{}: bad line {l:?}", path.display()));
        assert!(f.len() == 4, "{}: bad line {l:?}", path.display());
        assert!(out.insert((f[0].to_string(), f[1].to_string()), (n(2), n(3))).is_none(), "{}: duplicate {l:?}", path.display());
    }
    out
}

/// Compares the refusals of one draft with the record; returns the problems.
fn ratchet(draft: &str, table: &BTreeMap<String, Row>, recorded: &BTreeMap<(String, String), (usize, usize)>) -> Vec<String> {
    let mut problems = Vec::new();
    for (kw, r) in table {
        let (groups, valid) = recorded.get(&(draft.to_string(), kw.clone())).copied().unwrap_or((0, 0));
        for (what, now, rec) in [("schemas refused (groups failed)", r.groups_failed, groups), ("valid instances refused", r.valid_refused, valid)] {
            if now > rec {
                problems.push(format!("{draft} {kw}: {what} rose from {rec} to {now}"));
            } else if now < rec {
                problems.push(format!("{draft} {kw}: {what} fell from {rec} to {now}: lower the record"));
            }
        }
    }
    // Recorded rows of files this run did not read: only the full tier's optional/ files may be absent.
    for ((d, kw), _) in recorded.range((draft.to_string(), String::new())..).take_while(|((d, _), _)| d == draft) {
        if !table.contains_key(kw) && !kw.starts_with("optional:") {
            problems.push(format!("{d} {kw}: recorded but not in the suite"));
        }
    }
    if !problems.is_empty() {
        let lines: Vec<String> = table
            .iter()
            .filter(|(_, r)| r.groups_failed + r.valid_refused > 0)
            .map(|(kw, r)| format!("{draft}\t{kw}\t{}\t{}", r.groups_failed, r.valid_refused))
            .collect();
        eprintln!("schema suite refusals of this run ({draft}; the rows for tests/data/schema_suite_refusals.tsv):\n{}", lines.join("\n"));
    }
    problems
}

#[test]
fn official_suite() {
    let full = std::env::var_os("GRAMMASK_FULL").is_some();
    let tok_env = std::env::var("GRAMMASK_SUITE_TOKENS").ok();
    let use_tokens = tok_env.as_deref() == Some("1") || (full && tok_env.as_deref() != Some("0"));
    let tok = use_tokens.then(common::Tok::llama3);
    let recorded = recorded_refusals();
    let mut bad = 0;
    let mut problems = Vec::new();
    // draft2020-12 and draft7 whole; the other drafts' reference files.
    for (draft, only) in [("draft2020-12", None), ("draft7", None), ("draft2019-09", Some(FILES_2019)), ("draft6", Some(REF_FILES)), ("draft4", Some(REF_FILES))] {
        let t = run_draft(draft, only, full, tok.as_ref());
        print(draft, &t);
        bad += t.values().map(|r| r.invalid_accepted + r.disagree).sum::<usize>();
        problems.extend(ratchet(draft, &t, &recorded));
    }
    assert_eq!(bad, 0, "invalid instances accepted or oracle/mask disagreements (see INVALIDATION / DISAGREE lines)");
    assert!(
        problems.is_empty(),
        "refusals differ from tests/data/schema_suite_refusals.tsv (they may only go down; lower the record when they do):\n{}",
        problems.join("\n")
    );
}
