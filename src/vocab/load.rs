//! Loading a [`Vocab`] from a Hugging Face `tokenizer.json` (feature `compiler`).
//!
//! Token bytes are recovered per id from the token string (`id_to_token`,
//! added tokens first, as the tokenizer's own `decode` does), according to the
//! scheme named by the tokenizer's decoder (or, without a decoder, its
//! pre-tokenizer) — never guessed from file names:
//! - **ByteLevel** (GPT-2 style byte-to-unicode table; Llama-3, Qwen, GPT-4o):
//!   each char maps back to one byte; a token with a char outside the table
//!   keeps its UTF-8 bytes (exactly what the ByteLevel decoder does).
//! - **SentencePiece style**: the per-token steps of the decoder chain, in
//!   order: `Metaspace` (replacement char → `' '`), `Replace` (string pattern
//!   → content), `ByteFallback` (`<0xNN>` → byte `NN`). `Fuse` and `Strip` act
//!   on the whole sequence (Llama-2's decoder strips the dummy-prefix space at
//!   sequence start only), so they are ignored: bytes are the raw mapping.
//! - **Raw**: no decoder and no byte-level/metaspace pre-tokenizer: the token
//!   string's UTF-8 bytes.
//!
//! Other decoders (WordPiece, BPE suffixes, CTC, regex `Replace`) are rejected.
//!
//! Added tokens contribute their content; the special ones are flagged.
//!
//! EOS ids: with `eos_override`, exactly those ids. Otherwise the union of
//! `eos_token` in `tokenizer_config.json` (a string or `{"content": ...}`) and
//! `eos_token_id` in `generation_config.json` (an int or a list). If neither
//! yields an id the load fails and asks for `--eos`.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use serde_json::Value;
use tokenizers::Tokenizer;

use super::Vocab;
use crate::err;
use crate::ids::TokenId;
use crate::Result;

/// Loads `tokenizer.json` at `path`; `tokenizer_config.json` and
/// `generation_config.json` in the same directory are read for EOS ids when
/// present. See the module doc for the rules.
pub fn load_tokenizer_file(path: &Path, eos_override: Option<&[u32]>) -> Result<Vocab> {
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map_err(|e| err!(Tokenizer, "cannot read tokenizer file {}: {e}", p.display()))
    };
    let json = read(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let optional = |name: &str| -> Result<Option<(String, String)>> {
        let p = dir.join(name);
        if p.is_file() {
            Ok(Some((read(&p)?, p.display().to_string())))
        } else {
            Ok(None)
        }
    };
    let tc = optional("tokenizer_config.json")?;
    let gc = optional("generation_config.json")?;
    let tok = parse_tokenizer(&json, &path.display().to_string())?;
    build(
        &tok,
        tc.as_ref().map(|(s, p)| (s.as_str(), p.as_str())),
        gc.as_ref().map(|(s, p)| (s.as_str(), p.as_str())),
        eos_override,
    )
    .map_err(|e| err!(Tokenizer, "{}: {}", path.display(), e.message()))
}

/// Builds a [`Vocab`] from the contents of `tokenizer.json` and, optionally,
/// `tokenizer_config.json` and `generation_config.json`.
pub fn vocab_from_json(
    tokenizer_json: &str,
    tokenizer_config: Option<&str>,
    generation_config: Option<&str>,
    eos_override: Option<&[u32]>,
) -> Result<Vocab> {
    let tok = parse_tokenizer(tokenizer_json, "tokenizer.json")?;
    build(
        &tok,
        tokenizer_config.map(|s| (s, "tokenizer_config.json")),
        generation_config.map(|s| (s, "generation_config.json")),
        eos_override,
    )
}

/// Builds a [`Vocab`] from an already loaded tokenizer (configs as in
/// [`vocab_from_json`]).
pub fn vocab_from_tokenizer(
    tok: &Tokenizer,
    tokenizer_config: Option<&str>,
    generation_config: Option<&str>,
    eos_override: Option<&[u32]>,
) -> Result<Vocab> {
    build(
        tok,
        tokenizer_config.map(|s| (s, "tokenizer_config.json")),
        generation_config.map(|s| (s, "generation_config.json")),
        eos_override,
    )
}

fn parse_tokenizer(json: &str, what: &str) -> Result<Tokenizer> {
    // The tokenizers crate should not panic on bad input, but be safe: a panic
    // here would otherwise take the whole compiler down.
    match std::panic::catch_unwind(|| Tokenizer::from_str(json)) {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(err!(Tokenizer, "invalid tokenizer {what}: {e}")),
        Err(_) => Err(err!(Tokenizer, "invalid tokenizer {what}: the tokenizers crate panicked")),
    }
}

