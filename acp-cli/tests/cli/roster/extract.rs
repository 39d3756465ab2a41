//! The clauses of the spec: every sentence of a protocol page (`*.mdx`) or of a schema
//! description that says MUST, MUST NOT, SHOULD, SHOULD NOT or MAY (uppercase, as RFC 2119
//! words are), with the section it stands in and a stable id.
//!
//! Pages: code blocks are skipped; headings give the anchor (their slug, as the docs site
//! makes it); paragraphs, list items, table rows and the text inside components (`<Note>`,
//! `<ParamField>`…) are cut into sentences after markup is removed (`**`, links, tags). The
//! schema: every `description` string, walked in key order, its anchor the JSON path of the
//! definition; a sentence said in several places (the `_meta` rule is in every type) counts
//! once, at its first place. The id is `PREFIX.PAGE.HASH`: six hex digits of the FNV-1a hash of
//! the sentence in lower case with its spaces collapsed, so it changes only when the sentence
//! does.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

/// One clause as the pages say it (its status is the roster's, kept by hand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) id: String,
    pub(crate) spec: String,
    pub(crate) page: String,
    pub(crate) anchor: String,
    pub(crate) level: &'static str,
    pub(crate) text: String,
}

/// What is read: a spec folder, the id prefix of its clauses, and whether its schema counts.
pub(crate) struct Source {
    pub(crate) folder: &'static str,
    pub(crate) prefix: &'static str,
    pub(crate) schema: bool,
}

/// The roster's sources: the v1.21.0 pages and schema, the v2 pages.
pub(crate) const SOURCES: [Source; 2] = [
    Source { folder: "v1.21.0", prefix: "v1", schema: true },
    Source { folder: "v2.0.0-alpha.3", prefix: "v2", schema: false },
];

/// Every clause of every source under `spec_dir`, in order: by source, page name, position.
pub(crate) fn all(spec_dir: &Path) -> Vec<Found> {
    let mut found = Vec::new();
    for source in &SOURCES {
        let docs = spec_dir.join(source.folder).join("docs");
        let mut pages: Vec<_> = std::fs::read_dir(&docs)
            .unwrap_or_else(|e| panic!("{}: {e}", docs.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "mdx"))
            // schema.mdx is the schema rendered: its sentences are the schema's.
            .filter(|p| p.file_name().is_some_and(|n| n != "schema.mdx"))
            .collect();
        pages.sort();
        for path in pages {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            found.extend(page(source, &name, &text));
        }
        if source.schema {
            let text = std::fs::read_to_string(spec_dir.join(source.folder).join("schema.json")).unwrap();
            found.extend(schema(source, &serde_json::from_str(&text).unwrap()));
        }
    }
    found
}

/// The clauses of one page.
pub(crate) fn page(source: &Source, name: &str, text: &str) -> Vec<Found> {
    let stem = name.trim_end_matches(".mdx");
    let mut out = Clauses::new(source, name, stem);
    let mut anchor = String::new();
    let mut paragraph = String::new();
    let mut fenced = false;
    let mut lines = text.lines().peekable();
    // Front matter.
    if lines.peek() == Some(&"---") {
        lines.next();
        for line in lines.by_ref() {
            if line == "---" {
                break;
            }
        }
    }
    for line in lines {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            out.paragraph(&anchor, &std::mem::take(&mut paragraph));
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if breaks(trimmed) {
            out.paragraph(&anchor, &std::mem::take(&mut paragraph));
        }
        if let Some(heading) = trimmed.strip_prefix('#') {
            anchor = slug(heading.trim_start_matches('#'));
            continue;
        }
        join(&mut paragraph, trimmed);
    }
    out.paragraph(&anchor, &paragraph);
    out.found
}

/// Whether a line starts a paragraph of its own: a blank line, a heading, a table row, a list
/// item, a component's tag.
fn breaks(line: &str) -> bool {
    line.is_empty()
        || line.starts_with('#')
        || line.starts_with('|')
        || is_item(line)
        || (line.starts_with('<') && line.ends_with('>'))
}

