//! The general parser: an Earley recognizer over terminal ids, for grammars
//! whose LALR(1) tables have conflicts ([`crate::grammar::ConflictPolicy::General`]).
//!
//! It answers what the LR parser answers: is the input so far followed by
//! `w` a prefix of a sentence (a viable prefix), and can the input end here.
//! Ambiguity is not an error: an item set holds every parse at once.
//!
//! - Items are `(rhs position, origin)`; a position indexes the flattened
//!   right-hand sides, one slot per symbol plus an end slot per rule.
//! - Nullable nonterminals are handled as Aycock and Horspool do: predicting
//!   a nullable `A` also moves the item past `A`, so a completion with
//!   origin = the current set never has to revisit it.
//! - Rules that use a nonterminal deriving no terminal string are dropped
//!   when the tables are built: then a non-empty item set is exactly a
//!   viable prefix (every item can be completed).
//! - No Leo optimisation: right recursion costs O(n) items per set, which
//!   is fine for the lengths generated here.
//!
//! The chart is append-only: a committed parser holds its item sets as a
//! shared vector ([`EarleyParser`], `Clone` is O(1)); a cursor stacks the sets
//! it computed on top in a persistent list, so cloning it per level of the
//! mask walk is O(1).
//!
//! Without the compiler (the lean runtime) no grammar runs on it: blobs hold
//! LALR(1) tables. There the types are uninhabited, so the branches that
//! use them compile to nothing.

#[cfg(feature = "compiler")]
mod imp;

#[cfg(not(feature = "compiler"))]
mod imp {
    use std::convert::Infallible;
    use std::marker::PhantomData;

    #[derive(Debug)]
    pub enum EarleyTables {}
    impl EarleyTables {
        pub fn n_terms(&self) -> u32 {
            match *self {}
        }
    }

    #[derive(Clone, Debug)]
    pub enum EarleyParser {}
    impl EarleyParser {
        pub fn new(t: &EarleyTables) -> Self {
            match *t {}
        }
        pub fn cursor(&self) -> EarleyCursor<'_> {
            match *self {}
        }
        pub fn consume(&mut self, _: &EarleyTables, _: &[u32]) -> bool {
            match *self {}
        }
        pub fn same(&self, _: &EarleyParser) -> bool {
            match *self {}
        }
    }

    #[derive(Clone, Debug)]
    pub struct EarleyCursor<'a>(Infallible, PhantomData<&'a ()>);
    impl EarleyCursor<'_> {
        pub fn feed(&mut self, _: &EarleyTables, _: u32) -> bool {
            match self.0 {}
        }
        pub fn accepts_eof(&self) -> bool {
            match self.0 {}
        }
        pub fn state_id(&self) -> usize {
            match self.0 {}
        }
    }
}

pub use imp::*;
