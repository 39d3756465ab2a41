//! The interactive loop's slash commands: parsing a line into a [`Command`], the help text,
//! and [`Completions`], the names offered when the user presses Tab (ours and the agent's
//! `available_commands_update`).
//!
//! A line that does not start with `/` is a prompt. `//text` sends `/text` literally. A
//! `/name` that is not ours but one the agent advertised is sent as the prompt `/name args`,
//! as the protocol's slash-commands page says; anything else starting with `/` is an error.

use std::sync::{Arc, Mutex, PoisonError};

use acp_blocking::acp_proto::types::AvailableCommand;

/// The agent's commands remembered for completion and dispatch (a peer cannot grow it further).
pub(crate) const MAX_AGENT_COMMANDS: usize = 256;

/// Our commands, with their arguments and what they do (for `/help` and completion).
pub(crate) const BUILTIN: [(&str, &str, &str); 12] = [
    ("help", "", "this list, and the agent's own commands"),
    ("cancel", "", "cancel the running turn (session/cancel)"),
    ("steer", "TEXT", "add TEXT to the running turn (_session/steering), else it waits; between turns, a prompt"),
    ("queue", "", "during a turn: what waits for its end"),
    ("mode", "[ID]", "list the session's modes, or switch to ID (session/set_mode)"),
    ("model", "[ID]", "list the models, or pick ID (the `model` config option)"),
    ("config", "[ID VALUE]", "list the config options, or set one (session/set_config_option)"),
    ("sessions", "", "the agent's sessions (session/list, when it advertises it)"),
    ("new", "", "open a new session in the same working directory"),
    ("load", "ID", "reopen the session ID (session/load, or session/resume when the agent has only that)"),
    ("quit", "", "leave (also Ctrl-D, or /exit)"),
    ("exit", "", "leave"),
];

/// What a line of the interactive loop asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Send this text as a prompt.
    Prompt(String),
    /// An empty line.
    Nothing,
    Help,
    Cancel,
    /// `/steer TEXT` between turns (during one, `steer.rs` takes it).
    Steer(String),
    /// `/queue` between turns.
    Queue,
    Quit,
    Mode(Option<String>),
    Model(Option<String>),
    /// `/config`, `/config ID` (show one) or `/config ID VALUE`.
    Config(Option<String>, Option<String>),
    Sessions,
    New,
    Load(Option<String>),
    /// A `/name` that is neither ours nor the agent's.
    Unknown(String),
}

/// Parses one line; `agent_has(name)` says whether the agent advertised `/name`.
pub(crate) fn parse(line: &str, agent_has: impl Fn(&str) -> bool) -> Command {
    let text = line.trim();
    if text.is_empty() {
        return Command::Nothing;
    }
    if let Some(literal) = text.strip_prefix("//") {
        return Command::Prompt(format!("/{literal}"));
    }
    let Some(rest) = text.strip_prefix('/') else { return Command::Prompt(text.to_owned()) };
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or("");
    let first = words.next().map(str::to_owned);
    let second = words.next().map(str::to_owned);
    match name {
        "help" | "?" => Command::Help,
        "cancel" => Command::Cancel,
        "steer" => Command::Steer(rest["steer".len()..].trim().to_owned()),
        "queue" => Command::Queue,
        "quit" | "exit" => Command::Quit,
        "mode" => Command::Mode(first),
        "model" => Command::Model(first),
        "config" => Command::Config(first, second),
        "sessions" => Command::Sessions,
        "new" => Command::New,
        "load" => Command::Load(first),
        _ if agent_has(name) => Command::Prompt(text.to_owned()),
        _ => Command::Unknown(name.to_owned()),
    }
}

/// The one-line error for an unknown command.
pub(crate) fn unknown_message(name: &str, agent: &[String]) -> String {
    let mut names: Vec<String> = BUILTIN.iter().map(|(n, _, _)| format!("/{n}")).collect();
    names.extend(agent.iter().map(|n| format!("/{n}")));
    format!("unknown command `/{name}`; commands: {} (//text sends /text as a prompt)", names.join(" "))
}

