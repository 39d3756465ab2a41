//! v2 structured diffs.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); docs are the schema's own descriptions.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::manual::skip_invalid_items;
#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use crate::types::serde_ext::{
    lenient_nullable, lenient_nullable_items, lenient_object, lenient_object_default, null_as_default,
};
#[allow(unused_imports)]
use crate::types::serde_util::{lenient, lenient_default, lenient_items, lenient_vec, string_enum, tagged_union};
#[allow(unused_imports)]
use std::collections::BTreeMap;

/// One file-level change described by a `Diff`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffChange {
    /// File content kind after the operation (for `delete`, of the deleted file).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub file_type: Option<DiffFileType>,
    /// MIME type of the file contents after the operation (for `delete`, of the deleted file).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// The variant, discriminated by `operation`.
    #[serde(flatten)]
    pub kind: DiffChangeKind,
}

tagged_union! {
    /// One file-level change described by a `Diff`.
    pub enum DiffChangeKind, tag = "operation", expecting = "a DiffChange object" {
        /// A file was added.
        Add(DiffPathChange) = "add",
        /// A file was deleted.
        Delete(DiffPathChange) = "delete",
        /// A file was modified in place.
        Modify(DiffPathChange) = "modify",
        /// A file was moved or renamed.
        Move(DiffPathPairChange) = "move",
        /// A file was copied.
        Copy(DiffPathPairChange) = "copy",
    }
}

string_enum! {
    /// Kind of file content represented by a diff change.
    pub enum DiffFileType {
        /// Text content.
        Text = "text",
        /// Binary or otherwise non-text content.
        Binary = "binary",
        /// Directory entry.
        Directory = "directory",
        /// Symbolic link.
        Symlink = "symlink",
    }
}

/// An absolute filesystem path used by the protocol.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AbsolutePath(pub String);

/// Operation metadata for add, delete, and modify changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPathChange {
    /// Absolute path for the operation.
    pub path: AbsolutePath,
}

/// Operation metadata for move and copy changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPathPairChange {
    /// Absolute path before the operation.
    pub old_path: AbsolutePath,
    /// Absolute path after the operation.
    pub path: AbsolutePath,
}

/// Renderable patch text and its format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPatch {
    /// Patch format. The only ACP-defined value is `git_patch`.
    pub format: DiffPatchFormat,
    /// Patch text in the format named by `format`.
    pub text: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

string_enum! {
    /// Text patch format used by `DiffPatch`.
    pub enum DiffPatchFormat {
        /// One or more `diff --git` sections in Git's `--patch` (`-p`) text format.
        GitPatch = "git_patch",
    }
}

/// File changes produced by a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    /// Structured file changes described by this diff. Agents MUST include at least one entry.
    #[serde(deserialize_with = "skip_invalid_items")]
    pub changes: Vec<DiffChange>,
    /// Renderable patch text for some or all of the structured changes.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub patch: Option<DiffPatch>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}
