//! The blob: one versioned, checksummed binary file holding a [`MaskStore`].
//!
//! ## Layout (all integers little-endian; everything is u32-aligned)
//! ```text
//! header   "GRAMMASK" (8 bytes)
//!          endian mark u32 = 0x01020304
//!          format version u32 (FORMAT_VERSION)
//!          reserved u32 = 0
//!          grammask version u32 (major << 16 | minor << 8 | patch)
//!          tokenizer fingerprint u64   (hash of every token's bytes, special flags, EOS ids)
//!          grammar fingerprint u64     (hash of the normalized grammar)
//!          options u32                 (bit 0: streamlined)
//!          section count u32 (= 8)
//!          per section: tag [u8; 4], offset u32, length u32, checksum u64 (of its bytes)
//!          header checksum u64         (of everything before it)
//! sections, in the order LEXR LALR INDT VOCB POSN CTXV SETS INFO, back to back
//! ```
//! A section is a sequence of *scalars* (one u32) and *arrays*: `len: u32`,
//! `width: u32` (1, 2 or 4 bytes per element), then the `len` elements,
//! zero-padded to a multiple of 4 bytes. A u32 array is written with the
//! narrowest width that holds every value; in a narrow array the all-ones
//! value (`0xff`, `0xffff`) stands for `u32::MAX` (the tables' "none").
//! Loading widens each array in one linear pass (no per-entry parsing).
//!
//! Sections (arrays unless marked scalar):
//! - `LEXR`: byte classes (256 bytes), scalars `n_classes`, `n_states`; per
//!   state `cont` row index, distinct `cont` rows; the same for `emit`
//!   (empty for contextual lexing); winner offsets and lists, completion
//!   offsets and lists, scalar `n_terminals`, ignored flags (bytes); scalar
//!   `contextual` (0/1), then for contextual lexing scalars `n_modes`,
//!   `start_mode` and the arrays of [`crate::lexer::CtxTables`] (`tag`,
//!   `sh_row`, `sh_rows`, `start`, `combo_key`, `combo_state`, `next_off`,
//!   `next`, `state_mode`).
//! - `LALR`: `[n_terminals, n_nonterminals, n_states, start_state]`, action
//!   and goto tables (row-major), rule lhs, rule lengths.
//! - `INDT`: `[]` or `[newline, indent, dedent]` then bracket deltas (bytes,
//!   i8); scalar `n_terminals`.
//! - `VOCB`: scalars token count and total token bytes, the two code-length
//!   tables and the bit stream of the packed token bytes (bytes; see
//!   [`crate::vocab::pack`]: pairs of earlier tokens or literal bytes),
//!   special flags (bitset bytes), EOS ids.
//! - `POSN`: `q_base`, `q_target`, `q_always`, `q_entries` (2 per position),
//!   `entry_item`, `item_seq` (2 per item), `seq_pool`, `item_set`.
//! - `CTXV`: parser-context verdicts ([`super::ContextTable`]; all arrays
//!   empty when the store has none): `ctx_off`, `ctx_pred`, `ctx_class`,
//!   `class_target`, `class_off`, verdict `bits`, `entry_vidx`, `pool_vidx`.
//! - `SETS`: scalar mask words, set index (3 per set: kind, offset, length),
//!   payload pool (u32; see [`super::sets`] for the five set forms).
//! - `INFO`: terminal names, streamlining step names (string tables: offsets
//!   then bytes), step counts (2 u32 each, low word first).
//!
//! ## Checksums
//! [`checksum`] is a 4-lane multiply–rotate hash over 8-byte words (several
//! GB/s). Every step is a bijection of the lane state, and the lanes are
//! combined by bijections, so any change confined to one 8-byte word (every
//! single-bit flip in particular) changes the checksum.
//!
//! ## Version policy
//! Any change to the layout or to the meaning of a table bumps
//! [`FORMAT_VERSION`]; a loader refuses every other version with
//! [`ErrorKind::BlobVersion`]. Blobs are rebuilt
//! from the grammar with `grammask compile`; there is no migration. Version 1:
//! plain u32 arrays, FNV checksums. Version 2: narrow arrays, deduplicated
//! lexer rows, entry items and sequences, token lengths instead of offsets,
//! list16 / not-list16 token sets, 64-bit checksums. Version 3: section `CTXV`
//! (parser-context verdicts). Version 4: contexts keyed by layout mode
//! (`4 * below + mode`, pending-newline modes) instead of a bracket bit.
//! Version 5: lexer winner lists (several winners under LongestAll) and the
//! contextual lexing tables; entry sequences may hold mode symbols (`n_terminals +
//! 5 + mode`, see `parser::alphabet::Events`). Version 6: packed token bytes in
//! `VOCB` (pairs of earlier tokens, see [`crate::vocab::pack`]) and xor token
//! sets (a base set plus toggled ids, see [`super::sets`]). Version 7: lexer
//! winners that depend on the next byte (`LEXR` ends with `gw_row`, `gw_off`,
//! `gw`: guarded accepts of `(?!...)` lookaheads, see [`crate::lexer::Lexer::winners_before`]).
//!
//! ## Safety
//! [`MaskStore::from_bytes`] never panics and never reads out of bounds: every
//! length is checked before use, every section checksum is verified, and every
//! cross-table index is validated before the store is handed out. Nothing is
//! allocated beyond a small multiple of the blob's size. The tokenizer
//! fingerprint is taken from the header (not recomputed on load; the section
//! checksums protect the vocabulary).

