//! **Unstable** `auth/status` and `auth/status_update` (feature `unstable_auth_status`): the
//! agent's authentication state, queried by the client (`auth/status`, client to agent) or
//! pushed by the agent when it changes (`auth/status_update`, agent to client).
//!
//! Both need the agent's `auth.status` capability ([`AuthStatusCapabilities`], the `status`
//! field of [`AgentAuthCapabilities`](super::AgentAuthCapabilities)): the client's core refuses
//! an `auth/status` call to an agent that did not advertise it, and the agent's core refuses to
//! send `auth/status_update` unless the agent advertised it itself (the gate's sender rule, see
//! `acp_proto::gate::sender_capability`). Upstream may change or remove
//! them in any release.
//!
//! ```
//! use acp_schema::v1::{AuthAccount, AuthState, AuthStatusResponse};
//! let mut status = AuthStatusResponse::new(AuthState::Authenticated);
//! status.accounts = Some(vec![AuthAccount::new("OpenAI API key")]);
//! let json = serde_json::to_value(&status).unwrap();
//! assert_eq!(json, serde_json::json!({"state": "authenticated", "accounts": [{"label": "OpenAI API key"}]}));
//! // A state this version does not know is kept, and reads as `unknown` for decisions.
//! let newer: AuthStatusResponse = serde_json::from_value(serde_json::json!({"state": "expiring"})).unwrap();
//! assert_eq!(newer.state, AuthState::Unknown("expiring".into()));
//! assert!(!newer.state.is_known());
//! ```
//!
//! [`AuthStatusCapabilities`]: super::AuthStatusCapabilities

use serde::{Deserialize, Serialize};

use super::serde_util::{Meta, lenient, lenient_vec, string_enum};

crate::v1::serde_ext::meta_only! {
    /// Parameters of `auth/status` (client to agent); needs the agent's `auth.status`. It only
    /// reads the state: agents must not answer it with `auth_required` (`-32000`), since a
    /// client asks precisely to learn whether sign-in is needed.
    AuthStatusRequest
}

string_enum! {
    /// The agent's overall authentication state. A client must treat a value it does not
    /// recognize (the `Unknown` variant, which keeps the string) as
    /// [`Undetermined`](AuthState::Undetermined) (the wire's `unknown`); values starting with `_` are
    /// implementation-specific extensions.
    pub enum AuthState {
        /// Credentials are configured (which does not guarantee that they are valid).
        Authenticated = "authenticated",
        /// The user needs to sign in: credentials are missing, expired or known to be invalid.
        Unauthenticated = "unauthenticated",
        /// No authentication is needed (for example a local model).
        NotRequired = "not_required",
        /// The agent cannot currently tell (the wire's `unknown`).
        Undetermined = "unknown",
    }
}

impl AuthState {
    /// Whether this is one of the states this version knows (not a newer or extension value,
    /// which a client must read as [`Undetermined`](AuthState::Undetermined)).
    pub fn is_known(&self) -> bool {
        !matches!(self, AuthState::Unknown(_))
    }
}

/// An account or credential the agent has configured (a signed-in user, an API key, …).
///
/// Display information only: never use these fields as stable account identifiers, and do not
/// log them or send them elsewhere (telemetry included). Optional fields that do not decode are
/// dropped (`x-deserialize-default-on-error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthAccount {
    /// Human-readable name, shown on its own (`Claude Max`, `OpenAI API key`, `Vertex AI`).
    pub label: String,
    /// Short text shown with the label, such as the credential source; never credentials.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub description: Option<String>,
    /// Whether the agent uses this account by default (several may be active, e.g. one per
    /// provider); absent: the agent does not say.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub active: Option<bool>,
    /// The user's display name.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub name: Option<String>,
    /// The user's email address.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub email: Option<String>,
    /// The organization, team or workspace the account is using.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub organization: Option<String>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

impl AuthAccount {
    /// An account shown as `label`, with nothing else reported.
    pub fn new(label: impl Into<String>) -> Self {
        AuthAccount {
            label: label.into(),
            description: None,
            active: None,
            name: None,
            email: None,
            organization: None,
            meta: None,
        }
    }
}

/// Declares one of the two messages that carry the authentication state (the `auth/status`
/// result and the `auth/status_update` params have the same fields).
macro_rules! auth_status_message {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            /// Whether sessions can start without the user signing in first.
            pub state: AuthState,
            /// The accounts the agent has configured, for display (absent and empty mean the
            /// same: none reported). Entries that do not decode are dropped.
            #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient_vec")]
            pub accounts: Option<Vec<AuthAccount>>,
            /// Extension metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
            pub meta: Option<Meta>,
        }

        impl $name {
            /// The state `state`, no accounts reported.
            pub fn new(state: AuthState) -> Self {
                $name { state, accounts: None, meta: None }
            }
        }
    };
}

auth_status_message! {
    /// Result of `auth/status`: the agent's current authentication state.
    AuthStatusResponse
}

auth_status_message! {
    /// Params of `auth/status_update` (agent to client): the authentication state changed.
    /// An agent that advertises `auth.status` may send it at any time after `initialize`, and
    /// should send it only when the state differs from the last one sent on the connection.
    AuthStatusUpdateNotification
}

impl From<AuthStatusResponse> for AuthStatusUpdateNotification {
    fn from(r: AuthStatusResponse) -> Self {
        AuthStatusUpdateNotification { state: r.state, accounts: r.accounts, meta: r.meta }
    }
}

impl From<AuthStatusUpdateNotification> for AuthStatusResponse {
    fn from(n: AuthStatusUpdateNotification) -> Self {
        AuthStatusResponse { state: n.state, accounts: n.accounts, meta: n.meta }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn accounts_decode_leniently_and_state_keeps_unknown_values() {
        let wire = json!({
            "state": "_vendor_locked",
            "accounts": [
                {"label": "Work", "active": "yes", "email": "a@example.com"},
                {"active": true},
                7
            ]
        });
        let decoded: AuthStatusUpdateNotification = serde_json::from_value(wire).unwrap();
        assert_eq!(decoded.state.as_str(), "_vendor_locked");
        assert!(!decoded.state.is_known());
        // The malformed `active` is dropped; entries without a label, or not objects, are skipped.
        let mut expected = AuthAccount::new("Work");
        expected.email = Some("a@example.com".into());
        assert_eq!(decoded.accounts, Some(vec![expected]));
        let back = serde_json::to_value(AuthStatusResponse::from(decoded)).unwrap();
        assert_eq!(back, json!({"state": "_vendor_locked", "accounts": [{"label": "Work", "email": "a@example.com"}]}));
        assert!(serde_json::from_value::<AuthStatusResponse>(json!({"accounts": []})).is_err(), "state is required");
        assert_eq!(serde_json::to_value(AuthState::Undetermined).unwrap(), json!("unknown"));
    }
}
