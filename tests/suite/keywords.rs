//! `dependentRequired`, `dependentSchemas` / `dependencies` (arrays, schemas
//! that only say which keys occur) and `propertyNames`,
//! exhaustively: for each schema, every object over a small key universe
//! (each key absent or holding one of a few values; keys serialized in
//! schema order by `key_rank`, undeclared keys after) is judged by python
//! `jsonschema` (.venv-schema) and by grammask, whole text (schema oracle)
//! and token by token (Llama-3 masks, EOS at the end). The verdicts must be
//! equal for every object: no invalid instance accepted, no valid one
//! refused.

use crate::schema_common::{root, Tok};
use grammask::frontend::schema::{key_rank, serialize, to_cfg, SchemaOptions};
use grammask::reference::oracle::Oracle;
use serde_json::{json, Value};

/// (schema, key universe, values a key may hold).
fn cases() -> Vec<(Value, Vec<&'static str>, Vec<Value>)> {
    let d7 = "http://json-schema.org/draft-07/schema#";
    vec![
        // Triggers before and after their keys, a cycle (b ⇒ a, d; d ⇒ b).
        (
            json!({"properties": {"a": {}, "b": {}, "c": {}, "d": {}}, "dependentRequired": {"a": ["c"], "d": ["b"], "b": ["a", "d"]}}),
            vec!["a", "b", "c", "d", "x"],
            vec![json!(1)],
        ),
        // Undeclared keys named by dependencies, additional values typed.
        (
            json!({"$schema": d7, "properties": {"a": {"type": "integer"}}, "dependencies": {"q": ["a", "r"], "a": ["s"]}, "additionalProperties": {"type": "integer"}}),
            vec!["a", "q", "r", "s", "x"],
            vec![json!(1), json!("v")],
        ),
        // With required and maxProperties.
        (
            json!({"properties": {"a": {}, "b": {}, "c": {}}, "required": ["b"], "dependentRequired": {"c": ["a"]}, "maxProperties": 2}),
            vec!["a", "b", "c", "x"],
            vec![json!(1)],
        ),
        // A key that may not occur makes its trigger impossible.
        (
            json!({"properties": {"a": {}, "b": {}}, "additionalProperties": false, "dependentRequired": {"a": ["z"], "b": ["a"]}}),
            vec!["a", "b", "z"],
            vec![json!(1)],
        ),
        // A `false` dependent schema; a `true` one.
        (
            json!({"$schema": d7, "properties": {"c": {}}, "dependencies": {"a": false, "b": ["c"], "c": true}}),
            vec!["a", "b", "c", "x"],
            vec![json!(1)],
        ),
        // Dependent schemas that only say which keys occur (required, false
        // properties, a type): exclusion both ways, a trigger refused by type.
        (
            json!({"properties": {"a": {}, "b": {}, "c": {}}, "dependentSchemas": {
                "b": {"required": ["a"], "properties": {"c": false}},
                "c": {"type": "object", "properties": {"a": false, "x": {"description": "d"}}},
                "d": {"type": "string"},
                "x": {"properties": {}, "required": ["e"]}
            }}),
            vec!["a", "b", "c", "d", "x", "e"],
            vec![json!(1)],
        ),
        (
            json!({"$schema": d7, "properties": {"q": {}, "p": {}}, "dependencies": {"p": {"properties": {"q": false}}, "q": {"properties": {"p": false}}, "r": ["p"]}}),
            vec!["p", "q", "r"],
            vec![json!(1)],
        ),
        // Dependencies in a union of objects and in allOf.
        (
            json!({"anyOf": [
                {"properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}},
                {"properties": {"a": {"type": "string"}}, "required": ["c"]}
            ], "allOf": [{"dependentRequired": {"c": ["b"]}}]}),
            vec!["a", "b", "c"],
            vec![json!(1), json!("v")],
        ),
        // Nested: in items and property values.
        (
            json!({"type": "array", "items": {"properties": {"k": {}, "m": {}}, "dependentRequired": {"m": ["k"]}}, "maxItems": 1}),
            vec![],
            vec![],
        ),
        // propertyNames: pattern and length with declared, pattern and extra keys.
        (
            json!({"propertyNames": {"pattern": "^[a-c]", "maxLength": 2}, "properties": {"a": {}, "bad": {}, "cz": {}}, "patternProperties": {"^b": {"type": "integer"}}}),
            vec!["a", "bad", "cz", "b1", "bb", "c", "d", "zz", "a\""],
            vec![json!(1), json!("v")],
        ),
        // propertyNames enum, required key.
        (json!({"propertyNames": {"enum": ["a", "b", "xy"]}, "required": ["a"]}), vec!["a", "b", "xy", "x", "ab"], vec![json!(1)]),
        // A property whose value object can never be valid (required key refused by name).
        (
            json!({"properties": {"p": {"type": "object", "propertyNames": {"const": "k"}, "required": ["j"]}, "q": {}}}),
            vec!["p", "q"],
            vec![json!(1), json!({"j": 1}), json!({"k": 1})],
        ),
        // Differing propertyNames in a union.
        (
            json!({"anyOf": [
                {"type": "object", "propertyNames": {"pattern": "^a"}},
                {"type": "object", "propertyNames": {"maxLength": 1}, "maxProperties": 2},
                {"type": "object", "required": ["zz"]}
            ]}),
            vec!["a", "ab", "b", "zz", "c"],
            vec![json!(1)],
        ),
        // Names that are not strings: only the empty object.
        (json!({"type": "object", "propertyNames": {"type": "integer"}}), vec!["a", "1"], vec![json!(1)]),
        // A format, an anyOf of names, with dependencies.
        (
            json!({"propertyNames": {"anyOf": [{"format": "ipv4"}, {"const": "host"}]}, "properties": {"host": {}}, "dependentRequired": {"10.0.0.1": ["host"]}}),
            vec!["host", "10.0.0.1", "1.2.3.4", "1.2.3", "x"],
            vec![json!(1)],
        ),
    ]
}

/// Every object over `keys` with values from `vals` (each key absent or one value).
fn objects(keys: &[&str], vals: &[Value]) -> Vec<Value> {
    let mut out = vec![serde_json::Map::new()];
    for k in keys {
        let mut next = Vec::new();
        for o in &out {
            next.push(o.clone());
            for v in vals {
                let mut o2 = o.clone();
                o2.insert(k.to_string(), v.clone());
                next.push(o2);
            }
        }
        out = next;
    }
    out.into_iter().map(Value::Object).collect()
}

/// python `jsonschema` verdicts, one per (schema index, instance).
fn judge(schemas: &[Value], items: &[(usize, Value)]) -> Vec<bool> {
    let python = root().join(".venv-schema/bin/python");
    assert!(python.is_file(), "{} is missing: run scripts/setup/setup.sh", python.display());
    let script = r#"
import json, sys, jsonschema
d = json.load(sys.stdin)
vs = [jsonschema.validators.validator_for(s)(s, format_checker=jsonschema.FormatChecker()) for s in d["schemas"]]
print(json.dumps([vs[i].is_valid(x) for i, x in d["items"]]))
"#;
    let input = json!({"schemas": schemas, "items": items.iter().map(|(i, x)| json!([i, x])).collect::<Vec<_>>()});
    let mut child = std::process::Command::new(&python)
        .arg("-c")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python jsonschema failed");
    serde_json::from_slice(&out.stdout).expect("verdicts")
}

#[test]
fn dependencies_and_property_names_match_jsonschema() {
    let tok = Tok::llama3();
    let cases = cases();
    let schemas: Vec<Value> = cases.iter().map(|c| c.0.clone()).collect();
    let mut items = Vec::new();
    for (i, (schema, keys, vals)) in cases.iter().enumerate() {
        let mut insts = objects(keys, vals);
        if keys.is_empty() {
            // Arrays of one object over the item's keys.
            insts = objects(&["k", "m", "x"], &[json!(1)]).into_iter().map(|o| json!([o])).collect();
            insts.push(json!([]));
        }
        for x in insts {
            items.push((i, x));
        }
        assert!(schema.is_object());
    }
    let (valid, invalid, bad) = agree(&tok, &schemas, &items, 1);
    assert!(valid > 100 && invalid > 100, "{valid} valid, {invalid} invalid");
    assert!(bad.is_empty(), "{} disagreements:\n{}", bad.len(), bad.join("\n"));
}

/// Errors: a required key that `propertyNames` refuses makes the schema
/// unsatisfiable (as every unsatisfiable schema: a `Schema` error); the
/// dependency bound names its pointer.
#[test]
fn keyword_errors() {
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err().message().to_string();
    let m = e(json!({"type": "object", "required": ["a"], "propertyNames": {"pattern": "^b"}}));
    assert!(m.contains("unsatisfiable"), "{m}");
    let keys: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    let mut deps = serde_json::Map::new();
    for w in keys.windows(2) {
        deps.insert(w[0].clone(), json!([w[1]]));
    }
    let m = e(json!({"properties": {"p": {"dependentRequired": deps}}}));
    assert!(m.contains("#/properties/p/dependentRequired/") && m.contains("more than 32 keys"), "{m}");
    let m = e(json!({"dependentRequired": {"a": "b"}}));
    assert!(m.contains("malformed `dependentRequired` at #/dependentRequired/a"), "{m}");
    let m = e(json!({"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"a": [1]}}));
    assert!(m.contains("malformed `dependencies` at #/dependencies/a"), "{m}");
}

/// `not`, `if`/`then`/`else`, `oneOf` (overlapping branches), `unevaluated*`
/// and `$dynamicRef`/`$recursiveRef` (extensible trees and lists), judged as
/// above: the cases of tests/data/schema_logic.json, each over the objects
/// of its key universe and its other values.
#[test]
fn logic_matches_jsonschema() {
    let text = std::fs::read_to_string(root().join("tests/data/schema_logic.json")).expect("tests/data/schema_logic.json");
    let cases: Vec<Value> = serde_json::from_str(&text).expect("json");
    let mut schemas = Vec::new();
    let mut items = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        schemas.push(c["schema"].clone());
        let keys: Vec<&str> = c["keys"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
        let vals: Vec<Value> = c["values"].as_array().unwrap().clone();
        if !keys.is_empty() {
            items.extend(objects(&keys, &vals).into_iter().map(|x| (i, x)));
        }
        items.extend(c["scalars"].as_array().unwrap().iter().map(|x| (i, x.clone())));
    }
    let (valid, invalid, bad) = agree(&Tok::llama3(), &schemas, &items, 1);
    assert!(valid > 100 && invalid > 100, "{valid} valid, {invalid} invalid");
    assert!(bad.is_empty(), "{} disagreements:\n{}", bad.len(), bad.join("\n"));
}

/// For each schema, its instances: jsonschema's verdict against the
/// oracle's (both layouts) and, for every `mask_every`-th, the masks'.
fn agree(tok: &Tok, schemas: &[Value], items: &[(usize, Value)], mask_every: usize) -> (usize, usize, Vec<String>) {
    let want = judge(schemas, items);
    assert_eq!(want.len(), items.len());
    let mut bad = Vec::new();
    let (mut valid, mut invalid) = (0, 0);
    for (ci, schema) in schemas.iter().enumerate() {
        let cfg = match to_cfg(schema, &SchemaOptions::default()) {
            Ok(g) => g.cfg,
            Err(e) => {
                // Unsatisfiable: then jsonschema accepts none.
                if !e.message().contains("unsatisfiable") {
                    bad.push(format!("{schema}: {e:?}"));
                    continue;
                }
                for ((i, x), &w) in items.iter().zip(&want) {
                    if *i == ci && w {
                        bad.push(format!("{schema}: {x}: jsonschema true, refused as unsatisfiable"));
                    }
                }
                continue;
            }
        };
        let oracle = Oracle::new(&cfg).unwrap();
        let store = tok.compile(schema);
        let rank = key_rank(schema);
        for (n, ((i, x), &w)) in items.iter().zip(&want).enumerate() {
            if *i != ci {
                continue;
            }
            if w {
                valid += 1;
            } else {
                invalid += 1;
            }
            for spaced in [false, true] {
                let text = serialize(x, spaced, &rank);
                let by_oracle = oracle.check(text.as_bytes()).is_ok();
                let by_masks = if n % mask_every == 0 { tok.replay(&store, &text) } else { by_oracle };
                if by_oracle != w || by_masks != w {
                    bad.push(format!("{schema}: {text}: jsonschema {w}, oracle {by_oracle}, masks {by_masks}"));
                }
            }
        }
    }
    (valid, invalid, bad)
}

/// Complement laws on random schemas S (types, bounds, patterns, enums,
/// objects, arrays, not/anyOf/oneOf/if/allOf, two levels deep): S and
/// `not S` agree with jsonschema on every instance, `anyOf [S, not S]`
/// accepts every instance and `allOf [S, not S]` none.
#[test]
fn complement_laws_on_random_schemas() {
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }
    fn gen(r: &mut Rng, depth: u32) -> Value {
        let types = ["null", "boolean", "integer", "number", "string", "array", "object"];
        let k = r.next(if depth == 0 { 6 } else { 13 });
        match k {
            0 => json!({"type": types[r.next(7) as usize]}),
            1 => match r.next(3) {
                0 => json!({"type": "string", "maxLength": r.next(3)}),
                1 => json!({"pattern": (["^a", "b$", "^$"])[r.next(3) as usize]}),
                _ => json!({"minLength": 1 + r.next(2)}),
            },
            2 => match r.next(3) {
                0 => json!({"minimum": r.next(4) as i64 - 1}),
                1 => json!({"exclusiveMaximum": r.next(4) as i64}),
                _ => json!({"multipleOf": 2}),
            },
            3 => json!({"enum": (json!([[null, 1, "a"], [2, "ab", true], [0, 1.5, [1]]]))[r.next(3) as usize]}),
            4 => match r.next(3) {
                0 => json!({"required": (json!([["a"], ["b"], ["a", "b"]]))[r.next(3) as usize]}),
                1 => json!({"maxProperties": r.next(2)}),
                _ => json!({"minItems": 1 + r.next(2)}),
            },
            5 => json!({"type": ["integer", "string"]}),
            6 => {
                let add = match r.next(3) {
                    0 => json!(false),
                    1 => json!(true),
                    _ => gen(r, depth - 1),
                };
                json!({"properties": {"a": gen(r, depth - 1)}, "additionalProperties": add})
            }
            7 => json!({"items": gen(r, depth - 1), "maxItems": 1 + r.next(2)}),
            8 => json!({"not": gen(r, depth - 1)}),
            9 => json!({"anyOf": [gen(r, depth - 1), gen(r, depth - 1)]}),
            10 => json!({"oneOf": [gen(r, depth - 1), gen(r, depth - 1)]}),
            11 => json!({"if": gen(r, depth - 1), "then": gen(r, depth - 1), "else": gen(r, depth - 1)}),
            _ => json!({"allOf": [gen(r, depth - 1), gen(r, depth - 1)]}),
        }
    }
    let insts: Vec<Value> = serde_json::from_str(
        r#"[null, true, false, 0, 1, -1, 2, 3, 1.5, -0.5, "", "a", "b", "ab", "ba", "abc",
            [], [1], ["a"], [1, 2], [null, "ab"], [[1]],
            {}, {"a": 1}, {"a": "a"}, {"a": null}, {"b": 2}, {"a": 2, "b": "b"}, {"a": [1], "c": true}, {"c": {"a": 1}}]"#,
    )
    .unwrap();
    let tok = Tok::llama3();
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut schemas, mut items) = (Vec::new(), Vec::new());
    let n = 150;
    let mut refused = Vec::new();
    // The schemas of the laws: (anyOf index, allOf index).
    let mut laws = Vec::new();
    for _ in 0..n {
        let s = gen(&mut r, 2);
        laws.push((schemas.len() + 2, schemas.len() + 3));
        for v in [s.clone(), json!({"not": s.clone()}), json!({"anyOf": [s.clone(), {"not": s.clone()}]}), json!({"allOf": [s.clone(), {"not": s.clone()}]})] {
            if let Err(e) = to_cfg(&v, &SchemaOptions::default()) {
                if !e.message().contains("unsatisfiable") {
                    refused.push(format!("{v}: {e:?}"));
                    // Keep the indices: a refused schema judges nothing.
                    schemas.push(json!(true));
                    continue;
                }
            }
            let i = schemas.len();
            schemas.push(v);
            items.extend(insts.iter().map(|x| (i, x.clone())));
        }
    }
    let (valid, invalid, bad) = agree(&tok, &schemas, &items, 7);
    // The laws themselves, whatever jsonschema says.
    let want = judge(&schemas, &items);
    for ((i, x), w) in items.iter().zip(want) {
        if laws.iter().any(|&(a, b)| *i == a && !w || *i == b && w) {
            panic!("jsonschema breaks a complement law: {}: {x}", schemas[*i]);
        }
    }
    eprintln!("complement laws: {} schemas, {} refused, {valid} valid and {invalid} invalid instance verdicts", n * 4, refused.len());
    for x in &refused {
        eprintln!("refused: {x}");
    }
    assert!(refused.len() * 10 <= n * 4, "{} of {} refused:\n{}", refused.len(), n * 4, refused.join("\n"));
    assert!(valid > 300 && invalid > 300, "{valid} valid, {invalid} invalid");
    assert!(bad.is_empty(), "{} disagreements:\n{}", bad.len(), bad.join("\n"));
}