use super::{MaskStore, StoreInfo};
use crate::error::{Error, ErrorKind, Result};

pub const MAGIC: &[u8; 8] = b"GRAMMASK";
pub const ENDIAN_MARK: u32 = 0x0102_0304;
/// Bump on any format change.
pub const FORMAT_VERSION: u32 = 7;
/// The sections, in blob order.
pub const SECTION_TAGS: [&[u8; 4]; 8] = [b"LEXR", b"LALR", b"INDT", b"VOCB", b"POSN", b"CTXV", b"SETS", b"INFO"];

/// Bytes before the section table.
pub const HEADER_FIXED: usize = 8 + 4 * 4 + 8 + 8 + 4 + 4;
/// Bytes per section table entry.
pub const SECTION_ENTRY: usize = 20;

/// Header fields, readable without loading the whole blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobHeader {
    pub format_version: u32,
    pub grammask_version: u32,
    pub tokenizer_fingerprint: u64,
    pub grammar_fingerprint: u64,
    pub options: u32,
    /// (tag, offset, length, checksum) per section.
    pub sections: Vec<([u8; 4], u32, u32, u64)>,
}

impl BlobHeader {
    /// Length of the header (up to the first section).
    pub fn len(&self) -> usize {
        HEADER_FIXED + self.sections.len() * SECTION_ENTRY + 8
    }
    pub fn is_empty(&self) -> bool {
        false
    }
}

fn crate_version() -> u32 {
    let mut it = env!("CARGO_PKG_VERSION").split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b, c) = (it.next().unwrap_or(0), it.next().unwrap_or(0), it.next().unwrap_or(0));
    (a << 16) | (b << 8) | c
}

/// The blob checksum (see the module doc).
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: [u64; 4] = [0x9e37_79b9_7f4a_7c15, 0xc2b2_ae3d_27d4_eb4f, 0x1656_67b1_9e37_79f9, 0xd6e8_feb8_6659_fd93];
    #[inline(always)]
    fn step(h: u64, w: u64, k: u64) -> u64 {
        (h ^ w).wrapping_mul(k).rotate_left(31)
    }
    let word = |c: &[u8]| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    };
    let mut h = [K[0] ^ bytes.len() as u64, K[1], K[2], K[3]];
    let mut chunks = bytes.chunks_exact(32);
    for c in &mut chunks {
        for (i, hi) in h.iter_mut().enumerate() {
            *hi = step(*hi, word(&c[8 * i..8 * i + 8]), K[i]);
        }
    }
    for c in chunks.remainder().chunks(8) {
        h[0] = step(h[0], word(c), K[0]);
    }
    let mut x = bytes.len() as u64;
    for hi in h {
        x = step(x, hi, K[3]);
    }
    x ^ (x >> 32)
}

/// Writes one section: scalars and narrow arrays.
#[derive(Default)]
pub struct SectionWriter {
    buf: Vec<u8>,
}

