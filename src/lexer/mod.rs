//! lexer (under construction)
