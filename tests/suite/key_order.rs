//! Key order under propertyOrder 'schema' (the default), data-driven:
//! tests/data/key_order.json (judged by llguidance 1.9.1 and python
//! jsonschema: scripts/experiments/key_order_judges.py). For every instance,
//! grammask's verdict must be the file's `schema` verdict, by the schema
//! oracle (whole text) and by the masks (Llama-3 tokens, EOS at the end).
//! An instance accepted under 'schema' order must be valid.

use crate::schema_common::{root, Tok};
use grammask::frontend::schema::{to_cfg, SchemaOptions};
use grammask::reference::oracle::Oracle;
use serde_json::Value;

#[test]
fn schema_order_follows_llguidance_rule() {
    let path = root().join("tests/data/key_order.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let tok = Tok::llama3();
    let cases = data["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    let mut bad = Vec::new();
    let mut n = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let schema = &case["schema"];
        let cfg = to_cfg(schema, &SchemaOptions::default()).unwrap_or_else(|e| panic!("{name}: {e:?}")).cfg;
        let oracle = Oracle::new(&cfg).unwrap();
        let store = tok.compile(schema);
        for inst in case["instances"].as_array().unwrap() {
            n += 1;
            let text = inst["text"].as_str().unwrap();
            let want = inst["schema"].as_bool().unwrap();
            assert!(!want || inst["valid"].as_bool().unwrap(), "{name}: {text}: accepted under 'schema' order but invalid");
            let by_oracle = oracle.check(text.as_bytes()).is_ok();
            let by_masks = tok.replay(&store, text);
            if by_oracle != want || by_masks != want {
                bad.push(format!("{name}: {text}: want {want}, oracle {by_oracle}, masks {by_masks}"));
            }
        }
    }
    assert!(bad.is_empty(), "{} of {n} instances:\n{}", bad.len(), bad.join("\n"));
    eprintln!("{} schemas, {n} instances", cases.len());
}
