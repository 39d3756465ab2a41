//! The pieces that turn rows of `acp_proto`'s method table into this crate's handler methods
//! and typed calls (`handler_traits!` in `traits.rs` expands either version's table into the
//! handler traits with them; nothing here names a method).

/// One async handler method of a handler trait, from a table row of either version (`$M`: the
/// version's method type): its docs, its gate and `default:` column (each adds a doc line), its
/// variant, name, params, context and result, and the futures' `Send` bound.
macro_rules! handler_method {
    (
        $(#[$m:meta])* method: $M:ty, gate: $gate:tt, $def:ident, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty, [$($send:tt)*]
    ) => {
        handler_method! {
            @$def <$M>::$v, $r, [request, cx]
            $(#[$m])*
            #[doc = ""]
            #[doc = acp_proto::__gate_note!($gate)]
            #[doc = ""]
            #[doc = acp_proto::__default_note!($def)]
            fn $h(&self, request: $p, cx: $cx) -> impl Future<Output = Result<$r, RpcError>> $($send)*
        }
    };
    // The method's body, from its `default:` column (`$method`: its variant of the method type,
    // `$r`: its result, then its parameters and its signature).
    (@required $method:expr, $r:ty, $params:tt $($signature:tt)*) => {
        $($signature)*;
    };
    (@method_not_found $method:expr, $r:ty, [$request:ident, $cx:ident] $($signature:tt)*) => {
        $($signature)* {
            let _ = ($request, $cx);
            std::future::ready(Err(RpcError::method_not_found($method.wire())))
        }
    };
    (@cancelled $method:expr, $r:ty, [$request:ident, $cx:ident] $($signature:tt)*) => {
        $($signature)* {
            let _ = ($request, $cx);
            std::future::ready(Ok(<$r as crate::version::Cancelled>::cancelled()))
        }
    };
}

/// The extension handler methods every handler trait has (`$cx`: the requests' context).
macro_rules! ext_handler_methods {
    ($cx:ty, [$($send:tt)*]) => {
        /// An extension request (`_`-prefixed method). Default: `-32601`.
        fn ext_method(&self, method: &str, params: Value, cx: $cx)
            -> impl Future<Output = Result<Value, RpcError>> $($send)* {
            let _ = (params, cx);
            std::future::ready(Err(RpcError::method_not_found(method)))
        }

        /// An extension notification. Notifications are handled one at a time, in order.
        /// Default: ignored.
        fn ext_notification(&self, method: &str, params: Value) -> impl Future<Output = ()> $($send)* {
            let _ = (method, params);
            std::future::ready(())
        }
    };
}

/// One notification handler method (ignored by default), from a table row's `handler: [name]`;
/// nothing for a row without a handler (`handler: []`).
macro_rules! notification_method {
    ($(#[$m:meta])* [$h:ident]($p:ty), [$($send:tt)*]) => {
        $(#[$m])*
        fn $h(&self, notification: $p) -> impl Future<Output = ()> $($send)* {
            let _ = notification;
            std::future::ready(())
        }
    };
    ($(#[$m:meta])* []($p:ty), [$($send:tt)*]) => {};
    // A hook that is no table row (its argument named), ignored by default.
    ($(#[$m:meta])* fn $h:ident($arg:ident: $p:ty), [$($send:tt)*]) => {
        $(#[$m])*
        fn $h(&self, $arg: $p) -> impl Future<Output = ()> $($send)* {
            let _ = $arg;
            std::future::ready(())
        }
    };
}

/// Runs a notification's handler (a panic loses that notification only); a row without a
/// handler is dropped.
macro_rules! call_notification {
    ([$h:ident], $handler:ident, $notification:ident) => {{
        let _ = crate::handle::catch_unwind($handler.$h($notification)).await;
    }};
    ([], $handler:ident, $notification:ident) => {{
        let _ = $notification;
    }};
}

/// One typed call of a connection handle, from a table row whose `call:` column is `typed`;
/// the `custom` rows are written by hand beside it.
macro_rules! typed_call {
    ($(#[$m:meta])* typed, $h:ident($p:ty) -> $r:ty) => {
        $(#[$m])*
        pub async fn $h(&self, request: $p) -> Result<$r, Error> {
            self.handle.request_typed(request, self.timeout).await
        }
    };
    ($(#[$m:meta])* custom, $h:ident($p:ty) -> $r:ty) => {};
}

/// The context type a handler gets, from its row's context column (`$Cx`: the side's requests'
/// context; a prompt turn's is v1 agents' only).
macro_rules! context_type {
    (request, $Cx:ty) => {
        $Cx
    };
    (prompt, $Cx:ty) => {
        crate::context::PromptContext
    };
}

/// Builds the context a handler gets from the request's context and its params.
macro_rules! make_context {
    (request, $cx:ident, $params:ident) => {
        $cx
    };
    (prompt, $cx:ident, $params:ident) => {
        crate::context::PromptContext::new($cx, $params.session_id.clone())
    };
}
