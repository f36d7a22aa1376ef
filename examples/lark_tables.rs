//! Dumps the LALR(1) tables grammask builds for a Lark grammar as JSON, for
//! comparison with Lark's own tables (`scripts/lark/lark_corpus.py tables`):
//! `cargo run --example lark_tables -- GRAMMAR.lark [START]`.
//!
//! Output: `{"terminals": [{"name", "priority", "ignored", "lark": [max_width, pattern_len, flags]}],
//! "lexer", "start": state, "states": [{"actions": {TERMINAL: ["shift", state] |
//! ["reduce", "origin : a b c"] | ["accept"]}, "goto": {rule: state}}]}`.

use grammask::parser::Action;
use grammask::ids::{NonterminalId, ParseStateId, TerminalId};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: lark_tables GRAMMAR.lark [START]");
        std::process::exit(2);
    };
    let cfg = match grammask::constraint::load_lark_file(std::path::Path::new(path), args.get(2).map(|s| s.as_str())) {
        Ok(c) => c,
        Err(e) => {
            println!("{}", serde_json::json!({"error": e.to_string()}));
            return;
        }
    };
    let t = match grammask::parser::lalr::build_tables(&cfg) {
        Ok(t) => t,
        Err(e) => {
            println!("{}", serde_json::json!({"error": e.to_string()}));
            return;
        }
    };
    let rule = |r: u32| {
        let rule = &cfg.rules[r as usize];
        let mut s = format!("{} :", cfg.nonterminals[rule.lhs.index()].name);
        for &x in &rule.rhs {
            s.push(' ');
            s.push_str(cfg.symbol_name(x));
        }
        s
    };
    let mut states = Vec::new();
    for s in 0..t.n_states() {
        let mut actions = serde_json::Map::new();
        for term in 0..t.n_terminals() {
            let name = if term + 1 == t.n_terminals() { "$END".to_string() } else { cfg.terminals[term as usize].name.clone() };
            let a = match t.action(ParseStateId(s), TerminalId(term)) {
                Action::Error => continue,
                Action::Shift(to) => serde_json::json!(["shift", to.0]),
                Action::Reduce(r) => serde_json::json!(["reduce", rule(r.0)]),
                Action::Accept => serde_json::json!(["accept"]),
            };
            actions.insert(name, a);
        }
        let mut goto = serde_json::Map::new();
        for n in 0..t.n_nonterminals() {
            if let Some(to) = t.goto(ParseStateId(s), NonterminalId(n)) {
                goto.insert(cfg.nonterminals[n as usize].name.clone(), serde_json::json!(to.0));
            }
        }
        states.push(serde_json::json!({"actions": actions, "goto": goto}));
    }
    let terminals: Vec<serde_json::Value> = cfg
        .terminals
        .iter()
        .map(|t| {
            let order = t.lark.as_ref().map(|o| serde_json::json!([o.max_width.to_string(), o.pattern_len, o.flags.iter().collect::<String>()]));
            serde_json::json!({"name": t.name, "priority": t.priority, "ignored": t.ignored, "lark": order})
        })
        .collect();
    println!("{}", serde_json::json!({"start": t.start_state().0, "states": states, "terminals": terminals, "lexer": cfg.lexer.name()}));
}
