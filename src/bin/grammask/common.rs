//! Helpers shared by the subcommands.

use grammask::constraint::GrammarFormat;
use grammask::store::MaskStore;
use grammask::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};

/// Grammar options shared by the subcommands that load a Lark grammar.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct GrammarArgs {
    /// Refuse shift/reduce conflicts (Lark's `strict=True`) instead of resolving them as shift.
    #[arg(long)]
    pub strict: bool,
    /// Lexer mode, overriding the grammar's `%lexer` directive: contextual (Lark's default),
    /// basic (Lark's basic lexer) or longest (global maximal munch).
    #[arg(long, value_parser = ["contextual", "basic", "longest"])]
    pub lexer: Option<String>,
}

/// The format of a `--grammar` file.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct FormatArg {
    /// The format of --grammar: lark, gbnf (llama.cpp) or ebnf (xgrammar); default: by the
    /// file's extension (.gbnf, .ebnf, anything else lark).
    #[arg(long, value_parser = ["lark", "gbnf", "ebnf"])]
    pub format: Option<String>,
}

impl FormatArg {
    pub fn of(&self, path: &Path) -> GrammarFormat {
        self.format.as_deref().and_then(GrammarFormat::from_name).unwrap_or_else(|| GrammarFormat::of_path(path))
    }
}

/// Loads a grammar file (Lark, GBNF or EBNF, see [`FormatArg`]); a Lark grammar with
/// the `--strict` / `--lexer` options, printing the conflicts Lark's rules settle (as
/// warnings, to stderr) unless `quiet`.
pub(crate) fn load_grammar(path: &Path, start: Option<&str>, g: &GrammarArgs, f: &FormatArg, quiet: bool) -> Result<grammask::grammar::Cfg> {
    let format = f.of(path);
    if format != GrammarFormat::Lark {
        if g.strict || g.lexer.is_some() {
            return Err(Error::new(ErrorKind::Io, "--strict and --lexer apply to Lark grammars only"));
        }
        return grammask::constraint::load_grammar_file(path, start, Some(format));
    }
    let mut cfg = grammask::constraint::load_lark_file(path, start)?;
    if g.strict {
        cfg.conflicts = cfg.conflicts.strict();
    }
    if let Some(m) = &g.lexer {
        if let Some(m) = grammask::grammar::LexerMode::from_name(m) {
            grammask::frontend::lark::set_lexer(&mut cfg, m)?;
        }
    }
    let built = grammask::parser::lalr::build(&cfg)?;
    if !quiet {
        for w in &built.warnings {
            eprintln!("grammask: warning: {}", w.message);
        }
    }
    Ok(cfg)
}

pub(crate) fn with_list(mut files: Vec<PathBuf>, list: Option<PathBuf>) -> Result<Vec<PathBuf>> {
    if let Some(l) = list {
        let text = String::from_utf8_lossy(&read(&l)?).into_owned();
        files.extend(text.lines().filter(|s| !s.trim().is_empty()).map(PathBuf::from));
    }
    Ok(files)
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))
}

/// Expand directories into their files (recursively, sorted).
pub(crate) fn expand(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in files {
        if f.is_dir() {
            let mut stack = vec![f.clone()];
            while let Some(d) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else { continue };
                let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                entries.sort();
                for p in entries {
                    if p.is_dir() {
                        stack.push(p);
                    } else {
                        out.push(p);
                    }
                }
            }
        } else {
            out.push(f.clone());
        }
    }
    out
}

pub(crate) fn peak_rss_mb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

pub(crate) fn load_store(path: &Path) -> Result<MaskStore> {
    let bytes = read(path)?;
    MaskStore::from_bytes(&bytes).map_err(|e| Error::new(e.kind(), format!("{}: {}", path.display(), e.message())))
}

/// Load the tokenizer and make sure the store was built for it.
pub(crate) fn tokenizer_for(store: &MaskStore, path: &Path) -> Result<tokenizers::Tokenizer> {
    let eos: Vec<u32> = store.vocab().eos_ids().iter().map(|t| t.0).collect();
    let vocab = grammask::vocab::load::load_tokenizer_file(path, Some(&eos))?;
    if vocab.fingerprint() != store.vocab().fingerprint() {
        return Err(Error::new(
            ErrorKind::BlobTokenizer,
            format!("the store was built for another tokenizer than {}", path.display()),
        ));
    }
    tokenizers::Tokenizer::from_file(path).map_err(|e| Error::new(ErrorKind::Tokenizer, format!("{}: {e}", path.display())))
}

/// splitmix64: a small, well-known PRNG (reproducible across platforms).
pub(crate) struct Rng(pub u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The token ids set in a mask (bit `id & 31` of word `id >> 5`), into `out`.
pub fn allowed_ids(mask: &[u32], out: &mut Vec<u32>) {
    out.clear();
    for (w, &bits) in mask.iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            out.push(w as u32 * 32 + b.trailing_zeros());
            b &= b - 1;
        }
    }
}
