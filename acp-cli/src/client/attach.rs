//! What a one-prompt run sends: the prompt's text, the files its `@path` words name, and the
//! `--image` files.
//!
//! [`prepare`] runs before the agent starts, so that a mistake costs no agent: each word of
//! the prompt that starts with `@` and names an existing file (relative paths from the
//! session's working directory; when the word ends with punctuation, the path without it is
//! also tried) becomes an attachment, which must lie inside one of the roots; a word naming
//! nothing stays plain text (with a warning). Images are checked for a known extension and
//! their size.
//!
//! [`Prepared::blocks`] runs once the agent said what its prompts may carry: a file is an
//! embedded `resource` (its text, at most [`MAX_EMBED`] bytes) when the agent advertises
//! `promptCapabilities.embeddedContext` and the file is UTF-8, a `resource_link` otherwise;
//! images need `promptCapabilities.image`. The prompt's text block comes first, unchanged.

use std::path::{Path, PathBuf};

use acp_blocking::acp_proto::types::*;

/// The largest file embedded in a prompt (`@path` with `embeddedContext`).
pub const MAX_EMBED: u64 = 1024 * 1024;
/// The largest `--image` file.
pub const MAX_IMAGE: u64 = 10 * 1024 * 1024;
/// The most bytes of files and images put into one prompt (base64 counted as sent).
pub const MAX_INLINE_TOTAL: u64 = 32 * 1024 * 1024;
/// The most `@path` attachments and images in one prompt.
pub const MAX_ATTACHMENTS: usize = 64;
/// The longest prompt read from stdin (`-p -`) or `--file`.
pub const MAX_PROMPT: u64 = 8 * 1024 * 1024;

