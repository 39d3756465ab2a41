//! `terminal/*`: commands the agent runs in terminals owned by the client. Needs the client's
//! `terminal` capability.

use serde::{Deserialize, Serialize};

use super::ids::{SessionId, TerminalId};
use super::serde_ext::meta_only;
use super::serde_util::{Meta, lenient, lenient_vec};

/// Parameters of `terminal/create` (agent to client): starts a command in a new terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTerminalRequest {
    /// The session asking.
    pub session_id: SessionId,
    /// The program to run.
    pub command: String,
    /// Its arguments. Malformed items are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub args: Option<Vec<String>>,
    /// Extra environment variables. Malformed items are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
    pub env: Option<Vec<EnvVariable>>,
    /// Absolute working directory.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub cwd: Option<String>,
    /// How many bytes of output the client keeps; older output is dropped (at a character
    /// boundary) beyond it.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub output_byte_limit: Option<u64>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CreateTerminalRequest {
    /// Runs `command` without arguments.
    pub fn new(session_id: impl Into<SessionId>, command: impl Into<String>) -> Self {
        CreateTerminalRequest {
            session_id: session_id.into(),
            command: command.into(),
            args: None,
            env: None,
            cwd: None,
            output_byte_limit: None,
            meta: None,
        }
    }
}

/// An environment variable for a command or an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVariable {
    /// The variable's name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl EnvVariable {
    /// `name=value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        EnvVariable { name: name.into(), value: value.into(), meta: None }
    }
}

/// Result of `terminal/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTerminalResponse {
    /// The new terminal.
    pub terminal_id: TerminalId,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl CreateTerminalResponse {
    /// A response naming the new terminal.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        CreateTerminalResponse { terminal_id: terminal_id.into(), meta: None }
    }
}

/// Declares the parameters of a terminal method that only names a session and a terminal.
macro_rules! terminal_ref_request {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// The session asking.
            pub session_id: SessionId,
            /// The terminal concerned.
            pub terminal_id: TerminalId,
            /// Extension metadata.
            #[serde(
                rename = "_meta",
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "lenient"
            )]
            pub meta: Option<Meta>,
        }

        impl $name {
            /// Parameters naming `terminal_id` of `session_id`.
            pub fn new(session_id: impl Into<SessionId>, terminal_id: impl Into<TerminalId>) -> Self {
                $name {
                    session_id: session_id.into(),
                    terminal_id: terminal_id.into(),
                    meta: None,
                }
            }
        }
    };
}

terminal_ref_request! {
    /// Parameters of `terminal/output`: the output so far, without waiting.
    TerminalOutputRequest
}

/// Result of `terminal/output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOutputResponse {
    /// The output captured so far.
    pub output: String,
    /// Whether older output was dropped because of the byte limit.
    pub truncated: bool,
    /// How the command ended, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub exit_status: Option<TerminalExitStatus>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl TerminalOutputResponse {
    /// Output of a command still running.
    pub fn new(output: impl Into<String>, truncated: bool) -> Self {
        TerminalOutputResponse { output: output.into(), truncated, exit_status: None, meta: None }
    }
}

/// How a terminal's command ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalExitStatus {
    /// The exit code; absent when a signal ended the process.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub exit_code: Option<u32>,
    /// The signal that ended the process, if any.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub signal: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

terminal_ref_request! {
    /// Parameters of `terminal/release`: kills the command if needed and frees the terminal.
    ReleaseTerminalRequest
}

meta_only! {
    /// Result of `terminal/release`.
    ReleaseTerminalResponse
}

terminal_ref_request! {
    /// Parameters of `terminal/wait_for_exit`: answered once the command has exited.
    WaitForTerminalExitRequest
}

/// Result of `terminal/wait_for_exit`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitForTerminalExitResponse {
    /// The exit code; absent when a signal ended the process.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub exit_code: Option<u32>,
    /// The signal that ended the process, if any.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub signal: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

terminal_ref_request! {
    /// Parameters of `terminal/kill`: kills the command but keeps the terminal (and its
    /// output) until it is released.
    KillTerminalRequest
}

meta_only! {
    /// Result of `terminal/kill`.
    KillTerminalResponse
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn docs_create_request_round_trips() {
        // From docs/terminals.mdx.
        let params = json!({
            "sessionId": "sess_abc123def456",
            "command": "npm",
            "args": ["test", "--coverage"],
            "env": [{"name": "NODE_ENV", "value": "test"}],
            "cwd": "/home/user/project",
            "outputByteLimit": 1048576
        });
        let r: CreateTerminalRequest = serde_json::from_value(params.clone()).unwrap();
        assert_eq!(r.output_byte_limit, Some(1_048_576));
        assert_eq!(r.env.as_deref(), Some(&[EnvVariable::new("NODE_ENV", "test")][..]));
        assert_eq!(serde_json::to_value(&r).unwrap(), params);
    }

    #[test]
    fn create_request_skips_bad_items() {
        let r: CreateTerminalRequest = serde_json::from_value(json!({
            "sessionId": "s",
            "command": "ls",
            "args": ["-l", 3, "-a"],
            "env": [{"name": "A"}, {"name": "B", "value": "b"}],
            "outputByteLimit": -1
        }))
        .unwrap();
        assert_eq!(r.args, Some(vec!["-l".to_owned(), "-a".to_owned()]));
        assert_eq!(r.env, Some(vec![EnvVariable::new("B", "b")]));
        assert_eq!(r.output_byte_limit, None);
    }

    #[test]
    fn docs_output_response_decodes() {
        // From docs/terminals.mdx; the `null` signal is dropped on re-encoding.
        let result = json!({
            "output": "Running tests...\n✓ All tests passed (42 total)\n",
            "truncated": false,
            "exitStatus": {"exitCode": 0, "signal": null}
        });
        let r: TerminalOutputResponse = serde_json::from_value(result).unwrap();
        assert_eq!(r.exit_status.as_ref().unwrap().exit_code, Some(0));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "output": "Running tests...\n✓ All tests passed (42 total)\n",
                "truncated": false,
                "exitStatus": {"exitCode": 0}
            })
        );
        let w: WaitForTerminalExitResponse = serde_json::from_value(json!({"exitCode": 0, "signal": null})).unwrap();
        assert_eq!(w.exit_code, Some(0));
    }

    #[test]
    fn ref_requests_round_trip() {
        let params = json!({"sessionId": "s", "terminalId": "t"});
        let k: KillTerminalRequest = serde_json::from_value(params.clone()).unwrap();
        assert_eq!(k, KillTerminalRequest::new("s", "t"));
        assert_eq!(serde_json::to_value(&k).unwrap(), params);
        assert!(serde_json::from_value::<ReleaseTerminalRequest>(json!({"sessionId": "s"})).is_err());
    }
}
