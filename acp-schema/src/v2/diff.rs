//! v2 structured diffs.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

use super::manual::skip_invalid_items;
use super::*;
use crate::v1::serde_util::{lenient, string_enum, tagged_union};

/// The v2 `DiffChange` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffChange {
    /// The `fileType` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub file_type: Option<DiffFileType>,
    /// The `mimeType` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub mime_type: Option<MediaType>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
    /// The variant, discriminated by `operation`.
    #[serde(flatten)]
    pub kind: DiffChangeKind,
}

impl DiffChange {
    /// A `DiffChange` of its required fields (`kind`); the optional ones are absent.
    pub fn new(kind: DiffChangeKind) -> Self {
        DiffChange { file_type: None, mime_type: None, meta: None, kind }
    }
}

tagged_union! {
    /// The v2 `DiffChange` union.
    pub enum DiffChangeKind, tag = "operation", expecting = "a DiffChange object" {
        /// `add`.
        Add(DiffPathChange) = "add",
        /// `delete`.
        Delete(DiffPathChange) = "delete",
        /// `modify`.
        Modify(DiffPathChange) = "modify",
        /// `move`.
        Move(DiffPathPairChange) = "move",
        /// `copy`.
        Copy(DiffPathPairChange) = "copy",
    }
}

string_enum! {
    /// The v2 `DiffFileType` values.
    pub enum DiffFileType {
        /// `text`.
        Text = "text",
        /// `binary`.
        Binary = "binary",
        /// `directory`.
        Directory = "directory",
        /// `symlink`.
        Symlink = "symlink",
    }
}

/// The v2 `AbsolutePath` string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AbsolutePath(pub String);

impl From<String> for AbsolutePath {
    fn from(s: String) -> Self {
        AbsolutePath(s)
    }
}

impl From<&str> for AbsolutePath {
    fn from(s: &str) -> Self {
        AbsolutePath(s.to_owned())
    }
}

/// The v2 `DiffPathChange` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPathChange {
    /// The `path` field (required).
    pub path: AbsolutePath,
}

impl DiffPathChange {
    /// A `DiffPathChange` of its required fields (`path`); the optional ones are absent.
    pub fn new(path: impl Into<AbsolutePath>) -> Self {
        DiffPathChange { path: path.into() }
    }
}

/// The v2 `DiffPathPairChange` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPathPairChange {
    /// The `oldPath` field (required).
    pub old_path: AbsolutePath,
    /// The `path` field (required).
    pub path: AbsolutePath,
}

impl DiffPathPairChange {
    /// A `DiffPathPairChange` of its required fields (`old_path`, `path`); the optional ones are absent.
    pub fn new(old_path: impl Into<AbsolutePath>, path: impl Into<AbsolutePath>) -> Self {
        DiffPathPairChange { old_path: old_path.into(), path: path.into() }
    }
}

/// The v2 `DiffPatch` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPatch {
    /// The `format` field (required).
    pub format: DiffPatchFormat,
    /// The `text` field (required).
    pub text: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl DiffPatch {
    /// A `DiffPatch` of its required fields (`format`, `text`); the optional ones are absent.
    pub fn new(format: impl Into<DiffPatchFormat>, text: impl Into<String>) -> Self {
        DiffPatch { format: format.into(), text: text.into(), meta: None }
    }
}

string_enum! {
    /// The v2 `DiffPatchFormat` values.
    pub enum DiffPatchFormat {
        /// `git_patch`.
        GitPatch = "git_patch",
    }
}

/// The v2 `Diff` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    /// The `changes` field (required).
    #[serde(deserialize_with = "skip_invalid_items")]
    pub changes: Vec<DiffChange>,
    /// The `patch` field (optional).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub patch: Option<DiffPatch>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl Diff {
    /// A `Diff` of its required fields (`changes`); the optional ones are absent.
    pub fn new(changes: impl Into<Vec<DiffChange>>) -> Self {
        Diff { changes: changes.into(), patch: None, meta: None }
    }
}
