//! Options shared by the subcommands that take a JSON Schema or a regex
//! (`compile`, `check`, `generate`, `bench`): the constraint source, the
//! whitespace policy and lenient mode; compile through `constraint::compile`.

use crate::common::read;
use grammask::constraint::{compile, Constraint, ConstraintOptions};
use grammask::frontend::schema::{Whitespace, DEFAULT_MAX_RUN};
use grammask::store::MaskStore;
use grammask::vocab::PreparedVocab;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::rc::Rc;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct SchemaArgs {
    /// Constrain to the instances of this JSON Schema (a file).
    #[arg(long)]
    pub json_schema: Option<PathBuf>,
    /// JSON whitespace: default (compact or spaced), compact, spaced, flexible[:MAX_RUN]
    /// (any RFC 8259 whitespace, runs of at most MAX_RUN characters, default 16).
    /// Default: `default`; for `check`: `flexible:256`, so that pretty-printed files
    /// and a trailing newline are accepted.
    #[arg(long, value_name = "POLICY")]
    pub whitespace: Option<String>,
    /// Ignore (and list) known schema keywords that cannot be enforced instead of failing.
    #[arg(long)]
    pub lenient: bool,
    /// A remote schema for `$ref`: the schema in FILE stands for URI (no fragment). Repeatable.
    /// `$ref` resolves against the nearest `$id`; the JSON Schema metaschemas (draft-04 to
    /// 2020-12) are built in; nothing is fetched.
    #[arg(long = "ref", value_name = "URI=FILE")]
    pub refs: Vec<String>,
}

pub fn whitespace(s: &str) -> Result<Whitespace> {
    Ok(match s {
        "default" => Whitespace::Default,
        "compact" => Whitespace::Compact,
        "spaced" => Whitespace::Spaced,
        "flexible" => Whitespace::Flexible { max_run: DEFAULT_MAX_RUN },
        s if s.starts_with("flexible:") => Whitespace::Flexible {
            max_run: s[9..].parse().map_err(|_| Error::new(ErrorKind::Io, format!("--whitespace {s}: bad MAX_RUN")))?,
        },
        s => return Err(Error::new(ErrorKind::Io, format!("--whitespace {s}: expected default, compact, spaced or flexible[:N]"))),
    })
}

impl SchemaArgs {
    /// The options, with the whitespace policy `default` unless --whitespace is given.
    pub fn options(&self) -> Result<ConstraintOptions> {
        self.options_or("default")
    }

    /// The options, with the whitespace policy `ws` unless --whitespace is given.
    pub fn options_or(&self, ws: &str) -> Result<ConstraintOptions> {
        let ws = whitespace(self.whitespace.as_deref().unwrap_or(ws))?;
        let mut refs = Vec::new();
        for r in &self.refs {
            let Some((uri, file)) = r.split_once('=') else {
                return Err(Error::new(ErrorKind::Io, format!("--ref {r}: expected URI=FILE")));
            };
            refs.push((uri.to_string(), read_schema(Path::new(file))?));
        }
        Ok(ConstraintOptions { whitespace: ws, lenient: self.lenient, refs: std::sync::Arc::new(refs), ..Default::default() })
    }

    /// The constraint: --json-schema FILE or `regex` (the subcommand's --regex).
    /// --whitespace without --json-schema is an error (it would have no effect).
    pub fn constraint(&self, regex: Option<&str>) -> Result<Option<Constraint>> {
        if self.whitespace.is_some() && self.json_schema.is_none() {
            return Err(Error::new(ErrorKind::Io, "--whitespace applies to --json-schema only (a store keeps the policy it was compiled with)"));
        }
        if !self.refs.is_empty() && self.json_schema.is_none() {
            return Err(Error::new(ErrorKind::Io, "--ref applies to --json-schema only"));
        }
        Ok(match (&self.json_schema, regex) {
            (Some(p), None) => Some(Constraint::JsonSchema(read_schema(p)?)),
            (None, Some(r)) => Some(Constraint::Regex(r.to_string())),
            (None, None) => None,
            (Some(_), Some(_)) => return Err(Error::new(ErrorKind::Io, "give one of --json-schema and --regex")),
        })
    }
}

/// Reads a JSON Schema file.
pub fn read_schema(path: &Path) -> Result<serde_json::Value> {
    let bytes = read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| Error::new(ErrorKind::Schema, format!("{}: invalid JSON: {e}", path.display())))
}

/// Loads a tokenizer into a prepared vocabulary (and the tokenizers-crate
/// tokenizer for encoding).
pub fn prepared(tokenizer: &Path, eos: Option<&[u32]>) -> Result<(Rc<PreparedVocab>, tokenizers::Tokenizer)> {
    let vocab = grammask::vocab::load::load_tokenizer_file(tokenizer, eos)?;
    let tok = tokenizers::Tokenizer::from_file(tokenizer).map_err(|e| Error::new(ErrorKind::Tokenizer, format!("{}: {e}", tokenizer.display())))?;
    Ok((Rc::new(PreparedVocab::new(vocab)), tok))
}

/// Compiles a constraint, printing the front end's warnings to stderr.
pub fn compile_store(pv: &Rc<PreparedVocab>, c: &Constraint, o: &ConstraintOptions) -> Result<Rc<MaskStore>> {
    let (store, warnings) = compile(pv, c, o)?;
    for w in warnings {
        eprintln!("grammask: warning: {w}");
    }
    Ok(Rc::new(store))
}

/// Compiles a grammar file (Lark, GBNF or EBNF) per request (lazy store:
/// positions computed on first visit, the same masks as a full store);
/// relative `%import`s resolve next to the file.
pub fn lazy_grammar_store(grammar: &Path, start: Option<&str>, format: grammask::constraint::GrammarFormat, pv: &Rc<PreparedVocab>) -> Result<Rc<MaskStore>> {
    let cfg = grammask::constraint::load_grammar_file(grammar, start, Some(format))?;
    let (store, _) = grammask::store::build::compile_lazy(&cfg, pv.clone())?;
    Ok(Rc::new(store))
}
