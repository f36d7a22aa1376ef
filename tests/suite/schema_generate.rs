//! Random constrained generations through the masks (Llama-3 tokenizer) for
//! the schemas of tests/data/schemas, validated by a real validator: python
//! `jsonschema` with its format checkers (scripts/experiments/validate_generations.py, in
//! .venv-schema from scripts/setup/setup.sh: `jsonschema[format]`; a format without
//! a checker fails).
//! 0 failures. GRAMMASK_FULL=1: more samples per schema.

use crate::schema_common;

use grammask::ids::TokenId;
use grammask::matcher::Matcher;
use schema_common::{root, Tok};

/// splitmix64
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[test]
fn generations_validate() {
    let per = if std::env::var_os("GRAMMASK_FULL").is_some() { 20 } else { 3 };
    let tok = Tok::llama3();
    let dir = root().join("tests/data/schemas");
    let out = std::env::temp_dir().join(format!("grammask-gen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let eos: Vec<u32> = tok.pv.vocab().eos_ids().iter().map(|t| t.0).collect();
    let mut rng = Rng(7);
    let mut written = 0;
    for f in files {
        let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        let store = tok.compile(&schema);
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        std::fs::create_dir_all(out.join(&name)).unwrap();
        let mut mask = vec![0u32; store.mask_words()];
        let mut done = 0;
        for attempt in 0..per * 4 {
            if done == per {
                break;
            }
            let mut m = Matcher::new(store.clone());
            let mut text = Vec::new();
            let mut ended = false;
            for n in 0..300 {
                m.fill_mask(&mut mask).unwrap();
                let allowed: Vec<u32> = (0..mask.len() * 32).filter(|&i| mask[i >> 5] >> (i & 31) & 1 == 1).map(|i| i as u32).collect();
                let finishing = n > 120;
                let only_eos = allowed.iter().all(|t| eos.contains(t));
                if m.is_accepting() && (finishing || only_eos || rng.next() % 4 == 0) {
                    assert!(eos.iter().all(|e| allowed.contains(e)), "{name}: accepting but EOS not in the mask");
                    ended = true;
                    break;
                }
                let cands: Vec<u32> = allowed.iter().copied().filter(|t| !eos.contains(t)).collect();
                assert!(!cands.is_empty(), "{name}: no token allowed and not accepting (dead end) after {:?}", String::from_utf8_lossy(&text));
                let short: Vec<u32> = cands.iter().copied().filter(|&t| tok.pv.vocab().token_bytes(TokenId(t)).len() == 1).collect();
                let pool = if (finishing || rng.next() % 2 == 0) && !short.is_empty() { &short } else { &cands };
                let t = pool[(rng.next() % pool.len() as u64) as usize];
                m.commit_token(t).unwrap();
                text.extend_from_slice(tok.pv.vocab().token_bytes(TokenId(t)));
            }
            if ended {
                std::fs::write(out.join(&name).join(format!("sample_{attempt:04}.txt")), &text).unwrap();
                done += 1;
                written += 1;
            }
        }
    }
    assert!(written > 0);
    let python = root().join(".venv-schema/bin/python");
    assert!(python.is_file(), "{} is missing: run scripts/setup/setup.sh", python.display());
    let st = std::process::Command::new(&python)
        .arg(root().join("scripts/experiments/validate_generations.py"))
        .arg(&dir)
        .arg(&out)
        .status()
        .expect(".venv-schema/bin/python");
    let _ = std::fs::remove_dir_all(&out);
    assert!(st.success(), "generated instances failed validation (see above)");
}
