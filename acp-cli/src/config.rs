//! The `acp` config file: named agents and defaults (issue 17 §1).
//!
//! A TOML file at `$ACP_CONFIG`, else `$XDG_CONFIG_HOME/acp/config.toml`, else
//! `~/.config/acp/config.toml`; `--config FILE` overrides all of these. A missing default file
//! is an empty config; a missing file named by `--config` or `$ACP_CONFIG` is an error.
//!
//! ```toml
//! [defaults]
//! policy = "deny"          # allow | deny | ask
//! connect_timeout = 30     # seconds
//! format = "text"          # text | json
//!
//! [agents.ref]
//! command = ["acp", "agent", "--quiet"]   # an argv array: never split by a shell
//! env = { RUST_LOG = "info" }
//! cwd = "~/work"                          # where the agent process starts
//! policy = "allow"
//! roots = [".", "/tmp"]
//! ```
//!
//! Unknown keys, wrong types and an empty `command` are errors that name the file and line. A
//! file that is not regular (a FIFO, `/dev/zero`) or larger than
//! [`MAX_CONFIG_BYTES`](crate::files::MAX_CONFIG_BYTES) (1 MiB) is refused, naming it.
//! Relative `cwd` and `roots` are resolved against the config file's directory, and a leading
//! `~/` against `$HOME`.
//!
//! The paths follow the XDG base directory rules read from the environment (a few lines, so
//! no `dirs` crate: that crate would put the file under `~/Library/Application Support` on
//! macOS, where terminal tools conventionally use `~/.config` too).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::files::non_empty_var;
use crate::permission::Policy;

/// The whole config file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// What applies when neither the command line nor the agent's entry says.
    #[serde(default)]
    pub defaults: Defaults,
    /// The named agents, by name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentEntry>,
}

/// The `[defaults]` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// How permission requests are answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyName>,
    /// Seconds the agent gets to answer each handshake request (`--connect-timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<u64>,
    /// The output format of `acp client`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
}

/// One `[agents.NAME]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentEntry {
    /// The agent's command line: program and arguments, as given (no shell).
    pub command: Vec<String>,
    /// Environment variables set for the agent process.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The agent process's working directory (default: the client's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// How this agent's permission requests are answered (over `[defaults]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyName>,
    /// The directories the agent may use (`--root`), when none is given on the command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<PathBuf>,
}

/// A permission policy as written in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyName {
    /// `--allow`.
    Allow,
    /// `--deny`.
    Deny,
    /// `--ask`.
    Ask,
}

impl PolicyName {
    /// The name as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyName::Allow => "allow",
            PolicyName::Deny => "deny",
            PolicyName::Ask => "ask",
        }
    }

    /// The client's policy.
    pub fn policy(self) -> Policy {
        match self {
            PolicyName::Allow => Policy::Allow,
            PolicyName::Deny => Policy::Deny,
            PolicyName::Ask => Policy::Ask,
        }
    }
}

/// What `acp client` writes on stdout (`--format`, or `[defaults] format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// The session drawn for a person.
    Text,
    /// NDJSON: one record per frame, then a summary.
    Json,
}

/// A config and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file's path (read or not).
    pub path: PathBuf,
    /// Whether the file exists (a missing default file is an empty config).
    pub exists: bool,
    /// The config, with `cwd` and `roots` made absolute.
    pub config: Config,
}

/// The default config path: `$ACP_CONFIG`, `$XDG_CONFIG_HOME/acp/config.toml`, or
/// `$HOME/.config/acp/config.toml`; `None` when neither variable is set. The flag says
/// whether the file must exist (it was named explicitly by `$ACP_CONFIG`).
pub fn default_path() -> Option<(PathBuf, bool)> {
    if let Some(path) = non_empty_var("ACP_CONFIG") {
        return Some((PathBuf::from(path), true));
    }
    let base = non_empty_var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| non_empty_var("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some((base.join("acp").join("config.toml"), false))
}

/// Loads the config named by `--config` (`explicit`, which must exist), or the default one.
pub fn load(explicit: Option<&Path>) -> Result<Loaded, String> {
    let (path, required) = match explicit {
        Some(path) => (path.to_path_buf(), true),
        None => match default_path() {
            Some(found) => found,
            None => return Ok(Loaded { path: PathBuf::new(), exists: false, config: Config::default() }),
        },
    };
    let text = match crate::files::read_regular_text(&path, crate::files::MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok(Loaded { path, exists: false, config: Config::default() });
        }
        Err(e) => return Err(format!("cannot read the config file {}: {e}", path.display())),
    };
    let config = parse(&text, &path)?;
    Ok(Loaded { path, exists: true, config })
}

/// Parses a config file's text; errors read `FILE:LINE:COLUMN: what`.
pub fn parse(text: &str, path: &Path) -> Result<Config, String> {
    let mut config: Config = toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |span| line_column(text, span.start));
        format!("{}:{line}:{column}: {}", path.display(), e.message().trim_end())
    })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    for (name, agent) in &mut config.agents {
        if agent.command.first().is_none_or(String::is_empty) {
            let line =
                text.lines().position(|l| l.trim_start().starts_with(&format!("[agents.{name}]"))).map_or(1, |i| i + 1);
            return Err(format!("{}:{line}: agent `{name}`: `command` must name a program", path.display()));
        }
        agent.cwd = agent.cwd.as_deref().map(|p| resolve(&base, p));
        agent.roots = agent.roots.iter().map(|p| resolve(&base, p)).collect();
    }
    Ok(config)
}

/// `path` made absolute: `~/` is `$HOME`, a relative path is under `base`.
fn resolve(base: &Path, path: &Path) -> PathBuf {
    if let Ok(rest) = path.strip_prefix("~")
        && let Some(home) = non_empty_var("HOME")
    {
        return Path::new(&home).join(rest);
    }
    if path.is_absolute() { path.to_path_buf() } else { base.join(path) }
}

/// The 1-based line and column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

impl Config {
    /// The config as TOML (what `acp config show` prints).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot print the config: {e}\n"))
    }

    /// The named agent, or an error listing the names there are.
    pub fn agent(&self, name: &str, path: &Path) -> Result<&AgentEntry, String> {
        self.agents.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.agents.keys().map(String::as_str).collect();
            let known = if names.is_empty() { "it names no agent".to_owned() } else { names.join(", ") };
            format!("no agent `{name}` in the config file {} ({known})", path.display())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_agents_and_reports_lines() {
        let text = "[defaults]\npolicy = \"deny\"\n\n[agents.a]\ncommand = [\"x\", \"--y z\"]\nroots = [\"r\"]\n";
        let config = parse(text, Path::new("/c/config.toml")).unwrap();
        let agent = &config.agents["a"];
        assert_eq!(agent.command, ["x", "--y z"]);
        assert_eq!(agent.roots, [PathBuf::from("/c/r")]);
        assert_eq!(config.defaults.policy, Some(PolicyName::Deny));
        let bad = parse("[agents.a]\ncommand = [\"x\"]\ncolour = 1\n", Path::new("f.toml")).unwrap_err();
        assert!(bad.starts_with("f.toml:3:"), "{bad}");
        let empty = parse("\n[agents.b]\ncommand = []\n", Path::new("f.toml")).unwrap_err();
        assert!(empty.starts_with("f.toml:2:"), "{empty}");
    }
}
