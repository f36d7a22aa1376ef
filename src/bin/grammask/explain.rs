//! Why `check` refused a token: the byte, its line:col, what the masks allow
//! there, what the grammar expected (terminals, with their file:line:col for a
//! Lark grammar) and, for a JSON Schema, the instance location, the schema
//! pointer and the keyword that refused it (or the serialization rule).
//!
//! Only the CLI's error path runs this (after a refusal): nothing here is in
//! the matcher's hot path or in the wasm build.

use grammask::grammar::Cfg;
use grammask::ids::TokenId;
use grammask::matcher::Matcher;
use grammask::reference::recognizer::Recognizer;
use grammask::store::MaskStore;
use serde_json::Value;

/// What `check` knows about the constraint beyond its store.
#[derive(Default)]
pub struct Explainer {
    /// The reference recognizer of the constraint's grammar (not for --store).
    rec: Option<Recognizer>,
    /// The JSON Schema (with --json-schema).
    schema: Option<Value>,
    /// The whitespace policy's name, for the hints.
    ws: String,
}

/// A refusal, explained.
pub struct Why {
    pub text: String,
}

impl Explainer {
    pub fn new(cfg: Option<Cfg>, schema: Option<Value>, ws: &str) -> Self {
        Explainer { rec: cfg.and_then(|c| Recognizer::new(c).ok()), schema, ws: ws.to_string() }
    }

    /// `m` is the matcher before the refused token `id`; `done` the bytes of
    /// the tokens committed so far (the text up to the refusal).
    pub fn explain(&self, store: &MaskStore, m: &mut Matcher, done: &[u8], id: u32, file: &[u8]) -> Why {
        // `u32::MAX`: the end of the text (EOS refused).
        let tb = if (id as usize) < store.vocab().len() { store.vocab().token_bytes(TokenId(id)).to_vec() } else { Vec::new() };
        // The refused byte: feed the token's bytes one by one (as single-byte tokens).
        let singles = single_byte_tokens(store);
        let mut k = 0;
        let mut fed = 0;
        while k < tb.len() && k < 60 {
            match singles[tb[k] as usize] {
                Some(t) if m.is_allowed(t) && m.commit_token(t).is_ok() => {
                    fed += 1;
                    k += 1;
                }
                _ => break,
            }
        }
        let mut mask = vec![0u32; store.mask_words()];
        let _ = m.fill_mask(&mut mask);
        let eos_ok = m.is_accepting();
        let _ = m.rollback(fed);
        let offset = done.len() + k;
        let mut text_so_far = done.to_vec();
        text_so_far.extend_from_slice(&tb[..k]);
        let (line, col) = grammask::reference::recognizer::line_col(&text_so_far, offset);
        let refused = if k < tb.len() {
            format!("{:?}", String::from_utf8_lossy(&tb[k..k + 1]))
        } else if tb.is_empty() {
            "the end of the text".into()
        } else {
            "the token".into()
        };
        let mut parts = vec![format!("refused at {line}:{col} (byte {offset}, {refused})")];
        // What the masks allow there, as single bytes.
        let allowed: Vec<u8> = (0..=255u8).filter(|&b| singles[b as usize].is_some_and(|t| mask[t as usize >> 5] >> (t & 31) & 1 == 1)).collect();
        let mut allow = describe_bytes(&allowed);
        if eos_ok {
            allow.push("the end of the text".into());
        }
        if allow.is_empty() {
            parts.push("nothing single-byte is allowed there".into());
        } else {
            parts.push(format!("allowed there: {}", allow.join(" ")));
        }
        // What the grammar expected (the reference recognizer, on the text up to the refused byte).
        if let Some(rec) = &self.rec {
            let mut upto = text_so_far.clone();
            if k < tb.len() {
                upto.push(tb[k]);
            }
            if let Err(r) = rec.check(&upto) {
                let cfg = rec.cfg();
                let names: Vec<String> = r
                    .expected
                    .iter()
                    .take(8)
                    .map(|n| {
                        let def = cfg.terminals.iter().find(|t| &t.display_name() == n);
                        match def.filter(|d| !d.span.file.is_empty() || d.span.line > 0) {
                            Some(d) => format!("{n} ({})", d.span),
                            None => n.clone(),
                        }
                    })
                    .collect();
                if self.schema.is_none() && !names.is_empty() {
                    let more = if r.expected.len() > 8 { format!(" … ({} more)", r.expected.len() - 8) } else { String::new() };
                    parts.push(format!("grammar: {}; expected {}{more}", r.message, names.join(" ")));
                }
            }
        }
        if let Some(schema) = &self.schema {
            parts.push(schema_why(schema, file, offset, &self.ws));
        } else if k < tb.len() && tb[k].is_ascii_whitespace() && !allowed.iter().any(|b| b.is_ascii_whitespace()) {
            parts.push("whitespace is not allowed here".into());
        }
        Why { text: parts.join("; ") }
    }
}

