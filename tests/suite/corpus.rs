//! Corpus acceptance tests ("issue 2"): the recognizer ([`Recognizer::check`],
//! i.e. `grammask parse`) against real files and their reference parsers.
//!
//! 1. `stdlib_acceptance`: every file of `python3 scripts/experiments/corpus.py stdlib` (the
//!    stdlib files ast.parse accepts) through grammars/python.lark. Files listed in
//!    grammars/cases/stdlib_rejected.txt may fail; any other failure fails the test,
//!    and so does an acceptance rate under 99%.
//! 2. `python_mutation_agreement`: one-token mutants of stdlib files
//!    (`scripts/experiments/mutate.py python`, verdicts from ast.parse); the recognizer must
//!    agree with ast.parse on at least 97% of them. Disagreements are categorized
//!    (leniency by ast's SyntaxError message, strictness by our error) on stderr.
//! 3. `json_acceptance`: every file of `python3 scripts/experiments/corpus.py json` must be
//!    accepted by grammars/json.lark.
//! 4. `json_mutations`: one-token / one-byte mutants (`scripts/experiments/mutate.py json`,
//!    verdicts from json.loads): every mutant json.loads rejects must be rejected,
//!    every one it accepts must be accepted, except those accepted only through the
//!    NaN/Infinity extension (either way; counted).
//!
//! Tiers: the default runs the full stdlib and JSON corpora, 400 Python mutants and
//! 2,000 JSON mutants; `GRAMMASK_FULL=1` runs 2,000 Python and 20,000 JSON mutants.
//! `GRAMMASK_SEED` (default 1) picks the mutants. Figures go to stderr:
//! `cargo test --profile ci --test suite corpus:: -- --nocapture`.

use crate::common;
use common::root;
use grammask::reference::recognizer::{Recognizer, Rejection};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn full() -> bool {
    std::env::var("GRAMMASK_FULL").is_ok_and(|v| v == "1")
}

fn seed() -> String {
    std::env::var("GRAMMASK_SEED").unwrap_or_else(|_| "1".into())
}

/// Run `python3 scripts/experiments/<script> args...` and return its stdout; its stderr is
/// passed through. Any failure (no python3, non-zero exit) fails the test.
fn python(script: &str, args: &[&str]) -> String {
    let path = root().join("scripts/experiments").join(script);
    let out = Command::new("python3")
        .arg(&path)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("cannot run `python3 {}`: {e}; the corpus tests need python3 on PATH", path.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "`python3 {} {}` failed ({}):\n{stderr}",
        path.display(),
        args.join(" "),
        out.status
    );
    eprint!("{stderr}");
    String::from_utf8(out.stdout).expect("python3 output is not UTF-8")
}

