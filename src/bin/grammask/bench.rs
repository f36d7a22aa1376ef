//! `grammask bench`: time every mask while replaying token streams.

use crate::common::{expand, read, tokenizer_for, with_list};
use grammask::matcher::Matcher;
use grammask::store::MaskStore;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// Time every mask computation while replaying token streams (files
/// tokenized with --tokenizer, or id streams given with --token-ids).
#[derive(clap::Args)]
pub struct Args {
    /// The compiled mask store (from `compile -o`) whose masks are timed.
    #[arg(long, required_unless_present = "json_schema_dir")]
    store: Option<PathBuf>,
    /// Benchmark per-request compiles over the JSON Schemas in DIR (see bench_schema.rs).
    #[arg(long)]
    json_schema_dir: Option<PathBuf>,
    #[command(flatten)]
    schema: crate::constraint_args::SchemaArgs,
    /// --json-schema-dir: tokens per random generation.
    #[arg(long, default_value_t = 200)]
    max_tokens: usize,
    /// --json-schema-dir: random seed of the generations.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// --json-schema-dir: cut a schema's generation short after this many ms (reported as `capped`).
    #[arg(long, default_value_t = 10_000)]
    schema_time_cap_ms: u64,
    /// --json-schema-dir: keep the generated instances here.
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Tokenizer for FILES (and --dump-ids); not needed with --token-ids alone.
    #[arg(long)]
    tokenizer: Option<PathBuf>,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
    /// Measured replays of all streams; reported figures are medians over runs.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Unmeasured replays before the measured runs.
    #[arg(long, default_value_t = 0)]
    warmup: usize,
    /// Replay these id streams (JSON files written by --dump-ids: `{"ids": [...]}`
    /// or a bare array; a directory means its files in name order).
    #[arg(long)]
    token_ids: Vec<PathBuf>,
    /// Write each stream's token ids to DIR/NNNN-<name>.json (same order as replayed).
    #[arg(long)]
    dump_ids: Option<PathBuf>,
    /// Read more file paths from this file (one per line).
    #[arg(long)]
    files_from: Option<PathBuf>,
    /// Files (or directories) to tokenize and replay.
    files: Vec<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    if let Some(dir) = &a.json_schema_dir {
        let Some(t) = &a.tokenizer else { return Err(Error::new(ErrorKind::Io, "--json-schema-dir needs --tokenizer")) };
        let o = crate::bench_schema::Opts {
            dir, tokenizer: t, schema: &a.schema, json: a.json, max_tokens: a.max_tokens, seed: a.seed, out_dir: a.out_dir.as_deref(),
            cap_ms: a.schema_time_cap_ms,
        };
        return crate::bench_schema::run(&o);
    }
    let Some(store) = &a.store else { return Err(Error::new(ErrorKind::Io, "--store is required")) };
    let files = with_list(a.files, a.files_from)?;
    let opts = BenchOptions { runs: a.runs, warmup: a.warmup, json: a.json, dump_ids: a.dump_ids };
    cmd_bench(store, a.tokenizer.as_deref(), &files, &a.token_ids, &opts)
}

struct BenchOptions {
    runs: usize,
    warmup: usize,
    json: bool,
    dump_ids: Option<PathBuf>,
}

/// One token stream to replay: its name (source file) and ids.
struct Stream {
    name: String,
    ids: Vec<u32>,
}

/// Nearest-rank percentile of sorted values (0 for none).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Read an id stream: a JSON array of ids or an object with an `ids` array.
fn read_ids(path: &Path) -> Result<Vec<u32>> {
    let bad = |m: &str| Error::new(ErrorKind::Io, format!("{}: {m}", path.display()));
    let v: serde_json::Value = serde_json::from_slice(&read(path)?).map_err(|e| bad(&e.to_string()))?;
    let arr = match &v {
        serde_json::Value::Array(a) => a,
        serde_json::Value::Object(o) => o.get("ids").and_then(|x| x.as_array()).ok_or_else(|| bad("no \"ids\" array"))?,
        _ => return Err(bad("expected an array of token ids or {\"ids\": [...]}")),
    };
    arr.iter()
        .map(|x| x.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| bad(&format!("not a token id: {x}"))))
        .collect()
}

