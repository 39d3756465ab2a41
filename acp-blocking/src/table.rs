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
    ({ agent: $cb:ident $($args:tt)* } client_requests: $cr:tt agent_requests: $ar:tt client_notifications: $cn:tt
        agent_notifications: $an:tt $($rest:tt)*) => {
        side_rows! { @flat $cb {$($args)*} requests: $cr notifications: $cn calls: $ar }
    };
    ({ client: $cb:ident $($args:tt)* } client_requests: $cr:tt agent_requests: $ar:tt client_notifications: $cn:tt
        agent_notifications: $an:tt $($rest:tt)*) => {
        side_rows! { @flat $cb {$($args)*} requests: $ar notifications: $an calls: $cr }
    };
    (@flat $cb:ident $args:tt requests: $requests:tt notifications: [ $( {
            $(#[doc = $ndoc:literal])* $nv:ident = $nw:literal, $np:ident, gate: $ng:tt, layer: $nl:ident,
            handler: $nh:tt $(, feature: $nf:literal)?
        } )* ] calls: $calls:tt) => {
        side_rows! { @requests $cb $args [$requests $calls]
            [$( ($nv, $np, $nh, all($(feature = $nf)?), concat!($($ndoc, "\n"),*)) )*] [] }
    };
    // Both request lists, one after the other, into `[requests] [calls]`.
    (@requests $cb:ident $args:tt [[ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: $g:tt,
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident $(, feature: $f:literal)?
        } )* ] $($more:tt)*] $notifications:tt [$($done:tt)*]) => {
        side_rows! { @requests $cb $args [$($more)*] $notifications [$($done)*
            [$( ($v, $p, $r, $g, $h, $cx, $def, $call, all($(feature = $f)?), concat!($($doc, "\n"),*)) )*]] }
    };
    (@requests $cb:ident {$($args:tt)*} [] $notifications:tt [$requests:tt $calls:tt]) => {
        $cb! { $($args)* requests: $requests notifications: $notifications calls: $calls }
    };
}

