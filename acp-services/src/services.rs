//! [`ClientServices`]: the file system and terminals together, with the capabilities they
//! back and a dispatcher for the requests they serve.

use acp_proto::types::ClientCapabilities;
use acp_proto::{AgentRequest, ClientResponse, RpcError};

use crate::fs::FsSandbox;
use crate::terminal::Terminals;

/// The services a client offers the agent: an optional [`FsSandbox`] and optional
/// [`Terminals`]. [`ClientServices::capabilities`] advertises exactly what is configured, and
/// [`ClientServices::handle`] answers the requests.
#[derive(Debug, Default)]
pub struct ClientServices {
    fs: Option<FsSandbox>,
    terminals: Option<Terminals>,
}

impl ClientServices {
    /// No services: advertises nothing.
    pub fn new() -> ClientServices {
        ClientServices::default()
    }

    /// Serves `fs/*` with `sandbox`.
    pub fn with_fs(mut self, sandbox: FsSandbox) -> ClientServices {
        self.fs = Some(sandbox);
        self
    }

    /// Serves `terminal/*` with `terminals`.
    pub fn with_terminals(mut self, terminals: Terminals) -> ClientServices {
        self.terminals = Some(terminals);
        self
    }

    /// The file system service, if any.
    pub fn fs(&self) -> Option<&FsSandbox> {
        self.fs.as_ref()
    }

    /// The terminal service, if any.
    pub fn terminals(&self) -> Option<&Terminals> {
        self.terminals.as_ref()
    }

    /// What to send as `clientCapabilities` in `initialize`: `fs.readTextFile` with a sandbox,
    /// `fs.writeTextFile` if it is writable, `terminal` with terminals. Merge in the client's
    /// other capabilities before sending.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        caps.fs.read_text_file = self.fs.is_some();
        caps.fs.write_text_file = self.fs.as_ref().is_some_and(|fs| fs.config().writable);
        caps.terminal = self.terminals.is_some();
        caps
    }

    /// Answers an `fs/*` or `terminal/*` request; `None` for the others (permission
    /// requests, extensions), which are the client's own business. A method whose service is
    /// not configured gets `-32601` (a connection that advertised [`Self::capabilities`]
    /// refuses those before they get here).
    ///
    /// `terminal/wait_for_exit` blocks until the command exits (see [`Self::blocks`]): call
    /// this from a thread that may block.
    pub fn handle(&self, request: &AgentRequest) -> Option<Result<ClientResponse, RpcError>> {
        let missing = || RpcError::method_not_found(request.wire());
        let fs = || self.fs.as_ref().ok_or_else(missing);
        let terminals = || self.terminals.as_ref().ok_or_else(missing);
        Some(match request {
            AgentRequest::ReadTextFile(r) => fs().and_then(|s| s.read_text_file(r)).map(Into::into),
            AgentRequest::WriteTextFile(r) => fs().and_then(|s| s.write_text_file(r)).map(Into::into),
            AgentRequest::CreateTerminal(r) => terminals().and_then(|t| t.create(r)).map(Into::into),
            AgentRequest::TerminalOutput(r) => terminals().and_then(|t| t.output(r)).map(Into::into),
            AgentRequest::WaitForTerminalExit(r) => terminals().and_then(|t| t.wait_for_exit(r)).map(Into::into),
            AgentRequest::KillTerminal(r) => terminals().and_then(|t| t.kill(r)).map(Into::into),
            AgentRequest::ReleaseTerminal(r) => terminals().and_then(|t| t.release(r)).map(Into::into),
            _ => return None,
        })
    }

    /// Ends the terminals for good (see [`Terminals::shutdown`]): kills every process, makes
    /// every pending `terminal/wait_for_exit` return and refuses new terminals. Call it when
    /// the client goes away, before waiting for the handler threads. No-op without terminals.
    pub fn shutdown(&self) {
        if let Some(terminals) = &self.terminals {
            terminals.shutdown();
        }
    }

    /// Whether [`Self::handle`] may block for long on `request` (only
    /// `terminal/wait_for_exit`, which lasts as long as the command); the others do bounded
    /// file or process work.
    pub fn blocks(request: &AgentRequest) -> bool {
        matches!(request, AgentRequest::WaitForTerminalExit(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::FsConfig;
    use acp_proto::types::{ReadTextFileRequest, WaitForTerminalExitRequest};

    #[test]
    fn capabilities_follow_the_services() {
        let none = ClientServices::new();
        assert_eq!(none.capabilities(), ClientCapabilities::default());
        let request = AgentRequest::ReadTextFile(ReadTextFileRequest::new("s", "/x"));
        let err = none.handle(&request).unwrap().unwrap_err();
        assert_eq!(err, RpcError::method_not_found("fs/read_text_file"));

        let config = FsConfig { writable: false, ..FsConfig::default() };
        let fs = FsSandbox::with_config([std::env::temp_dir()], config).unwrap();
        let ro = ClientServices::new().with_fs(fs);
        let caps = ro.capabilities();
        assert!(caps.supports_read_text_file() && !caps.supports_write_text_file() && !caps.supports_terminal());
        assert!(ro.fs().is_some() && ro.terminals().is_none());
    }

    #[test]
    fn only_wait_for_exit_blocks() {
        assert!(ClientServices::blocks(&AgentRequest::WaitForTerminalExit(WaitForTerminalExitRequest::new("s", "t"))));
        assert!(!ClientServices::blocks(&AgentRequest::ReadTextFile(ReadTextFileRequest::new("s", "/x"))));
    }
}