/// Figures of one measured replay of all streams (µs).
struct RunFigures {
    load_us: f64,
    ttfm_us: f64,
    first_mask_us: f64,
    mask: Vec<f64>,
    commit: Vec<f64>,
    calls: u64,
    /// First-symbol feeds and rejected ones (see `Matcher::first_symbol_feeds`).
    first: u64,
    first_rej: u64,
}

/// Replay every stream once from the blob bytes, timing each mask and commit.
fn bench_run(bytes: &[u8], streams: &[Stream], rejected: &mut Vec<String>) -> Result<RunFigures> {
    // Time to first mask: blob bytes -> loaded store -> matcher -> first mask.
    let t = Instant::now();
    let store = Rc::new(MaskStore::from_bytes(bytes)?);
    let load_us = t.elapsed().as_secs_f64() * 1e6;
    let mut mask = vec![0u32; store.mask_words()];
    let t1 = Instant::now();
    Matcher::new(store.clone()).fill_mask(&mut mask)?;
    let first_mask_us = t1.elapsed().as_secs_f64() * 1e6;
    let ttfm_us = t.elapsed().as_secs_f64() * 1e6;
    let total: usize = streams.iter().map(|s| s.ids.len() + 1).sum();
    let (mut mask_us, mut commit_us) = (Vec::with_capacity(total), Vec::with_capacity(total));
    let mut calls = 0u64;
    let (mut first, mut first_rej) = (0u64, 0u64);
    for s in streams {
        let mut m = Matcher::new(store.clone());
        for (i, &id) in s.ids.iter().enumerate() {
            let t = Instant::now();
            m.fill_mask(&mut mask)?;
            mask_us.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let r = m.commit_token(id);
            commit_us.push(t.elapsed().as_secs_f64() * 1e6);
            if let Err(e) = r {
                rejected.push(format!("{}: token #{i} (id {id}): {}", s.name, e.message()));
                break;
            }
        }
        let t = Instant::now();
        m.fill_mask(&mut mask)?;
        mask_us.push(t.elapsed().as_secs_f64() * 1e6);
        calls += m.parser_calls();
        let (a, b) = m.first_symbol_feeds();
        first += a;
        first_rej += b;
    }
    Ok(RunFigures { load_us, ttfm_us, first_mask_us, mask: mask_us, commit: commit_us, calls, first, first_rej })
}

