//! Lookaround in patterns (`regex::look`), judged by real engines:
//! tests/data/lookaround.json (scripts/gen/lookaround_judge.py) holds, for
//! each pattern, short enumerated and random strings with the verdict of
//! Node's RegExp (JSON Schema `pattern`, `u` flag, search) or of Python's
//! `re.fullmatch` (regex constraints). grammask's verdict (the schema or
//! regex constraint's grammar, by the oracle on the whole text) must be
//! the judge's on every string; a pattern that matches no string must be
//! refused as such. Then a real-world schema pattern (`^(?!org\.bukkit\.)…`)
//! through the masks (Llama-3 tokens, teacher-forced).

use crate::schema_common::{root, Tok};
use grammask::frontend::schema::json_text::quote;
use grammask::frontend::schema::{to_cfg, SchemaOptions};
use grammask::reference::oracle::Oracle;
use serde_json::{json, Value};

fn judge(section: &str, compile: &dyn Fn(&str) -> grammask::Result<grammask::grammar::Cfg>, text: &dyn Fn(&str) -> String) {
    let path = root().join("tests/data/lookaround.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases = data[section].as_array().unwrap();
    assert!(cases.len() >= 10);
    let (mut bad, mut n) = (Vec::new(), 0);
    for case in cases {
        let p = case["pattern"].as_str().unwrap();
        let want: Vec<bool> = case["verdicts"].as_str().unwrap().chars().map(|c| c == '1').collect();
        let strings: Vec<&str> = case["strings"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        assert_eq!(want.len(), strings.len());
        let oracle = match compile(p) {
            Ok(cfg) => Some(Oracle::new(&cfg).unwrap()),
            Err(e) if e.message().contains("matches no string") && !want.contains(&true) => None,
            Err(e) => panic!("{p}: {e:?}"),
        };
        for (s, &w) in strings.iter().zip(&want) {
            n += 1;
            let got = oracle.as_ref().is_some_and(|o| o.check(text(s).as_bytes()).is_ok());
            if got != w {
                bad.push(format!("/{p}/ on {s:?}: judge {w}, grammask {got}"));
            }
        }
    }
    assert!(bad.is_empty(), "{} of {n} strings:\n{}", bad.len(), bad.join("\n"));
    eprintln!("{section}: {} patterns, {n} strings agree", cases.len());
}

#[test]
fn ecma_patterns_agree_with_node() {
    let schema = |p: &str| to_cfg(&json!({"type": "string", "pattern": p}), &SchemaOptions::default()).map(|g| g.cfg);
    judge("ecma", &schema, &|s| quote(s));
}

#[test]
fn python_fullmatch_agrees_with_re() {
    judge("python_fullmatch", &|p| grammask::frontend::regex::to_cfg(p), &|s| s.to_string());
}

#[test]
fn bukkit_pattern_through_the_masks() {
    let schema = json!({"type": "object", "properties": {"main": {"type": "string", "pattern": "^(?!org\\.bukkit\\.)[a-zA-Z0-9_.]+$"}}, "required": ["main"]});
    let tok = Tok::llama3();
    let store = tok.compile(&schema);
    for (text, valid) in [
        (r#"{"main": "com.example.Plugin"}"#, true),
        (r#"{"main": "org.bukkitx.Main"}"#, true),
        (r#"{"main": "org.bukkit"}"#, true),
        (r#"{"main": "org.bukkit.Main"}"#, false),
        (r#"{"main": "org.bukkit."}"#, false),
        (r#"{"main": "com.example-x"}"#, false),
        (r#"{"main": ""}"#, false),
    ] {
        assert_eq!(tok.replay(&store, text), valid, "{text}");
    }
}

#[test]
fn refusals_are_named() {
    let e = |s: Value| to_cfg(&s, &SchemaOptions::default()).unwrap_err().message().to_string();
    let m = e(json!({"properties": {"k": {"pattern": "(?<=a(?=b))"}}}));
    assert!(m.contains("#/properties/k") && m.contains("lookahead inside a lookbehind"), "{m}");
    let m = e(json!({"patternProperties": {"(a)\\1": {}}}));
    assert!(m.contains("backreference"), "{m}");
    // Past the state limit: a limit error naming it, not an approximation.
    let m = e(json!({"pattern": "^(?=.*a)(?=.*b)(?=.*c)(?=.*d)(?=.*e)(?=.*f).{1,300}$"}));
    assert!(m.contains("maxLookaroundStates") || m.contains("regex nodes"), "{m}");
}