impl SectionWriter {
    fn array(&mut self, len: usize, width: u32, payload: impl Iterator<Item = u8>) -> &mut Self {
        self.buf.extend_from_slice(&(len as u32).to_le_bytes());
        self.buf.extend_from_slice(&width.to_le_bytes());
        self.buf.extend(payload);
        while self.buf.len() % 4 != 0 {
            self.buf.push(0);
        }
        self
    }
    /// A u32 array, at the narrowest width that holds it.
    pub fn u32s(&mut self, xs: &[u32]) -> &mut Self {
        let max = xs.iter().filter(|&&x| x != u32::MAX).max().copied().unwrap_or(0);
        if max < 0xff {
            self.array(xs.len(), 1, xs.iter().map(|&x| x as u8))
        } else if max < 0xffff {
            self.array(xs.len(), 2, xs.iter().flat_map(|&x| (x as u16).to_le_bytes()))
        } else {
            self.array(xs.len(), 4, xs.iter().flat_map(|&x| x.to_le_bytes()))
        }
    }
    /// A scalar.
    pub fn u32(&mut self, x: u32) -> &mut Self {
        self.buf.extend_from_slice(&x.to_le_bytes());
        self
    }
    /// Raw bytes (an array of width 1 without the "none" mapping).
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.array(b.len(), 1, b.iter().copied())
    }
    pub fn strings(&mut self, ss: &[String]) -> &mut Self {
        let mut offs = vec![0u32];
        let mut all = Vec::new();
        for s in ss {
            all.extend_from_slice(s.as_bytes());
            offs.push(all.len() as u32);
        }
        self.u32s(&offs);
        self.bytes(&all)
    }
}

/// Reads one section; every read is bounds-checked.
pub struct SectionReader<'a> {
    tag: [u8; 4],
    data: &'a [u8],
    pos: usize,
}

impl<'a> SectionReader<'a> {
    pub fn new(tag: [u8; 4], data: &'a [u8]) -> Self {
        SectionReader { tag, data, pos: 0 }
    }
    fn corrupt(&self, what: &str) -> Error {
        Error::new(ErrorKind::BlobCorrupt, format!("blob section {} is corrupt: {what}", String::from_utf8_lossy(&self.tag)))
    }
    fn word(&mut self) -> Result<u32> {
        let b = self.data.get(self.pos..self.pos + 4).ok_or_else(|| self.corrupt("unexpected end"))?;
        self.pos += 4;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// An array's (width, element bytes); checks the zero padding.
    fn array(&mut self) -> Result<(usize, &'a [u8])> {
        let (n, width) = (self.word()? as usize, self.word()? as usize);
        if !matches!(width, 1 | 2 | 4) {
            return Err(self.corrupt("bad array width"));
        }
        let nbytes = n.checked_mul(width).ok_or_else(|| self.corrupt("array too long"))?;
        let padded = nbytes.checked_add(3).ok_or_else(|| self.corrupt("array too long"))? & !3;
        let end = self.pos.checked_add(padded).ok_or_else(|| self.corrupt("array too long"))?;
        let all = self.data.get(self.pos..end).ok_or_else(|| self.corrupt("array runs past the section"))?;
        self.pos = end;
        if all[nbytes..].iter().any(|&b| b != 0) {
            return Err(self.corrupt("array padding is not zero"));
        }
        Ok((width, &all[..nbytes]))
    }
    /// A u32 array of any width, widened.
    pub fn u32s(&mut self) -> Result<Vec<u32>> {
        let (width, b) = self.array()?;
        Ok(match width {
            1 => b.iter().map(|&x| if x == 0xff { u32::MAX } else { x as u32 }).collect(),
            2 => b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).map(|x| if x == 0xffff { u32::MAX } else { x as u32 }).collect(),
            _ => b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        })
    }
    /// A scalar.
    pub fn u32(&mut self) -> Result<u32> {
        self.word()
    }
    pub fn bytes(&mut self) -> Result<Vec<u8>> {
        match self.array()? {
            (1, b) => Ok(b.to_vec()),
            _ => Err(self.corrupt("expected a byte array")),
        }
    }
    pub fn strings(&mut self) -> Result<Vec<String>> {
        let offs = self.u32s()?;
        let all = self.bytes()?;
        if offs.first() != Some(&0) || offs.windows(2).any(|w| w[0] > w[1]) || *offs.last().unwrap_or(&0) as usize != all.len() {
            return Err(self.corrupt("string table offsets"));
        }
        offs.windows(2)
            .map(|w| {
                String::from_utf8(all[w[0] as usize..w[1] as usize].to_vec()).map_err(|_| self.corrupt("string is not UTF-8"))
            })
            .collect()
    }
    pub fn finish(&self) -> Result<()> {
        if self.pos != self.data.len() {
            return Err(self.corrupt("trailing data"));
        }
        Ok(())
    }
}

