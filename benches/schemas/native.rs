//! grammask natively on the schema corpus of benches/schemas/, with the same
//! procedure and output as benches/schemas/js.mjs (so table.py and chart.py
//! read it): per schema, compile (JSON Schema, default options: whitespace
//! `default`, not lenient) + a matcher + the first mask, timed together as
//! "first mask"; then every test instance teacher-forced on a fresh matcher,
//! each mask timed alone, until the first refused token; after the last token
//! one more mask and the EOS check. One process, schemas in name order; a
//! schema past the cap (checked between masks) is cut short (`timeout`).
//!
//! `cargo run --release --example schema_corpus -- [CORPUS=out/schemas-corpus] [OUT=out/schemas-bench/grammask-native.json] [CAP_S=60]`
use grammask::constraint::{compile, Constraint, ConstraintOptions};
use grammask::matcher::Matcher;
use grammask::vocab::PreparedVocab;
use serde_json::{json, Value};
use std::rc::Rc;
use std::time::Instant;

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Peak resident set (VmHWM) of this process in bytes (Linux), else 0.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map_or(0, |kib| kib * 1024)
}

fn main() {
    let mut a = std::env::args().skip(1);
    let corpus = a.next().unwrap_or_else(|| "out/schemas-corpus".into());
    let out = a.next().unwrap_or_else(|| "out/schemas-bench/grammask-native.json".into());
    let cap_s: f64 = a.next().map_or(60.0, |s| s.parse().expect("CAP_S: seconds"));
    let read_json = |p: &str| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}"))).expect(p) };
    let tk = read_json(&format!("{corpus}/ids/_tokenizer.json"));
    let eos: Vec<u32> = tk["eos"].as_array().expect("eos").iter().map(|x| x.as_u64().unwrap() as u32).collect();
    let t = Instant::now();
    let vocab = grammask::vocab::load::load_tokenizer_file(std::path::Path::new(tk["tokenizer"].as_str().unwrap()), Some(&eos)).expect("tokenizer");
    let pv = Rc::new(PreparedVocab::new(vocab));
    let opts = ConstraintOptions::default();
    {
        // Warm-up, not timed: a tiny schema through compile, matcher and mask.
        let (s, _) = compile(&pv, &Constraint::JsonSchema(json!({"type": "object", "properties": {"a": {"type": "string"}}})), &opts).unwrap();
        let m = Matcher::new(Rc::new(s));
        let mut w = vec![0u32; m.mask_words()];
        m.fill_mask(&mut w).unwrap();
    }
    let prep_ms = r2(t.elapsed().as_secs_f64() * 1e3);
    let mut names: Vec<String> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect();
    names.sort();
    let started = Instant::now();
    let started_at = std::process::Command::new("date").args(["-u", "+%Y-%m-%dT%H:%M:%S.000Z"]).output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let mut results = Vec::new();
    for name in &names {
        let doc = read_json(&format!("{corpus}/{name}.json"));
        let tests = read_json(&format!("{corpus}/ids/{name}.json"))["tests"].as_array().cloned().unwrap_or_default();
        let start = Instant::now();
        let us = |t: Instant| r2(t.elapsed().as_secs_f64() * 1e6);
        let mut r = json!({"name": name, "status": "ok", "error": null, "compileUs": null, "firstMaskUs": null});
        let mut masks: Vec<f64> = Vec::new();
        let mut tr: Vec<Value> = Vec::new();
        match compile(&pv, &Constraint::JsonSchema(doc["schema"].clone()), &opts) {
            Err(e) => {
                r["status"] = json!("error");
                r["error"] = json!({"name": null, "kind": format!("{:?}", e.kind()), "message": e.to_string().chars().take(500).collect::<String>()});
            }
            Ok((store, _)) => {
                r["compileUs"] = json!(us(start));
                let store = Rc::new(store);
                let mut buf = vec![0u32; store.mask_words()];
                Matcher::new(store.clone()).fill_mask(&mut buf).unwrap();
                r["firstMaskUs"] = json!(us(start));
                let over = || start.elapsed().as_secs_f64() > cap_s;
                for t in &tests {
                    let valid = t["valid"].as_bool().unwrap_or(false);
                    if r["status"] == "timeout" || over() {
                        r["status"] = json!("timeout");
                        tr.push(json!({"valid": valid, "notRun": true}));
                        continue;
                    }
                    let ids: Vec<u32> = t["ids"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
                    let mut m = Matcher::new(store.clone());
                    let mut refused_at: Option<usize> = None;
                    let mut cut = false;
                    for k in 0..=ids.len() {
                        let a = Instant::now();
                        m.fill_mask(&mut buf).unwrap();
                        masks.push(us(a));
                        if k == ids.len() {
                            if !m.is_accepting() {
                                refused_at = Some(k);
                            }
                            break;
                        }
                        let id = ids[k];
                        if (buf[(id >> 5) as usize] >> (id & 31)) & 1 == 0 || m.commit_token(id).is_err() {
                            refused_at = Some(k);
                            break;
                        }
                        if over() {
                            r["status"] = json!("timeout");
                            cut = true;
                            break;
                        }
                    }
                    if cut && refused_at.is_none() {
                        tr.push(json!({"valid": valid, "notRun": true, "cutAt": masks.len()}));
                    } else {
                        tr.push(json!({"valid": valid, "accepted": refused_at.is_none(), "refusedAt": refused_at, "nTokens": ids.len()}));
                    }
                }
            }
        }
        r["masksUs"] = json!(masks);
        r["tests"] = json!(tr);
        r["wallMs"] = json!(r2(start.elapsed().as_secs_f64() * 1e3));
        r["rss"] = json!(peak_rss());
        eprintln!("[native] {}/{} {name}: {}", results.len() + 1, names.len(), r["status"]);
        results.push(r);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let v = json!({
        "engine": "grammask-native", "label": format!("grammask {} (native, Rust release build)", env!("CARGO_PKG_VERSION")),
        "corpus": std::fs::read_to_string(format!("{corpus}/MANIFEST.txt")).unwrap_or_default().lines().take(3).collect::<Vec<_>>().join("\n"),
        "capS": cap_s, "host": format!("{} CPUs, load {}", std::thread::available_parallelism().map_or(0, |n| n.get()), load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")),
        "started": started_at, "vocab": {"prepMs": prep_ms, "vocabSize": pv.vocab().len(), "eos": eos},
        "workers": 1, "peakRss": peak_rss(), "maxRssKiB": peak_rss() / 1024, "wasmMemory": 0, "schemas": results,
        "wallS": r2(started.elapsed().as_secs_f64()),
    });
    if let Some(d) = std::path::Path::new(&out).parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(&out, v.to_string() + "\n").unwrap();
    eprintln!("[native] {} schemas in {:.1} s -> {out}", names.len(), started.elapsed().as_secs_f64());
}
