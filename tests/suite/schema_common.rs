//! Helpers of the schema tests: a real tokenizer, compile through
//! `constraint::compile`, token-by-token replay with EOS at the end.

use grammask::constraint::{compile, Constraint, ConstraintOptions};
use grammask::matcher::Matcher;
use grammask::store::MaskStore;
use grammask::vocab::PreparedVocab;
use std::rc::Rc;

pub use crate::common::root;

pub struct Tok {
    pub pv: Rc<PreparedVocab>,
    pub tok: tokenizers::Tokenizer,
}

impl Tok {
    pub fn llama3() -> Tok {
        let p = root().join("models/llama3/tokenizer.json");
        let vocab = grammask::vocab::load::load_tokenizer_file(&p, None).expect("models/llama3 (run scripts/setup/setup.sh)");
        let tok = tokenizers::Tokenizer::from_file(&p).expect("tokenizer");
        Tok { pv: Rc::new(PreparedVocab::new(vocab)), tok }
    }

    pub fn compile(&self, schema: &serde_json::Value) -> Rc<MaskStore> {
        self.compile_with(schema, &ConstraintOptions::default())
    }

    pub fn compile_with(&self, schema: &serde_json::Value, o: &ConstraintOptions) -> Rc<MaskStore> {
        let (s, _) = compile(&self.pv, &Constraint::JsonSchema(schema.clone()), o).expect("compile");
        Rc::new(s)
    }

    pub fn ids(&self, text: &str) -> Vec<u32> {
        self.tok.encode(text, false).expect("encode").get_ids().to_vec()
    }

    /// Every token in the mask and committed, then EOS allowed.
    pub fn replay(&self, store: &Rc<MaskStore>, text: &str) -> bool {
        let mut m = Matcher::new(store.clone());
        let mut mask = vec![0u32; store.mask_words()];
        for id in self.ids(text) {
            m.fill_mask(&mut mask).expect("mask");
            if mask[(id >> 5) as usize] >> (id & 31) & 1 == 0 {
                return false;
            }
            if m.commit_token(id).is_err() {
                return false;
            }
        }
        m.fill_mask(&mut mask).expect("mask");
        m.is_accepting() && store.vocab().eos_ids().iter().all(|t| mask[t.index() >> 5] >> (t.0 & 31) & 1 == 1)
    }
}
