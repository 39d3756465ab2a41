//! The method tables as data: what `acp-proto/methods/{v1,v2}.toml` hold (their header comments
//! say what each column means), read with serde and checked before anything is written.

use serde::Deserialize;
use std::collections::HashSet;

/// The protocol version a table describes: it names the file and the modules written from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    /// `acp-proto/methods/v1.toml`.
    V1,
    /// `acp-proto/methods/v2.toml`.
    V2,
}

impl Version {
    /// Both versions, in the order they are generated.
    pub(crate) const ALL: [Version; 2] = [Version::V1, Version::V2];

    /// `v1` or `v2`: the table's file stem and the module name of its generated code.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        }
    }

    /// The table's path, relative to the workspace root.
    pub(crate) fn table_path(self) -> String {
        format!("acp-proto/methods/{}.toml", self.name())
    }

    /// The committed table of this version, read and checked (the emitters' tests).
    #[cfg(test)]
    pub(crate) fn committed_table(self) -> Table {
        let path = format!("{}/../../{}", env!("CARGO_MANIFEST_DIR"), self.table_path());
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        Table::parse(&text, &self.table_path()).unwrap_or_else(|e| panic!("{e}"))
    }
}

/// One method table: five groups of rows, in this order everywhere they are expanded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Table {
    /// Client → agent requests.
    pub client_requests: Vec<RequestRow>,
    /// Agent → client requests.
    pub agent_requests: Vec<RequestRow>,
    /// Client → agent notifications.
    pub client_notifications: Vec<NotificationRow>,
    /// Agent → client notifications.
    pub agent_notifications: Vec<NotificationRow>,
    /// Either direction, owned by the connection (`$/cancel_request`).
    pub protocol: Vec<ProtocolRow>,
}

/// A request: one method a side sends and the other answers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestRow {
    /// The enum variant (`NewSession`).
    pub variant: String,
    /// The method name on the wire (`session/new`).
    pub wire: String,
    /// The params type (`NewSessionRequest`).
    pub params: String,
    /// The result type (`NewSessionResponse`).
    pub result: String,
    /// The path into the receiver's own capabilities that must be advertised (empty: ungated).
    pub gate: Vec<String>,
    /// The receiver's handler method (`new_session`).
    pub handler: String,
    /// The context the handler gets.
    pub context: Context,
    /// What a handler trait answers when the method is not implemented.
    pub default: Fallback,
    /// How a sender calls it.
    pub call: Call,
    /// The cargo feature an unstable method needs.
    pub feature: Option<String>,
    /// The params and the result are boxed in the enums (a rare, large message: an enum is as
    /// large as its largest variant, and every message of it is moved at that size).
    #[serde(default)]
    pub boxed: bool,
    /// The method's documentation (Markdown, one paragraph or more).
    pub doc: String,
}

impl RequestRow {
    /// The enums' payload for `ty` (the row's params or result type): boxed or not.
    pub(crate) fn payload(&self, ty: &str) -> String {
        if self.boxed { format!("Box<{ty}>") } else { ty.to_owned() }
    }

    /// `value` (an expression of the params or result type) as the enums hold it.
    pub(crate) fn wrap(&self, value: &str) -> String {
        if self.boxed { format!("Box::new({value})") } else { value.to_owned() }
    }

    /// The doc of the row's enum variants: the row's, and where the message is boxed, why.
    pub(crate) fn variant_doc(&self) -> String {
        if self.boxed {
            format!(
                "{}\n\nIn a `Box`: a large message sent once per connection, which would otherwise\n\
                 make every message of this enum as large (the table's `boxed` column).",
                self.doc
            )
        } else {
            self.doc.clone()
        }
    }

    /// `value` (an enum's payload) as the params or result type the handlers take.
    pub(crate) fn unwrap(&self, value: &str) -> String {
        if self.boxed { format!("*{value}") } else { value.to_owned() }
    }
}

/// A notification: one method a side sends and the other does not answer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NotificationRow {
    /// The enum variant (`SessionUpdate`).
    pub variant: String,
    /// The method name on the wire (`session/update`).
    pub wire: String,
    /// The params type.
    pub params: String,
    /// As [`RequestRow::gate`], checked outbound only (an inbound notification cannot be
    /// refused).
    pub gate: Vec<String>,
    /// The `acp_proto::methods::Layer` variant that owns it (`App`, `SessionControl`).
    pub layer: String,
    /// The receiver's handler method; absent for the notifications the connection handles
    /// itself (`session/cancel`).
    pub handler: Option<String>,
    /// The cargo feature an unstable method needs.
    pub feature: Option<String>,
    /// The method's documentation.
    pub doc: String,
}

