//! Data-driven grammar cases (`grammars/cases/*.json`): every `accept` string
//! must be accepted and every `reject` string rejected, by
//! 1. the text recognizer (`grammask parse`), and
//! 2. the Matcher over a synthetic vocabulary, replaying a greedy tokenization:
//!    accepted strings must have every token in the mask and EOS allowed at the
//!    end; rejected strings must hit a refused token or a refused EOS. At every
//!    position the mask must equal the set of tokens `commit_token` accepts.

use crate::common;
use common::*;
use grammask::reference::recognizer::Recognizer;

#[test]
fn grammar_cases() {
    let dir = root().join("grammars/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    assert!(!files.is_empty(), "no cases in {}", dir.display());
    let (mut n_acc, mut n_rej) = (0, 0);
    for path in &files {
        let case: Case = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let cfg = load_case_grammar(&case, path);
        let rec = Recognizer::new(cfg.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for s in &case.accept {
            if let Err(e) = rec.check(s.as_bytes()) {
                panic!("{}: should accept {s:?}, got {e}", path.display());
            }
        }
        for s in &case.reject {
            assert!(rec.check(s.as_bytes()).is_err(), "{}: should reject {s:?}", path.display());
        }
        // The same through the matcher.
        let vocab = synthetic_vocab(&grammar_tokens(&cfg));
        let store = compile_store(&cfg, vocab, true);
        for (s, want) in case.accept.iter().map(|s| (s, true)).chain(case.reject.iter().map(|s| (s, false))) {
            let ids = greedy_tokenize(store.vocab(), s.as_bytes());
            let got = matches!(replay(&store, &ids, s.len() < 40), Ok(true));
            assert_eq!(got, want, "{}: matcher on {s:?}", path.display());
        }
        n_acc += case.accept.len();
        n_rej += case.reject.len();
    }
    eprintln!("{} case files, {n_acc} accepted and {n_rej} rejected strings checked", files.len());
}