/// Image extensions and their MIME types.
const IMAGE_TYPES: [(&str, &str); 5] =
    [("png", "image/png"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("gif", "image/gif"), ("webp", "image/webp")];

/// A prompt ready to be turned into content blocks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prepared {
    text: String,
    /// `@path` files: canonical path and size.
    files: Vec<(PathBuf, u64)>,
    /// `--image` files: canonical path, size and MIME type.
    images: Vec<(PathBuf, u64, &'static str)>,
    /// Words that looked like `@path` but named no file.
    pub(crate) unmatched: Vec<String>,
}

/// Reads a prompt from `source` (`-` is stdin), at most [`MAX_PROMPT`] bytes of UTF-8; its
/// trailing line breaks are dropped.
pub fn read_prompt(source: &Path) -> Result<String, String> {
    use std::io::Read;
    let stdin = source == Path::new("-");
    let name = if stdin { "stdin".to_owned() } else { source.display().to_string() };
    let mut bytes = Vec::new();
    let read = if stdin {
        std::io::stdin().lock().take(MAX_PROMPT + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(source).and_then(|f| f.take(MAX_PROMPT + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("cannot read the prompt from {name}: {e}"))?;
    if bytes.len() as u64 > MAX_PROMPT {
        return Err(format!("the prompt from {name} is longer than {MAX_PROMPT} bytes"));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("the prompt from {name} is not UTF-8 text"))?;
    Ok(text.trim_end_matches(['\n', '\r']).to_owned())
}

/// Finds the prompt's `@path` attachments and checks the images; see the module docs.
pub(crate) fn prepare(text: &str, images: &[PathBuf], roots: &[PathBuf], cwd: &Path) -> Result<Prepared, String> {
    let roots: Vec<PathBuf> = roots.iter().map(|r| std::fs::canonicalize(r).unwrap_or_else(|_| r.clone())).collect();
    let mut prepared = Prepared { text: text.to_owned(), ..Prepared::default() };
    for word in text.split_whitespace() {
        let Some(name) = word.strip_prefix('@').filter(|n| !n.is_empty()) else { continue };
        let Some(path) = existing(cwd, name) else {
            prepared.unmatched.push(word.to_owned());
            continue;
        };
        if !path.is_file() {
            return Err(format!("{word}: {} is not a regular file", path.display()));
        }
        if !roots.iter().any(|root| path.starts_with(root)) {
            let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            return Err(format!(
                "{word}: {} is outside the roots ({}); add its directory with --root DIR",
                path.display(),
                shown.join(", ")
            ));
        }
        if !prepared.files.iter().any(|(p, _)| *p == path) {
            let size = std::fs::metadata(&path).map_err(|e| format!("{word}: {e}"))?.len();
            prepared.files.push((path, size));
        }
    }
    for image in images {
        prepared.images.push(check_image(image)?);
    }
    if prepared.files.len() + prepared.images.len() > MAX_ATTACHMENTS {
        return Err(format!("at most {MAX_ATTACHMENTS} files and images can go into one prompt"));
    }
    Ok(prepared)
}

/// The file `name` (from `cwd`) names, trying it without trailing punctuation too.
fn existing(cwd: &Path, name: &str) -> Option<PathBuf> {
    let trimmed = name.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'', '"']);
    [name, trimmed].into_iter().filter(|n| !n.is_empty()).find_map(|n| std::fs::canonicalize(cwd.join(n)).ok())
}

fn check_image(path: &Path) -> Result<(PathBuf, u64, &'static str), String> {
    let shown = path.display();
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let Some(&(_, mime)) = IMAGE_TYPES.iter().find(|(e, _)| *e == ext) else {
        return Err(format!("--image {shown}: not a png, jpeg, gif or webp file (by its extension)"));
    };
    let path = std::fs::canonicalize(path).map_err(|e| format!("--image {shown}: {e}"))?;
    let file = crate::files::open_regular(&path).map_err(|e| format!("--image {shown}: {e}"))?;
    let size = file.metadata().map_err(|e| format!("--image {shown}: {e}"))?.len();
    if size > MAX_IMAGE {
        return Err(format!("--image {shown}: {size} bytes; images are limited to {MAX_IMAGE} bytes"));
    }
    Ok((path, size, mime))
}

impl Prepared {
    /// The prompt's content blocks for an agent with `caps`, with a line per attachment for
    /// the transcript.
    pub(crate) fn blocks(&self, caps: &PromptCapabilities) -> Result<(Vec<ContentBlock>, Vec<String>), String> {
        if !self.images.is_empty() && !caps.image {
            return Err("the agent does not accept images (its promptCapabilities.image is not true); \
                        run again without --image"
                .to_owned());
        }
        let mut blocks = vec![ContentBlock::text(self.text.clone())];
        let mut notes = Vec::new();
        let mut inline = 0u64;
        for (path, size) in &self.files {
            let uri = file_uri(path);
            let embedded = if caps.embedded_context { self.embed(path, *size, &mut inline)? } else { None };
            match embedded {
                Some(text) => {
                    let mut contents = TextResourceContents::new(text, uri);
                    contents.mime_type = text_mime(path).map(str::to_owned);
                    let resource = EmbeddedResourceResource::TextResourceContents(contents);
                    blocks.push(ContentBlock::Resource(EmbeddedResource::new(resource)));
                    notes.push(format!("attached {} ({size} bytes, embedded)", path.display()));
                }
                None => {
                    let name = path.file_name().map_or_else(|| uri.clone(), |n| n.to_string_lossy().into_owned());
                    let mut link = ResourceLink::new(name, uri);
                    link.size = i64::try_from(*size).ok();
                    link.mime_type = text_mime(path).map(str::to_owned);
                    blocks.push(ContentBlock::ResourceLink(link));
                    notes.push(format!("attached {} (link)", path.display()));
                }
            }
        }
        for (path, size, mime) in &self.images {
            inline += size.div_ceil(3) * 4;
            if inline > MAX_INLINE_TOTAL {
                return Err(format!("the files and images come to more than {MAX_INLINE_TOTAL} bytes"));
            }
            let bytes =
                crate::files::read_regular(path, MAX_IMAGE).map_err(|e| format!("--image {}: {e}", path.display()))?;
            let mut image = ImageContent::new(base64(&bytes), *mime);
            image.uri = Some(file_uri(path));
            blocks.push(ContentBlock::Image(image));
            notes.push(format!("attached image {} ({} bytes, {mime})", path.display(), bytes.len()));
        }
        Ok((blocks, notes))
    }

    /// The file's text to embed; `None` when it is not UTF-8 (it is linked instead).
    fn embed(&self, path: &Path, size: u64, inline: &mut u64) -> Result<Option<String>, String> {
        let shown = path.display();
        if size > MAX_EMBED {
            return Err(format!(
                "@{shown} is {size} bytes; files embedded in a prompt are limited to {MAX_EMBED} bytes (1 MiB)"
            ));
        }
        *inline += size;
        if *inline > MAX_INLINE_TOTAL {
            return Err(format!("the files and images come to more than {MAX_INLINE_TOTAL} bytes"));
        }
        let bytes = crate::files::read_regular(path, MAX_EMBED).map_err(|e| format!("@{shown}: {e}"))?;
        Ok(String::from_utf8(bytes).ok())
    }
}

/// The MIME type of a few common text files, by extension.
fn text_mime(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "js" | "mjs" => "text/javascript",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        _ => return None,
    })
}

/// A `file://` URI for an absolute path, percent-encoding all but unreserved bytes and `/`.
pub(crate) fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        let cases =
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn file_uris_escape_what_is_not_plain() {
        assert_eq!(file_uri(Path::new("/a b/ü#?.txt")), "file:///a%20b/%C3%BC%23%3F.txt");
    }

    #[test]
    fn at_words_become_files_inside_the_roots_only() {
        let dir = std::env::temp_dir().join(format!("acp-attach-{}", std::process::id()));
        let inner = dir.join("in");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("a.md"), "# A\n").unwrap();
        std::fs::write(dir.join("out.txt"), "x").unwrap();
        let roots = [inner.clone()];
        let p = prepare("see @a.md, and @a.md and @nothing and a@b", &[], &roots, &inner).unwrap();
        assert_eq!(p.files.len(), 1);
        assert_eq!(p.unmatched, ["@nothing"]);
        let err = prepare("@../out.txt", &[], &roots, &inner).unwrap_err();
        assert!(err.contains("outside the roots"), "{err}");
        assert!(prepare("@.", &[], &roots, &inner).unwrap_err().contains("not a regular file"));
        let caps = PromptCapabilities::default();
        let (blocks, _) = p.blocks(&caps).unwrap();
        assert!(matches!(&blocks[1], ContentBlock::ResourceLink(l) if l.name == "a.md" && l.size == Some(4)));
        let caps = PromptCapabilities { embedded_context: true, ..PromptCapabilities::default() };
        let (blocks, _) = p.blocks(&caps).unwrap();
        assert!(matches!(&blocks[1], ContentBlock::Resource(_)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