/// How token strings map to bytes (see the module doc).
#[derive(Debug)]
enum Scheme {
    ByteLevel,
    /// Per-token steps of a SentencePiece-style decoder chain, in order.
    Pieces(Vec<Step>),
    Raw,
}

#[derive(Debug)]
enum Step {
    Replace(String, String),
    ByteFallback,
}

fn detect_scheme(tok: &Tokenizer) -> Result<Scheme> {
    let to_json = |v: serde_json::Result<Value>| {
        v.map_err(|e| err!(Tokenizer, "cannot inspect tokenizer configuration: {e}"))
    };
    let decoder = match tok.get_decoder() {
        Some(d) => Some(to_json(serde_json::to_value(d))?),
        None => None,
    };
    let pre = match tok.get_pre_tokenizer() {
        Some(p) => Some(to_json(serde_json::to_value(p))?),
        None => None,
    };
    let Some(decoder) = decoder else {
        let mut types = Vec::new();
        if let Some(p) = &pre {
            flatten(p, "pretokenizers", &mut types);
        }
        if types.iter().any(|t| t.get("type") == Some(&Value::from("ByteLevel"))) {
            return Ok(Scheme::ByteLevel);
        }
        if let Some(m) = types.iter().find(|t| t.get("type") == Some(&Value::from("Metaspace"))) {
            return Ok(Scheme::Pieces(vec![Step::Replace(metaspace_char(m)?, " ".into())]));
        }
        return Ok(Scheme::Raw);
    };
    let mut parts = Vec::new();
    flatten(&decoder, "decoders", &mut parts);
    if parts.iter().any(|d| d.get("type") == Some(&Value::from("ByteLevel"))) {
        return Ok(Scheme::ByteLevel);
    }
    let mut steps = Vec::new();
    for d in parts {
        match d.get("type").and_then(Value::as_str).unwrap_or("") {
            "Metaspace" => steps.push(Step::Replace(metaspace_char(d)?, " ".into())),
            "Replace" => {
                let pattern = d.get("pattern").and_then(|p| p.get("String")).and_then(Value::as_str);
                let content = d.get("content").and_then(Value::as_str);
                match (pattern, content) {
                    (Some(p), Some(c)) if !p.is_empty() => steps.push(Step::Replace(p.into(), c.into())),
                    _ => {
                        return Err(err!(
                            Tokenizer,
                            "unsupported Replace decoder {d} (only non-empty string patterns are supported)"
                        ))
                    }
                }
            }
            "ByteFallback" => steps.push(Step::ByteFallback),
            "Fuse" | "Strip" => {}
            other => {
                return Err(err!(
                    Tokenizer,
                    "unsupported decoder type {other:?}: token bytes can only be recovered for \
                     ByteLevel or SentencePiece-style (Metaspace/Replace/ByteFallback) tokenizers"
                ))
            }
        }
    }
    Ok(Scheme::Pieces(steps))
}

/// Flattens nested `Sequence`s (`key` = "decoders" or "pretokenizers").
fn flatten<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v.get(key).and_then(Value::as_array) {
        Some(items) if v.get("type") == Some(&Value::from("Sequence")) => {
            for i in items {
                flatten(i, key, out)
            }
        }
        _ => out.push(v),
    }
}

fn metaspace_char(m: &Value) -> Result<String> {
    match m.get("replacement").and_then(Value::as_str) {
        Some(r) if !r.is_empty() => Ok(r.to_string()),
        _ => Err(err!(Tokenizer, "Metaspace without a replacement character: {m}")),
    }
}

/// The inverse GPT-2 byte-to-unicode table: printable Latin-1 bytes map to
/// themselves, the other 68 bytes to U+0100 + k in byte order.
fn byte_level_inverse() -> HashMap<char, u8> {
    let mut map = HashMap::with_capacity(256);
    let mut k = 0u32;
    for b in 0..=255u8 {
        let printable = matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let c = if printable {
            char::from(b)
        } else {
            k += 1;
            char::from_u32(0x100 + k - 1).unwrap_or('\0')
        };
        map.insert(c, b);
    }
    map
}

fn piece_bytes(s: &str, steps: &[Step]) -> Vec<u8> {
    let mut text = s.to_string();
    for step in steps {
        match step {
            Step::Replace(p, c) => text = text.replace(p.as_str(), c),
            Step::ByteFallback => {
                let b = text.as_bytes();
                if b.len() == 6 && text.starts_with("<0x") && text.ends_with('>') {
                    if let Ok(byte) = u8::from_str_radix(&text[3..5], 16) {
                        return vec![byte];
                    }
                }
            }
        }
    }
    text.into_bytes()
}