/// The token of each single byte (first found), if the vocabulary has one.
fn single_byte_tokens(store: &MaskStore) -> Vec<Option<u32>> {
    let mut out = vec![None; 256];
    let eos: Vec<u32> = store.vocab().eos_ids().iter().map(|t| t.0).collect();
    for id in 0..store.vocab().len() as u32 {
        let b = store.vocab().token_bytes(TokenId(id));
        if b.len() == 1 && out[b[0] as usize].is_none() && !eos.contains(&id) {
            out[b[0] as usize] = Some(id);
        }
    }
    out
}

/// Bytes as short ranges: `"0"-"9" "," "}"`.
fn describe_bytes(bytes: &[u8]) -> Vec<String> {
    let show = |b: u8| if b.is_ascii_graphic() || b == b' ' { format!("{:?}", b as char) } else { format!("0x{b:02x}") };
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let mut j = i;
        while j + 1 < bytes.len() && bytes[j + 1] == bytes[j] + 1 {
            j += 1;
        }
        if j >= i + 2 {
            out.push(format!("{}-{}", show(bytes[i]), show(bytes[j])));
        } else {
            out.extend((i..=j).map(|x| show(bytes[x])));
        }
        i = j + 1;
    }
    if out.len() > 24 {
        let n = out.len() - 24;
        out.truncate(24);
        out.push(format!("… ({n} more)"));
    }
    out
}

// ---------------------------------------------------------------------------
// JSON Schema: where in the instance, which schema node, which keyword.

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Where the refused byte is, read from the text before it.
#[derive(Debug)]
enum At {
    /// Writing an object key that starts at this offset (or where one would start).
    Key(usize),
    /// Writing a value that starts at this offset (or where one would start).
    Value(usize),
    /// After a value inside a container (`,` or the closing bracket next).
    After,
    /// Inside an object/array at this offset (just opened).
    Open,
    /// After the top-level value.
    End,
}

struct Frame {
    obj: bool,
    /// Keys seen so far (objects).
    keys: Vec<String>,
    /// Items so far (arrays).
    items: usize,
    key: Option<String>,
}