/// The slash-command names offered for completion: ours, then the agent's current ones.
#[derive(Debug, Clone, Default)]
pub(crate) struct Completions {
    agent: Arc<Mutex<Vec<String>>>,
}

impl Completions {
    /// Replaces the agent's commands with those of an `available_commands_update`.
    pub(crate) fn set_agent(&self, commands: &[AvailableCommand]) {
        let names = commands.iter().take(MAX_AGENT_COMMANDS).map(|c| c.name.clone()).collect();
        *self.agent.lock().unwrap_or_else(PoisonError::into_inner) = names;
    }

    /// The agent's command names.
    pub(crate) fn agent(&self) -> Vec<String> {
        self.agent.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Where the completed word starts and its candidates (`/name`), for `line` with the
    /// cursor at byte `pos`: only the first word of a line starting with `/` is completed.
    pub(crate) fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let head = line.get(..pos).unwrap_or(line);
        if !head.starts_with('/') || head.starts_with("//") || head.contains(char::is_whitespace) {
            return (0, Vec::new());
        }
        let prefix = &head[1..];
        let mut names: Vec<String> = BUILTIN.iter().map(|(n, _, _)| (*n).to_owned()).collect();
        for name in self.agent() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let found = names.into_iter().filter(|n| n.starts_with(prefix)).map(|n| format!("/{n}")).collect();
        (0, found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_blocking::acp_proto::types::SessionUpdate;

    #[test]
    fn lines_become_commands_or_prompts() {
        let agent = |name: &str| name == "status";
        assert_eq!(parse("hello /x", agent), Command::Prompt("hello /x".into()));
        assert_eq!(parse("  ", agent), Command::Nothing);
        assert_eq!(parse("/mode plan", agent), Command::Mode(Some("plan".into())));
        assert_eq!(parse("/model", agent), Command::Model(None));
        assert_eq!(
            parse("/config model ref-large", agent),
            Command::Config(Some("model".into()), Some("ref-large".into()))
        );
        assert_eq!(parse("/status now", agent), Command::Prompt("/status now".into()));
        assert_eq!(parse("//mode plan", agent), Command::Prompt("/mode plan".into()));
        assert_eq!(parse("/frobnicate", agent), Command::Unknown("frobnicate".into()));
        assert_eq!(parse("/load sess-1", agent), Command::Load(Some("sess-1".into())));
        assert_eq!(parse("/steer  focus on the tests ", agent), Command::Steer("focus on the tests".into()));
        assert_eq!(parse("/steering", agent), Command::Unknown("steering".into()));
        let message = unknown_message("frobnicate", &["status".into()]);
        assert!(message.contains("/help") && message.contains("/status"), "{message}");
    }

    #[test]
    fn an_available_commands_update_feeds_the_completer() {
        let completions = Completions::default();
        assert_eq!(completions.candidates("/st", 3), (0, vec!["/steer".to_owned()]));
        let update: SessionUpdate = serde_json::from_value(serde_json::json!({
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "status", "description": "Report the mode and model"},
                {"name": "web", "description": "Search", "input": {"hint": "query"}}
            ]
        }))
        .unwrap();
        let SessionUpdate::AvailableCommandsUpdate(update) = update else { panic!("not parsed as commands") };
        completions.set_agent(&update.available_commands);
        assert_eq!(completions.candidates("/st", 3), (0, vec!["/steer".to_owned(), "/status".to_owned()]));
        assert_eq!(completions.candidates("/m", 2), (0, vec!["/mode".to_owned(), "/model".to_owned()]));
        assert_eq!(completions.candidates("/w", 2).1, vec!["/web".to_owned()]);
        // Only the command word is completed; prompts and `//` literals are not.
        assert!(completions.candidates("/web que", 8).1.is_empty());
        assert!(completions.candidates("hello /st", 9).1.is_empty());
        assert!(completions.candidates("//st", 4).1.is_empty());
        // A new update replaces the old list.
        completions.set_agent(&[]);
        assert_eq!(completions.candidates("/st", 3).1, vec!["/steer".to_owned()]);
    }
}
