//! The echo agent and the test client as `LocalAgent` and `LocalClient`: each holds an `Rc`
//! (so they are `!Send`, as the runtime's handlers may be) and delegates to the `Send` one.

use std::rc::Rc;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{Agent, Client, ClientContext, LocalAgent, LocalClient, PromptContext, RequestContext};
use serde_json::Value;

use acp_scenarios::TestClient;
use acp_scenarios::echo::EchoAgent;

/// The echo agent, `!Send`.
pub(crate) struct LocalEcho(EchoAgent, Rc<()>);

impl LocalEcho {
    pub(crate) fn new(echo: EchoAgent) -> LocalEcho {
        LocalEcho(echo, Rc::new(()))
    }
}

impl LocalAgent for LocalEcho {
    async fn initialize(&self, request: InitializeRequest, cx: RequestContext) -> Result<InitializeResponse, RpcError> {
        let _local = self.1.clone(); // an `Rc` held across the await
        Agent::initialize(&self.0, request, cx).await
    }

    async fn new_session(
        &self,
        request: NewSessionRequest,
        cx: RequestContext,
    ) -> Result<NewSessionResponse, RpcError> {
        Agent::new_session(&self.0, request, cx).await
    }

    async fn prompt(&self, request: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        let _local = self.1.clone();
        Agent::prompt(&self.0, request, cx).await
    }

    async fn ext_method(&self, method: &str, params: Value, cx: RequestContext) -> Result<Value, RpcError> {
        let _local = self.1.clone();
        Agent::ext_method(&self.0, method, params, cx).await
    }

    async fn ext_notification(&self, method: &str, params: Value) {
        Agent::ext_notification(&self.0, method, params).await;
    }
}

/// The test client, `!Send`.
pub(crate) struct LocalTestClient(TestClient, Rc<()>);

impl LocalTestClient {
    pub(crate) fn new(client: TestClient) -> LocalTestClient {
        LocalTestClient(client, Rc::new(()))
    }
}

impl LocalClient for LocalTestClient {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
        cx: ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let _local = self.1.clone();
        Client::request_permission(&self.0, request, cx).await
    }

    async fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        cx: ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        let _local = self.1.clone();
        Client::read_text_file(&self.0, request, cx).await
    }

    async fn create_terminal(
        &self,
        request: CreateTerminalRequest,
        cx: ClientContext,
    ) -> Result<CreateTerminalResponse, RpcError> {
        Client::create_terminal(&self.0, request, cx).await
    }

    async fn wait_for_terminal_exit(
        &self,
        request: WaitForTerminalExitRequest,
        cx: ClientContext,
    ) -> Result<WaitForTerminalExitResponse, RpcError> {
        Client::wait_for_terminal_exit(&self.0, request, cx).await
    }

    async fn terminal_output(
        &self,
        request: TerminalOutputRequest,
        cx: ClientContext,
    ) -> Result<TerminalOutputResponse, RpcError> {
        Client::terminal_output(&self.0, request, cx).await
    }

    async fn release_terminal(
        &self,
        request: ReleaseTerminalRequest,
        cx: ClientContext,
    ) -> Result<ReleaseTerminalResponse, RpcError> {
        Client::release_terminal(&self.0, request, cx).await
    }

    async fn ext_method(&self, method: &str, params: Value, cx: ClientContext) -> Result<Value, RpcError> {
        let _local = self.1.clone();
        Client::ext_method(&self.0, method, params, cx).await
    }

    async fn session_update(&self, notification: SessionNotification) {
        let _local = self.1.clone();
        Client::session_update(&self.0, notification).await;
    }
}

/// The v2 echo agent, `!Send`.
#[cfg(feature = "unstable_protocol_v2")]
pub(crate) struct LocalEchoV2(acp_scenarios::v2::EchoV2, Rc<()>);

#[cfg(feature = "unstable_protocol_v2")]
impl LocalEchoV2 {
    pub(crate) fn new(echo: acp_scenarios::v2::EchoV2) -> LocalEchoV2 {
        LocalEchoV2(echo, Rc::new(()))
    }
}

#[cfg(feature = "unstable_protocol_v2")]
mod v2 {
    use std::rc::Rc;

    use acp_tokio::ClientContext;
    use acp_tokio::acp_proto::{RpcError, v2};
    use acp_tokio::v2::{Agent, AgentContext, Client, LocalAgent, LocalClient};

    use super::{LocalEchoV2, LocalTestClient};

    impl LocalAgent for LocalEchoV2 {
        async fn initialize(
            &self,
            request: v2::InitializeRequest,
            cx: AgentContext,
        ) -> Result<v2::InitializeResponse, RpcError> {
            let _local: Rc<()> = self.1.clone(); // an `Rc` held across the await
            Agent::initialize(&self.0, request, cx).await
        }

        async fn new_session(
            &self,
            request: v2::NewSessionRequest,
            cx: AgentContext,
        ) -> Result<v2::NewSessionResponse, RpcError> {
            Agent::new_session(&self.0, request, cx).await
        }

        async fn prompt(&self, request: v2::PromptRequest, cx: AgentContext) -> Result<v2::PromptResponse, RpcError> {
            let _local = self.1.clone();
            Agent::prompt(&self.0, request, cx).await
        }

        async fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
            let _local = self.1.clone();
            Agent::session_cancelled(&self.0, notification).await;
        }

        async fn ext_method(
            &self,
            method: &str,
            params: serde_json::Value,
            cx: AgentContext,
        ) -> Result<serde_json::Value, RpcError> {
            let _local = self.1.clone();
            Agent::ext_method(&self.0, method, params, cx).await
        }

        async fn ext_notification(&self, method: &str, params: serde_json::Value) {
            let _local = self.1.clone();
            Agent::ext_notification(&self.0, method, params).await;
        }
    }

    impl LocalClient for LocalTestClient {
        async fn request_permission(
            &self,
            request: v2::RequestPermissionRequest,
            cx: ClientContext,
        ) -> Result<v2::RequestPermissionResponse, RpcError> {
            let _local = self.1.clone();
            Client::request_permission(&self.0, request, cx).await
        }

        async fn session_update(&self, notification: v2::UpdateSessionNotification) {
            let _local = self.1.clone();
            Client::session_update(&self.0, notification).await;
        }

        async fn ext_method(
            &self,
            method: &str,
            params: serde_json::Value,
            cx: ClientContext,
        ) -> Result<serde_json::Value, RpcError> {
            let _local = self.1.clone();
            Client::ext_method(&self.0, method, params, cx).await
        }
    }
}
