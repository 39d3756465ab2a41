//! Permission policies and the parsing of a typed answer: what the config file, the command
//! line and the client share, below the client (`client::Policy` is this module's [`Policy`]).

use acp_blocking::acp_proto::types::{PermissionOption, PermissionOptionKind};

/// How `acp client` answers `session/request_permission`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Pick an allow option (`allow_once`, else `allow_always`) without asking.
    Allow,
    /// Pick a reject option (`reject_once`, else `reject_always`) without asking.
    Deny,
    /// Ask on the terminal (or read the answers from stdin when it is not a terminal).
    Ask,
}

/// The option a policy picks: the first of `kinds` (in order of preference) that is offered.
fn first_of<'a>(options: &'a [PermissionOption], kinds: &[PermissionOptionKind]) -> Option<&'a PermissionOption> {
    kinds.iter().find_map(|kind| options.iter().find(|o| &o.kind == kind))
}

/// The allow option to pick, if any is offered.
pub(crate) fn allow_option(options: &[PermissionOption]) -> Option<&PermissionOption> {
    first_of(options, &[PermissionOptionKind::AllowOnce, PermissionOptionKind::AllowAlways])
}

/// The reject option to pick, if any is offered.
pub(crate) fn reject_option(options: &[PermissionOption]) -> Option<&PermissionOption> {
    first_of(options, &[PermissionOptionKind::RejectOnce, PermissionOptionKind::RejectAlways])
}

/// The option a typed answer names: its number (1-based), `y`/`yes` (allow), `n`/`no`
/// (reject), or its id or label (case-insensitive).
pub(crate) fn parse_answer<'a>(options: &'a [PermissionOption], answer: &str) -> Option<&'a PermissionOption> {
    let answer = answer.trim();
    if let Ok(n) = answer.parse::<usize>() {
        return n.checked_sub(1).and_then(|i| options.get(i));
    }
    match answer.to_ascii_lowercase().as_str() {
        "y" | "yes" => allow_option(options),
        "n" | "no" => reject_option(options),
        lower => {
            options.iter().find(|o| o.option_id.to_string().to_lowercase() == lower || o.name.to_lowercase() == lower)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<PermissionOption> {
        vec![
            PermissionOption::new("always", "Always allow", PermissionOptionKind::AllowAlways),
            PermissionOption::new("once", "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
        ]
    }

    #[test]
    fn policies_prefer_the_once_options() {
        let options = options();
        assert_eq!(allow_option(&options).unwrap().option_id.to_string(), "once");
        assert_eq!(reject_option(&options).unwrap().option_id.to_string(), "no");
        assert!(reject_option(&options[..2]).is_none());
    }

    #[test]
    fn answers_by_number_word_id_or_label() {
        let options = options();
        let id = |a: &str| parse_answer(&options, a).map(|o| o.option_id.to_string());
        assert_eq!(id("1").as_deref(), Some("always"));
        assert_eq!(id(" 3 ").as_deref(), Some("no"));
        assert_eq!(id("y").as_deref(), Some("once"));
        assert_eq!(id("NO").as_deref(), Some("no"));
        assert_eq!(id("allow once").as_deref(), Some("once"));
        assert_eq!(id("0"), None);
        assert_eq!(id("4"), None);
        assert_eq!(id("maybe"), None);
    }
}
