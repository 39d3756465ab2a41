//! MCP server configurations passed to `session/new`, `session/load` and `session/resume`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::UnknownVariant;
use super::serde_ext::null_as_default;
use super::serde_util::{Meta, lenient};
use super::terminal::EnvVariable;

/// How to reach an MCP server the agent should connect to.
///
/// `http` and `sse` servers carry a `type` discriminator; a stdio server has none. Decoding
/// reads `type`: `"http"` and `"sse"` select those transports (falling back to stdio when the
/// object is a valid stdio server but not a valid http/sse one, as the schema allows); no
/// `type`, `"stdio"` or a non-string `type` means stdio; any other string is a transport this
/// version does not know, kept whole in [`McpServer::Unknown`]. Encoding a stdio server
/// writes no `type` key.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpServer {
    /// Streamable HTTP transport; needs the agent's `mcpCapabilities.http`.
    Http(McpServerHttp),
    /// SSE transport (deprecated by MCP); needs the agent's `mcpCapabilities.sse`.
    Sse(McpServerSse),
    /// A local process spoken to over stdio; every agent supports it.
    Stdio(McpServerStdio),
    /// **Unstable** (`unstable_mcp_over_acp`): a server reached over the ACP connection with
    /// `mcp/message`; needs the agent's `mcpCapabilities.acp`. Without the feature, `"acp"`
    /// servers are `Unknown`.
    #[cfg(feature = "unstable_mcp_over_acp")]
    Acp(super::McpServerAcp),
    /// A transport this version of the protocol does not know, kept as its whole JSON object.
    Unknown(UnknownVariant),
}

impl From<McpServerHttp> for McpServer {
    fn from(s: McpServerHttp) -> Self {
        McpServer::Http(s)
    }
}

impl From<McpServerSse> for McpServer {
    fn from(s: McpServerSse) -> Self {
        McpServer::Sse(s)
    }
}

impl From<McpServerStdio> for McpServer {
    fn from(s: McpServerStdio) -> Self {
        McpServer::Stdio(s)
    }
}

impl McpServer {
    /// The server's name, if its transport is known.
    pub fn name(&self) -> Option<&str> {
        match self {
            McpServer::Http(s) => Some(&s.name),
            McpServer::Sse(s) => Some(&s.name),
            McpServer::Stdio(s) => Some(&s.name),
            #[cfg(feature = "unstable_mcp_over_acp")]
            McpServer::Acp(s) => Some(&s.name),
            McpServer::Unknown(u) => u.0.get("name").and_then(Value::as_str),
        }
    }
}

/// The tagged variants, borrowed, for encoding with the tag first.
#[derive(Serialize)]
#[serde(tag = "type")]
enum TaggedRef<'a> {
    #[serde(rename = "http")]
    Http(&'a McpServerHttp),
    #[serde(rename = "sse")]
    Sse(&'a McpServerSse),
    #[cfg(feature = "unstable_mcp_over_acp")]
    #[serde(rename = "acp")]
    Acp(&'a super::McpServerAcp),
}

impl Serialize for McpServer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            McpServer::Http(h) => TaggedRef::Http(h).serialize(s),
            McpServer::Sse(h) => TaggedRef::Sse(h).serialize(s),
            McpServer::Stdio(stdio) => stdio.serialize(s),
            #[cfg(feature = "unstable_mcp_over_acp")]
            McpServer::Acp(a) => TaggedRef::Acp(a).serialize(s),
            McpServer::Unknown(u) => u.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for McpServer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = Map::deserialize(d)?;
        let value = Value::Object(fields);
        let as_stdio = |value: &Value| McpServerStdio::deserialize(value).map(McpServer::Stdio);
        let tagged = match value.get("type") {
            Some(Value::String(t)) if t == "http" => {
                McpServerHttp::deserialize(&value).map(McpServer::Http).map_err(|e| format!("http MCP server: {e}"))
            }
            Some(Value::String(t)) if t == "sse" => {
                McpServerSse::deserialize(&value).map(McpServer::Sse).map_err(|e| format!("sse MCP server: {e}"))
            }
            #[cfg(feature = "unstable_mcp_over_acp")]
            Some(Value::String(t)) if t == "acp" => {
                super::McpServerAcp::deserialize(&value).map(McpServer::Acp).map_err(|e| format!("acp MCP server: {e}"))
            }
            Some(Value::String(t)) if t != "stdio" => {
                let Value::Object(fields) = value else { unreachable!("built from a map") };
                return Ok(McpServer::Unknown(UnknownVariant(fields)));
            }
            // No `type`, `"stdio"`, or a non-string `type`: the schema's stdio branch does
            // not constrain `type`.
            _ => {
                return as_stdio(&value).map_err(|e| D::Error::custom(format_args!("stdio MCP server: {e}")));
            }
        };
        // The stdio branch accepts any `type`, so an object that is not a valid http/sse
        // server may still be a valid stdio one.
        tagged.or_else(|e| as_stdio(&value).map_err(|_| e)).map_err(D::Error::custom)
    }
}

/// An HTTP header sent to an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpHeader {
    /// The header's name.
    pub name: String,
    /// Its value.
    pub value: String,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl HttpHeader {
    /// `name: value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        HttpHeader { name: name.into(), value: value.into(), meta: None }
    }
}

