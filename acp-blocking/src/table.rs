//! The pieces that turn rows of `acp_proto`'s method table into this crate's handler methods,
//! their `Arc` forwarding and typed calls (the traits and dispatchers in `agent.rs` and
//! `client.rs` expand the table with them; nothing here names a method).

/// Hands `$cb` the rows of a method table (`acp_proto::method_table!` or `method_table_v2!`,
/// called as `method_table!(side_rows { agent: $cb })`) that one side handles (`requests`,
/// `notifications`) and sends (`calls`), each row one flat tuple, so that the row grammar is
/// matched here only:
///
/// * a request: `($variant, $params, $result, [gates], $handler, $context, $default, $call,
///   $cfg, $doc)`;
/// * a notification: `($variant, $params, [handler], $cfg, $doc)`;
///
/// `$cfg` is the row's `cfg` predicate (`all(feature = "…")`, or `all()` without a feature),
/// `$doc` its doc lines as one `concat!`.
macro_rules! side_rows {
    ({ agent: $cb:ident } client_requests: $cr:tt agent_requests: $ar:tt client_notifications: $cn:tt
        agent_notifications: $an:tt $($rest:tt)*) => {
        side_rows! { @flat $cb requests: $cr notifications: $cn calls: $ar }
    };
    ({ client: $cb:ident } client_requests: $cr:tt agent_requests: $ar:tt client_notifications: $cn:tt
        agent_notifications: $an:tt $($rest:tt)*) => {
        side_rows! { @flat $cb requests: $ar notifications: $an calls: $cr }
    };
    (@flat $cb:ident requests: $requests:tt notifications: [ $( {
            $(#[doc = $ndoc:literal])* $nv:ident = $nw:literal, $np:ident, gate: $ng:tt, layer: $nl:ident,
            handler: $nh:tt $(, feature: $nf:literal)?
        } )* ] calls: $calls:tt) => {
        side_rows! { @requests $cb [$requests $calls]
            [$( ($nv, $np, $nh, all($(feature = $nf)?), concat!($($ndoc, "\n"),*)) )*] [] }
    };
    // Both request lists, one after the other, into `[requests] [calls]`.
    (@requests $cb:ident [[ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: $g:tt,
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident $(, feature: $f:literal)?
        } )* ] $($more:tt)*] $notifications:tt [$($done:tt)*]) => {
        side_rows! { @requests $cb [$($more)*] $notifications [$($done)*
            [$( ($v, $p, $r, $g, $h, $cx, $def, $call, all($(feature = $f)?), concat!($($doc, "\n"),*)) )*]] }
    };
    (@requests $cb:ident [] $notifications:tt [$requests:tt $calls:tt]) => {
        $cb! { requests: $requests notifications: $notifications calls: $calls }
    };
}

