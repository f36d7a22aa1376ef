//! u32 newtype identifiers shared across the pipeline.

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(pub u32);
        impl $name {
            #[inline]
            pub const fn new(i: usize) -> Self { $name(i as u32) }
            #[inline]
            pub const fn index(self) -> usize { self.0 as usize }
        }
        impl From<$name> for usize {
            #[inline]
            fn from(x: $name) -> usize { x.0 as usize }
        }
    };
}

id_type!(
    /// A terminal of the grammar (lexer-level symbol), also used for the
    /// indentation pseudo-terminals and events (see `parser::indent`).
    TerminalId
);
id_type!(
    /// A nonterminal of the normalized CFG.
    NonterminalId
);
id_type!(
    /// A production of the normalized CFG.
    RuleId
);
id_type!(
    /// A state of the LALR(1) automaton.
    ParseStateId
);
id_type!(
    /// A state of the lexer automaton (see `lexer`).
    LexStateId
);
id_type!(
    /// A token id of the LLM tokenizer.
    TokenId
);
