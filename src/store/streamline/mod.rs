//! Mask store streamlining (paper: "Accelerating LLM Code Generation Through
//! Mask Store Streamlining"): grammar analyses ([`analysis`]) and their use
//! on the store's entries.
pub mod analysis;
