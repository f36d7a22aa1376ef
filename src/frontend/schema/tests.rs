//! Unit tests of the schema front end: the grammars build LALR(1) tables.

use super::*;
use serde_json::json;

fn compile(s: Value) -> Cfg {
    let g = to_cfg(&s, &SchemaOptions::default()).unwrap_or_else(|e| panic!("{s}: {e:?}"));
    crate::parser::lalr::build_tables(&g.cfg).unwrap_or_else(|e| panic!("{s}: {e:?}"));
    g.cfg
}

#[test]
fn basic_schemas_build() {
    compile(json!({}));
    compile(json!({"type": "object"}));
    compile(json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer", "minimum": 0}}, "required": ["a"]}));
    compile(json!({"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 3}));
    compile(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}));
    compile(json!({"anyOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "string"}}, "required": ["kind"]},
        {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "number"}}, "required": ["kind"]}
    ]}));
    compile(json!({"anyOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "number"}}}]}));
    compile(json!({"$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}));
    compile(json!({"enum": [1, "a", null, {"x": [1, 2]}]}));
    compile(json!({"type": "string", "pattern": "^[a-z]+$", "maxLength": 5}));
    compile(json!({"type": "string", "format": "date-time"}));
    compile(json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}));
}

#[test]
fn errors() {
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err();
    assert!(e(json!({"not": {}})).message().contains("`not` at #/not"));
    assert!(e(json!({"properties": {"a": {"if": {}}}})).message().contains("#/properties/a/if"));
    assert!(e(json!({"$ref": "#/nowhere"})).message().contains("unresolvable"));
    assert!(e(json!({"type": "array", "minItems": 3, "maxItems": 2})).message().contains("unsatisfiable"));
    assert!(e(json!({"$ref": "http://example.com/s.json"})).message().contains("remote"));
    assert!(e(json!({"type": "string", "pattern": "(?=a)"})).message().contains("pattern"));
    assert!(e(json!({"oneOf": [{"type": "string"}, {"minLength": 2}]})).message().contains("oneOf"));
    let g = to_cfg(&json!({"not": {}, "x-foo": 1}), &SchemaOptions { lenient: true, ..Default::default() }).unwrap();
    assert!(g.warnings.iter().any(|w| w.contains("not")));
}

#[test]
fn json_in_lark() {
    let g = r#"start: "<tool_call>" %json {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}, "required": ["name"], "additionalProperties": false} "</tool_call>"
"#;
    let cfg = crate::constraint::parse_lark(g, "t.lark", None, &|_| None).unwrap();
    crate::parser::lalr::build_tables(&cfg).unwrap();
    let o = crate::reference::oracle::Oracle::new(&cfg).unwrap();
    assert!(o.check(br#"<tool_call>{"name": "x", "n": 3}</tool_call>"#).is_ok());
    assert!(o.check(br#"<tool_call>{"name":"x"}</tool_call>"#).is_ok());
    assert!(o.check(br#"<tool_call>{"n": 3}</tool_call>"#).is_err());
    assert!(o.check(br#"<tool_call>{"name": 1}</tool_call>"#).is_err());
    let e = crate::constraint::parse_lark("start: %json {\"not\": {}}\n", "t.lark", None, &|_| None).unwrap_err();
    assert!(e.message().contains("t.lark:1") && e.message().contains("`not`"), "{e:?}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err();
    // Invalid schemas.
    for s in [json!(3), json!({"type": "strnig"}), json!({"minLength": -1}), json!({"properties": []}), json!({"pattern": 5}),
              json!({"enum": 1}), json!({"allOf": []}), json!({"$ref": 5}), json!({"multipleOf": 0}), json!({"required": "a"})] {
        let err = e(s.clone());
        assert!(matches!(err.kind(), crate::ErrorKind::Schema | crate::ErrorKind::Regex), "{s}: {err:?}");
    }
    // Absurd sizes and depths.
    assert_eq!(e(json!({"type": "array", "maxItems": 1_000_000_000u64})).kind(), crate::ErrorKind::Limit);
    assert_eq!(e(json!({"type": "string", "maxLength": 1_000_000})).kind(), crate::ErrorKind::Limit);
    let mut deep = json!({"type": "integer"});
    for _ in 0..300 {
        deep = json!({"type": "array", "items": deep});
    }
    assert_eq!(e(deep).kind(), crate::ErrorKind::Limit);
    let wide: Vec<Value> = (0..20).map(|i| json!({"anyOf": [{"minimum": i}, {"maximum": i}]})).collect();
    assert!(matches!(e(json!({"allOf": wide})).kind(), crate::ErrorKind::Limit | crate::ErrorKind::Schema));
    // Unsatisfiable.
    assert!(e(json!({"type": "string", "minLength": 3, "maxLength": 2})).message().contains("unsatisfiable"));
    assert!(e(json!({"type": "string", "pattern": "^a$", "minLength": 2})).message().contains("unsatisfiable"));
    assert!(e(json!({"type": "integer", "minimum": 2, "maximum": 1})).message().contains("unsatisfiable"));
}

#[test]
fn mutated_schemas_never_panic() {
    // Small deterministic fuzz: random edits of the test schemas.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/schemas");
    let mut seeds: Vec<Value> = Vec::new();
    for f in std::fs::read_dir(dir).unwrap() {
        seeds.push(serde_json::from_slice(&std::fs::read(f.unwrap().path()).unwrap()).unwrap());
    }
    let atoms = [json!(null), json!(true), json!(false), json!(-1), json!(0), json!(2.5), json!(1e300), json!(""), json!("^("),
                 json!("string"), json!([]), json!({}), json!([1, "a"]), json!({"$ref": "#"}), json!({"not": {}}), json!({"type": "object"})];
    let mut r: u64 = 12345;
    let mut next = |n: usize| {
        r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (r >> 33) as usize % n.max(1)
    };
    fn nodes(v: &mut Value, out: &mut Vec<*mut Value>) {
        out.push(v as *mut Value);
        match v {
            Value::Object(o) => o.values_mut().for_each(|c| nodes(c, out)),
            Value::Array(a) => a.iter_mut().for_each(|c| nodes(c, out)),
            _ => {}
        }
    }
    for _ in 0..400 {
        let mut s = seeds[next(seeds.len())].clone();
        for _ in 0..1 + next(3) {
            let mut ns = Vec::new();
            nodes(&mut s, &mut ns);
            let target = ns[next(ns.len())];
            // SAFETY: `target` points into `s`, which is not otherwise borrowed here.
            unsafe { *target = atoms[next(atoms.len())].clone() };
        }
        for lenient in [false, true] {
            let r = std::panic::catch_unwind(|| to_cfg(&s, &SchemaOptions { lenient, ..Default::default() }).map(|g| crate::parser::lalr::build_tables(&g.cfg).map(|_| ())));
            match r {
                Ok(Ok(Ok(()))) | Ok(Err(_)) => {}
                Ok(Ok(Err(e))) => panic!("{s}: grammar does not build LALR tables: {e:?}"),
                Err(_) => panic!("panic on {s}"),
            }
        }
    }
}

/// Type-specific keywords that are not enforced are refused only where they
/// can constrain a value; `propertyNames: false` is enforced (empty objects).
#[test]
fn type_specific_unsupported_keywords() {
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err().message().to_string();
    assert!(e(json!({"type": "array", "uniqueItems": true})).contains("`uniqueItems` at #/uniqueItems"));
    assert!(e(json!({"items": {"type": "array", "uniqueItems": true}})).contains("`uniqueItems` at #/items/uniqueItems"));
    assert!(e(json!({"type": "object", "propertyNames": {"pattern": "^a"}})).contains("`propertyNames` at #/propertyNames"));
    assert!(e(json!({"dependentRequired": {"a": ["b"]}})).contains("`dependentRequired` at #/dependentRequired"));
    assert!(e(json!({"type": "object", "dependencies": {"a": ["b"]}})).contains("`dependencies` at #/dependencies"));
    assert!(e(json!({"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}})).contains("`dependentSchemas`"));
    // No array / object can occur, or at most one item: nothing to enforce.
    for s in [
        json!({"type": "string", "uniqueItems": true}),
        json!({"type": "array", "items": {"type": "string"}, "maxItems": 1, "uniqueItems": true}),
        json!({"enum": ["a", "b"], "uniqueItems": true, "propertyNames": {"maxLength": 1}}),
        json!({"type": ["integer", "null"], "dependentRequired": {"a": ["b"]}, "dependencies": {"a": ["b"]}}),
        json!({"type": "object", "dependentRequired": {"a": []}, "propertyNames": true}),
        json!({"type": "object", "propertyNames": {}}),
    ] {
        compile(s);
    }
    let cfg = compile(json!({"type": "object", "propertyNames": false}));
    let o = crate::reference::oracle::Oracle::new(&cfg).unwrap();
    assert!(o.check(b"{}").is_ok());
    assert!(o.check(br#"{"a":1}"#).is_err());
}