/// Scans `text[..off]` as JSON: the path to the value being written and where.
fn locate(text: &[u8], off: usize) -> Option<(Vec<Seg>, Vec<Frame>, At)> {
    let off = off.min(text.len());
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    // State: expecting a value (true) or after one.
    let mut want_value = true;
    let mut top_done = false;
    let skip_ws = |i: &mut usize| {
        while *i < off && text[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        if i >= off {
            break;
        }
        let c = text[i];
        if top_done {
            return Some((vec![], stack, At::End));
        }
        let in_key = stack.last().is_some_and(|f| f.obj && f.key.is_none());
        if want_value && !in_key {
            match c {
                b'{' | b'[' => {
                    stack.push(Frame { obj: c == b'{', keys: vec![], items: 0, key: None });
                    i += 1;
                    // An empty container or a first key/item comes next.
                    skip_ws(&mut i);
                    if i < off && (text[i] == b'}' || text[i] == b']') {
                        want_value = false;
                        continue;
                    }
                    if i >= off {
                        return Some((path(&stack), stack, At::Open));
                    }
                    continue;
                }
                _ => {
                    let start = i;
                    let end = scalar_end(text, i);
                    if end > off {
                        return Some((path(&stack), stack, At::Value(start)));
                    }
                    if end == start {
                        return None;
                    }
                    i = end;
                    want_value = false;
                    if stack.is_empty() {
                        top_done = true;
                    }
                    continue;
                }
            }
        }
        if in_key && c != b'}' {
            // A key.
            {
                let start = i;
                let end = scalar_end(text, i);
                if end > off {
                    return Some((path(&stack), stack, At::Key(start)));
                }
                if end == start {
                    return None;
                }
                let k: String = serde_json::from_slice(&text[start..end]).unwrap_or_default();
                i = end;
                skip_ws(&mut i);
                if i >= off {
                    return Some((path(&stack), stack, At::Key(start)));
                }
                if text[i] != b':' {
                    return None;
                }
                i += 1;
                let f = stack.last_mut()?;
                f.keys.push(k.clone());
                f.key = Some(k);
                want_value = true;
                skip_ws(&mut i);
                if i >= off {
                    return Some((path(&stack), stack, At::Value(i)));
                }
                continue;
            }
        }
        // After a value.
        match c {
            b',' => {
                let f = stack.last_mut()?;
                i += 1;
                if f.obj {
                    f.key = None;
                    skip_ws(&mut i);
                    if i >= off {
                        return Some((path(&stack), stack, At::Key(i)));
                    }
                } else {
                    f.items += 1;
                    want_value = true;
                    skip_ws(&mut i);
                    if i >= off {
                        return Some((path(&stack), stack, At::Value(i)));
                    }
                }
            }
            b'}' | b']' => {
                stack.pop()?;
                i += 1;
                want_value = false;
                if let Some(f) = stack.last_mut() {
                    if !f.obj {
                        // The closed container was an item.
                    }
                } else {
                    top_done = true;
                }
            }
            _ => return None,
        }
    }
    let at = if top_done {
        At::End
    } else if stack.last().is_some_and(|f| f.obj && f.key.is_none()) {
        if stack.last().is_some_and(|f| f.keys.is_empty()) {
            At::Open
        } else {
            At::Key(off)
        }
    } else if want_value {
        if stack.last().is_some_and(|f| !f.obj && f.items == 0) {
            At::Open
        } else {
            At::Value(off)
        }
    } else {
        At::After
    };
    Some((path(&stack), stack, at))
}

fn path(stack: &[Frame]) -> Vec<Seg> {
    stack
        .iter()
        .filter_map(|f| if f.obj { f.key.clone().map(Seg::Key) } else { Some(Seg::Index(f.items)) })
        .collect()
}

/// End of the scalar (string, number, literal) starting at `i` (may run past the text).
fn scalar_end(text: &[u8], mut i: usize) -> usize {
    if text.get(i) == Some(&b'"') {
        i += 1;
        while i < text.len() {
            match text[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        return usize::MAX;
    }
    while i < text.len() && !b",}] \t\r\n".contains(&text[i]) {
        i += 1;
    }
    if i == text.len() {
        usize::MAX
    } else {
        i
    }
}

fn instance_ptr(p: &[Seg]) -> String {
    let mut s = String::new();
    for seg in p {
        s.push('/');
        match seg {
            Seg::Key(k) => s.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(i) => s.push_str(&i.to_string()),
        }
    }
    if s.is_empty() {
        "(root)".into()
    } else {
        s
    }
}

/// Resolves a local `$ref` (JSON pointer into the document).
fn resolve<'a>(root: &'a Value, mut node: &'a Value, mut ptr: String) -> (&'a Value, String) {
    for _ in 0..32 {
        let Some(r) = node.get("$ref").and_then(Value::as_str) else { break };
        let Some(p) = r.strip_prefix('#') else { break };
        let p = p.replace("%25", "%");
        match root.pointer(&p) {
            Some(n) => {
                node = n;
                ptr = format!("#{p}");
            }
            None => break,
        }
    }
    (node, ptr)
}

/// The subschema for an instance path (properties, patternProperties as
/// additionalProperties, items, prefixItems, $ref, and the first allOf/anyOf/oneOf
/// branch that declares the step).
fn walk<'a>(root: &'a Value, path: &[Seg]) -> Option<(&'a Value, String)> {
    let (mut node, mut ptr) = resolve(root, root, "#".into());
    for seg in path {
        let (n, p) = step(root, node, &ptr, seg, 0)?;
        (node, ptr) = resolve(root, n, p);
    }
    Some((node, ptr))
}

fn step<'a>(root: &'a Value, node: &'a Value, ptr: &str, seg: &Seg, depth: u32) -> Option<(&'a Value, String)> {
    if depth > 4 {
        return None;
    }
    let esc = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match seg {
        Seg::Key(k) => {
            if let Some(v) = node.get("properties").and_then(|p| p.get(k)) {
                return Some((v, format!("{ptr}/properties/{}", esc(k))));
            }
        }
        Seg::Index(i) => {
            if let Some(v) = node.get("prefixItems").and_then(|p| p.get(*i)) {
                return Some((v, format!("{ptr}/prefixItems/{i}")));
            }
            if let Some(a) = node.get("items").and_then(Value::as_array) {
                if let Some(v) = a.get(*i) {
                    return Some((v, format!("{ptr}/items/{i}")));
                }
                if let Some(v) = node.get("additionalItems") {
                    return Some((v, format!("{ptr}/additionalItems")));
                }
            } else if let Some(v) = node.get("items") {
                return Some((v, format!("{ptr}/items")));
            }
        }
    }
    for kw in ["allOf", "anyOf", "oneOf"] {
        if let Some(bs) = node.get(kw).and_then(Value::as_array) {
            for (j, b) in bs.iter().enumerate() {
                let (b, bp) = resolve(root, b, format!("{ptr}/{kw}/{j}"));
                if let Some(r) = step(root, b, &bp, seg, depth + 1) {
                    return Some(r);
                }
            }
        }
    }
    if let Seg::Key(_) = seg {
        if let Some(v) = node.get("additionalProperties") {
            return Some((v, format!("{ptr}/additionalProperties")));
        }
    }
    None
}

