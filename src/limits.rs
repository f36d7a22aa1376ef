//! Every limit of grammask in one table: [`Limits`].
//!
//! A limit bounds what a user's input may ask for (nesting, sizes, counts);
//! going past one is an [`ErrorKind::Limit`](crate::ErrorKind::Limit) error
//! (a few are refused as unsupported constructs instead, said per field). The
//! engine reads [`Limits::DEFAULT`]: each module defines its constant from that
//! table (e.g. `const MAX_NODES: usize = Limits::DEFAULT.max_schema_nodes;`).
//! Limits are not threaded through the compile calls yet, so they cannot be
//! changed per call; the table is the one place that states and documents them.
//! JS reads the same table with `limits()`, by the camelCase names written next
//! to each field (`max_schema_depth` → `maxSchemaDepth`; see [`Limits::entries`]).
//!
//! # Not limits
//!
//! Some bounds stay next to their code because they are not user-facing:
//! - **Encoding bounds**, fixed by a data format: `parser::MAX_ACTION_ID`
//!   (2^30 − 1 LR states or rules, the action encoding), `vocab::pack::MAX_CODE`
//!   (the packed token-bytes code), the lexer's lookahead marker count, and
//!   2^32 − 2 tokens per vocabulary (token ids are `u32`).
//! - **Analysis budgets**, after which an analysis gives a conservative answer
//!   instead of failing; they decide the bytes of a blob, so changing one
//!   changes stores: `store::streamline::analysis::EXPLORATION_NODE_LIMIT`,
//!   the streamliner's LR recursion bounds (`store/streamline/lr.rs`),
//!   `MAX_LOOP_STATES` (`store/build.rs`), Lark's `REPEAT_BREAK_THRESHOLD` and
//!   `SMALL_FACTOR_THRESHOLD` (Lark's own constants).
//! - **Sanity bounds on loaded tables** (`MAX_REDUCTIONS_PER_TERMINAL`): valid
//!   tables never get near them; corrupt blobs must not hang.
//! - **Cache sizes**: `DFA_CACHE_BYTES` and `NONEMPTY_CACHE` (schema regexes),
//!   the terminal-table cache `CACHE_WORDS`, the lexeme-loop cache
//!   `LOOP_CACHE_WORDS`, `MatcherOptions::mask_cache`.
//! - **Message sizes**: `parser::lalr::MAX_REPORTED_CONFLICTS`.
//! - **Options** with defaults, not limits: `MatcherOptions::max_rollback`,
//!   the flexible-whitespace run (`schema::DEFAULT_MAX_RUN`).