/// An MCP server reached over streamable HTTP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerHttp {
    /// A human-readable name for the server.
    pub name: String,
    /// The server's URL.
    pub url: String,
    /// Headers to send with every request (`null` decodes as none).
    #[serde(deserialize_with = "null_as_default")]
    pub headers: Vec<HttpHeader>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl McpServerHttp {
    /// A server at `url`, without headers.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerHttp { name: name.into(), url: url.into(), headers: Vec::new(), meta: None }
    }
}

/// An MCP server reached over server-sent events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSse {
    /// A human-readable name for the server.
    pub name: String,
    /// The server's URL.
    pub url: String,
    /// Headers to send with every request (`null` decodes as none).
    #[serde(deserialize_with = "null_as_default")]
    pub headers: Vec<HttpHeader>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl McpServerSse {
    /// A server at `url`, without headers.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerSse { name: name.into(), url: url.into(), headers: Vec::new(), meta: None }
    }
}

/// An MCP server the agent starts as a child process and talks to over stdio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStdio {
    /// A human-readable name for the server.
    pub name: String,
    /// Absolute path of the executable.
    pub command: String,
    /// Command-line arguments (`null` decodes as none).
    #[serde(deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// Environment variables to set (`null` decodes as none).
    #[serde(deserialize_with = "null_as_default")]
    pub env: Vec<EnvVariable>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl McpServerStdio {
    /// Runs `command` without arguments or extra environment.
    pub fn new(name: impl Into<String>, command: impl Into<String>) -> Self {
        McpServerStdio { name: name.into(), command: command.into(), args: Vec::new(), env: Vec::new(), meta: None }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn round_trip(input: Value) -> McpServer {
        let s: McpServer = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), input);
        let from_str: McpServer = serde_json::from_str(&input.to_string()).unwrap();
        assert_eq!(from_str, s);
        s
    }

    #[test]
    fn http_and_sse_round_trip() {
        // From docs/session-setup.mdx.
        let s = round_trip(json!({
            "type": "http",
            "name": "api-server",
            "url": "https://api.example.com/mcp",
            "headers": [
                {"name": "Authorization", "value": "Bearer token123"},
                {"name": "Content-Type", "value": "application/json"}
            ]
        }));
        assert!(matches!(s, McpServer::Http(ref h) if h.headers.len() == 2));
        let s = round_trip(json!({
            "type": "sse",
            "name": "event-stream",
            "url": "https://events.example.com/mcp",
            "headers": [{"name": "X-API-Key", "value": "apikey456"}]
        }));
        assert!(matches!(s, McpServer::Sse(_)));
        let mut http = McpServerHttp::new("a", "http://x");
        http.headers.push(HttpHeader::new("k", "v"));
        assert_eq!(
            serde_json::to_string(&McpServer::from(http)).unwrap(),
            r#"{"type":"http","name":"a","url":"http://x","headers":[{"name":"k","value":"v"}]}"#
        );
    }

    #[test]
    fn stdio_has_no_type_key() {
        let input = json!({
            "name": "filesystem",
            "command": "/path/to/mcp-server",
            "args": ["--stdio"],
            "env": [{"name": "A", "value": "1"}]
        });
        let s = round_trip(input);
        assert_eq!(s.name(), Some("filesystem"));
        let encoded = serde_json::to_value(&s).unwrap();
        assert!(encoded.get("type").is_none());
        assert_eq!(
            serde_json::to_string(&McpServer::from(McpServerStdio::new("n", "/bin/x"))).unwrap(),
            r#"{"name":"n","command":"/bin/x","args":[],"env":[]}"#
        );
    }

    #[test]
    fn explicit_stdio_type_is_accepted_and_dropped() {
        let s: McpServer = serde_json::from_value(json!({
            "name": "n", "type": "stdio", "command": "c", "args": [], "env": []
        }))
        .unwrap();
        assert!(matches!(s, McpServer::Stdio(_)));
        assert_eq!(serde_json::to_value(&s).unwrap(), json!({"name": "n", "command": "c", "args": [], "env": []}));
    }

    #[test]
    fn tag_not_first_decodes() {
        let s: McpServer = serde_json::from_str(r#"{"name":"a","url":"http://x","headers":[],"type":"sse"}"#).unwrap();
        assert_eq!(s, McpServer::Sse(McpServerSse::new("a", "http://x")));
    }

    #[test]
    fn unknown_transport_is_kept() {
        let input = json!({"type": "websocket", "name": "ws", "url": "ws://x"});
        let s = round_trip(input);
        assert!(matches!(&s, McpServer::Unknown(u) if u.tag("type") == Some("websocket")));
        assert_eq!(s.name(), Some("ws"));
    }

    #[test]
    fn stdio_branch_ignores_odd_types() {
        let stdio = json!({"name": "n", "command": "c", "args": [], "env": []});
        for odd_type in [json!(["x"]), json!(5), json!("http")] {
            let mut input = stdio.clone();
            input["type"] = odd_type;
            let s: McpServer = serde_json::from_value(input).unwrap();
            assert!(matches!(s, McpServer::Stdio(_)));
            assert_eq!(serde_json::to_value(&s).unwrap(), stdio);
        }
    }

    #[test]
    fn stdio_errors_are_readable() {
        let e = serde_json::from_str::<McpServer>(r#"{"name":"x","args":[],"env":[]}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `command`"), "{e}");
        assert!(e.to_string().contains("stdio"), "{e}");
        let e = serde_json::from_str::<McpServer>(r#"{"type":"http","name":"x"}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `url`"), "{e}");
    }
}
