//! Typed calls: which result type answers which request type, for both directions.

use acp_proto::types::*;
use acp_proto::{AgentResponse, ClientResponse, Request, Response};

/// A request type whose result type is known: lets a call return `NewSessionResponse` for a
/// `NewSessionRequest` instead of the untyped [`Response`].
pub(crate) trait Call: Into<Request> {
    /// The result type.
    type Output;
    /// Picks the typed result out of the core's decoded response.
    fn output(response: Response) -> Option<Self::Output>;
}

macro_rules! calls {
    ($side:ident :: $enum:ident { $($req:ident => $variant:ident($resp:ident),)* }) => {
        $(
            impl Call for $req {
                type Output = $resp;
                fn output(response: Response) -> Option<$resp> {
                    match response {
                        Response::$side($enum::$variant(r)) => Some(r),
                        _ => None,
                    }
                }
            }
        )*
    };
}

calls!(Agent::AgentResponse {
    InitializeRequest => Initialize(InitializeResponse),
    AuthenticateRequest => Authenticate(AuthenticateResponse),
    NewSessionRequest => NewSession(NewSessionResponse),
    LoadSessionRequest => LoadSession(LoadSessionResponse),
    SetSessionModeRequest => SetSessionMode(SetSessionModeResponse),
    SetSessionConfigOptionRequest => SetSessionConfigOption(SetSessionConfigOptionResponse),
    PromptRequest => Prompt(PromptResponse),
    ListSessionsRequest => ListSessions(ListSessionsResponse),
    DeleteSessionRequest => DeleteSession(DeleteSessionResponse),
    ResumeSessionRequest => ResumeSession(ResumeSessionResponse),
    CloseSessionRequest => CloseSession(CloseSessionResponse),
    LogoutRequest => Logout(LogoutResponse),
});

calls!(Client::ClientResponse {
    RequestPermissionRequest => RequestPermission(RequestPermissionResponse),
    WriteTextFileRequest => WriteTextFile(WriteTextFileResponse),
    ReadTextFileRequest => ReadTextFile(ReadTextFileResponse),
    CreateTerminalRequest => CreateTerminal(CreateTerminalResponse),
    TerminalOutputRequest => TerminalOutput(TerminalOutputResponse),
    ReleaseTerminalRequest => ReleaseTerminal(ReleaseTerminalResponse),
    WaitForTerminalExitRequest => WaitForTerminalExit(WaitForTerminalExitResponse),
    KillTerminalRequest => KillTerminal(KillTerminalResponse),
});
