//! The Lark front end's [`LarkOrder`] (Lark's lexer sort key: `max_width`,
//! `len(pattern.value)`, flags) and priorities equal Lark 1.2.2's own values,
//! terminal by terminal, for the definitions in `grammars/cases/oracle/lark_order.json`
//! (dumped from Lark by `scripts/gen/lark_order_cases.py`).

use grammask::constraint::parse_lark as parse_grammar;
use grammask::grammar::Cfg;

#[derive(serde::Deserialize)]
struct Expected {
    name: String,
    pattern_len: usize,
    max_width: String,
    flags: String,
    priority: i32,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(serde::Deserialize)]
struct Cases {
    grammar: String,
    terminals: Vec<Expected>,
}

fn cases() -> Cases {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars/cases/oracle/lark_order.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn check(cfg: &Cfg, e: &Expected) {
    let t = cfg.terminal(cfg.terminal_by_name(&e.name).unwrap_or_else(|| panic!("{}: not a grammask terminal", e.name)));
    let o = t.lark.as_ref().unwrap_or_else(|| panic!("{}: no LarkOrder", e.name));
    let max = if o.max_width == u64::MAX { (1u128 << 64).to_string() } else { o.max_width.to_string() };
    let flags: String = o.flags.iter().collect();
    assert_eq!((o.pattern_len, max.as_str(), flags.as_str(), t.priority), (e.pattern_len, e.max_width.as_str(), e.flags.as_str(), e.priority), "{}", e.name);
    assert_eq!(t.is_literal(), e.kind == "str", "{}: pattern type", e.name);
}

/// With `start` replaced, the grammar keeps only that rule's terminals.
fn with_start(grammar: &str, start_rule: &str) -> String {
    let body_end = grammar.find("\nA:").unwrap();
    format!("{start_rule}{}", &grammar[body_end..])
}

#[test]
fn named_terminals_have_larks_order() {
    let c = cases();
    let mut n = 0;
    for e in c.terminals.iter().filter(|e| !e.name.starts_with("__") && e.name.chars().all(|c| c.is_ascii())) {
        if ["IF", "LPAR"].contains(&e.name.as_str()) {
            continue;
        }
        let g = with_start(&c.grammar, &format!("start: {}\n", e.name));
        match parse_grammar(&g, "lark_order.lark", None, &|_| None) {
            Ok(cfg) => {
                check(&cfg, e);
                n += 1;
            }
            // Lookaround outside the forms grammask compiles: refused, naming the terminal.
            Err(err) => assert!(["AQ"].contains(&e.name.as_str()) && err.message().contains(&e.name), "{}: {err}", e.name),
        }
    }
    assert!(n >= 50, "{n} terminals checked");
}

#[test]
fn anonymous_terminals_are_named_and_ordered_like_lark() {
    let c = cases();
    let start = "start: \"if\" | \"(\" | \"+=\" | /[0-9]+/ | \"élan\" | \"x\"i | /ab|c/\n";
    let cfg = parse_grammar(&with_start(&c.grammar, start), "lark_order.lark", None, &|_| None).unwrap();
    let anon: Vec<&Expected> = c.terminals.iter().filter(|e| e.name.starts_with("__") || ["IF", "LPAR", "ÉLAN"].contains(&e.name.as_str())).collect();
    assert_eq!(anon.len(), 7);
    for e in anon {
        check(&cfg, e);
    }
}
