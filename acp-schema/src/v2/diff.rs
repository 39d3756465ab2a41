//! v2 structured diffs.
//!
//! Generated from `spec/crate-1.20.0/v2/schema.json` by `tools/gen_v2_types.py` (one type per
//! `$defs` entry that differs from v1 on the wire); the doc comments name the
//! wire items; the schema's descriptions (in `spec/`) say what they mean.
//! Edit the generator, not this file, unless the type is hand-written in `manual.rs`.

#![allow(clippy::large_enum_variant)]

use serde::{Deserialize, Serialize};

#[allow(unused_imports)]
use super::manual::skip_invalid_items;
#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use crate::v1::serde_ext::{
    lenient_nullable, lenient_nullable_items, lenient_object, lenient_object_default, null_as_default,
};
#[allow(unused_imports)]
use crate::v1::serde_util::{lenient, lenient_default, lenient_items, lenient_vec, string_enum, tagged_union};
#[allow(unused_imports)]
use std::collections::BTreeMap;

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

/// The v2 `DiffPathChange` definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPathChange {
    /// The `path` field (required).
    pub path: AbsolutePath,
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
