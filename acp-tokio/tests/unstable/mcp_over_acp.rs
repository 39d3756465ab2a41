//! `mcp/message` (feature `unstable_mcp_over_acp`), a method both sides handle: the client
//! declares an MCP server of `type: "acp"` in `session/new`; the agent sends inner MCP requests
//! to it as `mcp/message` requests (the client's generated `mcp_message` handler answers the
//! inner outcome), and the client sends the server's messages as `mcp/message` notifications
//! (the agent's generated `mcp_message_notification` handler gets them). To an agent without
//! `mcpCapabilities.acp` the notification is refused in the client and never reaches it.

use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{ClientResponse, RpcError, SendError};
use acp_tokio::{
    Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, Error, PromptContext, RequestContext,
};
use serde_json::json;
use tokio::sync::mpsc;

/// An agent that lists the tools of the session's ACP-transport MCP server in each turn.
#[derive(Clone)]
struct McpAgent {
    advertise: bool,
    servers: Arc<Mutex<Vec<McpServerAcpId>>>,
    notifications: mpsc::UnboundedSender<MessageMcpNotification>,
}

impl McpAgent {
    /// One inner MCP request to `server`, its outcome as text.
    async fn call(
        &self,
        cx: &PromptContext,
        server: &McpServerAcpId,
        id: &str,
        method: &str,
    ) -> Result<String, RpcError> {
        let request = MessageMcpRequest::new(server.clone(), id, method);
        match cx.request(request, None).await.map_err(|e| RpcError::internal_error(e.to_string()))? {
            ClientResponse::McpMessage(MessageMcpResponse::Result { result, .. }) => Ok(format!("result {result}")),
            ClientResponse::McpMessage(MessageMcpResponse::Error { error, .. }) => Ok(format!("error {}", error.code)),
            other => Err(RpcError::internal_error(format!("unexpected {other:?}"))),
        }
    }
}

impl Agent for McpAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        response.agent_capabilities.mcp_capabilities.acp = self.advertise;
        Ok(response)
    }

    async fn new_session(&self, request: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        for server in request.mcp_servers {
            if let McpServer::Acp(s) = server {
                self.servers.lock().unwrap().push(s.server_id);
            }
        }
        Ok(NewSessionResponse::new("s1"))
    }

    async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        let server = self.servers.lock().unwrap().first().cloned();
        let server = server.ok_or_else(|| RpcError::invalid_params("no ACP MCP server"))?;
        for (id, method) in [("r1", "tools/list"), ("r2", "tools/unknown")] {
            let text = self.call(&cx, &server, id, method).await?;
            cx.send_text(text).await.map_err(|e| RpcError::internal_error(e.to_string()))?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn mcp_message_notification(&self, notification: MessageMcpNotification) {
        let _ = self.notifications.send(notification);
    }
}

/// A client that provides the MCP server `srv-1` with one tool.
#[derive(Clone, Default)]
struct McpClient {
    requests: Arc<Mutex<Vec<(String, String, String)>>>,
}

impl Client for McpClient {
    async fn mcp_message(&self, request: MessageMcpRequest, _: ClientContext) -> Result<MessageMcpResponse, RpcError> {
        let (server, id) = (request.server_id.as_str().to_owned(), request.request_id.as_str().to_owned());
        self.requests.lock().unwrap().push((server, id, request.method.clone()));
        Ok(match request.method.as_str() {
            "tools/list" => MessageMcpResponse::result(json!({"tools": [{"name": "grep"}]})),
            _ => MessageMcpResponse::error(McpError::new(-32601, "unknown method")),
        })
    }
}

async fn connect(
    advertise: bool,
    client: McpClient,
) -> (ClientConnection, mpsc::UnboundedReceiver<MessageMcpNotification>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let agent = McpAgent { advertise, servers: Arc::default(), notifications: tx };
    let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(agent_io);
    tokio::spawn(acp_tokio::serve(agent, reader, writer, AgentOptions::default()));
    let (reader, writer) = tokio::io::split(client_io);
    let conn = ClientConnection::connect(client, reader, writer, ClientOptions::default());
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await.expect("initialize");
    let servers = vec![McpServer::Acp(McpServerAcp::new("tools", "srv-1"))];
    conn.new_session(NewSessionRequest::new("/work", servers)).await.expect("session/new");
    (conn, rx)
}

#[tokio::test]
async fn mcp_messages_flow_both_ways_between_the_generated_handlers() {
    let client = McpClient::default();
    let (conn, mut notifications) = connect(true, client.clone()).await;

    let mut turn = conn.prompt(PromptRequest::new("s1", vec![ContentBlock::text("list tools")])).await.expect("prompt");
    let mut texts = Vec::new();
    while let Some(update) = turn.next_update().await {
        let SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) = update else {
            panic!("unexpected {update:?}")
        };
        texts.push(t.text);
    }
    assert_eq!(turn.finish().await.expect("turn"), StopReason::EndTurn);
    assert_eq!(texts, [r#"result {"tools":[{"name":"grep"}]}"#, "error -32601"]);
    let seen = client.requests.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("srv-1".to_owned(), "r1".to_owned(), "tools/list".to_owned()),
            ("srv-1".to_owned(), "r2".to_owned(), "tools/unknown".to_owned())
        ]
    );

    let mut progress = MessageMcpNotification::new("srv-1", "r1", "notifications/progress");
    progress.params = json!({"progress": 1}).as_object().cloned();
    conn.notify(progress.clone()).await.expect("notify");
    assert_eq!(notifications.recv().await, Some(progress));
}

#[tokio::test]
async fn the_notification_is_refused_in_the_client_without_mcp_capabilities_acp() {
    let (conn, mut notifications) = connect(false, McpClient::default()).await;
    let e = conn.notify(MessageMcpNotification::new("srv-1", "r1", "notifications/progress")).await.expect_err("gated");
    match e {
        Error::Send(SendError::NotSupportedByPeer { capability, .. }) => {
            assert_eq!(capability.join("."), "mcpCapabilities.acp")
        }
        other => panic!("expected a local refusal, got {other:?}"),
    }
    conn.close().await.expect("close");
    // The agent's side ended without its handler having run.
    assert_eq!(notifications.recv().await, None);
}
