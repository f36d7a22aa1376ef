//! The blob: one versioned, checksummed binary file holding a [`MaskStore`].
//!
//! ## Layout (all integers little-endian; every table is u32-aligned)
//! ```text
//! header   "GRAMMASK" (8 bytes)
//!          endian mark u32 = 0x01020304
//!          format version u32 (FORMAT_VERSION)
//!          reserved u32 = 0
//!          grammask version u32 (major << 16 | minor << 8 | patch)
//!          tokenizer fingerprint u64   (hash of every token's bytes, special flags, EOS ids)
//!          grammar fingerprint u64     (hash of the normalized grammar)
//!          options u32                 (bit 0: streamlined)
//!          section count u32
//!          per section: tag u32, offset u32, length u32, checksum u32 (bytes)
//!          header checksum u32         (of everything before it)
//! sections, each a sequence of arrays; an array is `len: u32` then `len` u32 words
//! ```
//! Sections: `LEXR` lexer tables, `LALR` parse tables, `INDT` indentation rules,
//! `VOCB` token bytes + special flags + EOS ids, `POSN` positions and entries,
//! `SETS` token sets, `INFO` terminal names and streamlining step counts.
//!
//! ## Version policy
//! Any change to the layout or to the meaning of a table bumps
//! [`FORMAT_VERSION`]; a loader refuses every other version with
//! [`ErrorKind::BlobVersion`](crate::ErrorKind::BlobVersion). Blobs are rebuilt
//! from the grammar with `grammask compile`; there is no migration.
//!
//! ## Safety
//! [`MaskStore::from_bytes`] never panics and never reads out of bounds: every
//! length is checked before use, every section checksum is verified, and every
//! cross-table index is validated before the store is handed out.

use super::{MaskStore, StoreInfo};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::Fnv64;

pub const MAGIC: &[u8; 8] = b"GRAMMASK";
pub const ENDIAN_MARK: u32 = 0x0102_0304;
/// Bump on any format change.
pub const FORMAT_VERSION: u32 = 1;

const HEADER_FIXED: usize = 8 + 4 * 4 + 8 + 8 + 4 + 4;

/// Header fields, readable without loading the whole blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobHeader {
    pub format_version: u32,
    pub grammask_version: u32,
    pub tokenizer_fingerprint: u64,
    pub grammar_fingerprint: u64,
    pub options: u32,
    pub sections: Vec<([u8; 4], u32, u32, u32)>,
}

fn crate_version() -> u32 {
    let mut it = env!("CARGO_PKG_VERSION").split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b, c) = (it.next().unwrap_or(0), it.next().unwrap_or(0), it.next().unwrap_or(0));
    (a << 16) | (b << 8) | c
}

fn checksum(bytes: &[u8]) -> u32 {
    let mut h = Fnv64::new();
    h.write(bytes);
    let x = h.finish();
    (x ^ (x >> 32)) as u32
}

/// Writes one section: a sequence of u32 arrays.
#[derive(Default)]
pub struct SectionWriter {
    buf: Vec<u8>,
}