/// Assemble header + sections.
pub(crate) fn write_blob(
    tokenizer_fp: u64,
    grammar_fp: u64,
    options: u32,
    sections: &[(&[u8; 4], SectionWriter)],
) -> Vec<u8> {
    let header_len = HEADER_FIXED + sections.len() * SECTION_ENTRY + 8;
    let mut out = Vec::with_capacity(header_len + sections.iter().map(|s| s.1.buf.len()).sum::<usize>());
    out.extend_from_slice(MAGIC);
    for w in [ENDIAN_MARK, FORMAT_VERSION, 0, crate_version()] {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(&tokenizer_fp.to_le_bytes());
    out.extend_from_slice(&grammar_fp.to_le_bytes());
    out.extend_from_slice(&options.to_le_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    let mut off = header_len;
    for (tag, s) in sections {
        out.extend_from_slice(&tag[..]);
        out.extend_from_slice(&(off as u32).to_le_bytes());
        out.extend_from_slice(&(s.buf.len() as u32).to_le_bytes());
        out.extend_from_slice(&checksum(&s.buf).to_le_bytes());
        off += s.buf.len();
    }
    let hc = checksum(&out);
    out.extend_from_slice(&hc.to_le_bytes());
    debug_assert_eq!(out.len(), header_len);
    for (_, s) in sections {
        out.extend_from_slice(&s.buf);
    }
    out
}

fn truncated(what: &str) -> Error {
    Error::new(ErrorKind::BlobTruncated, format!("blob is truncated: {what}; the file was cut short (re-copy or rebuild it)"))
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::BlobCorrupt, format!("blob is corrupt: {what}"))
}

/// Parse and check the header (label, endianness, version, checksums of the
/// header and of every section).
pub fn read_header(bytes: &[u8]) -> Result<BlobHeader> {
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        if bytes.len() < 8 && MAGIC.starts_with(bytes) {
            return Err(truncated(&format!("{} bytes, shorter than the 8-byte label", bytes.len())));
        }
        return Err(Error::new(ErrorKind::BlobCorrupt, "not a grammask blob (the label \"GRAMMASK\" is missing)"));
    }
    let w = |i: usize| bytes.get(i..i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let d = |i: usize| bytes.get(i..i + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    match w(8) {
        None => return Err(truncated("header incomplete")),
        Some(ENDIAN_MARK) => {}
        Some(m) if m == ENDIAN_MARK.swap_bytes() => return Err(corrupt("it was written with the other byte order")),
        Some(_) => return Err(corrupt("bad endianness mark in the header")),
    }
    match w(12) {
        None => return Err(truncated("header incomplete")),
        Some(FORMAT_VERSION) => {}
        Some(version) => {
            return Err(Error::new(
                ErrorKind::BlobVersion,
                format!("blob has format version {version}, this grammask reads version {FORMAT_VERSION}; rebuild it with `grammask compile`"),
            ))
        }
    }
    if bytes.len() < HEADER_FIXED {
        return Err(truncated("header incomplete"));
    }
    let n = w(44).unwrap_or(0) as usize;
    if n != SECTION_TAGS.len() {
        return Err(corrupt(format!("the header lists {n} sections, expected {}", SECTION_TAGS.len())));
    }
    let header_len = HEADER_FIXED + n * SECTION_ENTRY + 8;
    if bytes.len() < header_len {
        return Err(truncated("section table incomplete"));
    }
    if checksum(&bytes[..header_len - 8]) != d(header_len - 8) {
        return Err(corrupt("header checksum mismatch (the file is damaged)"));
    }
    let mut sections = Vec::with_capacity(n);
    let mut end = header_len as u64;
    for (i, want) in SECTION_TAGS.iter().enumerate() {
        let b = HEADER_FIXED + i * SECTION_ENTRY;
        let tag = [bytes[b], bytes[b + 1], bytes[b + 2], bytes[b + 3]];
        let (off, len, sum) = (w(b + 4).unwrap_or(0), w(b + 8).unwrap_or(0), d(b + 12));
        if &tag != *want || off as u64 != end || len % 4 != 0 {
            return Err(corrupt("the section table is inconsistent"));
        }
        end += len as u64;
        sections.push((tag, off, len, sum));
    }
    if (bytes.len() as u64) < end {
        return Err(truncated(&format!("{} of {} bytes present", bytes.len(), end)));
    }
    if bytes.len() as u64 > end {
        return Err(corrupt("trailing bytes after the last section"));
    }
    for &(tag, off, len, sum) in &sections {
        // Coverage-guided fuzzing (`cargo fuzz` sets `--cfg fuzzing`) skips the
        // section checksums so that mutants reach the validators behind them.
        #[allow(unexpected_cfgs)]
        if cfg!(fuzzing) {
            break;
        }
        if checksum(&bytes[off as usize..(off + len) as usize]) != sum {
            return Err(corrupt(format!(
                "section {} checksum mismatch (the file is damaged)",
                String::from_utf8_lossy(&tag)
            )));
        }
    }
    Ok(BlobHeader {
        format_version: FORMAT_VERSION,
        grammask_version: w(20).unwrap_or(0),
        tokenizer_fingerprint: d(24),
        grammar_fingerprint: d(32),
        options: w(40).unwrap_or(0),
        sections,
    })
}

/// Recompute every section checksum and the header checksum in place, so
/// that a deliberately mutated blob reaches the validators behind them (for
/// tests and fuzzing; a no-op on blobs too short to hold a section table).
#[doc(hidden)]
pub fn reseal(b: &mut [u8]) {
    let word = |b: &[u8], i: usize| b.get(i..i + 4).map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])) as usize;
    let n = word(b, 44);
    let Some(hl) = n.checked_mul(SECTION_ENTRY).map(|x| HEADER_FIXED + x + 8).filter(|&hl| n <= 64 && hl <= b.len()) else {
        return;
    };
    for i in 0..n {
        let e = HEADER_FIXED + i * SECTION_ENTRY;
        let (off, len) = (word(b, e + 4), word(b, e + 8));
        if let Some(sec) = b.get(off..off.saturating_add(len)) {
            let c = checksum(sec);
            b[e + 12..e + 20].copy_from_slice(&c.to_le_bytes());
        }
    }
    let c = checksum(&b[..hl - 8]);
    b[hl - 8..hl].copy_from_slice(&c.to_le_bytes());
}

