//! parser (under construction)
