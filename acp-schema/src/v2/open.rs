//! v2's rule for values a receiver does not know ([`OpenValue`]): `_`-prefixed values are
//! implementation-specific extensions, other unknown values are reserved for future versions.

use super::*;

/// What an unknown enum value or union discriminator is, by v2's extensibility rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownKind {
    /// It begins with `_`: an implementation-specific extension.
    Extension,
    /// Any other unknown value: reserved for a future ACP version. It is never a custom
    /// extension, and a receiver must not treat it as one.
    Future,
}

impl UnknownKind {
    /// The kind of the unknown wire value `value`.
    pub fn of(value: &str) -> UnknownKind {
        if value.starts_with('_') { UnknownKind::Extension } else { UnknownKind::Future }
    }
}

/// An open v2 enum or tagged union: it keeps values this version does not know.
pub trait OpenValue {
    /// The unknown wire value (the string, or the union's discriminator), if this is one.
    fn unknown_value(&self) -> Option<&str>;

    /// `None` for a known value, otherwise whether the unknown value is an extension or a
    /// future variant.
    fn unknown_kind(&self) -> Option<UnknownKind> {
        self.unknown_value().map(UnknownKind::of)
    }
}

/// Implements [`OpenValue`] for string enums (`Unknown(String)`) and tagged unions
/// (`Unknown(UnknownVariant)`, with their discriminator key).
macro_rules! open_values {
    (strings: [$($s:ty),* $(,)?] unions: [$($u:ty => $key:literal),* $(,)?]) => {
        $(impl OpenValue for $s {
            fn unknown_value(&self) -> Option<&str> {
                match self {
                    Self::Unknown(v) => Some(v),
                    _ => None,
                }
            }
        })*
        $(impl OpenValue for $u {
            fn unknown_value(&self) -> Option<&str> {
                match self {
                    Self::Unknown(v) => Some(v.tag($key).unwrap_or_default()),
                    _ => None,
                }
            }
        })*
    };
}

open_values! {
    strings: [
        ToolKind, ToolCallStatus, Role, IconTheme, DiffFileType, DiffPatchFormat, PermissionOptionKind,
        StringFormat, SessionConfigOptionCategory, PlanEntryPriority, PlanEntryStatus, NoticeSeverity,
        CompactionStatus, SystemPromptMode, IdleStopReason,
    ]
    unions: [
        RequestPermissionSubject => "type", ToolCallContent => "type", ContentBlock => "type",
        DiffChangeKind => "operation", CreateElicitationRequestKind => "mode", ElicitationPropertySchema => "type",
        AuthMethod => "type", SessionConfigOptionKind => "type", AvailableCommand => "type",
        AvailableCommandInput => "type", SessionUpdate => "sessionUpdate", BackgroundWork => "type",
        StateUpdate => "state", PlanUpdateContent => "type", McpServer => "type", ReplayFrom => "type",
        SessionConfigOptionValue => "type", RequestPermissionOutcome => "outcome",
        CreateElicitationResponseKind => "action", MultiSelectItems => "type",
    ]
}