fn build(
    tok: &Tokenizer,
    tokenizer_config: Option<(&str, &str)>,
    generation_config: Option<(&str, &str)>,
    eos_override: Option<&[u32]>,
) -> Result<Vocab> {
    let scheme = detect_scheme(tok)?;
    let added = tok.get_added_tokens_decoder();
    let n = tok
        .get_vocab(true)
        .values()
        .copied()
        .chain(added.keys().copied())
        .max()
        .map_or(0, |m| m as usize + 1);
    if n == 0 {
        return Err(err!(Tokenizer, "the tokenizer has an empty vocabulary"));
    }
    let inverse = matches!(scheme, Scheme::ByteLevel).then(byte_level_inverse);
    let token = |id: u32| -> (Vec<u8>, bool) {
        if let Some(a) = added.get(&id) {
            return (a.content.as_bytes().to_vec(), a.special);
        }
        let Some(s) = tok.id_to_token(id) else { return (Vec::new(), false) };
        let bytes = match (&scheme, &inverse) {
            // Like the ByteLevel decoder: a char outside the table keeps the raw string.
            (Scheme::ByteLevel, Some(inv)) => {
                s.chars().map(|c| inv.get(&c).copied()).collect::<Option<Vec<u8>>>().unwrap_or_else(|| s.into_bytes())
            }
            (Scheme::Pieces(steps), _) => piece_bytes(&s, steps),
            _ => s.into_bytes(),
        };
        (bytes, false)
    };
    let tokens: Vec<(Vec<u8>, bool)> = (0..n as u32).map(token).collect();
    let eos = find_eos(tok, n, tokenizer_config, generation_config, eos_override)?;
    Vocab::from_tokens(tokens, &eos)
}

fn find_eos(
    tok: &Tokenizer,
    n: usize,
    tokenizer_config: Option<(&str, &str)>,
    generation_config: Option<(&str, &str)>,
    eos_override: Option<&[u32]>,
) -> Result<Vec<TokenId>> {
    let check = |id: u64, from: &str| -> Result<TokenId> {
        if id < n as u64 {
            Ok(TokenId(id as u32))
        } else {
            Err(err!(Tokenizer, "EOS id {id} from {from} is out of range (vocabulary has {n} tokens)"))
        }
    };
    if let Some(ids) = eos_override {
        if ids.is_empty() {
            return Err(err!(Tokenizer, "the EOS override is empty"));
        }
        return ids.iter().map(|&i| check(i as u64, "the EOS override")).collect();
    }
    let parse = |(text, name): (&str, &str)| -> Result<Value> {
        serde_json::from_str(text).map_err(|e| err!(Tokenizer, "invalid JSON in {name}: {e}"))
    };
    let mut eos = Vec::new();
    if let Some(tc) = tokenizer_config {
        let v = parse(tc)?;
        let content = match v.get("eos_token") {
            Some(Value::String(s)) => Some(s.as_str()),
            Some(Value::Object(o)) => o.get("content").and_then(Value::as_str),
            _ => None,
        };
        if let Some(s) = content {
            match tok.token_to_id(s) {
                Some(id) => eos.push(check(id as u64, tc.1)?),
                None => {
                    return Err(err!(
                        Tokenizer,
                        "eos_token {s:?} in {} is not in the vocabulary (pass --eos ID to choose EOS ids)",
                        tc.1
                    ))
                }
            }
        }
    }
    if let Some(gc) = generation_config {
        let v = parse(gc)?;
        let bad = || err!(Tokenizer, "eos_token_id in {} must be an integer or a list of integers", gc.1);
        match v.get("eos_token_id") {
            None | Some(Value::Null) => {}
            Some(Value::Number(x)) => eos.push(check(x.as_u64().ok_or_else(bad)?, gc.1)?),
            Some(Value::Array(xs)) => {
                for x in xs {
                    eos.push(check(x.as_u64().ok_or_else(bad)?, gc.1)?);
                }
            }
            Some(_) => return Err(bad()),
        }
    }
    if eos.is_empty() {
        return Err(err!(
            Tokenizer,
            "no EOS token found (no eos_token in tokenizer_config.json, no eos_token_id in \
             generation_config.json); pass the EOS ids with --eos ID[,ID...]"
        ));
    }
    eos.sort_unstable();
    eos.dedup();
    Ok(eos)
}