/// A version's handler trait, from [`side_rows`]: one method per request the side handles
/// (with its gate and default), one per notification with a handler, and `$extra`; its `Arc`
/// forwarding; and `$notify`, which calls the notification handlers (after `$arms`). Written
/// once for both sides of both versions: only the names and the types differ.
macro_rules! handler_trait {
    // A v1 trait: its extension methods (`_`-prefixed requests and notifications, context `$X`).
    (
        $(#[$attr:meta])* trait $Trait:ident, context: $ctx:tt, ext: $X:ty,
        notification: $N:ident::$Side:ident($Inner:ident), notify: $notify:ident($handler:ident) $($rows:tt)*
    ) => {
        handler_trait! {
            $(#[$attr])* trait $Trait, method: acp_proto::Method, types: v1, context: $ctx,
            notification: $N::$Side($Inner), notify: $notify($handler),
            extra: { ext_handler_methods!($X); }, forward: { forward_ext_methods!($X); },
            arms: { $N::$Side($Inner::Ext(e)) => $handler.ext_notification(&e.method, e.params), }
            $($rows)*
        }
    };
    (
        $(#[$attr:meta])* trait $Trait:ident, method: $M:ty, types: $T:ident, context: $ctx:tt,
        notification: $N:ident::$Side:ident($Inner:ident), notify: $notify:ident($handler:ident),
        extra: { $($extra:tt)* }, forward: { $($forward:tt)* }, arms: { $($arms:tt)* }
        requests: [$(($v:ident, $p:ident, $r:ident, $g:tt, $h:ident, $cx:ident, $def:ident, $call:ident, $f:meta, $doc:expr))*]
        notifications: [$(($nv:ident, $np:ident, $nh:tt, $nf:meta, $ndoc:expr))*] calls: $calls:tt
    ) => {
        $(#[$attr])*
        #[allow(unused_variables)]
        pub trait $Trait: Send + Sync + 'static {
            $(
                handler_method! {
                    method: [$M]
                    #[cfg($f)]
                    #[doc = $doc]
                    gate: $g, $def, $v, $h($T::$p, handler_context!($ctx, $cx)) -> $T::$r
                }
            )*
            $(
                notification_method! {
                    #[cfg($nf)]
                    #[doc = $ndoc]
                    #[doc = ""]
                    #[doc = "Runs on the connection's ordered notification thread. Default: ignored."]
                    $nh($T::$np)
                }
            )*
            $($extra)*
        }

        /// A handler shared with the rest of the program: keep a clone of the `Arc` to reach its
        /// state while the connection runs.
        impl<T: $Trait + ?Sized> $Trait for std::sync::Arc<T> {
            $(
                #[cfg($f)]
                fn $h(&self, request: $T::$p, cx: &handler_context!($ctx, $cx)) -> Result<$T::$r, RpcError> {
                    (**self).$h(request, cx)
                }
            )*
            $( forward_notification!(#[cfg($nf)] $nh($T::$np)); )*
            $($forward)*
        }

        /// Calls the handler of `notification` (in order, on the notification thread).
        fn $notify<H: $Trait>($handler: &H, notification: $N) {
            #[allow(unreachable_patterns)]
            match notification {
                $($arms)*
                $(
                    #[cfg($nf)]
                    $N::$Side($Inner::$nv(n)) => call_notification!($nh, $handler, n),
                )*
                _ => {}
            }
        }
    };
}

/// `dispatch`, which calls a v1 handler trait's method for a request (from [`side_rows`]),
/// extension methods included: the one dispatch of both v1 sides (`$Side`: the sender's side
/// in `Request`, `$Req` its request enum, `$Resp` the answering side's response enum).
macro_rules! handler_dispatch {
    (<$H:ident: $Trait:ident>($cx:ty), $Side:ident($Req:ident) -> $Resp:ident
     requests: [$(($v:ident, $p:ident, $r:ident, $g:tt, $h:ident, $c:ident, $def:ident, $call:ident, $f:meta, $doc:expr))*]
     notifications: $notifications:tt calls: $calls:tt) => {
        /// Calls the handler method for `request`.
        fn dispatch<$H: $Trait>(handler: &$H, request: Request, cx: $cx) -> Result<Response, RpcError> {
            let request = match request {
                Request::$Side(request) => request,
                other => return Err(RpcError::method_not_found(other.wire())),
            };
            Ok(match request {
                $(
                    #[cfg($f)]
                    $Req::$v(r) => {
                        let cx = make_context!($c, cx, r);
                        handler.$h(r, &cx)?.into()
                    }
                )*
                $Req::Ext(e) => $Resp::Ext(ExtResponse(handler.ext_method(&e.method, e.params, &cx)?)).into(),
                other => return Err(RpcError::method_not_found(other.wire())),
            })
        }
    };
}

/// The context type of a handler method: the agent's v1 ones by the row's context column
/// (`context_type`), else the one given.
macro_rules! handler_context {
    (context_type, $cx:ident) => {
        context_type!($cx)
    };
    ([$t:ty], $cx:ident) => {
        $t
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
    (method: [$M:ty] $(#[$m:meta])* gate: $gate:tt, required, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty) => {
        $(#[$m])*
        #[doc = concat!("\n\n", acp_proto::__gate_note!($gate), "\n\n", acp_proto::__default_note!(required))]
        fn $h(&self, request: $p, cx: &$cx) -> Result<$r, RpcError>;
    };
    (method: [$M:ty] $(#[$m:meta])* gate: $gate:tt, $def:ident, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty) => {
        $(#[$m])*
        #[doc = concat!("\n\n", acp_proto::__gate_note!($gate), "\n\n", acp_proto::__default_note!($def))]
        fn $h(&self, request: $p, cx: &$cx) -> Result<$r, RpcError> {
            handler_default!($def, <$M>::$v, $r)
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
/// the wrapper its result comes back in (e.g. `Agent(AgentResponse)`), and its variant.
/// The typed calls of a side's `calls` rows (from [`side_rows`]) as methods of `$Type`, whose
/// fields `link` and `timeout` send them; `result: [$Side($Result)]` names the v2 wrapper the
/// result comes back in (empty for v1).
macro_rules! typed_calls {
    (impl $Type:ident, types: $T:ident, result: $res:tt requests: $requests:tt notifications: $notifications:tt
     calls: [$(($v:ident, $p:ident, $r:ident, $g:tt, $h:ident, $cx:ident, $def:ident, $call:ident, $f:meta, $doc:expr))*]) => {
        impl $Type {
            $(
                typed_call! {
                    #[cfg($f)]
                    #[doc = $doc]
                    #[doc = ""]
                    #[doc = acp_proto::__gate_note!($g)]
                    $call, $h($T::$p) -> $T::$r, result: $res, $v
                }
            )*
        }
    };
}

macro_rules! typed_call {
    ($(#[$m:meta])* typed, $h:ident($p:ty) -> $r:ty, result: [], $v:ident) => {
        $(#[$m])*
        pub fn $h(&self, request: $p) -> Result<$r, Error> {
            self.link.call_typed(request, self.timeout)
        }
    };
    ($(#[$m:meta])* typed, $h:ident($p:ty) -> $r:ty, result: [$Side:ident($Result:ident)], $v:ident) => {
        $(#[$m])*
        pub fn $h(&self, request: $p) -> Result<$r, Error> {
            match self.link.call(request.into(), self.timeout)? {
                v2::Response::$Side(v2::$Result::$v(result)) => Ok(result),
                _ => Err(Error::UnexpectedResponse),
            }
        }
    };
    ($(#[$m:meta])* custom, $($rest:tt)*) => {};
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