fn join(paragraph: &mut String, line: &str) {
    if !paragraph.is_empty() {
        paragraph.push(' ');
    }
    paragraph.push_str(line);
}

/// The clauses of a schema's descriptions.
pub(crate) fn schema(source: &Source, schema: &Value) -> Vec<Found> {
    let mut out = Clauses::new(source, "schema.json", "schema");
    walk(schema, "#", &mut out);
    out.found
}

fn walk(value: &Value, path: &str, out: &mut Clauses) {
    match value {
        Value::Object(map) => {
            // In key order whatever serde_json's map keeps (a workspace build may turn on its
            // `preserve_order`, which keeps the file's order): the roster is the same either way.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            for (key, inner) in entries {
                match (key.as_str(), inner) {
                    ("description", Value::String(text)) => {
                        // Hard-wrapped Markdown: lines join into paragraphs.
                        let anchor = path.trim_start_matches("#/");
                        let mut paragraph = String::new();
                        for line in text.lines().map(str::trim) {
                            if breaks(line) {
                                out.paragraph(anchor, &std::mem::take(&mut paragraph));
                            }
                            join(&mut paragraph, line);
                        }
                        out.paragraph(anchor, &paragraph);
                    }
                    _ => walk(inner, &format!("{path}/{key}"), out),
                }
            }
        }
        Value::Array(items) => {
            for (n, inner) in items.iter().enumerate() {
                walk(inner, &format!("{path}/{n}"), out);
            }
        }
        _ => {}
    }
}

/// A list item (`- `, `* `, `1. `).
fn is_item(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    line.starts_with("- ") || line.starts_with("* ") || (digits > 0 && line[digits..].starts_with(". "))
}

/// A heading's anchor: lower case, markup dropped, spaces to `-`.
pub(crate) fn slug(heading: &str) -> String {
    let text = clean(heading);
    let mut slug = String::new();
    for c in text.trim().chars() {
        match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => slug.extend(c.to_lowercase()),
            ' ' => slug.push('-'),
            _ => {}
        }
    }
    slug
}

