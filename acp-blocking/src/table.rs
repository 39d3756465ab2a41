//! The pieces that turn rows of `acp_proto`'s method table into this crate's handler methods,
//! their `Arc` forwarding and typed calls (the traits and dispatchers in `agent.rs` and
//! `client.rs` expand the table with them; nothing here names a method).

/// One handler method of a handler trait, from a table row: its docs, its gate and `default:`
/// column (each adds a doc line), its variant, name, params, context and result.
macro_rules! handler_method {
    ($(#[$m:meta])* gate: $gate:tt, required, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty) => {
        $(#[$m])*
        #[doc = ""]
        #[doc = acp_proto::__gate_note!($gate)]
        #[doc = ""]
        #[doc = acp_proto::__default_note!(required)]
        fn $h(&self, request: $p, cx: &$cx) -> Result<$r, RpcError>;
    };
    ($(#[$m:meta])* gate: $gate:tt, method_not_found, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty) => {
        $(#[$m])*
        #[doc = ""]
        #[doc = acp_proto::__gate_note!($gate)]
        #[doc = ""]
        #[doc = acp_proto::__default_note!(method_not_found)]
        fn $h(&self, request: $p, cx: &$cx) -> Result<$r, RpcError> {
            crate::error::unhandled(acp_proto::Method::$v)
        }
    };
    ($(#[$m:meta])* gate: $gate:tt, cancelled, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty) => {
        $(#[$m])*
        #[doc = ""]
        #[doc = acp_proto::__gate_note!($gate)]
        #[doc = ""]
        #[doc = acp_proto::__default_note!(cancelled)]
        fn $h(&self, request: $p, cx: &$cx) -> Result<$r, RpcError> {
            Ok(<$r>::new(RequestPermissionOutcome::Cancelled))
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
/// `typed`; the `custom` rows are written by hand beside it.
macro_rules! typed_call {
    ($(#[$m:meta])* typed, $h:ident($p:ty) -> $r:ty) => {
        $(#[$m])*
        pub fn $h(&self, request: $p) -> Result<$r, Error> {
            self.link.call_typed(request, self.timeout)
        }
    };
    ($(#[$m:meta])* custom, $h:ident($p:ty) -> $r:ty) => {};
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