fn cmd_bench(store_path: &Path, tokenizer: Option<&Path>, files: &[PathBuf], id_files: &[PathBuf], o: &BenchOptions) -> Result<bool> {
    let bytes = read(store_path)?;
    let store = MaskStore::from_bytes(&bytes)?;
    let mut streams = Vec::new();
    let files = expand(files);
    if !files.is_empty() {
        let Some(tp) = tokenizer else {
            return Err(Error::new(ErrorKind::Tokenizer, "--tokenizer is needed to replay text files"));
        };
        let tok = tokenizer_for(&store, tp)?;
        for f in files {
            let Ok(text) = String::from_utf8(read(&f)?) else { continue };
            let enc = tok.encode(text.as_str(), false).map_err(|e| Error::new(ErrorKind::Tokenizer, e.to_string()))?;
            streams.push(Stream { name: f.display().to_string(), ids: enc.get_ids().to_vec() });
        }
    }
    for f in expand(id_files) {
        streams.push(Stream { name: f.display().to_string(), ids: read_ids(&f)? });
    }
    if let Some(dir) = &o.dump_ids {
        std::fs::create_dir_all(dir).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", dir.display())))?;
        for (i, s) in streams.iter().enumerate() {
            let base = Path::new(&s.name).file_name().map_or("stream".into(), |n| n.to_string_lossy().into_owned());
            let path = dir.join(format!("{i:04}-{base}.json"));
            let v = serde_json::json!({"file": s.name, "ids": s.ids});
            std::fs::write(&path, v.to_string()).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
        }
    }
    let n_vocab = store.vocab().len() as u64;
    if let Some((s, id)) = streams.iter().find_map(|s| s.ids.iter().find(|&&id| id as u64 >= n_vocab).map(|id| (s, id))) {
        return Err(Error::new(ErrorKind::InvalidToken, format!("{}: token id {id} is outside the vocabulary ({n_vocab})", s.name)));
    }
    drop(store);
    let mut rejected = Vec::new();
    for _ in 0..o.warmup {
        bench_run(&bytes, &streams, &mut rejected)?;
        rejected.clear();
    }
    let mut runs = Vec::new();
    for _ in 0..o.runs.max(1) {
        rejected.clear();
        runs.push(bench_run(&bytes, &streams, &mut rejected)?);
    }
    // Per-run statistics, then the median of each over runs.
    let stat = |f: &dyn Fn(&RunFigures) -> f64| median(runs.iter().map(f).collect());
    let pct = |v: &[f64], p: f64| {
        let mut s = v.to_vec();
        s.sort_by(|a, b| a.total_cmp(b));
        percentile(&s, p)
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let masks = runs[0].mask.len();
    let tokens: usize = streams.iter().map(|s| s.ids.len()).sum();
    let mask_stats: Vec<[f64; 6]> = runs
        .iter()
        .map(|r| [mean(&r.mask), pct(&r.mask, 0.5), pct(&r.mask, 0.9), pct(&r.mask, 0.99), pct(&r.mask, 1.0), r.mask.iter().sum::<f64>()])
        .collect();
    let m = |k: usize| median(mask_stats.iter().map(|s| s[k]).collect());
    let (c_mean, c50, c99) = (stat(&|r| mean(&r.commit)), stat(&|r| pct(&r.commit, 0.5)), stat(&|r| pct(&r.commit, 0.99)));
    let calls_per_mask = runs[0].calls as f64 / masks.max(1) as f64;
    let (first_per_mask, first_rej_per_mask) =
        (runs[0].first as f64 / masks.max(1) as f64, runs[0].first_rej as f64 / masks.max(1) as f64);
    let v = serde_json::json!({
        "store": store_path, "blob_bytes": bytes.len(), "streams": streams.len(), "tokens": tokens, "masks": masks,
        "runs": runs.len(), "warmup": o.warmup,
        "load_us": stat(&|r| r.load_us), "first_mask_us": stat(&|r| r.first_mask_us), "ttfm_us": stat(&|r| r.ttfm_us),
        "mask_us": {"mean": m(0), "p50": m(1), "p90": m(2), "p99": m(3), "max": m(4), "total": m(5)},
        "commit_us": {"mean": c_mean, "p50": c50, "p99": c99},
        "parser_calls_per_token": calls_per_mask,
        "first_symbol_feeds_per_token": first_per_mask,
        "rejected_first_symbol_feeds_per_token": first_rej_per_mask,
        "per_run": runs.iter().zip(&mask_stats).map(|(r, s)| serde_json::json!({
            "load_us": r.load_us, "ttfm_us": r.ttfm_us, "mask_p50": s[1], "mask_p99": s[3], "mask_max": s[4]})).collect::<Vec<_>>(),
        "rejected": rejected,
    });
    if o.json {
        println!("{v}");
    } else {
        println!(
            "{} streams, {tokens} tokens, {masks} masks, median of {} runs: mask mean {:.1} us, p50 {:.1}, p90 {:.1}, p99 {:.1}, max {:.1}; \
             commit mean {c_mean:.1} us, p50 {c50:.1}, p99 {c99:.1}; parser calls/token {calls_per_mask:.1} \
             (first symbols {first_per_mask:.1}, rejected {first_rej_per_mask:.1}); \
             load {:.0} us; first mask {:.0} us; blob->first mask {:.0} us; blob {} bytes",
            streams.len(), runs.len(), m(0), m(1), m(2), m(3), m(4),
            stat(&|r| r.load_us), stat(&|r| r.first_mask_us), stat(&|r| r.ttfm_us), bytes.len()
        );
        for r in &rejected {
            println!("rejected: {r}");
        }
    }
    Ok(rejected.is_empty())
}