fn recognizer(grammar: &str) -> Recognizer {
    let path = root().join("grammars").join(grammar);
    let cfg = grammask::constraint::load_lark_file(&path, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Recognizer::new(cfg).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("grammask-corpus-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("cannot create {}: {e}", p.display()));
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One line of mutate.py's manifest.jsonl.
#[derive(serde::Deserialize)]
struct Mutant {
    path: PathBuf,
    source: String,
    kind: String,
    detail: String,
    line: usize,
    /// "ok", "error" or "ok_nonstandard" (json: accepted only via NaN/Infinity).
    verdict: String,
    message: String,
}

impl Mutant {
    fn describe(&self) -> String {
        let name = self.path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        format!("mutant {name} = {}:{}: {}", self.source, self.line, self.detail)
    }
}

/// Generate `n` mutants with scripts/experiments/mutate.py and read its manifest.
fn mutants(mode: &str, n: usize, dir: &TempDir, extra: &[&str]) -> Vec<Mutant> {
    let (n_s, seed, out) = (n.to_string(), seed(), dir.0.display().to_string());
    let mut args = vec![mode, "--n", &n_s, "--seed", &seed, "--out", &out];
    args.extend_from_slice(extra);
    python("mutate.py", &args);
    let man = std::fs::read_to_string(dir.0.join("manifest.jsonl")).expect("mutate.py wrote no manifest.jsonl");
    let ms: Vec<Mutant> = man
        .lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("manifest.jsonl line {}: {e}", i + 1)))
        .collect();
    assert_eq!(ms.len(), n, "mutate.py {mode}: expected {n} mutants");
    for m in &ms {
        assert!(["ok", "error", "ok_nonstandard"].contains(&m.verdict.as_str()), "bad verdict {:?}", m.verdict);
    }
    ms
}

/// Results of running the recognizer over a list of files.
struct Run {
    files: usize,
    bytes: usize,
    secs: f64,
    failures: Vec<(PathBuf, Rejection)>,
}

impl Run {
    fn over(rec: &Recognizer, files: &[PathBuf]) -> Run {
        let (mut bytes, mut secs, mut failures) = (0, 0.0, Vec::new());
        for f in files {
            let text = read(f);
            let t = Instant::now();
            let r = rec.check(&text);
            secs += t.elapsed().as_secs_f64();
            bytes += text.len();
            if let Err(e) = r {
                failures.push((f.clone(), e));
            }
        }
        Run { files: files.len(), bytes, secs, failures }
    }

    fn report(&self, what: &str) {
        let acc = self.files - self.failures.len();
        let mb = self.bytes as f64 / 1e6;
        eprintln!(
            "{what}: {} files, {acc} accepted ({:.2}%), {mb:.1} MB in {:.2} s ({:.1} MB/s)",
            self.files,
            100.0 * acc as f64 / self.files.max(1) as f64,
            self.secs,
            mb / self.secs.max(1e-9)
        );
    }
}

fn corpus_list(kind: &str) -> Vec<PathBuf> {
    python("corpus.py", &[kind]).lines().filter(|l| !l.is_empty()).map(PathBuf::from).collect()
}

/// grammars/cases/stdlib_rejected.txt: (path relative to the stdlib dir, reason).
fn expected_rejections() -> Vec<(PathBuf, String)> {
    let path = root().join("grammars/cases/stdlib_rejected.txt");
    let text = String::from_utf8(read(&path)).expect("stdlib_rejected.txt is not UTF-8");
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once('\t') {
            Some((p, why)) if !why.trim().is_empty() => (PathBuf::from(p.trim()), why.trim().to_string()),
            _ => panic!("{}: line {l:?} is not `<path>\\t<reason>`", path.display()),
        })
        .collect()
}

#[test]
fn stdlib_acceptance() {
    let files = corpus_list("stdlib");
    assert!(files.len() >= 100, "scripts/experiments/corpus.py stdlib listed only {} files", files.len());
    let expected = expected_rejections();
    let rec = recognizer("python.lark");
    let run = Run::over(&rec, &files);
    run.report("python stdlib (grammars/python.lark)");
    let listed = |p: &Path| expected.iter().find(|(e, _)| p.ends_with(e));
    let mut unexpected = Vec::new();
    for (p, e) in &run.failures {
        match listed(p) {
            Some((_, why)) => eprintln!("  expected rejection {}:{e} ({why})", p.display()),
            None => unexpected.push(format!("  {}:{e}", p.display())),
        }
    }
    for (e, why) in &expected {
        if files.iter().any(|p| p.ends_with(e)) && !run.failures.iter().any(|(p, _)| p.ends_with(e)) {
            eprintln!("  stale entry in stdlib_rejected.txt (now accepted): {} ({why})", e.display());
        }
    }
    assert!(unexpected.is_empty(), "{} stdlib files rejected that stdlib_rejected.txt does not list:\n{}", unexpected.len(), unexpected.join("\n"));
    let rate = (run.files - run.failures.len()) as f64 / run.files as f64;
    assert!(rate >= 0.99, "stdlib acceptance {:.2}% < 99%", 100.0 * rate);
}

/// Category of an ast.parse message: the message without its specifics
/// ("cannot assign to literal here. Maybe you meant '==' instead of '='?" →
/// "cannot assign to literal").
fn ast_category(msg: &str) -> String {
    let cut = [". ", " (", " on line", " here", "?"].iter().filter_map(|s| msg.find(s)).min().unwrap_or(msg.len());
    msg[..cut].to_string()
}

/// Category of our rejection: the message without the offending text.
fn our_category(e: &Rejection) -> String {
    let m = &e.message;
    if let Some(rest) = m.strip_prefix("unexpected ") {
        if m != "unexpected end of input" {
            return format!("unexpected {}", rest.split(' ').next().unwrap_or(""));
        }
    }
    if m.starts_with("no terminal matches") {
        return "no terminal matches".into();
    }
    m.clone()
}