/// One handler method of a handler trait, from a table row: its docs, its gate and `default:`
/// column (each adds a doc line), its variant, name, params, context and result. The v1 and
/// the v2 traits share it: a row without `method:` is one of v1's `method_table!`; a v2 one
/// names its table's method enum (`method: [v2::Method]`), whose wire name a `-32601` default
/// gives.
macro_rules! handler_method {
    ($(#[$m:meta])* gate: $($row:tt)*) => {
        handler_method! { method: [acp_proto::Method] $(#[$m])* gate: $($row)* }
    };
    (method: [$($M:ident)::+] $(#[$m:meta])* gate: $gate:tt, required, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty) => {
        $(#[$m])*
        #[doc = concat!("\n\n", acp_proto::__gate_note!($gate), "\n\n", acp_proto::__default_note!(required))]
        fn $h(&self, request: $p, cx: &$cx) -> Result<$r, RpcError>;
    };
    (method: [$($M:ident)::+] $(#[$m:meta])* gate: $gate:tt, $def:ident, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty) => {
        $(#[$m])*
        #[doc = concat!("\n\n", acp_proto::__gate_note!($gate), "\n\n", acp_proto::__default_note!($def))]
        fn $h(&self, request: $p, cx: &$cx) -> Result<$r, RpcError> {
            handler_default!($def, $($M)::+::$v, $r)
        }
    };
}

/// The answer of a handler method's default (its row's `default:` column, but `required`).
macro_rules! handler_default {
    (method_not_found, $method:expr, $r:ty) => {
        Err(RpcError::method_not_found($method.wire()))
    };
    (cancelled, $method:expr, $r:ty) => {
        Ok(<$r as crate::table::Cancelled>::cancelled())
    };
}

/// The answer of a handler whose `default:` column is `cancelled` (a permission ask): the
/// v1 and the v2 response types each say it their way.
pub(crate) trait Cancelled {
    /// The `cancelled` outcome.
    fn cancelled() -> Self;
}

impl Cancelled for acp_proto::types::RequestPermissionResponse {
    fn cancelled() -> Self {
        Self::new(acp_proto::types::RequestPermissionOutcome::Cancelled)
    }
}

#[cfg(feature = "unstable_protocol_v2")]
impl Cancelled for acp_proto::v2::RequestPermissionResponse {
    fn cancelled() -> Self {
        let outcome = acp_proto::v2::RequestPermissionOutcome::Cancelled(Default::default());
        Self { outcome, meta: None }
    }
}

/// The methods every handler context has (its fields `id` and `cancel`): the request's id
/// and cancellation; `$why` says what cancels the request.
macro_rules! request_context_methods {
    ($why:literal) => {
        /// The core's handle of the request being handled.
        pub fn id(&self) -> acp_proto::InboundId {
            self.id
        }

        #[doc = concat!("Whether the request was cancelled (", $why, ").")]
        pub fn is_cancelled(&self) -> bool {
            self.cancel.is_cancelled()
        }

        /// The request's cancellation signal, to wait on.
        pub fn cancellation(&self) -> &crate::CancelToken {
            &self.cancel
        }
    };
}

/// The extension handler methods every handler trait has (`$cx`: the requests' context).
macro_rules! ext_handler_methods {
    ($cx:ty) => {
        /// An extension request (`_`-prefixed method). Default: `-32601`.
        fn ext_method(&self, method: &str, params: Value, cx: &$cx) -> Result<Value, RpcError> {
            Err(RpcError::method_not_found(method))
        }

        /// An extension notification. Runs on the connection's ordered notification thread.
        fn ext_notification(&self, method: &str, params: Value) {}
    };
}

/// The `impl Trait for Arc<T>` body of the extension handler methods.
macro_rules! forward_ext_methods {
    ($cx:ty) => {
        fn ext_method(&self, method: &str, params: Value, cx: &$cx) -> Result<Value, RpcError> {
            (**self).ext_method(method, params, cx)
        }
        fn ext_notification(&self, method: &str, params: Value) {
            (**self).ext_notification(method, params)
        }
    };
}

/// One notification handler method (ignored by default), from a table row's `handler: [name]`;
/// nothing for a row without a handler (`handler: []`).
macro_rules! notification_method {
    ($(#[$m:meta])* [$h:ident]($p:ty)) => {
        $(#[$m])*
        fn $h(&self, notification: $p) {}
    };
    ($(#[$m:meta])* []($p:ty)) => {};
}

/// The `impl Trait for Arc<T>` forwarding of a notification handler method.
macro_rules! forward_notification {
    ($(#[$m:meta])* [$h:ident]($p:ty)) => {
        $(#[$m])*
        fn $h(&self, notification: $p) {
            (**self).$h(notification)
        }
    };
    ($(#[$m:meta])* []($p:ty)) => {};
}

/// Runs a notification's handler; a row without a handler is dropped.
macro_rules! call_notification {
    ([$h:ident], $handler:expr, $notification:ident) => {
        $handler.$h($notification)
    };
    ([], $handler:expr, $notification:ident) => {{
        let _ = $notification;
    }};
}

/// One typed call of [`Requester`](crate::Requester), from a table row whose `call:` column is
/// `typed`; the `custom` rows are written by hand beside it. A v2 row adds `v2: $Side($Result)`,
/// the wrapper its result comes back in (e.g. `Agent(AgentResult)`), and its variant.
macro_rules! typed_call {
    ($(#[$m:meta])* typed, $h:ident($p:ty) -> $r:ty) => {
        $(#[$m])*
        pub fn $h(&self, request: $p) -> Result<$r, Error> {
            self.link.call_typed(request, self.timeout)
        }
    };
    ($(#[$m:meta])* typed, $h:ident($p:ty) -> $r:ty, v2: $Side:ident($Result:ident::$v:ident)) => {
        $(#[$m])*
        pub fn $h(&self, request: $p) -> Result<$r, Error> {
            match self.link.call(request.into(), self.timeout)? {
                v2::Response::$Side(v2::$Result::$v(result)) => Ok(result),
                _ => Err(Error::UnexpectedResponse),
            }
        }
    };
    ($(#[$m:meta])* custom, $h:ident($p:ty) -> $r:ty $(, v2: $($x:tt)*)?) => {};
}

/// The context type an agent handler gets, from its row's context column.
macro_rules! context_type {
    (request) => {
        crate::agent::RequestContext
    };
    (prompt) => {
        crate::agent::PromptContext
    };
}

/// Builds the context an agent handler gets from the request's context and its params.
macro_rules! make_context {
    (request, $cx:ident, $params:ident) => {
        $cx
    };
    (prompt, $cx:ident, $params:ident) => {
        crate::agent::PromptContext::new($cx, $params.session_id.clone())
    };
}
