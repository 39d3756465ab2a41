//! The scripted prompt turn's content, shared by the v1 agent ([`super::ReferenceAgent`]) and
//! the v2 one (`super::v2`): the texts, the plan, the tool call's title and raw input and the
//! permission options. Each version wraps them in its own update types; the words are written
//! only here.

use acp_blocking::acp_proto::types::{PermissionOption, PermissionOptionKind, PlanEntryPriority};
use serde_json::{Value, json};

use super::{ALLOW_ONCE, REJECT_ONCE};

/// The first message of every turn.
pub(crate) fn echo(text: &str) -> String {
    format!("echo: {text}")
}

/// The message that follows the echo in a session given a system prompt.
pub(crate) fn system_prompt_note(system: &str) -> String {
    format!("\nsystem prompt: {system}")
}

/// The last message of a turn that ran to its end.
pub(crate) const DONE: &str = "done";

/// The tool call's content when the permission was rejected.
pub(crate) const REJECTED: &str = "Rejected by the user.";

/// The thought before the plan; `through_client`: the agent reads through the client's
/// `fs/read_text_file` (v1; v2 has no `fs/*`, so the v2 agent only asks).
pub(crate) fn thought(path: Option<&str>, through_client: bool) -> String {
    match path {
        Some(p) if through_client => format!("The prompt names {p}; I will ask before reading it through the client."),
        Some(p) => format!("The prompt names {p}; I will ask before touching it."),
        None => "The prompt names no absolute path, so there is nothing to read.".to_owned(),
    }
}

/// What the tool call reads (the path, or a placeholder).
fn target(path: Option<&str>) -> &str {
    path.unwrap_or("(no file)")
}

/// The tool call's title (also the permission question's).
pub(crate) fn tool_title(path: Option<&str>) -> String {
    format!("Read {}", target(path))
}

/// The tool call's raw input.
pub(crate) fn raw_input(path: Option<&str>, text: &str) -> Value {
    json!({ "path": path, "prompt": text })
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanStep {
    pub(crate) content: String,
    pub(crate) priority: PlanEntryPriority,
}

/// The plan's steps: reading the target, then reporting on it. The first is in progress and
/// the second pending when the plan is first sent.
pub(crate) fn plan(path: Option<&str>) -> [PlanStep; 2] {
    [
        PlanStep { content: tool_title(path), priority: PlanEntryPriority::High },
        PlanStep { content: "Report what it says".to_owned(), priority: PlanEntryPriority::Medium },
    ]
}

/// The permission options: allow once, reject once.
pub(crate) fn permission_options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
    ]
}

/// The tool call's content when there is no path to read.
pub(crate) const NO_PATH: &str = "Nothing to read: the prompt names no absolute path.";

/// The tool call's content when the path does not exist.
pub(crate) fn missing(path: &str) -> String {
    format!("Nothing to read: {path} does not exist.")
}