/// Per-section sizes of a blob, `("header", n)` first: for `grammask stats`.
pub fn section_sizes(bytes: &[u8]) -> Result<Vec<(String, usize)>> {
    let h = read_header(bytes)?;
    let mut out = vec![("header".to_string(), h.len())];
    out.extend(h.sections.iter().map(|s| (String::from_utf8_lossy(&s.0).into_owned(), s.2 as usize)));
    Ok(out)
}

/// The bytes of section `tag`.
pub(crate) fn section<'a>(h: &BlobHeader, bytes: &'a [u8], tag: &[u8; 4]) -> Result<SectionReader<'a>> {
    let name = std::str::from_utf8(tag).unwrap_or("????");
    let &(_, off, len, _) =
        h.sections.iter().find(|s| &s.0 == tag).ok_or_else(|| corrupt(format!("there is no {name} section")))?;
    Ok(SectionReader::new(*tag, &bytes[off as usize..(off + len) as usize]))
}

impl MaskStore {
    /// Can this store be written as a blob? A grammar on the general
    /// parser cannot (blobs hold LALR(1) tables): compile it per request.
    pub fn blob_ok(&self) -> crate::Result<()> {
        if self.grammar.earley.is_some() {
            return Err(crate::err!(InvalidState, "not LALR(1): no blob; compile per request"));
        }
        Ok(())
    }

