//! Loading a [`Vocab`] from a Hugging Face `tokenizer.json` (feature
//! `tokenizer-json`), with `serde_json` only: no tokenizer is built, nothing is
//! encoded. The result is the vocabulary the `tokenizers` crate (0.22) itself
//! would give (same ids, bytes, special flags, so the same fingerprint); the
//! test `tests/suite/vocab.rs` checks this against the crate on every tokenizer in
//! `models/`.
//!
//! **Ids.** The model's vocabulary: `model.vocab`, an object `{token: id}`
//! (BPE, WordPiece, WordLevel) or a list of `[piece, score]` whose index is the
//! id (Unigram). Then `added_tokens`, in file order, numbered as the crate
//! numbers them (`AddedVocabulary::add_tokens`): a token whose content is
//! already an added token or a model token takes that id; otherwise the next
//! free id from the model's vocabulary size on. (The `id` written in the file
//! is not used: the crate only warns when it differs.) An empty content, or a
//! token identical to an earlier one, is skipped. [`Vocab::len`] is the largest
//! id + 1; ids with no token at all are holes (empty bytes).
//!
//! **Bytes** per id, from the token string (added tokens first, as the
//! tokenizer's own `decode` does), according to the scheme named by the
//! tokenizer's decoder (or, without a decoder, its pre-tokenizer), never
//! guessed from file names:
//! - **ByteLevel** (GPT-2 style byte-to-unicode table; Llama-3, Qwen, GPT-4o,
//!   SmolLM2): each char maps back to one byte; a token with a char outside the
//!   table keeps its UTF-8 bytes (exactly what the ByteLevel decoder does).
//! - **SentencePiece style**: the per-token steps of the decoder chain, in
//!   order: `Metaspace` (replacement char → `' '`), `Replace` (string pattern
//!   → content), `ByteFallback` (`<0xNN>` → byte `NN`). `Fuse` and `Strip` act
//!   on the whole sequence (Llama-2's decoder strips the dummy-prefix space at
//!   sequence start only), so they are ignored: bytes are the raw mapping.
//! - **Raw**: no decoder and no byte-level/metaspace pre-tokenizer: the token
//!   string's UTF-8 bytes.
//!
//! Other decoders (WordPiece, BPE suffixes, CTC, regex `Replace`) are rejected.
//! Added tokens contribute their content; the special ones are flagged.
//!
//! **EOS ids**: with an explicit list, exactly those ids. Otherwise the union
//! of `eos_token` in `tokenizer_config.json` (a string or `{"content": ...}`)
//! and `eos_token_id` in `generation_config.json` (an int or a list). If
//! neither yields an id the load fails and says which option gives them.
//!
//! Parsing borrows the token strings from the JSON text and skips everything
//! else (merges, normalizer, post-processor) without building values, so the
//! 9 MB Llama-3 file loads in tens of milliseconds.

use std::borrow::Cow;
use crate::hash::{FxMap as HashMap, FxSet as HashSet};
use std::path::Path;

use serde::de::{Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::marker::PhantomData;
use serde_json::Value;

use super::Vocab;
use crate::err;
use crate::ids::TokenId;
use crate::Result;

/// Where the configuration comes from and how messages name the EOS option.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions<'a> {
    /// Contents of `tokenizer_config.json` (its `eos_token`).
    pub tokenizer_config: Option<&'a str>,
    /// Contents of `generation_config.json` (its `eos_token_id`).
    pub generation_config: Option<&'a str>,
    /// Explicit EOS ids: replace the configured ones.
    pub eos: Option<&'a [u32]>,
    /// How error messages name the option that gives EOS ids, e.g.
    /// `"--eos ID[,ID...]"` (the CLI) or `"the eosTokenIds option"` (JS).
    pub eos_option: &'a str,
}

/// The CLI's name for the EOS option (the default of [`vocab_from_json`]).
pub const CLI_EOS_OPTION: &str = "--eos ID[,ID...]";