/// A protocol notification, owned by the connection in both directions.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProtocolRow {
    /// The enum variant.
    pub variant: String,
    /// The method name on the wire (`$/…`).
    pub wire: String,
    /// The params type.
    pub params: String,
    /// The method's documentation.
    pub doc: String,
}

/// The context a request handler gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Context {
    /// Every request's context.
    Request,
    /// A prompt turn's, which knows its session (v1's `session/prompt`).
    Prompt,
}

/// What a handler trait answers for a method the handler does not implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Fallback {
    /// Nothing: the method must be implemented.
    Required,
    /// `-32601` (method not found).
    MethodNotFound,
    /// A permission request's `cancelled` outcome.
    Cancelled,
}

/// How a sender calls a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Call {
    /// A plain typed call: params in, result out.
    Typed,
    /// Written by hand in the adapter (`initialize` checks the negotiated version, v1's
    /// `session/prompt` returns a turn).
    Custom,
}

/// Which side a group's rows are received by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The agent (it handles the client's requests and notifications).
    Agent,
    /// The client.
    Client,
}

impl Side {
    /// `agent` or `client`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Agent => "agent",
            Side::Client => "client",
        }
    }
}

impl Table {
    /// Reads and checks a table.
    pub(crate) fn parse(text: &str, path: &str) -> Result<Table, String> {
        let table: Table = toml::from_str(text).map_err(|e| format!("{path}: {e}"))?;
        table.check().map_err(|e| format!("{path}: {e}"))?;
        Ok(table)
    }

    /// The requests `side` receives (and so handles).
    pub(crate) fn requests_to(&self, side: Side) -> &[RequestRow] {
        match side {
            Side::Agent => &self.client_requests,
            Side::Client => &self.agent_requests,
        }
    }

    /// The requests `side` sends.
    pub(crate) fn requests_from(&self, side: Side) -> &[RequestRow] {
        match side {
            Side::Agent => &self.agent_requests,
            Side::Client => &self.client_requests,
        }
    }

    /// The notifications `side` receives.
    pub(crate) fn notifications_to(&self, side: Side) -> &[NotificationRow] {
        match side {
            Side::Agent => &self.client_notifications,
            Side::Client => &self.agent_notifications,
        }
    }

    /// The notifications `side` sends.
    pub(crate) fn notifications_from(&self, side: Side) -> &[NotificationRow] {
        match side {
            Side::Agent => &self.agent_notifications,
            Side::Client => &self.client_notifications,
        }
    }

    /// What the generated code relies on and the compiler would only report far from the row:
    /// names are identifiers of the right case, variants are unique, wire strings are unique per
    /// direction and kind, handler names unique per receiving side (except the one method
    /// several rows of a side share on purpose: `proxy_successor`, by kind), `$/` only on
    /// protocol rows, no `_` extension names.
    fn check(&self) -> Result<(), String> {
        let mut variants = HashSet::new();
        let mut all = Vec::new();
        for (group, rows) in [("client_requests", &self.client_requests), ("agent_requests", &self.agent_requests)] {
            let mut wires = HashSet::new();
            let mut handlers = HashSet::new();
            for r in rows {
                check_names(&r.variant, &r.params, Some(&r.result), &r.wire, &r.doc)?;
                check_handler(&r.handler)?;
                if !wires.insert(r.wire.as_str()) {
                    return Err(format!("{group}: `{}` is written twice", r.wire));
                }
                if !handlers.insert(r.handler.as_str()) && r.handler != "proxy_successor" {
                    return Err(format!("{group}: handler `{}` is named twice", r.handler));
                }
                all.push((&r.variant, &r.wire, false));
            }
        }
        for (group, rows) in
            [("client_notifications", &self.client_notifications), ("agent_notifications", &self.agent_notifications)]
        {
            let mut wires = HashSet::new();
            for r in rows {
                check_names(&r.variant, &r.params, None, &r.wire, &r.doc)?;
                if let Some(h) = &r.handler {
                    check_handler(h)?;
                }
                if !wires.insert(r.wire.as_str()) {
                    return Err(format!("{group}: `{}` is written twice", r.wire));
                }
                all.push((&r.variant, &r.wire, false));
            }
        }
        for r in &self.protocol {
            check_names(&r.variant, &r.params, None, &r.wire, &r.doc)?;
            all.push((&r.variant, &r.wire, true));
        }
        for (variant, wire, protocol) in all {
            if !variants.insert(variant.as_str()) {
                return Err(format!("variant `{variant}` is written twice"));
            }
            if wire.starts_with("$/") != protocol {
                return Err(format!("`{wire}`: `$/` names are protocol rows, and protocol rows only use them"));
            }
        }
        Ok(())
    }
}

