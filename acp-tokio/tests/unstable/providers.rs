//! `providers/list`, `providers/set`, `providers/disable` (feature `unstable_llm_providers`):
//! the client reconfigures the agent's LLM routing through the typed calls, the agent's
//! handlers keep the state (refusing to disable a required provider); against an agent without
//! the `providers` capability every call is refused in the client and no handler runs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::types::*;
use acp_tokio::acp_proto::{ErrorCode, RpcError, SendError};
use acp_tokio::{Agent, ClientConnection, Error, RequestContext};

/// An agent with a required `main` provider (Anthropic) and an optional `backup` (disabled).
#[derive(Clone)]
struct RoutingAgent {
    advertise: bool,
    providers: Arc<Mutex<Vec<ProviderInfo>>>,
    /// The headers `providers/set` received, per provider.
    headers: Arc<Mutex<BTreeMap<String, BTreeMap<String, String>>>>,
    calls: Arc<AtomicUsize>,
}

impl RoutingAgent {
    fn new(advertise: bool) -> Self {
        let mut main = ProviderInfo::new("main", vec![LlmProtocol::Anthropic, LlmProtocol::Bedrock], true);
        main.current = Some(ProviderCurrentConfig::new(LlmProtocol::Anthropic, "https://api.anthropic.example"));
        let backup = ProviderInfo::new("backup", vec![LlmProtocol::OpenAi], false);
        RoutingAgent {
            advertise,
            providers: Arc::new(Mutex::new(vec![main, backup])),
            headers: Arc::default(),
            calls: Arc::default(),
        }
    }

    /// Runs `f` on the provider `id`, or answers `-32602` for an unknown one.
    fn with<T>(
        &self,
        id: &ProviderId,
        f: impl FnOnce(&mut ProviderInfo) -> Result<T, RpcError>,
    ) -> Result<T, RpcError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut providers = self.providers.lock().unwrap();
        let info = providers
            .iter_mut()
            .find(|p| &p.provider_id == id)
            .ok_or_else(|| RpcError::invalid_params(format!("unknown provider {id}")))?;
        f(info)
    }
}

impl Agent for RoutingAgent {
    async fn initialize(&self, request: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        let mut response = InitializeResponse::new(request.protocol_version);
        if self.advertise {
            response.agent_capabilities.providers = Some(ProvidersCapabilities::default());
        }
        Ok(response)
    }

    async fn list_providers(
        &self,
        _: ListProvidersRequest,
        _: RequestContext,
    ) -> Result<ListProvidersResponse, RpcError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(ListProvidersResponse::new(self.providers.lock().unwrap().clone()))
    }

    async fn set_provider(
        &self,
        request: SetProviderRequest,
        _: RequestContext,
    ) -> Result<SetProviderResponse, RpcError> {
        self.with(&request.provider_id, |info| {
            if !info.supported.contains(&request.api_type) {
                return Err(RpcError::invalid_params(format!(
                    "{} does not speak {}",
                    info.provider_id, request.api_type
                )));
            }
            info.current = Some(ProviderCurrentConfig::new(request.api_type.clone(), request.base_url.clone()));
            Ok(())
        })?;
        let headers = request.headers.unwrap_or_default();
        self.headers.lock().unwrap().insert(request.provider_id.to_string(), headers);
        Ok(SetProviderResponse::default())
    }

    async fn disable_provider(
        &self,
        request: DisableProviderRequest,
        _: RequestContext,
    ) -> Result<DisableProviderResponse, RpcError> {
        self.with(&request.provider_id, |info| {
            if info.required {
                return Err(RpcError::invalid_params(format!("{} is required", info.provider_id)));
            }
            info.current = None;
            Ok(DisableProviderResponse::default())
        })
    }
}

async fn connect(agent: RoutingAgent) -> ClientConnection {
    super::initialized(agent, InitializeRequest::new(ProtocolVersion::V1)).await
}

fn enabled(list: &ListProvidersResponse) -> Vec<(String, Option<String>)> {
    list.providers
        .iter()
        .map(|p| (p.provider_id.to_string(), p.current.as_ref().map(|c| format!("{} {}", c.api_type, c.base_url))))
        .collect()
}

#[tokio::test]
async fn providers_are_listed_set_and_disabled_through_the_agent_handlers() {
    let agent = RoutingAgent::new(true);
    let conn = connect(agent.clone()).await;

    let list = conn.list_providers(ListProvidersRequest::default()).await.expect("list");
    assert_eq!(
        enabled(&list),
        [("main".into(), Some("anthropic https://api.anthropic.example".into())), ("backup".into(), None)]
    );
    assert!(list.providers[0].required);

    let mut set = SetProviderRequest::new("backup", LlmProtocol::OpenAi, "https://gateway.example/v1");
    set.headers = Some(BTreeMap::from([("authorization".into(), "Bearer k".into())]));
    conn.set_provider(set).await.expect("set");
    assert_eq!(agent.headers.lock().unwrap()["backup"]["authorization"], "Bearer k");
    let wrong = SetProviderRequest::new("main", LlmProtocol::Vertex, "https://x.example");
    let e = conn.set_provider(wrong).await.expect_err("unsupported protocol");
    assert!(matches!(&e, Error::Rpc(r) if r.code == ErrorCode::INVALID_PARAMS), "{e:?}");

    let e = conn.disable_provider(DisableProviderRequest::new("main")).await.expect_err("required");
    let reason = |e: &Error| match e {
        Error::Rpc(r) => r.data.as_ref().map(|d| d["reason"].to_string()),
        _ => None,
    };
    assert_eq!(reason(&e).as_deref(), Some("\"main is required\""), "{e:?}");
    conn.disable_provider(DisableProviderRequest::new("backup")).await.expect("disable");
    let list = conn.list_providers(ListProvidersRequest::default()).await.expect("list");
    assert_eq!(enabled(&list)[1], ("backup".into(), None));
    assert_eq!(agent.calls.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn provider_calls_to_an_agent_without_the_capability_are_refused_in_the_client() {
    let agent = RoutingAgent::new(false);
    let conn = connect(agent.clone()).await;
    let refused = |e: Error| match e {
        Error::Send(SendError::NotSupportedByPeer { capability, .. }) => capability.join("."),
        other => panic!("expected a local refusal, got {other:?}"),
    };
    let e = conn.list_providers(ListProvidersRequest::default()).await.expect_err("gated");
    assert_eq!(refused(e), "providers");
    let e = conn.set_provider(SetProviderRequest::new("main", LlmProtocol::Anthropic, "u")).await.expect_err("gated");
    assert_eq!(refused(e), "providers");
    let e = conn.disable_provider(DisableProviderRequest::new("backup")).await.expect_err("gated");
    assert_eq!(refused(e), "providers");
    assert_eq!(agent.calls.load(Ordering::SeqCst), 0, "no handler ran");
}