/// Text without markup: `**`, links (their text kept), tags, backslash escapes of
/// punctuation (`\n` stays).
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("**") {
            rest = &rest[2..];
        } else if c == '<' && rest[1..].starts_with(|n: char| n.is_ascii_alphabetic() || n == '/') {
            match rest.find('>') {
                Some(end) => rest = &rest[end + 1..],
                None => {
                    out.push(c);
                    rest = &rest[1..];
                }
            }
        } else if c == ']' && rest[1..].starts_with('(') {
            match rest.find(')') {
                Some(end) => rest = &rest[end + 1..],
                None => rest = &rest[1..],
            }
        } else if c == '[' || c == ']' || (c == '\\' && rest[1..].starts_with(|n: char| n.is_ascii_punctuation())) {
            rest = &rest[1..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Sentences of a paragraph: cut after `.`, `!` or `?` followed by a space and a capital, a
/// digit or markup (so `e.g. the` stays whole).
fn sentences(paragraph: &str) -> Vec<String> {
    let chars: Vec<char> = paragraph.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..chars.len() {
        let end = matches!(chars[i], '.' | '!' | '?') && chars.get(i + 1) == Some(&' ');
        let next = chars.get(i + 2).copied().unwrap_or('a');
        if end && (next.is_uppercase() || next.is_ascii_digit() || next == '`') {
            out.push(chars[start..=i].iter().collect::<String>().trim().to_owned());
            start = i + 2;
        }
    }
    out.push(chars[start..].iter().collect::<String>().trim().to_owned());
    out.retain(|s| !s.is_empty());
    out
}

/// The strongest keyword of a sentence, if it has one.
fn level(sentence: &str) -> Option<&'static str> {
    let words: Vec<&str> = sentence.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let has = |a: &str, b: Option<&str>| {
        words.windows(if b.is_some() { 2 } else { 1 }).any(|w| w[0] == a && b.is_none_or(|b| w[1] == b))
    };
    [
        ("MUST", Some("NOT"), "MUST NOT"),
        ("MUST", None, "MUST"),
        ("SHOULD", Some("NOT"), "SHOULD NOT"),
        ("SHOULD", None, "SHOULD"),
        ("MAY", None, "MAY"),
    ]
    .into_iter()
    .find(|(a, b, _)| has(a, *b))
    .map(|(_, _, level)| level)
}

/// FNV-1a, 64 bits: stable across builds and platforms.
fn fnv(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The clauses of one page, collected.
struct Clauses<'a> {
    source: &'a Source,
    page: &'a str,
    stem: &'a str,
    seen: HashSet<String>,
    found: Vec<Found>,
}

impl<'a> Clauses<'a> {
    fn new(source: &'a Source, page: &'a str, stem: &'a str) -> Clauses<'a> {
        Clauses { source, page, stem, seen: HashSet::new(), found: Vec::new() }
    }

    fn paragraph(&mut self, anchor: &str, raw: &str) {
        let text = clean(raw.trim_start_matches(['-', '*', ' ']));
        for sentence in sentences(&text) {
            let Some(level) = level(&sentence) else { continue };
            let normal = sentence.to_lowercase();
            if !self.seen.insert(normal.clone()) {
                continue;
            }
            let id = format!("{}.{}.{:06x}", self.source.prefix, self.stem, fnv(&normal) >> 40);
            assert!(!self.found.iter().any(|f| f.id == id), "an id twice on {}: {id}", self.page);
            self.found.push(Found {
                id,
                spec: self.source.folder.to_owned(),
                page: self.page.to_owned(),
                anchor: anchor.to_owned(),
                level,
                text: sentence,
            });
        }
    }
}

#[test]
fn sentences_levels_and_slugs() {
    assert_eq!(slug("4. Check for `Completion`"), "4-check-for-completion");
    assert_eq!(slug("`$/cancel_request` Notification"), "cancel_request-notification");
    let text =
        "Agents **MUST** answer, e.g. with a `result`. Clients MAY not. The [agent](/x) **SHOULD NOT** lie! Fine.";
    let got: Vec<String> = sentences(&clean(text));
    assert_eq!(
        got,
        ["Agents MUST answer, e.g. with a `result`.", "Clients MAY not.", "The agent SHOULD NOT lie!", "Fine."]
    );
    let levels: Vec<Option<&str>> = got.iter().map(|s| level(s)).collect();
    assert_eq!(levels, [Some("MUST"), Some("MAY"), Some("SHOULD NOT"), None]);
    assert_eq!(level("It MUST NOT, and it MAY"), Some("MUST NOT"));
    assert_eq!(level("must not"), None, "only the uppercase words");
    let source = Source { folder: "v9", prefix: "v9", schema: false };
    let page = "---\ntitle: x\n---\n## Cancel\n\nThe Agent **MUST**\nstop.\n```json\n{\"MUST\": 1}\n```\n- each entry **MUST** be absolute\n<Note>\nClients **SHOULD** wait.\n</Note>\n";
    let found = super::extract::page(&source, "p.mdx", page);
    let got: Vec<(&str, &str, &str)> = found.iter().map(|f| (f.anchor.as_str(), f.level, f.text.as_str())).collect();
    assert_eq!(
        got,
        [
            ("cancel", "MUST", "The Agent MUST stop."),
            ("cancel", "MUST", "each entry MUST be absolute"),
            ("cancel", "SHOULD", "Clients SHOULD wait.")
        ]
    );
    assert!(found[0].id.starts_with("v9.p.") && found[0].id.len() == "v9.p.".len() + 6, "{}", found[0].id);
}