impl SectionWriter {
    pub fn u32s(&mut self, xs: &[u32]) -> &mut Self {
        self.buf.extend_from_slice(&(xs.len() as u32).to_le_bytes());
        for x in xs {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
        self
    }
    pub fn u32(&mut self, x: u32) -> &mut Self {
        self.u32s(&[x])
    }
    /// Bytes, stored as (byte length, then the bytes packed 4 per word).
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        let words: Vec<u32> = b
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect();
        self.u32s(&words)
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
    pub fn u32s(&mut self) -> Result<Vec<u32>> {
        let n = self.word()? as usize;
        let nbytes = n.checked_mul(4).ok_or_else(|| self.corrupt("array too long"))?;
        let b = self.data.get(self.pos..self.pos + nbytes).ok_or_else(|| self.corrupt("array runs past the section"))?;
        self.pos += nbytes;
        Ok(b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
    pub fn u32(&mut self) -> Result<u32> {
        let v = self.u32s()?;
        if v.len() != 1 {
            return Err(self.corrupt("expected a single value"));
        }
        Ok(v[0])
    }
    pub fn bytes(&mut self) -> Result<Vec<u8>> {
        let len = self.u32()? as usize;
        let words = self.u32s()?;
        if words.len() != len.div_ceil(4) {
            return Err(self.corrupt("byte array length mismatch"));
        }
        let mut out = Vec::with_capacity(words.len() * 4);
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.truncate(len);
        Ok(out)
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
    let header_len = HEADER_FIXED + sections.len() * 16 + 4;
    let mut out = Vec::new();
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
    Error::new(ErrorKind::BlobTruncated, format!("blob is truncated: {what}"))
}

/// Parse and check the header (magic, endianness, version, checksums of the
/// header and of every section).
pub fn read_header(bytes: &[u8]) -> Result<BlobHeader> {
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        if bytes.len() < 8 && MAGIC.starts_with(bytes) {
            return Err(truncated("shorter than the 8-byte label"));
        }
        return Err(Error::new(ErrorKind::BlobCorrupt, "not a grammask blob (the label \"GRAMMASK\" is missing)"));
    }
    if bytes.len() < HEADER_FIXED {
        return Err(truncated("header incomplete"));
    }
    let w = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let d = |i: usize| (w(i) as u64) | ((w(i + 4) as u64) << 32);
    let mark = w(8);
    if mark != ENDIAN_MARK {
        if mark == ENDIAN_MARK.swap_bytes() {
            return Err(Error::new(ErrorKind::BlobCorrupt, "blob was written with the other byte order"));
        }
        return Err(Error::new(ErrorKind::BlobCorrupt, "blob header is corrupt (bad endianness mark)"));
    }
    let version = w(12);
    if version != FORMAT_VERSION {
        return Err(Error::new(
            ErrorKind::BlobVersion,
            format!("blob has format version {version}, this grammask reads version {FORMAT_VERSION}; rebuild it with `grammask compile`"),
        ));
    }
    let gv = w(20);
    let tok_fp = d(24);
    let gram_fp = d(32);
    let options = w(40);
    let n = w(44) as usize;
    if n > 64 {
        return Err(Error::new(ErrorKind::BlobCorrupt, format!("blob header is corrupt ({n} sections)")));
    }
    let header_len = HEADER_FIXED + n * 16 + 4;
    if bytes.len() < header_len {
        return Err(truncated("section table incomplete"));
    }
    if checksum(&bytes[..header_len - 4]) != w(header_len - 4) {
        return Err(Error::new(ErrorKind::BlobCorrupt, "blob header checksum mismatch (the file is damaged)"));
    }
    let mut sections = Vec::with_capacity(n);
    let mut end = header_len;
    for i in 0..n {
        let b = HEADER_FIXED + i * 16;
        let tag = [bytes[b], bytes[b + 1], bytes[b + 2], bytes[b + 3]];
        let (off, len, sum) = (w(b + 4), w(b + 8), w(b + 12));
        if off as usize != end {
            return Err(Error::new(ErrorKind::BlobCorrupt, "blob section table is inconsistent"));
        }
        end = end.checked_add(len as usize).ok_or_else(|| Error::new(ErrorKind::BlobCorrupt, "section too long"))?;
        sections.push((tag, off, len, sum));
    }
    if bytes.len() < end {
        return Err(truncated(&format!("{} of {} bytes present", bytes.len(), end)));
    }
    if bytes.len() > end {
        return Err(Error::new(ErrorKind::BlobCorrupt, "blob has trailing bytes after the last section"));
    }
    for &(tag, off, len, sum) in &sections {
        if checksum(&bytes[off as usize..(off + len) as usize]) != sum {
            return Err(Error::new(
                ErrorKind::BlobCorrupt,
                format!("blob section {} checksum mismatch (the file is damaged)", String::from_utf8_lossy(&tag)),
            ));
        }
    }
    Ok(BlobHeader {
        format_version: version,
        grammask_version: gv,
        tokenizer_fingerprint: tok_fp,
        grammar_fingerprint: gram_fp,
        options,
        sections,
    })
}

/// The bytes of section `tag`.
pub(crate) fn section<'a>(h: &BlobHeader, bytes: &'a [u8], tag: &[u8; 4]) -> Result<SectionReader<'a>> {
    let name = std::str::from_utf8(tag).unwrap_or("????");
    let &(_, off, len, _) = h
        .sections
        .iter()
        .find(|s| &s.0 == tag)
        .ok_or_else(|| Error::new(ErrorKind::BlobCorrupt, format!("blob has no {name} section")))?;
    Ok(SectionReader::new(*tag, &bytes[off as usize..(off + len) as usize]))
}

impl MaskStore {
    /// Serialize to a blob.
    pub fn to_bytes(&self) -> Vec<u8> {
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
                indt.u32s(&r.bracket.iter().map(|&b| b as i32 as u32).collect::<Vec<_>>());
            }
        }
        indt.u32(self.grammar.n_terminals);
        let mut vocb = SectionWriter::default();
        vocb.bytes(self.vocab.bytes()).u32s(self.vocab.offsets()).bytes(self.vocab.special_bits());
        vocb.u32s(&self.vocab.eos_ids().iter().map(|t| t.0).collect::<Vec<_>>());
        let mut posn = SectionWriter::default();
        posn.u32s(&self.q_base)
            .u32s(&self.q_target)
            .u32s(&self.q_always)
            .u32s(&self.q_entries)
            .u32s(&self.entry_seq)
            .u32s(&self.seq_pool)
            .u32s(&self.entry_set);
        let mut sets = SectionWriter::default();
        sets.u32(self.sets.words);
        sets.u32s(&self.sets.index.iter().flatten().copied().collect::<Vec<_>>());
        sets.u32s(&self.sets.data);
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
                (b"SETS", sets),
                (b"INFO", info),
            ],
        )
    }

    /// Load a blob. Never panics; every error says what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<MaskStore> {
        let h = read_header(bytes)?;
        let lexer = read_lexer(&mut section(&h, bytes, b"LEXR")?)?;
        let mut r = section(&h, bytes, b"LALR")?;
        let dims = r.u32s()?;
        let &[n_terminals, n_nonterminals, n_states, start_state] = dims.as_slice() else {
            return Err(Error::new(ErrorKind::BlobCorrupt, "blob section LALR is corrupt: dimensions"));
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
                let bracket: Vec<i8> = r.u32s()?.into_iter().map(|b| b as i32 as i8).collect();
                Some(crate::parser::indent::IndentRules { newline, indent, dedent, bracket })
            }
            _ => return Err(Error::new(ErrorKind::BlobCorrupt, "blob section INDT is corrupt")),
        };
        let n_terminals = r.u32()?;
        r.finish()?;
        let corrupt = |m: String| Error::new(ErrorKind::BlobCorrupt, format!("blob is corrupt: {m}"));
        if let Some(ind) = &indent {
            if ind.bracket.len() != n_terminals as usize
                || [ind.newline, ind.indent, ind.dedent].iter().any(|&t| t >= n_terminals)
            {
                return Err(corrupt("indentation rules do not match the grammar".into()));
            }
        }
        if tables.n_terminals() != n_terminals + 1 || lexer.n_terminals() != n_terminals as usize {
            return Err(corrupt("lexer, parser and grammar disagree on the number of terminals".into()));
        }
        let grammar = crate::parser::indent::Grammar::new(tables, indent, n_terminals);
        let mut r = section(&h, bytes, b"VOCB")?;
        let (tb, offs, special) = (r.bytes()?, r.u32s()?, r.bytes()?);
        let eos = r.u32s()?.into_iter().map(crate::ids::TokenId).collect();
        r.finish()?;
        let vocab = crate::vocab::Vocab::from_parts(tb, offs, special, eos)
            .map_err(|e| Error::new(ErrorKind::BlobCorrupt, format!("blob section VOCB is corrupt: {}", e.message())))?;
        if vocab.fingerprint() != h.tokenizer_fingerprint {
            return Err(corrupt("vocabulary does not match the header's tokenizer fingerprint".into()));
        }
        let mut r = section(&h, bytes, b"POSN")?;
        let (q_base, q_target, q_always, q_entries, entry_seq, seq_pool, entry_set) =
            (r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?);
        r.finish()?;
        let mut r = section(&h, bytes, b"SETS")?;
        let words = r.u32()?;
        let flat = r.u32s()?;
        if flat.len() % 3 != 0 {
            return Err(corrupt("token set index".into()));
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
            return Err(corrupt("step counts".into()));
        }
        let step_counts =
            names.into_iter().zip(counts.chunks_exact(2).map(|c| c[0] as u64 | ((c[1] as u64) << 32))).collect();
        let store = MaskStore {
            lexer,
            grammar,
            vocab,
            info: StoreInfo { terminal_names, grammar_fingerprint: h.grammar_fingerprint, step_counts },
            q_base,
            q_target,
            q_always,
            q_entries,
            entry_seq,
            seq_pool,
            entry_set,
            sets: super::sets::TokenSets { words, index, data },
        };
        store.validate().map_err(corrupt)?;
        if store.q_of(store.lexer.start().0, super::walk::NO_TARGET).is_none() {
            return Err(corrupt("no start position".into()));
        }
        Ok(store)
    }

    /// Load a blob and check it was built for the tokenizer with fingerprint `expected`.
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