/// The declared property names of an object schema (with its allOf/anyOf/oneOf branches).
fn declared(root: &Value, node: &Value, depth: u32) -> Vec<String> {
    // The key order of propertyOrder 'schema': the keywords in the order they
    // appear, `properties` and the applicators' branches merged left to right.
    let mut out: Vec<String> = Vec::new();
    let mut add = |ks: Vec<String>| {
        for k in ks {
            if !out.contains(&k) {
                out.push(k);
            }
        }
    };
    for (kw, v) in node.as_object().into_iter().flatten() {
        match kw.as_str() {
            "properties" => add(v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()),
            "allOf" | "anyOf" | "oneOf" if depth < 4 => {
                for b in v.as_array().into_iter().flatten() {
                    let (b, _) = resolve(root, b, String::new());
                    add(declared(root, b, depth + 1));
                }
            }
            _ => {}
        }
    }
    out
}

/// A dependency of `node` (`dependentRequired`, `dependencies`, a
/// dependent schema's `required`) that the keys `seen` leave unmet, in words.
fn unmet_dependency(node: &Value, seen: &[String], ptr: &str) -> Option<String> {
    for kw in ["dependentRequired", "dependencies", "dependentSchemas"] {
        let Some(m) = node.get(kw).and_then(Value::as_object) else { continue };
        for (a, d) in m {
            if !seen.contains(a) {
                continue;
            }
            let (list, at) = match d {
                Value::Array(_) => (d, format!("`{kw}` at {ptr}/{kw}/{a}")),
                _ => match d.get("required") {
                    Some(r) => (r, format!("`{kw}` at {ptr}/{kw}/{a}/required")),
                    None => continue,
                },
            };
            let missing: Vec<&str> = list.as_array()?.iter().filter_map(Value::as_str).filter(|k| !seen.iter().any(|s| s == k)).collect();
            if !missing.is_empty() {
                return Some(format!("has {a:?} but lacks {missing:?}, which {at} requires"));
            }
        }
    }
    None
}