    /// Serialize to a blob (a lazy store computes its missing positions
    /// first). Check [`MaskStore::blob_ok`] first.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.ensure_all();
        #[cfg(feature = "compiler")]
        self.join_insides();
        let t = self.tables();
        let mut lexr = SectionWriter::default();
        write_lexer(&self.lexer, &mut lexr);
        let mut lalr = SectionWriter::default();
        let p = self.grammar.tables.to_parts();
        lalr.u32s(&[p.n_terminals, p.n_nonterminals, p.n_states, p.start_state]);
        lalr.u32s(&p.action).u32s(&p.goto_).u32s(&p.rule_lhs).u32s(&p.rule_len);
        let mut indt = SectionWriter::default();
        match &self.grammar.indent {
            None => {
                indt.u32s(&[]);
            }
            Some(r) => {
                indt.u32s(&[r.newline, r.indent, r.dedent]);
                indt.bytes(&r.bracket.iter().map(|&b| b as u8).collect::<Vec<_>>());
            }
        }
        indt.u32(self.grammar.n_terminals);
        let mut vocb = SectionWriter::default();
        let packed = self.vocab.packed();
        vocb.u32(packed.n).u32(packed.total).bytes(&packed.code_lens).bytes(&packed.stream);
        vocb.bytes(self.vocab.special_bits());
        vocb.u32s(&self.vocab.eos_ids().iter().map(|t| t.0).collect::<Vec<_>>());
        let mut posn = SectionWriter::default();
        posn.u32s(&self.q_base)
            .u32s(&self.q_target)
            .u32s(&t.q_always)
            .u32s(&t.q_entries)
            .u32s(&t.entry_item)
            .u32s(&t.item_seq)
            .u32s(&t.seq_pool)
            .u32s(&t.item_set);
        let mut ctxv = SectionWriter::default();
        let c = &t.ctx;
        ctxv.u32s(&c.ctx_off)
            .u32s(&c.ctx_pred)
            .u32s(&c.ctx_class)
            .u32s(&c.class_target)
            .u32s(&c.class_off);
        ctxv.u32s(&c.bits).u32s(&c.entry_vidx).u32s(&c.pool_vidx);
        let mut sets = SectionWriter::default();
        sets.u32(t.sets.words);
        sets.u32s(&t.sets.index.iter().flatten().copied().collect::<Vec<_>>());
        sets.u32s(&t.sets.data);
        let mut info = SectionWriter::default();
        info.strings(&self.info.terminal_names);
        let (names, counts): (Vec<String>, Vec<u64>) = self.info.step_counts.iter().cloned().unzip();
        info.strings(&names);
        info.u32s(&counts.iter().flat_map(|&c| [c as u32, (c >> 32) as u32]).collect::<Vec<_>>());
        let options = (self.info.step_counts.len() > 1) as u32; // bit 0: streamlined
        write_blob(
            self.vocab.fingerprint(),
            self.info.grammar_fingerprint,
            options,
            &[
                (b"LEXR", lexr),
                (b"LALR", lalr),
                (b"INDT", indt),
                (b"VOCB", vocb),
                (b"POSN", posn),
                (b"CTXV", ctxv),
                (b"SETS", sets),
                (b"INFO", info),
            ],
        )
    }

    /// Load a blob. Never panics; every error says what is wrong
    /// ([`ErrorKind::BlobTruncated`], [`ErrorKind::BlobCorrupt`],
    /// [`ErrorKind::BlobVersion`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<MaskStore> {
        let h = read_header(bytes)?;
        let lexer = read_lexer(&mut section(&h, bytes, b"LEXR")?)?;
        let mut r = section(&h, bytes, b"LALR")?;
        let dims = r.u32s()?;
        let &[n_terminals, n_nonterminals, n_states, start_state] = dims.as_slice() else {
            return Err(r.corrupt("dimensions"));
        };
        let (action, goto_, rule_lhs, rule_len) = (r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?);
        r.finish()?;
        let tables = crate::parser::LrTables::from_parts(crate::parser::LrTableParts {
            n_terminals, n_nonterminals, n_states, start_state, action, goto_, rule_lhs, rule_len,
        })?;
        let mut r = section(&h, bytes, b"INDT")?;
        let head = r.u32s()?;
        let indent = match head.as_slice() {
            [] => None,
            &[newline, indent, dedent] => {
                let bracket: Vec<i8> = r.bytes()?.into_iter().map(|b| b as i8).collect();
                Some(crate::parser::indent::IndentRules { newline, indent, dedent, bracket })
            }
            _ => return Err(r.corrupt("indentation terminals")),
        };
        let n_terminals = r.u32()?;
        r.finish()?;
        if let Some(ind) = &indent {
            if ind.bracket.len() != n_terminals as usize
                || [ind.newline, ind.indent, ind.dedent].iter().any(|&t| t >= n_terminals)
            {
                return Err(corrupt("indentation rules do not match the grammar"));
            }
            // `%indent` invariants the parser relies on: three distinct
            // terminals, INDENT/DEDENT never lexed, brackets -1, 0 or +1.
            let start = lexer.start();
            let lexed = |t: u32| lexer.can_complete(start, crate::ids::TerminalId(t));
            if ind.newline == ind.indent
                || ind.newline == ind.dedent
                || ind.indent == ind.dedent
                || lexed(ind.indent)
                || lexed(ind.dedent)
                || ind.bracket.iter().any(|b| !(-1..=1).contains(b))
            {
                return Err(corrupt("indentation rules are inconsistent"));
            }
        }
        if tables.n_terminals() != n_terminals.wrapping_add(1) || lexer.n_terminals() != n_terminals as usize {
            return Err(corrupt("lexer, parser and grammar disagree on the number of terminals"));
        }
        let mut grammar = crate::parser::incremental::IncTables::new(tables, indent, n_terminals);
        if let Some(c) = lexer.contextual() {
            if c.state_mode.len() != grammar.tables.n_states() as usize || grammar.indent.is_some() {
                return Err(corrupt("the lexer's modes do not match the LR states"));
            }
            grammar = grammar.with_modes(c.state_mode.clone(), c.n_modes);
        }
        let mut r = section(&h, bytes, b"VOCB")?;
        let vocb_len = r.data.len();
        let (n, total) = (r.u32()?, r.u32()?);
        let packed = crate::vocab::pack::PackedTokens { n, total, code_lens: r.bytes()?, stream: r.bytes()? };
        let special = r.bytes()?;
        let eos = r.u32s()?.into_iter().map(crate::ids::TokenId).collect();
        r.finish()?;
        // Unpacked bytes are bounded by a multiple of the section's size;
        // they are unpacked on first use (validated now).
        let vocab = crate::vocab::Vocab::from_packed(packed, special, eos, 32 * vocb_len + (1 << 20))
            .map_err(|e| corrupt(format_args!("section VOCB: {}", e.message())))?;
        let mut r = section(&h, bytes, b"POSN")?;
        let (q_base, q_target, q_always, q_entries) = (r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?);
        let (entry_item, item_seq, seq_pool, item_set) = (r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?);
        r.finish()?;
        let mut r = section(&h, bytes, b"CTXV")?;
        let ctx = super::ContextTable {
            ctx_off: r.u32s()?,
            ctx_pred: r.u32s()?,
            ctx_class: r.u32s()?,
            class_target: r.u32s()?,
            class_off: r.u32s()?,
            bits: r.u32s()?,
            entry_vidx: r.u32s()?,
            pool_vidx: r.u32s()?,
        };
        r.finish()?;
        let mut r = section(&h, bytes, b"SETS")?;
        let words = r.u32()?;
        let flat = r.u32s()?;
        if flat.len() % 3 != 0 {
            return Err(r.corrupt("token set index"));
        }
        let index = flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        let data = r.u32s()?;
        r.finish()?;
        let mut r = section(&h, bytes, b"INFO")?;
        let terminal_names = r.strings()?;
        let names = r.strings()?;
        let counts = r.u32s()?;
        r.finish()?;
        if counts.len() != names.len() * 2 {
            return Err(r.corrupt("step counts"));
        }
        let step_counts =
            names.into_iter().zip(counts.chunks_exact(2).map(|c| c[0] as u64 | ((c[1] as u64) << 32))).collect();
        let vocab_len = vocab.len() as u32;
        let mut store = MaskStore {
            lexer,
            grammar,
            vocab: std::rc::Rc::new(vocab),
            info: StoreInfo { terminal_names, grammar_fingerprint: h.grammar_fingerprint, step_counts },
            q_base,
            q_target,
            tables: std::cell::RefCell::new(super::Tables {
                q_always,
                q_entries,
                entry_item,
                item_seq,
                seq_pool,
                item_set,
                entry_lcp: Vec::new(),
                sets: super::sets::TokenSets::new(words, vocab_len, index, data),
                ctx,
                ..Default::default()
            }),
            #[cfg(feature = "compiler")]
            lazy: None,
            specials: Vec::new(),
        };
        store.validate().map_err(corrupt)?;
        store.specials = store.find_specials().map_err(corrupt)?;
        store.tables.borrow_mut().sync_lcp();
        if let Some(ind) = &store.grammar.indent {
            if store.tables().seq_pool.iter().any(|&y| y == ind.indent || y == ind.dedent) {
                return Err(corrupt("a sequence holds an INDENT or DEDENT terminal"));
            }
        }
        if store.q_of(store.lexer.start().0, super::walk::NO_TARGET).is_none() {
            return Err(corrupt("no start position"));
        }
        Ok(store)
    }

    /// Load a blob and check it was built for the tokenizer with fingerprint
    /// `expected` ([`ErrorKind::BlobTokenizer`] otherwise; see
    /// [`crate::vocab::Vocab::fingerprint`]).
    pub fn from_bytes_for(bytes: &[u8], expected_tokenizer: u64) -> Result<MaskStore> {
        let h = read_header(bytes)?;
        if h.tokenizer_fingerprint != expected_tokenizer {
            return Err(Error::new(
                ErrorKind::BlobTokenizer,
                format!(
                    "blob was built for another tokenizer (fingerprint {:016x}, expected {:016x}); rebuild it with `grammask compile --tokenizer ...`",
                    h.tokenizer_fingerprint, expected_tokenizer
                ),
            ));
        }
        Self::from_bytes(bytes)
    }
}

