//! `grammask masks`: per file, the token ids and a hash of the mask at every position.

use crate::common::{expand, load_store, read, tokenizer_for, with_list};
use grammask::matcher::Matcher;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Replay files token by token and print, per file, one JSON line with the
/// token ids and a hash of the mask at every position (before each token,
/// and at the end): the reference that pkg-tests compares the wasm build
/// against. Hash: two 32-bit lanes over the mask words,
/// `a = (a ^ w) * 0x01000193`, `b = ((b ^ w) * 0x27d4eb2d) + i` (wrapping),
/// printed as 16 hex digits `a` then `b`.
#[derive(clap::Args)]
pub struct Args {
    /// The compiled mask store (from `compile -o`).
    #[arg(long)]
    store: PathBuf,
    /// The store's tokenizer.json (splits the files into tokens).
    #[arg(long)]
    tokenizer: PathBuf,
    /// Read more file paths from this file (one per line).
    #[arg(long)]
    files_from: Option<PathBuf>,
    /// Files (or directories) to replay.
    files: Vec<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    let files = with_list(a.files, a.files_from)?;
    cmd_masks(&a.store, &a.tokenizer, &files)
}

/// The mask hash of `grammask masks` (see its help).
fn mask_hash(words: &[u32]) -> String {
    let (mut a, mut b) = (0x811c_9dc5u32, 0x9747_b28cu32);
    for (i, &w) in words.iter().enumerate() {
        a = (a ^ w).wrapping_mul(0x0100_0193);
        b = (b ^ w).wrapping_mul(0x27d4_eb2d).wrapping_add(i as u32);
    }
    format!("{a:08x}{b:08x}")
}

fn cmd_masks(store: &Path, tokenizer: &Path, files: &[PathBuf]) -> Result<bool> {
    let store = Rc::new(load_store(store)?);
    let tok = tokenizer_for(&store, tokenizer)?;
    let mut mask = vec![0u32; store.mask_words()];
    let mut all_ok = true;
    for f in expand(files) {
        let Ok(text) = String::from_utf8(read(&f)?) else { continue };
        let enc = tok.encode(text.as_str(), false).map_err(|e| Error::new(ErrorKind::Tokenizer, e.to_string()))?;
        let ids = enc.get_ids();
        let mut m = Matcher::new(store.clone());
        let mut hashes = Vec::with_capacity(ids.len() + 1);
        let mut violation = None;
        for (i, &id) in ids.iter().enumerate() {
            m.fill_mask(&mut mask)?;
            hashes.push(mask_hash(&mask));
            if mask[(id >> 5) as usize] >> (id & 31) & 1 == 0 || m.commit_token(id).is_err() {
                violation = Some(i);
                break;
            }
        }
        let mut eos_ok = false;
        if violation.is_none() {
            m.fill_mask(&mut mask)?;
            hashes.push(mask_hash(&mask));
            eos_ok = m.is_accepting() && store.vocab().eos_ids().iter().all(|t| mask[t.index() >> 5] >> (t.0 & 31) & 1 == 1);
        }
        all_ok &= violation.is_none() && eos_ok;
        println!("{}", serde_json::json!({"file": f, "ids": ids, "hashes": hashes, "violation": violation, "eos_ok": eos_ok}));
    }
    Ok(all_ok)
}
