//! Typed errors. Every fallible public function returns [`Error`], an opaque
//! struct with an [`ErrorKind`] and a human-readable message. The wasm facade
//! turns them into JS `Error`s; nothing else does any conversion.

use std::fmt;

/// What went wrong, broadly. Match on this; read the message for details.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The grammar text is malformed (the message names file:line:col).
    GrammarSyntax,
    /// The grammar is well formed but unusable (undefined symbol, lookaround, conflict...).
    Grammar,
    /// An LALR(1) conflict.
    Conflict,
    /// A terminal regex could not be compiled.
    Regex,
    /// Input text does not lex.
    Lex,
    /// Input does not parse.
    Parse,
    /// A tokenizer file could not be read or understood.
    Tokenizer,
    /// A blob is truncated.
    BlobTruncated,
    /// A blob's checksum, structure or content is wrong.
    BlobCorrupt,
    /// A blob has another format version.
    BlobVersion,
    /// A blob was built for another tokenizer.
    BlobTokenizer,
    /// A token id is out of range or not allowed here.
    InvalidToken,
    /// A call that the object's state does not permit (rollback too far, ...).
    InvalidState,
    /// A configured limit was exceeded.
    Limit,
    /// I/O failure (CLI only).
    Io,
}

/// The error type of grammask.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand: `err!(Kind, "fmt", args...)`.
#[macro_export]
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($arg)*))
    };
}
