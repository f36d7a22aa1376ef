//! vocab (under construction)
