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
    assert!(e(json!({"properties": {"a": {"type": "array", "uniqueItems": true}}})).message().contains("#/properties/a/uniqueItems"));
    assert!(e(json!({"$ref": "#/nowhere"})).message().contains("unresolvable"));
    assert!(e(json!({"type": "array", "minItems": 3, "maxItems": 2})).message().contains("unsatisfiable"));
    assert!(e(json!({"$ref": "http://example.com/s.json"})).message().contains("remote"));
    let m = e(json!({"properties": {"a": {"pattern": "(a)\\1"}}})).message().to_string();
    assert!(m.contains("pattern") && m.contains("#/properties/a") && m.contains("backreference"), "{m}");
    let g = to_cfg(&json!({"type": "array", "uniqueItems": true, "x-foo": 1}), &SchemaOptions { lenient: true, ..Default::default() }).unwrap();
    assert!(g.warnings.iter().any(|w| w.contains("uniqueItems")));
}

/// `$dynamicRef` (2020-12) and `$recursiveRef` (2019-09) compile (their
/// verdicts: tests/data/schema_logic.json, judged by jsonschema, and the
/// official suite); what stays an error: an unresolvable one, and more
/// dynamic scopes than [`ir::MAX_SCOPES`] (a `Limit` naming a pointer).
/// Before their drafts they are unknown keywords (annotations).
#[test]
fn dynamic_refs() {
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err();
    let m = e(json!({"properties": {"a": {"$dynamicRef": "#x"}}})).message().to_string();
    assert!(m.contains("unresolvable") && m.contains("#/properties/a/$dynamicRef"), "{m}");
    compile(json!({"$dynamicAnchor": "n", "type": "array", "items": {"$dynamicRef": "#n"}}));
    compile(json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": true, "items": {"$recursiveRef": "#"}}));
    compile(json!({"$schema": "http://json-schema.org/draft-07/schema#", "$dynamicRef": "#x", "$recursiveRef": "#"}));
    // Resources r_i and s_i both declare the anchor n_i: every path from the
    // root binds n_0..n_9 differently (2^10 scopes).
    let mut defs = serde_json::Map::new();
    for i in 0..10 {
        for r in ["r", "s"] {
            defs.insert(
                format!("{r}{i}"),
                json!({"$id": format!("{r}{i}"), "$dynamicAnchor": format!("n{i}"),
                       "properties": {"x": {"$ref": format!("r{}", i + 1)}, "y": {"$ref": format!("s{}", i + 1)}, "z": {"$dynamicRef": format!("#n{i}")}}}),
            );
        }
    }
    defs.insert("r10".into(), json!({"$id": "r10"}));
    defs.insert("s10".into(), json!({"$id": "s10"}));
    let err = e(json!({"$id": "https://example.com/root", "properties": {"x": {"$ref": "r0"}, "y": {"$ref": "s0"}}, "$defs": defs}));
    assert_eq!(err.kind(), crate::ErrorKind::Limit, "{err:?}");
    assert!(err.message().contains("dynamic scopes") && err.message().contains("at "), "{err:?}");
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
    let e = crate::constraint::parse_lark("start: %json {\"type\": \"array\", \"uniqueItems\": true}\n", "t.lark", None, &|_| None).unwrap_err();
    assert!(e.message().contains("t.lark:1") && e.message().contains("`uniqueItems`"), "{e:?}");
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
/// can constrain a value; `propertyNames` and array dependencies are
/// enforced (tests/suite/keywords.rs).
#[test]
fn type_specific_unsupported_keywords() {
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err().message().to_string();
    assert!(e(json!({"type": "array", "uniqueItems": true})).contains("`uniqueItems` at #/uniqueItems"));
    assert!(e(json!({"items": {"type": "array", "uniqueItems": true}})).contains("`uniqueItems` at #/items/uniqueItems"));
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
    let cfg = compile(json!({"type": "object", "propertyNames": {"pattern": "^a"}, "dependentRequired": {"a": ["ab"]}}));
    let o = crate::reference::oracle::Oracle::new(&cfg).unwrap();
    assert!(o.check(br#"{"a":1,"ab":2}"#).is_ok());
    assert!(o.check(br#"{"a":1}"#).is_err());
    assert!(o.check(br#"{"b":1}"#).is_err());
}

/// Compiles with a registry and checks instances (compact text) with the oracle.
fn refs_case(s: Value, refs: &[(&str, Value)], lenient: bool, good: &[&str], bad: &[&str]) {
    let refs = std::sync::Arc::new(refs.iter().map(|(u, v)| (u.to_string(), v.clone())).collect());
    let g = to_cfg(&s, &SchemaOptions { refs, lenient, ..Default::default() }).unwrap_or_else(|e| panic!("{s}: {e:?}"));
    let o = crate::reference::oracle::Oracle::new(&g.cfg).unwrap();
    for t in good {
        assert!(o.check(t.as_bytes()).is_ok(), "{s}: {t} refused");
    }
    for t in bad {
        assert!(o.check(t.as_bytes()).is_err(), "{s}: {t} accepted");
    }
}

#[test]
fn refs_registry_and_base_uris() {
    let other = json!({"definitions": {"y": {"type": "integer"}}, "$defs": {"s": {"type": "string"}}});
    // Absolute remote ref, with a pointer into the document.
    refs_case(json!({"$ref": "http://ex.com/root/other.json#/$defs/s"}), &[("http://ex.com/root/other.json", other.clone())], false, &[r#""a""#], &["1"]);
    // Relative ref against the root's $id; the registry key may end in an empty fragment.
    refs_case(
        json!({"$id": "http://ex.com/root/a.json", "properties": {"x": {"$ref": "other.json#/definitions/y"}}, "required": ["x"]}),
        &[("http://ex.com/root/other.json#", other.clone())],
        false,
        &[r#"{"x":1}"#],
        &[r#"{"x":"a"}"#, "{}"],
    );
    // Nested $id: the nearest enclosing one sets the base.
    refs_case(
        json!({"$id": "http://ex.com/a/", "items": {"$id": "b/", "items": {"$ref": "c.json"}}}),
        &[("http://ex.com/a/b/c.json", json!({"type": "boolean"})), ("http://ex.com/a/c.json", json!({"type": "null"}))],
        false,
        &["[[true]]"],
        &["[[null]]"],
    );
    // An embedded resource is found by its URI, relative or absolute; the
    // registry does not shadow it.
    refs_case(
        json!({"$id": "http://ex.com/r", "$defs": {"e": {"$id": "emb.json", "type": "string"}}, "properties": {"a": {"$ref": "emb.json"}, "b": {"$ref": "http://ex.com/emb.json#"}}}),
        &[("http://ex.com/emb.json", json!({"type": "integer"}))],
        false,
        &[r#"{"a":"x","b":"y"}"#],
        &[r#"{"a":1}"#, r#"{"b":1}"#],
    );
    // A registry document's own relative refs resolve against its URI.
    refs_case(
        json!({"$ref": "http://ex.com/d/one.json"}),
        &[("http://ex.com/d/one.json", json!({"items": {"$ref": "two.json"}})), ("http://ex.com/d/two.json", json!({"type": "integer"}))],
        false,
        &["[1,2]"],
        &[r#"["a"]"#],
    );
    // URN bases.
    refs_case(
        json!({"$id": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed", "$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed#/$defs/n"}}}),
        &[],
        false,
        &[r#"{"a":1}"#],
        &[r#"{"a":"x"}"#],
    );
}

#[test]
fn refs_pointers_and_anchors() {
    // ~0, ~1 and percent-encoding in JSON pointers.
    refs_case(
        json!({"$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}, "e%f": {"type": "boolean"}},
               "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c~0d"}, "z": {"$ref": "#/$defs/e%25f"}}}),
        &[],
        false,
        &[r#"{"x":1,"y":"s","z":true}"#],
        &[r#"{"x":"s"}"#, r#"{"y":1}"#, r#"{"z":1}"#],
    );
    // $anchor (2019-09 and later), by plain name and by absolute URI.
    let s = json!({"$id": "http://ex.com/r", "$defs": {"a": {"$anchor": "foo", "type": "integer"}, "b": {"$id": "inner", "$anchor": "foo", "type": "string"}},
                   "properties": {"x": {"$ref": "#foo"}, "y": {"$ref": "http://ex.com/inner#foo"}}});
    refs_case(s, &[], false, &[r#"{"x":1,"y":"s"}"#], &[r#"{"x":"s"}"#, r#"{"y":1}"#]);
    // Plain-name fragments by $id (draft-07) and id (draft-04).
    refs_case(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"$id": "#foo", "type": "integer"}}, "allOf": [{"$ref": "#foo"}]}),
        &[],
        false,
        &["1"],
        &[r#""s""#],
    );
    refs_case(
        json!({"$schema": "http://json-schema.org/draft-04/schema#", "id": "http://ex.com/r.json", "definitions": {"a": {"id": "#foo", "type": "integer"}}, "allOf": [{"$ref": "http://ex.com/r.json#foo"}]}),
        &[],
        false,
        &["1"],
        &[r#""s""#],
    );
    // Draft-07: an $id beside $ref does not change the base.
    refs_case(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "$id": "http://ex.com/r.json",
               "definitions": {"a": {"$id": "http://ex.com/other/", "$ref": "b.json"}, "b": {"$id": "b.json", "type": "integer"}},
               "allOf": [{"$ref": "#/definitions/a"}]}),
        &[("http://ex.com/other/b.json", json!({"type": "string"}))],
        false,
        &["1"],
        &[r#""s""#],
    );
}

#[test]
fn refs_each_resource_keeps_its_draft() {
    // A 2019-09 document: prefixItems is no keyword there.
    refs_case(
        json!({"type": "array", "$ref": "http://ex.com/old.json"}),
        &[("http://ex.com/old.json", json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "prefixItems": [{"type": "string"}]}))],
        false,
        &["[1,2]", r#"["a"]"#],
        &["{}"],
    );
    // A draft-07 document from a 2020-12 root: siblings of $ref are ignored there.
    refs_case(
        json!({"$ref": "http://ex.com/d7.json"}),
        &[("http://ex.com/d7.json", json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"i": {"type": "integer"}}, "$ref": "#/definitions/i", "minimum": 5}))],
        false,
        &["1", "7"],
        &[r#""a""#],
    );
    // And the root's own prefixItems still holds.
    refs_case(json!({"prefixItems": [{"type": "string"}]}), &[], false, &[r#"["a",1]"#], &["[1]"]);
}

#[test]
fn refs_metaschemas_built_in() {
    // The draft-07 metaschema: resolved with nothing given; its uniqueItems is
    // refused by name (strict), ignored with a warning (lenient).
    let s = json!({"$ref": "http://json-schema.org/draft-07/schema#"});
    let e = to_cfg(&s, &SchemaOptions::default()).unwrap_err();
    assert!(e.message().contains("`uniqueItems` at http://json-schema.org/draft-07/schema#/definitions/"), "{e:?}");
    refs_case(s, &[], true, &[r#"{"type":"string"}"#, r#"{"minLength":2}"#, "true"], &[r#"{"type":3}"#, r#"{"minLength":-1}"#, "3"]);
    // Every built-in URI parses and is found.
    let uris = super::metaschemas::uris();
    assert_eq!(uris.len(), 19);
    for u in uris {
        assert!(super::metaschemas::get(&u).is_some_and(|v| v.is_object()), "{u}");
    }
    // A part of the draft-04 metaschema without uniqueItems compiles strictly.
    refs_case(json!({"$ref": "http://json-schema.org/draft-04/schema#/definitions/positiveInteger"}), &[], false, &["0", "3"], &["-1", "1.5"]);
}

#[test]
fn refs_remote_not_given_is_a_named_error() {
    let e = to_cfg(&json!({"properties": {"a": {"$ref": "other.json#/x"}}, "$id": "http://ex.com/r.json"}), &SchemaOptions::default()).unwrap_err();
    let m = e.message();
    assert_eq!(e.kind(), crate::ErrorKind::Schema);
    for part in ["`$ref`", "#/properties/a/$ref", "\"http://ex.com/other.json\"", "refs", "--ref URI=FILE", "nothing is fetched"] {
        assert!(m.contains(part), "{part}: {m}");
    }
    // A registry key with a fragment is refused.
    let refs = std::sync::Arc::new(vec![("http://ex.com/a#x".to_string(), json!({}))]);
    assert!(to_cfg(&json!({}), &SchemaOptions { refs, ..Default::default() }).unwrap_err().message().contains("fragment"));
}

#[test]
fn uri_resolution_rfc3986() {
    // RFC 3986 §5.4.1 (normal examples) and §5.4.2 (abnormal ones).
    let base = "http://a/b/c/d;p?q";
    for (r, want) in [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"), ("//g", "http://g"),
        ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"),
        ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"),
        ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), ("g/../h", "http://a/b/c/h"), ("g;x=1/../y", "http://a/b/c/y"),
        ("urn:x:y#z", "urn:x:y#z"),
    ] {
        assert_eq!(super::ir::resolve_uri(base, r), want, "{r}");
    }
    assert_eq!(super::ir::resolve_uri("", "#/a"), "#/a");
    assert_eq!(super::ir::resolve_uri("urn:uuid:1234", "#foo"), "urn:uuid:1234#foo");
}

#[test]
fn logic_by_complement() {
    let c = |s: Value, good: &[&str], bad: &[&str]| refs_case(s, &[], false, good, bad);
    c(json!({"not": {"type": "string"}}), &["1", "null", "{}", "[\"a\"]", "true"], &["\"a\"", "\"\""]);
    c(json!({"type": "string", "not": {"pattern": "^a"}}), &["\"b\"", "\"\""], &["\"a\"", "\"abc\"", "1"]);
    c(json!({"not": {"type": "string", "minLength": 2, "pattern": "x"}}), &["\"x\"", "\"ab\"", "3"], &["\"xy\"", "\"axb\""]);
    c(json!({"type": "integer", "not": {"minimum": 3, "maximum": 5}}), &["2", "6", "-1"], &["3", "4", "5", "2.5"]);
    c(json!({"not": {"type": "object", "required": ["a"]}}), &["{}", "{\"b\":1}", "1"], &["{\"a\":1}", "{\"a\":1,\"b\":2}"]);
    c(
        json!({"type": "object", "not": {"properties": {"a": {"type": "string"}}}}),
        &["{\"a\":1}", "{\"a\":2,\"b\":1}"],
        &["{}", "{\"a\":\"x\"}", "{\"b\":1}"],
    );
    c(json!({"not": {"additionalProperties": false}}), &["{\"x\":1}"], &["{}", "1"]);
    c(json!({"not": {"type": "array", "maxItems": 1}}), &["[1,2]", "{}"], &["[]", "[1]"]);
    c(json!({"not": {"type": "array", "items": {"type": "integer"}}}), &["[1,\"a\"]", "[\"a\"]"], &["[]", "[1,2]"]);
    c(json!({"not": {"not": {"type": "null"}}}), &["null"], &["1", "{}"]);
    c(json!({"if": {"type": "integer"}, "then": {"minimum": 3}, "else": {"type": "string"}}), &["3", "\"a\""], &["2", "null", "1.5"]);
    c(json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}}), &["{}", "{\"a\":1,\"b\":2}", "{\"b\":1}", "1"], &["{\"a\":1}"]);
    c(json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}), &["1", "2.5", "\"a\""], &["2", "3"]);
    c(json!({"oneOf": [{"type": "string"}, {"minLength": 2}]}), &["\"a\"", "3"], &["\"ab\""]);
    c(
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        &["{\"a\":1}", "{\"b\":1}"],
        &["{}", "{\"a\":1,\"b\":2}"],
    );
    // S ∧ ¬S and S ∨ ¬S.
    let s = json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 2}, "b": {"type": "array", "items": {"type": "integer"}}}, "required": ["a"]});
    let e = to_cfg(&json!({"allOf": [s.clone(), {"not": s.clone()}]}), &SchemaOptions::default()).unwrap_err();
    assert!(e.message().contains("unsatisfiable"), "{e:?}");
    c(json!({"anyOf": [s.clone(), {"not": s}]}), &["{\"a\":\"x\"}", "{\"a\":\"xyz\"}", "{\"a\":1,\"b\":[1]}", "{\"b\":[\"x\"]}", "{\"a\":\"x\",\"b\":[1.5]}", "1", "[]"], &[]);
    // Recursion through a property; cycles through `not`/`oneOf` alone are a named limit.
    c(json!({"properties": {"x": {"not": {"$ref": "#"}}}}), &["{}", "{\"x\":{\"x\":1}}"], &["{\"x\":1}", "{\"x\":{}}"]);
    for s in [json!({"not": {"$ref": "#"}}), json!({"$defs": {"a": {"oneOf": [{"$ref": "#/$defs/a"}, {"type": "string"}]}}, "$ref": "#/$defs/a"})] {
        let e = to_cfg(&s, &SchemaOptions::default()).unwrap_err();
        assert!(e.kind() == crate::ErrorKind::Limit && e.message().contains("not/if/oneOf at #"), "{s}: {e:?}");
    }
    // A format is not complemented (its check may be stricter than a validator's).
    for s in [json!({"not": {"format": "date-time"}}), json!({"not": {"type": "object", "propertyNames": {"format": "email"}}})] {
        let m = to_cfg(&s, &SchemaOptions::default()).unwrap_err().message().to_string();
        assert!(m.contains("`format` at #/not/") && m.contains("under not/if/oneOf"), "{s}: {m}");
    }
    // Out of schema order, a negated member is not taken as failed.
    c(json!({"not": {"properties": {"a": {}, "b": {}}, "required": ["a", "b"]}}), &["{\"a\":1}", "{\"b\":1}"], &["{\"a\":1,\"b\":2}", "{\"b\":1,\"a\":2}"]);
}

/// `contains`/`minContains`/`maxContains` count the matching items;
/// general dependent schemas hold where their key does.
#[test]
fn contains_and_dependent_schemas() {
    let c = |s: Value, good: &[&str], bad: &[&str]| refs_case(s, &[], false, good, bad);
    c(json!({"contains": {"type": "integer"}}), &["[1]", "[\"a\",2]", "[1.5,1]", "{}", "1"], &["[]", "[\"a\"]", "[1.5]"]);
    c(json!({"contains": {"const": 1}, "minContains": 2, "maxContains": 3}), &["[1,1]", "[1,2,1,1]", "[2,1,1]"], &["[1]", "[1,1,1,1]", "[2,2]", "[]"]);
    c(json!({"contains": {"const": 1}, "minContains": 0, "maxContains": 1}), &["[]", "[2]", "[1,2]"], &["[1,1]"]);
    c(json!({"contains": {"const": 1}, "minContains": 0}), &["[]", "[1,1,1]"], &[]);
    c(json!({"contains": {"minimum": 5}, "items": {"type": "integer"}, "maxItems": 3}), &["[5]", "[1,7]"], &["[1]", "[5.5]", "[5,6,7,8]"]);
    c(json!({"prefixItems": [{"type": "string"}], "contains": {"type": "string"}, "maxContains": 1}), &["[\"a\"]", "[\"a\",1]"], &["[\"a\",\"b\"]", "[1]"]);
    c(
        json!({"contains": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, "maxContains": 1}),
        &["[{\"a\":1}]", "[{\"a\":1},{\"a\":\"x\"},{}]"],
        &["[{\"a\":1},{\"a\":2}]", "[{\"b\":1}]"],
    );
    c(json!({"allOf": [{"contains": {"const": 1}}, {"contains": {"const": 2}}]}), &["[1,2]", "[2,3,1]"], &["[1]", "[2,2]"]);
    c(json!({"not": {"contains": {"const": 1}}}), &["[]", "[2]"], &["[1]", "[2,1]", "1"]);
    c(json!({"oneOf": [{"contains": {"const": 1}}, {"contains": {"const": 2}}]}), &["[1]", "[2,3]"], &["[1,2]", "[]", "[3]"]);
    // Draft 7: minContains/maxContains are unknown; draft 4: contains too.
    c(json!({"$schema": "http://json-schema.org/draft-07/schema#", "contains": {"const": 1}, "maxContains": 1}), &["[1,1]"], &["[2]"]);
    c(json!({"$schema": "http://json-schema.org/draft-04/schema#", "contains": {"const": 1}}), &["[2]"], &[]);
    c(
        json!({"dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}, "minProperties": 2}}}),
        &["{}", "{\"b\":\"x\"}", "{\"a\":1,\"b\":2}", "{\"a\":1,\"c\":2}", "[]"],
        &["{\"a\":1}", "{\"a\":1,\"b\":\"x\"}"],
    );
    c(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {}, "b": {}}, "dependencies": {"a": {"properties": {"b": {"const": 1}}}}}),
        &["{\"a\":0,\"b\":1}", "{\"b\":2}", "{\"a\":0}"],
        &["{\"a\":0,\"b\":2}"],
    );
    c(json!({"items": {"format": "date"}, "contains": {"const": "2020-01-01"}, "maxContains": 1}), &["[\"2020-01-01\",\"2021-01-01\"]"], &["[\"2020-01-01\",\"2020-01-01\"]", "[\"x\"]"]);
    // A format in the item schema is not complemented: only the contains schema is.
    c(
        json!({"items": {"type": "object", "properties": {"s": {"enum": ["a", "b"]}, "d": {"format": "date"}}}, "contains": {"properties": {"s": {"const": "a"}}, "required": ["s"]}, "maxContains": 1}),
        &["[{\"s\":\"a\",\"d\":\"2020-01-01\"}]", "[{\"s\":\"a\"},{\"s\":\"b\"},{}]"],
        &["[{\"s\":\"a\"},{\"s\":\"a\"}]", "[{\"s\":\"b\"}]", "[{\"s\":\"a\",\"d\":\"x\"}]"],
    );
    // Counting needs the complement of the contains schema: a format there is refused by name.
    let m = to_cfg(&json!({"contains": {"format": "date"}}), &SchemaOptions::default()).unwrap_err().message().to_string();
    assert!(m.contains("`format` at #/contains/format"), "{m}");
    let m = to_cfg(&json!({"contains": {}, "maxContains": "x"}), &SchemaOptions::default()).unwrap_err().message().to_string();
    assert!(m.contains("`maxContains` at #/maxContains"), "{m}");
    c(json!({"$schema": "http://json-schema.org/draft-07/schema#", "contains": {}, "maxContains": "x"}), &["[1]"], &["[]"]);
    let e = to_cfg(&json!({"contains": {}, "minContains": 5000}), &SchemaOptions::default()).unwrap_err();
    assert!(e.kind() == crate::ErrorKind::Limit && e.message().contains("contains at #/contains"), "{e:?}");
}

/// `unevaluatedProperties`/`unevaluatedItems`: what `allOf`, `$ref` and the
/// valid `anyOf`/`oneOf` branches and `if`/`then`/`else` evaluate; dependent
/// schemas that evaluate, and `contains` beside `unevaluatedItems`, are
/// refused by name; draft-07 and older read them as annotations.
#[test]
fn unevaluated_keywords() {
    // The common case: a base schema extended by allOf, closed.
    let base = json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]});
    let s = json!({"allOf": [{"$ref": "http://ex.com/base.json"}, {"properties": {"name": {"type": "string"}}}], "unevaluatedProperties": false});
    refs_case(s, &[("http://ex.com/base.json", base)], false, &[r#"{"id":1}"#, r#"{"id":1,"name":"a"}"#], &[r#"{"id":1,"x":2}"#, r#"{"name":"a"}"#]);
    // Every valid anyOf branch counts, a failing one does not.
    let s = json!({"anyOf": [{"properties": {"a": {"const": 1}}}, {"properties": {"b": {"type": "string"}}}], "unevaluatedProperties": {"type": "string"}});
    refs_case(s, &[], false, &[r#"{"a":1,"b":"s"}"#, r#"{"a":"s"}"#, r#"{"c":"s"}"#], &[r#"{"a":2}"#, r#"{"c":1}"#, r#"{"a":1,"b":1}"#]);
    // Items: the longest prefix in place; a nested unevaluatedItems evaluates all.
    let s = json!({"prefixItems": [{"type": "integer"}], "allOf": [{"prefixItems": [true, {"type": "string"}]}], "unevaluatedItems": false});
    refs_case(s, &[], false, &["[]", r#"[1,"a"]"#], &[r#"[1,"a",2]"#]);
    let s = json!({"allOf": [{"unevaluatedItems": true}], "unevaluatedItems": false});
    refs_case(s, &[], false, &["[1,2]"], &[]);
    // Draft-07: an unknown keyword (annotation).
    let s = json!({"$schema": "http://json-schema.org/draft-07/schema#", "unevaluatedProperties": false});
    refs_case(s, &[], false, &[r#"{"a":1}"#], &[]);
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err().message().to_string();
    let m = e(json!({"properties": {"p": {"dependentSchemas": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": false}}}));
    assert!(m.contains("`unevaluatedProperties` at #/properties/p/unevaluatedProperties") && m.contains("dependent schema"), "{m}");
    let m = e(json!({"allOf": [{"contains": {}}], "unevaluatedItems": false}));
    assert!(m.contains("`unevaluatedItems` at #/unevaluatedItems") || m.contains("`contains`"), "{m}");
    // if/then/else: `if` and `then` where `if` holds, else `else`.
    let s = json!({"if": {"properties": {"a": {"const": 1}}, "required": ["a"]}, "then": {"properties": {"b": {}}}, "else": {"properties": {"c": {}}}, "unevaluatedProperties": false});
    refs_case(s, &[], false, &[r#"{"a":1}"#, r#"{"a":1,"b":2}"#, r#"{"c":1}"#, "{}"], &[r#"{"a":1,"c":2}"#, r#"{"a":2,"c":1}"#, r#"{"b":1}"#]);
    // An `if` without `then`/`else` evaluates where it holds.
    let s = json!({"if": {"prefixItems": [{"const": 1}]}, "unevaluatedItems": false});
    refs_case(s, &[], false, &["[]", "[1]"], &["[2]", "[1,2]"]);
    // Conditions that evaluate nothing are fine; lenient lists what it ignores.
    let s = json!({"properties": {"a": {}, "b": {}}, "if": {"required": ["a"]}, "then": {"required": ["b"]}, "unevaluatedProperties": false});
    refs_case(s, &[], false, &[r#"{"a":1,"b":2}"#, "{}"], &[r#"{"a":1}"#, r#"{"c":1}"#]);
    let g = to_cfg(&json!({"dependentSchemas": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": false}), &SchemaOptions { lenient: true, ..Default::default() }).unwrap();
    assert!(g.warnings.iter().any(|w| w.contains("unevaluatedProperties at #/unevaluatedProperties")), "{:?}", g.warnings);
}