impl Default for LoadOptions<'_> {
    fn default() -> Self {
        LoadOptions { tokenizer_config: None, generation_config: None, eos: None, eos_option: CLI_EOS_OPTION }
    }
}

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
    let optional = |name: &str| -> Result<Option<String>> {
        let p = dir.join(name);
        if p.is_file() {
            Ok(Some(read(&p)?))
        } else {
            Ok(None)
        }
    };
    let tc = optional("tokenizer_config.json")?;
    let gc = optional("generation_config.json")?;
    let opts = LoadOptions {
        tokenizer_config: tc.as_deref(),
        generation_config: gc.as_deref(),
        eos: eos_override,
        eos_option: CLI_EOS_OPTION,
    };
    vocab_from_json_with(&json, &opts).map_err(|e| err!(Tokenizer, "{}: {}", path.display(), e.message()))
}

/// Builds a [`Vocab`] from the contents of `tokenizer.json` and, optionally,
/// `tokenizer_config.json` and `generation_config.json` (messages name the
/// CLI's `--eos`; see [`vocab_from_json_with`]).
pub fn vocab_from_json(
    tokenizer_json: &str,
    tokenizer_config: Option<&str>,
    generation_config: Option<&str>,
    eos_override: Option<&[u32]>,
) -> Result<Vocab> {
    vocab_from_json_with(
        tokenizer_json,
        &LoadOptions { tokenizer_config, generation_config, eos: eos_override, eos_option: CLI_EOS_OPTION },
    )
}

/// Builds a [`Vocab`] from the contents of `tokenizer.json` (see the module doc).
pub fn vocab_from_json_with(tokenizer_json: &str, opts: &LoadOptions) -> Result<Vocab> {
    let file: TokenizerFile = serde_json::from_str(tokenizer_json)
        .map_err(|e| err!(Tokenizer, "invalid tokenizer.json: {e}"))?;
    let ids = Ids::new(&file)?;
    let scheme = detect_scheme(file.decoder.as_ref(), file.pre_tokenizer.as_ref())?;
    let inverse = matches!(scheme, Scheme::ByteLevel).then(byte_level_inverse);
    let tokens: Vec<(Vec<u8>, bool)> = (0..ids.n as u32)
        .map(|id| {
            if let Some(a) = ids.added_r.get(&id) {
                return (a.content.as_bytes().to_vec(), a.special);
            }
            let Some(s) = ids.model_token(id) else { return (Vec::new(), false) };
            let bytes = match (&scheme, &inverse) {
                // Like the ByteLevel decoder: a char outside the table keeps the raw string.
                (Scheme::ByteLevel, Some(inv)) => s
                    .chars()
                    .map(|c| inv.get(&c).copied())
                    .collect::<Option<Vec<u8>>>()
                    .unwrap_or_else(|| s.as_bytes().to_vec()),
                (Scheme::Pieces(steps), _) => piece_bytes(s, steps),
                _ => s.as_bytes().to_vec(),
            };
            (bytes, false)
        })
        .collect();
    let eos = find_eos(&ids, opts)?;
    Vocab::from_tokens(tokens, &eos)
}

// ---- the parts of tokenizer.json that matter --------------------------------
//
// Read by hand-written visitors over `deserialize_any` alone, each of which
// answers every kind of JSON value with its own message. serde's typed
// deserializers and its default visitor methods build `invalid_type` errors,
// whose message can format a float; keeping them out of reach keeps core's
// float formatting (about 14 KB) out of the wasm builds.

struct TokenizerFile<'a> {
    added_tokens: Vec<AddedToken<'a>>,
    model: Model<'a>,
    decoder: Option<Value>,
    pre_tokenizer: Option<Value>,
}