/// Key `k` requires (by a dependency of `node`) keys that are missing and
/// come before it in schema order (`decl`), so it cannot occur now.
fn needs_earlier(node: &Value, k: &str, seen: &[String], decl: &[String], ptr: &str) -> Option<String> {
    let at = decl.iter().position(|d| d == k)?;
    for kw in ["dependentRequired", "dependencies", "dependentSchemas"] {
        let Some(d) = node.get(kw).and_then(|m| m.get(k)) else { continue };
        let (list, rel) = if d.is_array() { (d, format!("{kw}/{k}")) } else { (d.get("required")?, format!("{kw}/{k}/required")) };
        let missing: Vec<&str> = list.as_array()?.iter().filter_map(Value::as_str).filter(|r| !seen.iter().any(|s| s == r) && decl.iter().position(|d| d == r).is_some_and(|p| p < at)).collect();
        if !missing.is_empty() {
            return Some(format!("requires {missing:?} (`{kw}` at {ptr}/{rel}), which come before it in schema order"));
        }
    }
    None
}

fn required(node: &Value) -> Vec<String> {
    node.get("required").and_then(Value::as_array).map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect()).unwrap_or_default()
}

fn num(node: &Value, k: &str) -> Option<f64> {
    node.get(k).and_then(Value::as_f64)
}

/// The keywords of `node` that the value `v` fails (those checked here).
fn failing(node: &Value, v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let ty = |t: &str| match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|x| x.fract() == 0.0),
        _ => true,
    };
    match node.get("type") {
        Some(Value::String(t)) if !ty(t) => out.push(format!("type: {t:?}")),
        Some(Value::Array(ts)) if !ts.iter().any(|t| t.as_str().is_none_or(ty)) => out.push(format!("type: {}", Value::Array(ts.clone()))),
        _ => {}
    }
    let eq = |a: &Value, b: &Value| a == b || a.as_f64().is_some_and(|x| b.as_f64() == Some(x));
    if let Some(c) = node.get("const") {
        if !eq(c, v) {
            out.push(format!("const: {c}"));
        }
    }
    if let Some(e) = node.get("enum").and_then(Value::as_array) {
        if !e.iter().any(|c| eq(c, v)) {
            let s = Value::Array(e.clone()).to_string();
            out.push(format!("enum: {}", if s.len() > 120 { format!("{}…", &s[..s.char_indices().nth(117).map_or(s.len(), |x| x.0)]) } else { s }));
        }
    }
    if let Some(x) = v.as_f64() {
        let bool_excl = |k: &str| node.get(k).and_then(Value::as_bool).unwrap_or(false);
        if let Some(m) = num(node, "minimum") {
            if x < m || (bool_excl("exclusiveMinimum") && x == m) {
                out.push(format!("minimum: {m}"));
            }
        }
        if let Some(m) = num(node, "maximum") {
            if x > m || (bool_excl("exclusiveMaximum") && x == m) {
                out.push(format!("maximum: {m}"));
            }
        }
        if let Some(m) = num(node, "exclusiveMinimum") {
            if x <= m {
                out.push(format!("exclusiveMinimum: {m}"));
            }
        }
        if let Some(m) = num(node, "exclusiveMaximum") {
            if x >= m {
                out.push(format!("exclusiveMaximum: {m}"));
            }
        }
        if let Some(m) = num(node, "multipleOf") {
            let q = x / m;
            if m > 0.0 && (q - q.round()).abs() > 1e-9 {
                out.push(format!("multipleOf: {m}"));
            }
        }
    }
    if let Some(s) = v.as_str() {
        let n = s.chars().count() as f64;
        if let Some(m) = num(node, "minLength") {
            if n < m {
                out.push(format!("minLength: {m}"));
            }
        }
        if let Some(m) = num(node, "maxLength") {
            if n > m {
                out.push(format!("maxLength: {m}"));
            }
        }
    }
    out
}