fn ids(ts: &[crate::ids::TerminalId]) -> Vec<u32> {
    ts.iter().map(|t| t.0).collect()
}

fn write_lexer(l: &crate::lexer::Lexer, w: &mut SectionWriter) {
    let p = l.parts();
    w.bytes(&p.classes[..]).u32(p.n_classes).u32(p.n_states);
    w.u32s(p.cont_row).u32s(p.cont_rows).u32s(p.emit_row).u32s(p.emit_rows).u32s(p.win_off).u32s(&ids(p.win));
    w.u32s(p.comp_offsets).u32s(&ids(p.comp)).u32(p.n_terminals);
    w.bytes(&p.ignored.iter().map(|&b| b as u8).collect::<Vec<_>>());
    match p.ctx {
        None => {
            w.u32(0);
        }
        Some(c) => {
            w.u32(1).u32(c.n_modes).u32(c.start_mode).u32s(&c.tag).u32s(&c.sh_row).u32s(&c.sh_rows).u32s(&c.start);
            w.u32s(&c.combo_key).u32s(&c.combo_state).u32s(&c.next_off).u32s(&c.next).u32s(&c.state_mode);
        }
    }
    w.u32s(p.gw_row).u32s(p.gw_off).u32s(&ids(p.gw));
}

fn read_lexer(r: &mut SectionReader<'_>) -> Result<crate::lexer::Lexer> {
    let classes: [u8; 256] = r.bytes()?.try_into().map_err(|_| r.corrupt("byte class table"))?;
    let (n_classes, n_states) = (r.u32()?, r.u32()?);
    let (cont_row, cont_rows, emit_row, emit_rows) = (r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?);
    let to_ids = |v: Vec<u32>| -> Vec<crate::ids::TerminalId> { v.into_iter().map(crate::ids::TerminalId).collect() };
    let (win_off, win) = (r.u32s()?, to_ids(r.u32s()?));
    let (comp_offsets, comp) = (r.u32s()?, to_ids(r.u32s()?));
    let n_terminals = r.u32()?;
    let ignored_b = r.bytes()?;
    if ignored_b.iter().any(|&b| b > 1) {
        return Err(r.corrupt("ignored flags"));
    }
    let ignored: Vec<bool> = ignored_b.iter().map(|&b| b == 1).collect();
    let ctx = match r.u32()? {
        0 => None,
        1 => Some(crate::lexer::CtxTables {
            n_modes: r.u32()?,
            start_mode: r.u32()?,
            tag: r.u32s()?,
            sh_row: r.u32s()?,
            sh_rows: r.u32s()?,
            start: r.u32s()?,
            combo_key: r.u32s()?,
            combo_state: r.u32s()?,
            next_off: r.u32s()?,
            next: r.u32s()?,
            state_mode: r.u32s()?,
        }),
        _ => return Err(r.corrupt("contextual flag")),
    };
    let (gw_row, gw_off, gw) = (r.u32s()?, r.u32s()?, to_ids(r.u32s()?));
    r.finish()?;
    crate::lexer::Lexer::from_parts(crate::lexer::LexerParts {
        classes: &classes,
        n_classes,
        n_states,
        cont_row: &cont_row,
        cont_rows: &cont_rows,
        emit_row: &emit_row,
        emit_rows: &emit_rows,
        win_off: &win_off,
        win: &win,
        comp_offsets: &comp_offsets,
        comp: &comp,
        n_terminals,
        ignored: &ignored,
        ctx: ctx.as_ref(),
        gw_row: &gw_row,
        gw_off: &gw_off,
        gw: &gw,
    })
}

