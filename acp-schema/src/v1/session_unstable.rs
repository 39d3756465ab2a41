//! The unstable session methods of the pinned schema (`schema.unstable.json`), each behind the
//! cargo feature the official schema crate names it with: `session/set_title`
//! (`unstable_session_set_title`), `session/status` (`unstable_session_status`),
//! `session/archive` and `session/unarchive` (`unstable_session_archive`).
//!
//! **Unstable**: not part of the spec yet; upstream may change or remove them in any release.
//! The capability objects that announce them are fields of
//! [`SessionCapabilities`](super::SessionCapabilities), on the wire only with the same features
//! (the fields, their marker types and [`SessionArchiveFilter`] exist in every build, so that
//! struct literals compile whatever features cargo unifies).

#[cfg(any(
    feature = "unstable_session_set_title",
    feature = "unstable_session_status",
    feature = "unstable_session_archive"
))]
use serde::{Deserialize, Serialize};

#[cfg(any(
    feature = "unstable_session_set_title",
    feature = "unstable_session_status",
    feature = "unstable_session_archive"
))]
use super::{Meta, SessionId, serde_util::lenient};

#[cfg(feature = "unstable_session_set_title")]
mod set_title {
    use super::*;

    /// Parameters of `session/set_title` (client to agent); needs `sessionCapabilities.title`.
    /// The session need not be active on the connection; an unknown one gets `-32002`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SetSessionTitleRequest {
        /// The session to retitle.
        pub session_id: SessionId,
        /// The new title (the agent may normalize it; an empty one is refused with `-32602`).
        pub title: String,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }

    impl SetSessionTitleRequest {
        /// Sets the title of `session_id` to `title`.
        pub fn new(session_id: impl Into<SessionId>, title: impl Into<String>) -> Self {
            SetSessionTitleRequest { session_id: session_id.into(), title: title.into(), meta: None }
        }
    }

    /// Result of `session/set_title`: the title the agent stored (show this one).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SetSessionTitleResponse {
        /// The stored title, after the agent's normalization.
        pub title: String,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }

    impl SetSessionTitleResponse {
        /// The agent stored `title`.
        pub fn new(title: impl Into<String>) -> Self {
            SetSessionTitleResponse { title: title.into(), meta: None }
        }
    }
}

#[cfg(feature = "unstable_session_set_title")]
pub use set_title::*;

#[cfg(feature = "unstable_session_status")]
mod status {
    use super::*;

    /// Parameters of `session/status` (client to agent); needs `sessionCapabilities.status`.
    /// It has no side effects: the agent neither loads nor attaches the session.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionStatusRequest {
        /// The session to check.
        pub session_id: SessionId,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }

    impl SessionStatusRequest {
        /// Asks for the status of `session_id`.
        pub fn new(session_id: impl Into<SessionId>) -> Self {
            SessionStatusRequest { session_id: session_id.into(), meta: None }
        }
    }

    crate::v1::serde_util::string_enum! {
        /// Whether the agent has a session in memory (`session/status`). Treat an unknown value
        /// as [`Saved`](SessionStatus::Saved), as the schema says.
        pub enum SessionStatus {
            /// In memory (for some connection; not necessarily attached to this one).
            Open = "open",
            /// Known and resumable, but not in memory.
            Saved = "saved",
        }
    }

    /// Result of `session/status`: a snapshot of the session's state.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SessionStatusResponse {
        /// Whether the agent has the session in memory.
        pub status: SessionStatus,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }

    impl SessionStatusResponse {
        /// The session is `status`.
        pub fn new(status: SessionStatus) -> Self {
            SessionStatusResponse { status, meta: None }
        }
    }
}

#[cfg(feature = "unstable_session_status")]
pub use status::*;

crate::v1::serde_util::string_enum! {
    /// **Unstable** (`unstable_session_archive`): which sessions `session/list` returns by
    /// archive state (`ListSessionsRequest.archived`; absent means
    /// [`Exclude`](SessionArchiveFilter::Exclude)). An agent answers `-32602` to a value it does
    /// not support. Compiled without the feature too, as the type of that always-present field.
    pub enum SessionArchiveFilter {
        /// Only sessions that are not archived (the default).
        Exclude = "exclude",
        /// Archived and not archived sessions.
        Include = "include",
        /// Only archived sessions.
        Only = "only",
    }
}
#[cfg(feature = "unstable_session_archive")]
mod archive {
    use super::*;

    /// Parameters of `session/archive` (client to agent); needs `sessionCapabilities.archive`.
    /// Hides the session from default `session/list` results, closing it first if it is
    /// active; archiving an archived session succeeds.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ArchiveSessionRequest {
        /// The session to archive.
        pub session_id: SessionId,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }

    impl ArchiveSessionRequest {
        /// Archives `session_id`.
        pub fn new(session_id: impl Into<SessionId>) -> Self {
            ArchiveSessionRequest { session_id: session_id.into(), meta: None }
        }
    }

    crate::v1::serde_ext::meta_only! {
        /// Result of `session/archive`.
        ArchiveSessionResponse
    }

    /// Parameters of `session/unarchive` (client to agent); needs `sessionCapabilities.archive`.
    /// Returns the session to default `session/list` results; it never loads or resumes it.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct UnarchiveSessionRequest {
        /// The session to unarchive.
        pub session_id: SessionId,
        /// Extension metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
        pub meta: Option<Meta>,
    }

    impl UnarchiveSessionRequest {
        /// Unarchives `session_id`.
        pub fn new(session_id: impl Into<SessionId>) -> Self {
            UnarchiveSessionRequest { session_id: session_id.into(), meta: None }
        }
    }

    crate::v1::serde_ext::meta_only! {
        /// Result of `session/unarchive`.
        UnarchiveSessionResponse
    }
}

#[cfg(feature = "unstable_session_archive")]
pub use archive::*;