/// The schema side of a refusal at byte `off` of `text`.
fn schema_why(root: &Value, text: &[u8], off: usize, ws: &str) -> String {
    // The tokens' bytes can differ from the file's (a normalizing tokenizer).
    let off = off.min(text.len());
    let Some((path, stack, at)) = locate(text, off) else {
        return "the text before this point is not JSON the explanation can follow".into();
    };
    let refused = text.get(off).copied();
    if refused.is_some_and(|b| b.is_ascii_whitespace()) && !matches!(at, At::Key(s) | At::Value(s) if s < off) {
        let hint = if ws.starts_with("flexible") {
            "a whitespace run longer than the policy allows: raise it with --whitespace flexible:N"
        } else {
            "whitespace here is outside the whitespace policy: --whitespace flexible accepts any JSON whitespace"
        };
        return format!("at instance {} ({hint}; policy: {ws})", instance_ptr(&path));
    }
    // The innermost container's own location (its frame's segment names its child).
    let container_path: Vec<Seg> = crate::explain::path(&stack[..stack.len().saturating_sub(1)]);
    if off >= text.len() && !matches!(at, At::End) {
        let ptr = walk(root, &container_path).map_or("?".into(), |x| x.1);
        let what = match stack.last() {
            Some(f) if f.obj => "object",
            Some(_) => "array",
            None => "value",
        };
        return format!("the text ends inside the {what} at instance {} (schema {ptr}): it is not complete", instance_ptr(&container_path));
    }
    match at {
        At::End => "nothing may follow the top-level value".into(),
        At::Value(start) => {
            let Some((node, ptr)) = walk(root, &path) else {
                return format!("at instance {}: no subschema found for it", instance_ptr(&path));
            };
            let end = scalar_end(text, start);
            let value: Option<Value> = (end != usize::MAX).then(|| serde_json::from_slice(&text[start..end]).ok()).flatten();
            let kws = match &value {
                Some(v) => failing(node, v),
                None => vec![],
            };
            let shown = value.as_ref().map(|v| {
                let s = v.to_string();
                if s.len() > 60 {
                    format!("{}…", &s[..s.char_indices().nth(57).map_or(s.len(), |x| x.0)])
                } else {
                    s
                }
            });
            let what = match &shown {
                Some(s) => format!("the value {s} at instance {}", instance_ptr(&path)),
                None => format!("the value at instance {}", instance_ptr(&path)),
            };
            if node == &Value::Bool(false) {
                return format!("{what}: the schema at {ptr} is `false` (nothing is allowed)");
            }
            if !kws.is_empty() {
                return format!("{what} fails `{}` at {ptr}", kws.join("`, `"));
            }
            let present: Vec<&str> = ["pattern", "format", "oneOf", "anyOf", "allOf", "not", "multipleOf"]
                .into_iter()
                .filter(|k| node.get(*k).is_some())
                .collect();
            let policy = "or grammask's serialization (canonical string escapes, plain-decimal bounded numbers; docs/structured-output.md)";
            if present.is_empty() {
                format!("{what} is refused by the schema at {ptr} {policy}")
            } else {
                format!("{what} is refused by `{}` at {ptr} {policy}", present.join("`/`"))
            }
        }
        At::Key(start) => {
            let Some((node, ptr)) = walk(root, &container_path) else {
                return format!("a key in the object at instance {}: no subschema found", instance_ptr(&container_path));
            };
            let end = scalar_end(text, start);
            let key: Option<String> = (end != usize::MAX).then(|| serde_json::from_slice(&text[start..end]).ok()).flatten();
            let key = key.map(|k| if k.chars().count() > 40 { format!("{}…", k.chars().take(40).collect::<String>()) } else { k });
            let decl = declared(root, node, 0);
            let listed = |d: &[String]| {
                let mut s: Vec<String> = d.iter().take(12).map(|k| format!("{k:?}")).collect();
                if d.len() > 12 {
                    s.push(format!("… ({} more)", d.len() - 12));
                }
                s.join(", ")
            };
            let seen = &stack.last().map(|f| f.keys.clone()).unwrap_or_default();
            match key {
                Some(k) if seen.contains(&k) => format!("key {k:?} repeats in the object at instance {} (schema {ptr})", instance_ptr(&container_path)),
                Some(k) if let Some(w) = needs_earlier(node, &k, seen, &decl, &ptr) => {
                    format!("key {k:?} in the object at instance {} {w}", instance_ptr(&container_path))
                }
                Some(k) if decl.contains(&k) => {
                    format!(
                        "key {k:?} is out of order in the object at instance {}: grammask writes declared properties in schema order ({}) (schema {ptr}/properties)",
                        instance_ptr(&container_path),
                        listed(&decl)
                    )
                }
                Some(k) if node.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    format!("key {k:?} is not allowed by `additionalProperties: false` at {ptr}/additionalProperties (declared: {})", listed(&decl))
                }
                Some(k) => {
                    let maxp = num(node, "maxProperties").map_or(String::new(), |m| format!(" (`maxProperties: {m}` at {ptr})"));
                    format!("key {k:?} in the object at instance {} is refused by `properties`/`patternProperties`/`additionalProperties`/`propertyNames` at {ptr}{maxp}", instance_ptr(&container_path))
                }
                None => format!("a key in the object at instance {} (schema {ptr})", instance_ptr(&container_path)),
            }
        }
        At::Open | At::After => {
            let Some((node, ptr)) = walk(root, &container_path) else {
                return format!("in the container at instance {}: no subschema found", instance_ptr(&container_path));
            };
            let Some(f) = stack.last() else { return format!("at {ptr}") };
            let b = refused.unwrap_or(b' ');
            if f.obj {
                let missing: Vec<String> = required(node).into_iter().filter(|k| !f.keys.contains(k)).collect();
                if b == b'}' && !missing.is_empty() {
                    return format!("the object at instance {} lacks `required` {missing:?} ({ptr}/required)", instance_ptr(&container_path));
                }
                if b == b'}' {
                    if let Some(w) = unmet_dependency(node, &f.keys, &ptr) {
                        return format!("the object at instance {} {w}", instance_ptr(&container_path));
                    }
                }
                if b == b'}' {
                    if let Some(m) = num(node, "minProperties") {
                        return format!("the object at instance {} has fewer properties than `minProperties: {m}` ({ptr})", instance_ptr(&container_path));
                    }
                }
                if b == b',' {
                    if let Some(m) = num(node, "maxProperties") {
                        return format!("the object at instance {} would exceed `maxProperties: {m}` ({ptr})", instance_ptr(&container_path));
                    }
                    return format!("no further key is allowed in the object at instance {} (`properties`/`additionalProperties` at {ptr})", instance_ptr(&container_path));
                }
                let next = if matches!(at, At::After) { "`,` or `}`" } else { "a key or `}`" };
                format!("{next} comes next in the object at instance {} (schema {ptr})", instance_ptr(&container_path))
            } else {
                let n = f.items + usize::from(matches!(at, At::After));
                if b == b']' {
                    if let Some(m) = num(node, "minItems") {
                        return format!("the array at instance {} has {n} items, fewer than `minItems: {m}` ({ptr})", instance_ptr(&container_path));
                    }
                }
                if b == b',' {
                    if let Some(m) = num(node, "maxItems") {
                        return format!("the array at instance {} would have more than `maxItems: {m}` ({ptr})", instance_ptr(&container_path));
                    }
                    return format!("no further item is allowed in the array at instance {} (`items`/`prefixItems` at {ptr})", instance_ptr(&container_path));
                }
                let next = if matches!(at, At::After) { "`,` or `]`" } else { "an item or `]`" };
                format!("{next} comes next in the array at instance {} (schema {ptr})", instance_ptr(&container_path))
            }
        }
    }
}
