//! Typed errors. Every fallible public function returns [`Error`], an opaque
//! struct with an [`ErrorKind`] and a human-readable message. The wasm facade
//! turns them into JS `Error`s; nothing else does any conversion.

use std::fmt;

/// Declares [`ErrorKind`] together with [`ErrorKind::ALL`] and
/// [`ErrorKind::as_str`], so that the list cannot miss a variant.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// What went wrong, broadly. Match on this; read the message for details.
        ///
        /// In JS the kind is the `kind` property of a `GrammaskError`, spelled as
        /// [`ErrorKind::as_str`] (the variant's name); `js/index.d.ts` lists the
        /// same names (`GrammaskErrorKind`, checked by a test).
        ///
        /// # Example
        ///
        /// ```
        /// use grammask::{Constraint, ErrorKind};
        /// let e = Constraint::from_response_format(&serde_json::json!({"type": "yaml"})).unwrap_err();
        /// assert_eq!(e.kind(), ErrorKind::ResponseFormat);
        /// assert_eq!(e.kind().as_str(), "ResponseFormat");
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[$doc])* $name,)*
        }

        impl ErrorKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$name),*];

            /// The kind's name, as JS sees it (`error.kind`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorKind::$name => stringify!($name),)*
                }
            }
        }
    };
}

error_kinds! {
    /// The grammar text is malformed (the message names file:line:col).
    GrammarSyntax,
    /// The grammar is well formed but unusable (undefined symbol, lookaround, conflict...).
    Grammar,
    /// A JSON Schema is invalid or uses what grammask cannot enforce (the
    /// message names the keyword and its JSON pointer).
    Schema,
    /// An LALR(1) conflict.
    Conflict,
    /// A regex could not be compiled (a terminal, a schema `pattern`, a regex constraint).
    Regex,
    /// A response format (the constraint object: `{type: "json_schema", ...}`)
    /// or its compile options are malformed.
    ResponseFormat,
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
    /// A configured limit was exceeded (see [`Limits`](crate::Limits)).
    Limit,
    /// I/O failure (CLI only).
    Io,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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

/// Shorthand: `err!(Kind, "fmt", args...)` (the crate's own; hidden from the docs).
#[doc(hidden)]
#[macro_export]
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    #[test]
    fn names_are_the_variant_names() {
        for &k in ErrorKind::ALL {
            assert_eq!(k.as_str(), format!("{k:?}"));
            assert_eq!(k.to_string(), k.as_str());
        }
    }

    /// `GrammaskErrorKind` in js/index.d.ts lists exactly Rust's kinds, in
    /// the same order (the wasm facade sets `error.kind` to `as_str()`).
    #[test]
    fn dts_lists_every_kind() {
        let dts = include_str!("../js/index.d.ts");
        let union = dts.split("export type GrammaskErrorKind =").nth(1).expect("index.d.ts: export type GrammaskErrorKind");
        let union = &union[..union.find(';').expect("end of GrammaskErrorKind")];
        let declared: Vec<&str> = union.split('|').map(|s| s.trim().trim_matches('\'')).filter(|s| !s.is_empty()).collect();
        let rust: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(declared, rust, "js/index.d.ts GrammaskErrorKind vs ErrorKind::ALL");
    }
}