/// Declares [`Limits`], [`Limits::DEFAULT`] and [`Limits::entries`] from one
/// list, so that the JS names cannot miss a field.
macro_rules! limits {
    ($($(#[$doc:meta])* $name:ident / $js:literal = $value:expr,)*) => {
        /// Every user-facing limit, with its value. See the [module doc](self).
        ///
        /// # Example
        ///
        /// ```
        /// use grammask::Limits;
        /// assert_eq!(Limits::DEFAULT.max_schema_depth, 200);
        /// assert!(Limits::DEFAULT.entries().contains(&("maxSchemaNodes", 100_000)));
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct Limits {
            $($(#[$doc])* pub $name: usize,)*
        }

        impl Limits {
            /// The limits the engine applies.
            pub const DEFAULT: Limits = Limits { $($name: $value,)* };

            /// How many limits there are.
            pub const COUNT: usize = [$($js),*].len();

            /// `(JS name, value)` of every limit, in declaration order; the JS
            /// name is the field's name in camelCase (checked by a test).
            pub fn entries(&self) -> [(&'static str, usize); Self::COUNT] {
                [$(($js, self.$name)),*]
            }
        }
    };
}

limits! {
    // ---- inputs (the wasm facade and the regex front end)
    /// Largest grammar, schema or regex text (or response format as JSON) the
    /// wasm compile functions accept, in bytes (JS: also `compilerLimits`).
    max_grammar_bytes / "maxGrammarBytes" = 1 << 20,
    /// Largest `tokenizer.json` the wasm facade accepts, in bytes.
    max_tokenizer_bytes / "maxTokenizerBytes" = 64 << 20,
    /// Longest regex constraint (`{type: "regex"}`), in characters.
    max_regex_constraint_chars / "maxRegexConstraintChars" = 100_000,

    // ---- JSON Schema
    /// Deepest nesting of a schema (objects and arrays of the schema document).
    max_schema_depth / "maxSchemaDepth" = 200,
    /// Most subschemas of one schema, and most nodes of its IR.
    max_schema_nodes / "maxSchemaNodes" = 100_000,
    /// Most distinct subschema combinations (conjunctions) after `allOf`/`$ref`.
    max_schema_conjunctions / "maxSchemaConjunctions" = 20_000,
    /// Most alternatives one `anyOf`/`oneOf` expands into (its disjunctive
    /// normal form).
    max_any_of_alternatives / "maxAnyOfAlternatives" = 256,
    /// Deepest nesting of `anyOf`/`oneOf` inside one another.
    max_any_of_depth / "maxAnyOfDepth" = 64,
    /// Most values of one `enum`.
    max_enum_values / "maxEnumValues" = 10_000,
    /// Largest `minLength`/`maxLength` enforced (the lexer automaton grows linearly).
    max_string_length / "maxStringLength" = 1024,
    /// Largest `minItems`/`maxItems`/`prefixItems` and
    /// `minProperties`/`maxProperties` (they unroll into rules).
    max_unroll / "maxUnroll" = 1024,
    /// Most distinct `patternProperties` patterns in one object.
    max_pattern_properties / "maxPatternProperties" = 6,
    /// Most overlapping `anyOf` alternatives for one property or item (past it
    /// the `anyOf` is refused as unsupported: a `Schema` error).
    max_overlapping_alternatives / "maxOverlappingAlternatives" = 6,
    /// Most residues a `multipleOf` may need enumerated (past it the
    /// `multipleOf` is refused as unsupported: a `Schema` error).
    max_multiple_of_residues / "maxMultipleOfResidues" = 400,
    /// Most nonterminals of the grammar a schema becomes.
    max_schema_nonterminals / "maxSchemaNonterminals" = 50_000,
    /// Most rules of the grammar a schema becomes.
    max_schema_rules / "maxSchemaRules" = 400_000,

    // ---- regexes (schema `pattern`s, formats, regex constraints)
    /// Largest NFA and DFA of one schema or constraint regex, in bytes
    /// (emptiness and membership checks).
    max_regex_dfa_bytes / "maxRegexDfaBytes" = 32 << 20,
    /// Most states of the product search that decides whether a set of
    /// regexes (all of some, none of others) matches a non-empty string.
    max_regex_product_states / "maxRegexProductStates" = 200_000,
    /// Most anchored alternatives a regex with inner `^`/`$` expands into.
    max_anchored_alternatives / "maxAnchoredAlternatives" = 64,
    /// Most DFA states of a pattern with lookaround (`(?=`, `(?!`, `(?<=`,
    /// `(?<!`); the regex it becomes has at most 16 times as many nodes.
    max_lookaround_states / "maxLookaroundStates" = 4096,

    // ---- Lark grammars
    /// Deepest nesting of `(`, `[`, `{` in a Lark grammar.
    max_grammar_nesting / "maxGrammarNesting" = 200,
    /// Deepest group nesting of a terminal regex when its width is computed
    /// (as Lark does with `sre_parse`).
    max_regex_width_nesting / "maxRegexWidthNesting" = 500,
    /// Most alternatives one rule may expand to (nested optionals, repeats).
    max_rule_alternatives / "maxRuleAlternatives" = 1 << 16,
    /// Most template instances of one grammar.
    max_template_instances / "maxTemplateInstances" = 10_000,
    /// Deepest chain of terminals referring to terminals.
    max_terminal_depth / "maxTerminalDepth" = 256,

    // ---- lexer
    /// Largest NFA of one terminal regex, in bytes.
    max_terminal_nfa_bytes / "maxTerminalNfaBytes" = 64 << 20,
    /// Largest DFA of one terminal regex (determinization and result), in bytes.
    max_terminal_dfa_bytes / "maxTerminalDfaBytes" = 256 << 20,
    /// Most states of a set terminal's product table (`Set` patterns:
    /// all of some regexes, none of others): the table has 256 columns, so
    /// 64 MiB at most (the largest of 400 real-world schemas needs 7,175).
    max_set_product_states / "maxSetProductStates" = 1 << 16,
    /// Most `state × byte class` entries of the lexer automaton.
    max_lexer_table_entries / "maxLexerTableEntries" = 1 << 26,

    // ---- parser
    /// Most cells of the dense LALR(1) action + goto tables (states ×
    /// (terminals + nonterminals)), checked while the LR(0) states are found:
    /// 256 M natively (python.lark needs about 0.5 M; the largest SchemaStore
    /// schemas that fit need 74 M and 172 M), 64 M in wasm32 (4 GiB of address
    /// space, shared with everything else).
    max_lalr_table_cells / "maxLalrTableCells" = if cfg!(target_arch = "wasm32") { 64 << 20 } else { 256 << 20 },
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `max_schema_depth` → `maxSchemaDepth`.
    fn camel_case(snake: &str) -> String {
        let mut out = String::with_capacity(snake.len());
        let mut upper = false;
        for c in snake.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn js_names_are_camel_case_and_distinct() {
        let e = Limits::DEFAULT.entries();
        assert_eq!(e[0], ("maxGrammarBytes", 1 << 20));
        let debug = format!("{:?}", Limits::DEFAULT); // `Limits { max_grammar_bytes: 1048576, ... }`
        let fields: Vec<&str> = debug
            .split(['{', ','])
            .skip(1)
            .map(|f| f.split(':').next().unwrap().trim())
            .collect();
        assert_eq!(
            fields.iter().map(|f| camel_case(f)).collect::<Vec<_>>(),
            e.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>()
        );
        let mut names: Vec<&str> = e.iter().map(|(n, _)| *n).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), e.len());
        // Every value is exact as a JS number.
        assert!(e.iter().all(|&(_, v)| (v as u64) < (1 << 53)));
    }

    /// js/index.d.ts declares `interface Limits` with exactly these names,
    /// in this order.
    #[test]
    fn dts_lists_every_limit() {
        let dts = include_str!("../js/index.d.ts");
        let body = dts
            .split("export interface Limits {")
            .nth(1)
            .expect("index.d.ts: export interface Limits");
        let body = &body[..body.find("\n}").expect("end of interface Limits")];
        let declared: Vec<&str> = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("readonly "))
            .map(|l| l.split(':').next().unwrap().trim())
            .collect();
        let names: Vec<&str> = Limits::DEFAULT.entries().iter().map(|(n, _)| *n).collect();
        assert_eq!(
            declared, names,
            "js/index.d.ts `interface Limits` vs Limits::entries()"
        );
    }
}
