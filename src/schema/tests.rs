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
    let cfg = crate::grammar::lark::parse_grammar(g, "t.lark", None, &|_| None).unwrap();
    crate::parser::lalr::build_tables(&cfg).unwrap();
    let o = oracle::Oracle::new(&cfg).unwrap();
    assert!(o.check(br#"<tool_call>{"name": "x", "n": 3}</tool_call>"#).is_ok());
    assert!(o.check(br#"<tool_call>{"name":"x"}</tool_call>"#).is_ok());
    assert!(o.check(br#"<tool_call>{"n": 3}</tool_call>"#).is_err());
    assert!(o.check(br#"<tool_call>{"name": 1}</tool_call>"#).is_err());
    let e = crate::grammar::lark::parse_grammar("start: %json {\"not\": {}}\n", "t.lark", None, &|_| None).unwrap_err();
    assert!(e.message().contains("t.lark:1") && e.message().contains("`not`"), "{e:?}");
}