fn is_type_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

fn check_names(variant: &str, params: &str, result: Option<&String>, wire: &str, doc: &str) -> Result<(), String> {
    for name in [variant, params].into_iter().chain(result.map(String::as_str)) {
        if !is_type_name(name) {
            return Err(format!("`{name}` is not a type or variant name (CamelCase)"));
        }
    }
    if wire.is_empty() || wire.starts_with('_') || wire.contains(['"', '\\']) {
        return Err(format!("`{wire}`: not a table method name (`_` names are extensions, not rows)"));
    }
    if doc.trim().is_empty() {
        return Err(format!("`{wire}` has no doc"));
    }
    Ok(())
}

fn check_handler(name: &str) -> Result<(), String> {
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ok { Ok(()) } else { Err(format!("`{name}` is not a handler name (snake_case)")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROW: &str = r#"
        client_notifications = []
        agent_notifications = []
        protocol = []
        agent_requests = []
        [[client_requests]]
        variant = "NewSession"
        wire = "session/new"
        params = "NewSessionRequest"
        result = "NewSessionResponse"
        gate = []
        handler = "new_session"
        context = "request"
        default = "method_not_found"
        call = "typed"
        doc = "`session/new`."
    "#;

    #[test]
    fn a_row_reads_and_a_bad_one_is_refused_with_its_reason() {
        let t = Table::parse(ROW, "t.toml").unwrap();
        assert_eq!(t.client_requests[0].handler, "new_session");
        assert_eq!(t.requests_to(Side::Agent).len(), 1);
        assert!(t.requests_to(Side::Client).is_empty());

        let twice = format!("{ROW}{}", &ROW[ROW.find("[[client_requests]]").unwrap()..]);
        let err = Table::parse(&twice, "t.toml").unwrap_err();
        assert!(err.contains("written twice"), "{err}");

        let ext = ROW.replace("\"session/new\"", "\"_x/new\"");
        assert!(Table::parse(&ext, "t.toml").unwrap_err().contains("extensions"));

        let column = ROW.replace("call = \"typed\"", "call = \"typed\"\ncolour = \"red\"");
        assert!(Table::parse(&column, "t.toml").unwrap_err().contains("colour"));

        let case = ROW.replace("handler = \"new_session\"", "handler = \"NewSession\"");
        assert!(Table::parse(&case, "t.toml").unwrap_err().contains("snake_case"));
    }

    #[test]
    fn a_boxed_row_holds_its_messages_in_a_box() {
        let t = Table::parse(&ROW.replace("call = \"typed\"", "call = \"typed\"\nboxed = true"), "t.toml").unwrap();
        let row = &t.client_requests[0];
        assert_eq!(row.payload("NewSessionRequest"), "Box<NewSessionRequest>");
        assert_eq!((row.wrap("p"), row.unwrap("r")), ("Box::new(p)".to_owned(), "*r".to_owned()));
        let plain = &Table::parse(ROW, "t.toml").unwrap().client_requests[0];
        assert!(!plain.boxed, "boxed is off unless a row says so");
        assert_eq!((plain.payload("T"), plain.wrap("p"), plain.unwrap("r")), ("T".into(), "p".into(), "r".into()));
    }

    #[test]
    fn the_committed_tables_read() {
        for v in Version::ALL {
            let t = v.committed_table();
            let path = v.table_path();
            assert!(t.client_requests.iter().any(|r| r.wire == "initialize"), "{path}");
            assert_eq!(t.protocol.len(), 1, "{path}");
        }
    }
}