fn write_lexer(l: &crate::lexer::Lexer, w: &mut SectionWriter) {
    let p = l.parts();
    w.bytes(&p.classes[..]).u32(p.n_classes).u32(p.n_states).u32s(p.cont).u32s(p.emit).u32s(p.winner);
    w.u32s(p.comp_offsets).u32s(&p.comp.iter().map(|t| t.0).collect::<Vec<_>>()).u32(p.n_terminals);
    w.bytes(&p.ignored.iter().map(|&b| b as u8).collect::<Vec<_>>());
}

fn read_lexer(r: &mut SectionReader<'_>) -> Result<crate::lexer::Lexer> {
    let classes: [u8; 256] = r.bytes()?.try_into().map_err(|_| r.corrupt("byte class table"))?;
    let (n_classes, n_states) = (r.u32()?, r.u32()?);
    let (cont, emit, winner, comp_offsets) = (r.u32s()?, r.u32s()?, r.u32s()?, r.u32s()?);
    let comp: Vec<crate::ids::TerminalId> = r.u32s()?.into_iter().map(crate::ids::TerminalId).collect();
    let n_terminals = r.u32()?;
    let ignored_b = r.bytes()?;
    if ignored_b.iter().any(|&b| b > 1) {
        return Err(r.corrupt("ignored flags"));
    }
    let ignored: Vec<bool> = ignored_b.iter().map(|&b| b == 1).collect();
    r.finish()?;
    crate::lexer::Lexer::from_parts(crate::lexer::LexerParts {
        classes: &classes,
        n_classes,
        n_states,
        cont: &cont,
        emit: &emit,
        winner: &winner,
        comp_offsets: &comp_offsets,
        comp: &comp,
        n_terminals,
        ignored: &ignored,
    })
}