/// The visitor methods of the JSON kinds a visitor does not take: an error
/// saying what was expected.
macro_rules! refuse_kinds {
    ($what:literal; $($kind:ident),*) => { $(refuse_kinds!(@ $kind $what);)* };
    (@ bool $what:literal) => { fn visit_bool<E: Error>(self, _: bool) -> std::result::Result<Self::Value, E> { Err(E::custom(concat!("expected ", $what))) } };
    (@ num $what:literal) => {
        fn visit_i64<E: Error>(self, _: i64) -> std::result::Result<Self::Value, E> { Err(E::custom(concat!("expected ", $what))) }
        fn visit_u64<E: Error>(self, _: u64) -> std::result::Result<Self::Value, E> { Err(E::custom(concat!("expected ", $what))) }
        fn visit_f64<E: Error>(self, _: f64) -> std::result::Result<Self::Value, E> { Err(E::custom(concat!("expected ", $what))) }
    };
    (@ str $what:literal) => { fn visit_str<E: Error>(self, _: &str) -> std::result::Result<Self::Value, E> { Err(E::custom(concat!("expected ", $what))) } };
    (@ unit $what:literal) => { fn visit_unit<E: Error>(self) -> std::result::Result<Self::Value, E> { Err(E::custom(concat!("expected ", $what))) } };
    (@ seq $what:literal) => { fn visit_seq<S: SeqAccess<'de>>(self, _: S) -> std::result::Result<Self::Value, S::Error> { Err(S::Error::custom(concat!("expected ", $what))) } };
    (@ map $what:literal) => { fn visit_map<M: MapAccess<'de>>(self, _: M) -> std::result::Result<Self::Value, M::Error> { Err(M::Error::custom(concat!("expected ", $what))) } };
}

/// Any JSON value, with strings borrowed from the text when they have no
/// escapes. Numbers keep only what the loader needs: a non-negative integer.
enum J<'a> {
    Null,
    Bool(bool),
    Uint(u64),
    /// A negative or fractional number.
    Num,
    Str(Cow<'a, str>),
    Arr(Vec<J<'a>>),
    Obj(Vec<(Cow<'a, str>, J<'a>)>),
}

impl<'de: 'a, 'a> Deserialize<'de> for J<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = J<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E: Error>(self, b: bool) -> std::result::Result<J<'a>, E> {
                Ok(J::Bool(b))
            }
            fn visit_i64<E: Error>(self, x: i64) -> std::result::Result<J<'a>, E> {
                Ok(u64::try_from(x).map_or(J::Num, J::Uint))
            }
            fn visit_u64<E: Error>(self, x: u64) -> std::result::Result<J<'a>, E> {
                Ok(J::Uint(x))
            }
            fn visit_f64<E: Error>(self, _: f64) -> std::result::Result<J<'a>, E> {
                Ok(J::Num)
            }
            fn visit_borrowed_str<E: Error>(self, s: &'de str) -> std::result::Result<J<'a>, E> {
                Ok(J::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: Error>(self, s: &str) -> std::result::Result<J<'a>, E> {
                Ok(J::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: Error>(self, s: String) -> std::result::Result<J<'a>, E> {
                Ok(J::Str(Cow::Owned(s)))
            }
            fn visit_unit<E: Error>(self) -> std::result::Result<J<'a>, E> {
                Ok(J::Null)
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> std::result::Result<J<'a>, S::Error> {
                let mut out = Vec::with_capacity(s.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(x) = s.next_element::<J<'a>>()? {
                    out.push(x);
                }
                Ok(J::Arr(out))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<J<'a>, M::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(k) = m.next_key::<Key<'a>>()? {
                    out.push((k.0, m.next_value::<J<'a>>()?));
                }
                Ok(J::Obj(out))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// An object's key (JSON keys are strings).
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: Error>(self, s: &'de str) -> std::result::Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: Error>(self, s: &str) -> std::result::Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: Error>(self, s: String) -> std::result::Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(s)))
            }
            refuse_kinds!("a string"; bool, num, unit, seq, map);
        }
        d.deserialize_any(V(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for TokenizerFile<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = TokenizerFile<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<Self::Value, M::Error> {
                let (mut added_tokens, mut model, mut decoder, mut pre_tokenizer) = (Vec::new(), None, None, None);
                while let Some(k) = m.next_key::<Key<'a>>()? {
                    match &*k.0 {
                        "added_tokens" => match m.next_value::<J<'a>>()? {
                            J::Null => added_tokens.clear(),
                            J::Arr(xs) => {
                                added_tokens = xs.into_iter().map(AddedToken::from_json).collect::<std::result::Result<_, _>>().map_err(M::Error::custom)?
                            }
                            _ => return Err(M::Error::custom("added_tokens: expected a list")),
                        },
                        "model" => model = Some(m.next_value::<Model<'a>>()?),
                        "decoder" => decoder = m.next_value::<Option<Value>>()?,
                        "pre_tokenizer" => pre_tokenizer = m.next_value::<Option<Value>>()?,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let model = model.ok_or_else(|| M::Error::custom("no model"))?;
                Ok(TokenizerFile { added_tokens, model, decoder, pre_tokenizer })
            }
            refuse_kinds!("an object"; bool, num, str, unit, seq);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// An entry of `added_tokens`. Equality is the crate's: every field (the
/// defaults are the crate's `AddedToken::default()`).
#[derive(Clone, PartialEq, Eq, Hash)]
struct AddedToken<'a> {
    content: Str<'a>,
    single_word: bool,
    lstrip: bool,
    rstrip: bool,
    normalized: bool,
    special: bool,
}

impl<'a> AddedToken<'a> {
    fn from_json(v: J<'a>) -> std::result::Result<Self, &'static str> {
        let J::Obj(fields) = v else { return Err("added_tokens: an entry is not an object") };
        let mut t = AddedToken {
            content: Str(Cow::Borrowed("")),
            single_word: false,
            lstrip: false,
            rstrip: false,
            normalized: true,
            special: false,
        };
        let mut content = false;
        for (k, v) in fields {
            let flag = match &*k {
                "content" => {
                    let J::Str(s) = v else { return Err("added_tokens: a content is not a string") };
                    t.content = Str(s);
                    content = true;
                    continue;
                }
                "single_word" => &mut t.single_word,
                "lstrip" => &mut t.lstrip,
                "rstrip" => &mut t.rstrip,
                "normalized" => &mut t.normalized,
                "special" => &mut t.special,
                _ => continue,
            };
            let J::Bool(b) = v else { return Err("added_tokens: a flag (single_word, lstrip, rstrip, normalized, special) is not true or false") };
            *flag = b;
        }
        if !content {
            return Err("added_tokens: an entry has no content");
        }
        Ok(t)
    }
}

/// A string borrowed from the JSON text when it has no escapes.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Str<'a>(Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

struct Model<'a> {
    kind: Option<String>,
    vocab: ModelVocab<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Model<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Model<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<Self::Value, M::Error> {
                let (mut kind, mut vocab) = (None, None);
                while let Some(k) = m.next_key::<Key<'a>>()? {
                    match &*k.0 {
                        "type" => match m.next_value::<J<'a>>()? {
                            J::Null => kind = None,
                            J::Str(s) => kind = Some(s.into_owned()),
                            _ => return Err(M::Error::custom("model.type: expected a string")),
                        },
                        "vocab" => vocab = Some(m.next_value::<ModelVocab<'a>>()?),
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let vocab = vocab.ok_or_else(|| M::Error::custom("model: no vocab"))?;
                Ok(Model { kind, vocab })
            }
            refuse_kinds!("an object (the model)"; bool, num, str, unit, seq);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// `model.vocab`: `{token: id}` or `[[piece, score], ...]` (Unigram).
enum ModelVocab<'a> {
    Map(Vec<(Str<'a>, u32)>),
    List(Vec<Str<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for ModelVocab<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = ModelVocab<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object {token: id} or a list of [piece, score] pairs")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<Self::Value, M::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0));
                while let Some(k) = m.next_key::<Key<'a>>()? {
                    let id = match m.next_value::<J<'a>>()? {
                        J::Uint(x) => u32::try_from(x).ok(),
                        _ => None,
                    };
                    let id = id.ok_or_else(|| M::Error::custom("model.vocab: a token id is not an integer from 0 to 4294967295"))?;
                    out.push((Str(k.0), id));
                }
                Ok(ModelVocab::Map(out))
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut s: S) -> std::result::Result<Self::Value, S::Error> {
                let mut out = Vec::with_capacity(s.size_hint().unwrap_or(0));
                while let Some(x) = s.next_element::<J<'a>>()? {
                    let piece = match x {
                        J::Arr(mut pair) if pair.len() == 2 => match pair.swap_remove(0) {
                            J::Str(p) => Some(p),
                            _ => None,
                        },
                        _ => None,
                    };
                    out.push(Str(piece.ok_or_else(|| S::Error::custom("model.vocab: an entry is not a [piece, score] pair"))?));
                }
                Ok(ModelVocab::List(out))
            }
            refuse_kinds!("an object {token: id} or a list of [piece, score] pairs"; bool, num, str, unit);
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Token ↔ id as the `tokenizers` crate assigns them (see the module doc).
struct Ids<'f, 'a> {
    /// Model token → id (later duplicates win, as in the crate's maps).
    model: HashMap<&'f str, u32>,
    /// Model id → token.
    model_r: HashMap<u32, &'f str>,
    /// Added token content → id, and id → token.
    added: HashMap<&'f str, u32>,
    added_r: HashMap<u32, &'f AddedToken<'a>>,
    n: usize,
}

impl<'f, 'a> Ids<'f, 'a> {
    fn new(file: &'f TokenizerFile<'a>) -> Result<Self> {
        let mut model = HashMap::default();
        let mut model_r = HashMap::default();
        let model_size = match (&file.model.vocab, file.model.kind.as_deref()) {
            (ModelVocab::Map(entries), None | Some("BPE" | "WordPiece" | "WordLevel")) => {
                model.reserve(entries.len());
                model_r.reserve(entries.len());
                for (t, id) in entries {
                    model.insert(&**t, *id);
                    model_r.insert(*id, &**t);
                }
                model.len()
            }
            (ModelVocab::List(pieces), None | Some("Unigram")) => {
                model.reserve(pieces.len());
                for (i, p) in pieces.iter().enumerate() {
                    let id = u32::try_from(i).map_err(|_| err!(Limit, "vocab: too many tokens"))?;
                    model.insert(&**p, id);
                    model_r.insert(id, &**p);
                }
                pieces.len()
            }
            (v, Some(k)) => {
                let shape = if matches!(v, ModelVocab::Map(_)) { "an object" } else { "a list" };
                return Err(err!(Tokenizer, "invalid tokenizer.json: a {k} model with {shape} as its vocab"));
            }
        };
        let model_size = u32::try_from(model_size).map_err(|_| err!(Limit, "vocab: too many tokens"))?;
        // AddedVocabulary::add_tokens, on an empty added vocabulary.
        let mut added: HashMap<&'f str, u32> = HashMap::default();
        let mut added_r: HashMap<u32, &'f AddedToken<'a>> = HashMap::default();
        let mut existing: HashSet<&'f AddedToken<'a>> = HashSet::default();
        let mut next_id = model_size;
        for t in &file.added_tokens {
            if t.content.is_empty() || existing.contains(t) {
                continue;
            }
            let id = match added.get(&*t.content).or_else(|| model.get(&*t.content)) {
                Some(&id) => id,
                None => {
                    let id = next_id;
                    next_id = next_id.checked_add(1).ok_or_else(|| err!(Limit, "vocab: too many tokens"))?;
                    id
                }
            };
            added.insert(&t.content, id);
            added_r.insert(id, t);
            existing.insert(t);
        }
        let n = model.values().chain(added.values()).copied().max().map_or(0, |m| m as usize + 1);
        if n == 0 {
            return Err(err!(Tokenizer, "the tokenizer has an empty vocabulary"));
        }
        Ok(Ids { model, model_r, added, added_r, n })
    }

    fn model_token(&self, id: u32) -> Option<&'f str> {
        self.model_r.get(&id).copied()
    }

    /// Token string → id: added tokens first, then the model.
    fn token_to_id(&self, s: &str) -> Option<u32> {
        self.added.get(s).or_else(|| self.model.get(s)).copied()
    }
}

// ---- token bytes -------------------------------------------------------------

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

fn is_type(v: &Value, t: &str) -> bool {
    v.get("type").and_then(Value::as_str) == Some(t)
}

fn detect_scheme(decoder: Option<&Value>, pre: Option<&Value>) -> Result<Scheme> {
    let decoder = decoder.filter(|d| !d.is_null());
    let Some(decoder) = decoder else {
        let mut types = Vec::new();
        if let Some(p) = pre.filter(|p| !p.is_null()) {
            flatten(p, "pretokenizers", &mut types);
        }
        if types.iter().any(|t| is_type(t, "ByteLevel")) {
            return Ok(Scheme::ByteLevel);
        }
        if let Some(m) = types.iter().find(|t| is_type(t, "Metaspace")) {
            return Ok(Scheme::Pieces(vec![Step::Replace(metaspace_char(m)?, " ".into())]));
        }
        return Ok(Scheme::Raw);
    };
    let mut parts = Vec::new();
    flatten(decoder, "decoders", &mut parts);
    if parts.iter().any(|d| is_type(d, "ByteLevel")) {
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
fn flatten<'v>(v: &'v Value, key: &str, out: &mut Vec<&'v Value>) {
    match v.get(key).and_then(Value::as_array) {
        Some(items) if is_type(v, "Sequence") => {
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

/// The inverse GPT-2 byte-to-unicode table, indexed by code point: printable
/// Latin-1 bytes map to themselves, the other 68 bytes to U+0100 + k in byte
/// order. Code points past the table, or not in it, map to `None`.
struct ByteLevelInverse([Option<u8>; 0x144]);

impl ByteLevelInverse {
    fn get(&self, c: &char) -> Option<&u8> {
        self.0.get(*c as usize).and_then(Option::as_ref)
    }
}

fn byte_level_inverse() -> ByteLevelInverse {
    let mut map = [None; 0x144];
    let mut k = 0usize;
    for b in 0..=255u8 {
        let printable = matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let c = if printable {
            b as usize
        } else {
            k += 1;
            0x100 + k - 1
        };
        map[c] = Some(b);
    }
    ByteLevelInverse(map)
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

// ---- EOS ---------------------------------------------------------------------

fn find_eos(ids: &Ids, opts: &LoadOptions) -> Result<Vec<TokenId>> {
    let n = ids.n;
    let hint = opts.eos_option;
    let check = |id: u64, from: &str| -> Result<TokenId> {
        if id < n as u64 {
            Ok(TokenId(id as u32))
        } else {
            Err(err!(Tokenizer, "EOS id {id} from {from} is out of range (vocabulary has {n} tokens)"))
        }
    };
    if let Some(ids) = opts.eos {
        if ids.is_empty() {
            return Err(err!(Tokenizer, "the explicit EOS list ({hint}) is empty"));
        }
        return ids.iter().map(|&i| check(i as u64, "the explicit EOS list")).collect();
    }
    let parse = |text: &str, name: &str| -> Result<Value> {
        serde_json::from_str(text).map_err(|e| err!(Tokenizer, "invalid JSON in {name}: {e}"))
    };
    let mut eos = Vec::new();
    if let Some(tc) = opts.tokenizer_config {
        let name = "tokenizer_config.json";
        let v = parse(tc, name)?;
        let content = match v.get("eos_token") {
            Some(Value::String(s)) => Some(s.as_str()),
            Some(Value::Object(o)) => o.get("content").and_then(Value::as_str),
            _ => None,
        };
        if let Some(s) = content {
            match ids.token_to_id(s) {
                Some(id) => eos.push(check(id as u64, name)?),
                None => {
                    return Err(err!(
                        Tokenizer,
                        "eos_token {s:?} in {name} is not in the vocabulary (give the EOS ids with {hint})"
                    ))
                }
            }
        }
    }
    if let Some(gc) = opts.generation_config {
        let name = "generation_config.json";
        let v = parse(gc, name)?;
        let bad = || err!(Tokenizer, "eos_token_id in {name} must be an integer or a list of integers");
        match v.get("eos_token_id") {
            None | Some(Value::Null) => {}
            Some(Value::Number(x)) => eos.push(check(x.as_u64().ok_or_else(bad)?, name)?),
            Some(Value::Array(xs)) => {
                for x in xs {
                    eos.push(check(x.as_u64().ok_or_else(bad)?, name)?);
                }
            }
            Some(_) => return Err(bad()),
        }
    }
    if eos.is_empty() {
        return Err(err!(
            Tokenizer,
            "no EOS token found (no eos_token in tokenizer_config.json, no eos_token_id in \
             generation_config.json); give the EOS ids with {hint}"
        ));
    }
    eos.sort_unstable();
    eos.dedup();
    Ok(eos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(json: &str) -> Result<Vocab> {
        vocab_from_json(json, None, None, Some(&[0]))
    }

    #[test]
    fn added_tokens_are_numbered_like_the_crate() {
        // "b" is a model token: the added token takes its id; "<x>" and "<y>" get
        // the next ids from the model size (2), whatever the file says; the
        // duplicate of "<x>" is skipped; an empty content is skipped.
        let v = vocab(
            r#"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
                "added_tokens": [
                  {"id": 7, "content": "<x>", "special": true},
                  {"id": 1, "content": "b", "special": true},
                  {"id": 9, "content": "<x>", "special": true},
                  {"id": 9, "content": "", "special": true},
                  {"id": 3, "content": "<y>", "special": false}]}"#,
        )
        .unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v.token_bytes(TokenId(1)), b"b");
        assert!(v.is_special(TokenId(1)) && v.is_special(TokenId(2)) && !v.is_special(TokenId(3)));
        assert_eq!(v.token_bytes(TokenId(2)), b"<x>");
        assert_eq!(v.token_bytes(TokenId(3)), b"<y>");
        // The same content with other flags is another added token: same id, the later flags.
        let v = vocab(
            r#"{"model": {"vocab": {"a": 0}},
                "added_tokens": [{"id": 1, "content": "<x>", "special": true},
                                 {"id": 1, "content": "<x>", "special": false}]}"#,
        )
        .unwrap();
        assert_eq!(v.len(), 2);
        assert!(!v.is_special(TokenId(1)));
    }

    #[test]
    fn unigram_holes_and_schemes() {
        let v = vocab(
            r#"{"model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["▁a", -1.5], ["<0x41>", 0.0]]},
                "decoder": {"type": "Sequence", "decoders": [
                   {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                   {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}}"#,
        )
        .unwrap();
        assert_eq!(v.token_bytes(TokenId(1)), b" a");
        assert_eq!(v.token_bytes(TokenId(2)), b"A");
        // Holes between model ids; no decoder and no pre-tokenizer: raw strings.
        let v = vocab(r#"{"model": {"type": "WordLevel", "vocab": {"x": 0, "Ġy": 3}}, "decoder": null}"#).unwrap();
        assert_eq!(v.len(), 4);
        assert!(v.token_bytes(TokenId(1)).is_empty());
        assert_eq!(v.token_bytes(TokenId(3)), "Ġy".as_bytes());
        // A ByteLevel pre-tokenizer without a decoder: byte-level.
        let v = vocab(
            r#"{"model": {"vocab": {"x": 0, "Ġy": 1}},
                "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}]}}"#,
        )
        .unwrap();
        assert_eq!(v.token_bytes(TokenId(1)), b" y");
    }

    #[test]
    fn errors_name_the_problem() {
        let e = vocab(r#"{"model": {"type": "Unigram", "vocab": {"a": 0}}}"#).unwrap_err();
        assert!(e.message().contains("Unigram"), "{e:?}");
        let e = vocab(r#"{"model": {"vocab": {}}}"#).unwrap_err();
        assert!(e.message().contains("empty"), "{e:?}");
        let e = vocab(r#"{"model": {"vocab": {"a": -1}}}"#).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Tokenizer);
        let js = LoadOptions { eos_option: "the eosTokenIds option", ..LoadOptions::default() };
        let e = vocab_from_json_with(r#"{"model": {"vocab": {"a": 0}}}"#, &js).unwrap_err();
        assert!(e.message().contains("eosTokenIds") && !e.message().contains("--eos"), "{e:?}");
    }
}