#[test]
fn python_mutation_agreement() {
    let n = if full() { 2000 } else { 400 };
    let dir = TempDir::new("py");
    let ms = mutants("python", n, &dir, &[]);
    let rec = recognizer("python.lark");
    // (kind, category) -> (count, example)
    let mut cats: BTreeMap<(&str, String), (usize, String)> = BTreeMap::new();
    let (mut agree, mut ref_ok) = (0, 0);
    for m in &ms {
        let ours = rec.check(&read(&m.path));
        let theirs = m.verdict != "error";
        ref_ok += theirs as usize;
        let key = match (&ours, theirs) {
            (Ok(()), true) | (Err(_), false) => {
                agree += 1;
                continue;
            }
            (Ok(()), false) => ("leniency", ast_category(&m.message)),
            (Err(e), true) => ("strictness", our_category(e)),
        };
        let example = match &ours {
            Err(e) => format!("{}; ours: {e}", m.describe()),
            Ok(()) => format!("{}; ast: {}", m.describe(), m.message),
        };
        cats.entry(key).or_insert((0, example)).0 += 1;
    }
    let rate = agree as f64 / n as f64;
    let count = |k: &str| cats.iter().filter(|(key, _)| key.0 == k).map(|(_, v)| v.0).sum::<usize>();
    eprintln!(
        "python mutants (seed {}): {n} ({ref_ok} accepted by ast.parse, {} rejected); agreement {agree}/{n} = {:.2}%; leniency {}, strictness {}",
        seed(),
        n - ref_ok,
        100.0 * rate,
        count("leniency"),
        count("strictness")
    );
    let mut sorted: Vec<_> = cats.iter().collect();
    sorted.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    for ((kind, cat), (c, ex)) in sorted {
        eprintln!("  {kind:10} {c:4}  {cat}\n               e.g. {ex}");
    }
    assert!(ref_ok > 0 && ref_ok < n, "degenerate mutants: {ref_ok}/{n} accepted by ast.parse");
    assert!(rate >= 0.97, "agreement with ast.parse {:.2}% < 97%", 100.0 * rate);
}

#[test]
fn json_acceptance() {
    let files = corpus_list("json");
    assert!(files.len() >= 10, "scripts/experiments/corpus.py json listed only {} files", files.len());
    let rec = recognizer("json.lark");
    let run = Run::over(&rec, &files);
    run.report("json corpus (grammars/json.lark)");
    let shown: Vec<String> = run.failures.iter().map(|(p, e)| format!("  {}:{e}", p.display())).collect();
    assert!(shown.is_empty(), "{} JSON files rejected:\n{}", shown.len(), shown.join("\n"));
}

#[test]
fn json_mutations() {
    let n = if full() { 20000 } else { 2000 };
    let dir = TempDir::new("json");
    let ms = mutants("json", n, &dir, &["--max-bytes", "262144"]);
    let rec = recognizer("json.lark");
    let (mut rejected, mut accepted, mut nonstd, mut nonstd_ours) = (0, 0, 0, 0);
    let mut by_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new(); // kind -> (mutants, json.loads rejects)
    let mut wrong = Vec::new();
    for m in &ms {
        let ours = rec.check(&read(&m.path));
        let e = by_kind.entry(m.kind.as_str()).or_default();
        e.0 += 1;
        match (m.verdict.as_str(), &ours) {
            ("error", r) => {
                rejected += 1;
                e.1 += 1;
                if r.is_ok() {
                    wrong.push(format!("  accepted, json.loads rejects ({}): {}", m.message, m.describe()));
                }
            }
            ("ok", Err(err)) => wrong.push(format!("  rejected ({err}), json.loads accepts: {}", m.describe())),
            ("ok", Ok(())) => accepted += 1,
            (_, r) => {
                nonstd += 1;
                nonstd_ours += r.is_ok() as usize;
            }
        }
    }
    eprintln!(
        "json mutants (seed {}): {n}; json.loads rejects {rejected}, accepts {accepted} (+{nonstd} only via NaN/Infinity, {nonstd_ours} of them accepted by us); disagreements {}",
        seed(),
        wrong.len()
    );
    eprintln!(
        "  by mutation (mutants / json.loads rejects): {}",
        by_kind.iter().map(|(k, (a, b))| format!("{k} {a}/{b}")).collect::<Vec<_>>().join(", ")
    );
    assert!(rejected > 0 && accepted > 0, "degenerate mutants");
    let shown: Vec<&String> = wrong.iter().take(40).collect();
    assert!(wrong.is_empty(), "{} JSON mutants disagree with json.loads:\n{}", wrong.len(), shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
}
