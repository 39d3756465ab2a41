//! The pieces that turn rows of `acp_proto::method_table_v2!` into v2 handler methods and typed
//! calls (as `crate::table` does for v1; nothing here names a method).

/// One async v2 handler method from a table row: its docs, gate and `default:` column, and the
/// futures' `Send` bound (`[+ Send]`, or `[]` for the `Local*` traits).
macro_rules! handler_method_v2 {
    ($(#[$m:meta])* gate: $gate:tt, required, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty, [$($send:tt)*]) => {
        $(#[$m])*
        #[doc = ""]
        #[doc = acp_proto::__gate_note!($gate)]
        #[doc = ""]
        #[doc = acp_proto::__default_note!(required)]
        fn $h(&self, request: $p, cx: $cx) -> impl Future<Output = Result<$r, RpcError>> $($send)*;
    };
    ($(#[$m:meta])* gate: $gate:tt, method_not_found, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty, [$($send:tt)*]) => {
        $(#[$m])*
        #[doc = ""]
        #[doc = acp_proto::__gate_note!($gate)]
        #[doc = ""]
        #[doc = acp_proto::__default_note!(method_not_found)]
        fn $h(&self, request: $p, cx: $cx) -> impl Future<Output = Result<$r, RpcError>> $($send)* {
            let _ = (request, cx);
            std::future::ready(Err(RpcError::method_not_found(v2::Method::$v.wire())))
        }
    };
    ($(#[$m:meta])* gate: $gate:tt, cancelled, $v:ident, $h:ident($p:ty, $cx:ty) -> $r:ty, [$($send:tt)*]) => {
        $(#[$m])*
        #[doc = ""]
        #[doc = acp_proto::__gate_note!($gate)]
        #[doc = ""]
        #[doc = acp_proto::__default_note!(cancelled)]
        fn $h(&self, request: $p, cx: $cx) -> impl Future<Output = Result<$r, RpcError>> $($send)* {
            let _ = (request, cx);
            let outcome = v2::RequestPermissionOutcome::Cancelled(v2::CancelledPermissionOutcome::default());
            std::future::ready(Ok(v2::RequestPermissionResponse { outcome, meta: None }))
        }
    };
}

/// One v2 notification handler method (ignored by default); nothing for `handler: []`; or
/// (`fn name(arg: Type)`) a hook of the handler trait that is no table row.
macro_rules! notification_method_v2 {
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

/// One typed v2 call, from a row whose `call:` column is `typed` (`$send`: the v2 wrapper the
/// result comes back in, e.g. `Agent(AgentResult)`); `custom` rows are written by hand.
macro_rules! typed_call_v2 {
    ($(#[$m:meta])* typed, $v:ident, $h:ident($p:ty) -> $r:ty, $Side:ident($Result:ident)) => {
        $(#[$m])*
        pub async fn $h(&self, request: $p) -> Result<$r, Error> {
            match self.handle().request(request.into(), self.timeout()).await? {
                v2::Response::$Side(v2::$Result::$v(result)) => Ok(result),
                _ => Err(Error::UnexpectedResponse),
            }
        }
    };
    ($(#[$m:meta])* custom, $v:ident, $h:ident($p:ty) -> $r:ty, $Side:ident($Result:ident)) => {};
}
