//! Lark front end (under construction).
