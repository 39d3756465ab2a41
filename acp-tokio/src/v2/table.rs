//! v2's typed calls from rows of `acp_proto::method_table_v2!` (the handler methods come from
//! `crate::table`, for both versions; nothing here names a method).

/// One typed v2 call, from a row whose `call:` column is `typed` (`$send`: the v2 wrapper the
/// result comes back in, e.g. `Agent(AgentResponse)`); `custom` rows are written by hand.
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

/// The table callback for the typed calls of one side: a method of `$Type` for each row of
/// `$group` (the requests that side sends) whose `call:` column is `typed`.
macro_rules! typed_calls_v2 {
    ({ $Type:ty, client_requests, $($answer:tt)* } client_requests: $rows:tt $($_rest:tt)*) => {
        typed_calls_v2!(@impl $Type, $rows, $($answer)*);
    };
    ({ $Type:ty, agent_requests, $($answer:tt)* } client_requests: $_c:tt agent_requests: $rows:tt $($_rest:tt)*) => {
        typed_calls_v2!(@impl $Type, $rows, $($answer)*);
    };
    (
        @impl $Type:ty,
        [ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*],
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident
        } )* ],
        $Side:ident($Result:ident)
    ) => {
        impl $Type {
            $(
                typed_call_v2! {
                    $(#[doc = $doc])*
                    #[doc = ""]
                    #[doc = acp_proto::__gate_note!([$($g),*])]
                    $call, $v, $h(v2::$p) -> v2::$r, $Side($Result)
                }
            )*
        }
    };
}

/// v2's additions to a handler trait (see `handler_traits!`; `$side`: the side's message names,
/// the inbound one first): an agent's cancellation hooks, `session/cancel` of a session and
/// the end of its grace; a client has none. v2 has no extension methods.
macro_rules! v2_extras {
    (methods [Client, $($_names:tt)*], $Cx:ident, $futures:tt) => {
        notification_method! {
            /// `session/cancel` of a session: stop its work. Default: ignored.
            fn session_cancelled(notification: acp_proto::v2::CancelSessionNotification), $futures
        }

        notification_method! {
            /// The session's work, cancelled by the client, did not report `idle` within
            /// `Config::turn_cancel_grace`, so the connection sent the idle (`cancelled`)
            /// itself: the client's turn is over. Stop what still runs for the session; its
            /// own idle is now refused ([`SendError::WorkAlreadyEnded`]) until the session
            /// works again. Comes after the session's `session/cancel`, in order with the
            /// notifications. Default: ignored.
            ///
            /// [`SendError::WorkAlreadyEnded`]: acp_proto::SendError::WorkAlreadyEnded
            fn cancel_grace_expired(session_id: acp_proto::v2::SessionId), $futures
        }
    };
    (methods [Agent, $($_names:tt)*], $Cx:ident, $futures:tt) => {};
    (dispatch $side:tt, $handler:ident, $other:ident, $cx:ident) => {
        Err(RpcError::method_not_found($other.wire()))
    };
    // Agent side: the hooks are called here, in order with the notifications.
    (inbound [Client], $handler:ident, $item:ident) => {
        match $item {
            crate::version::Inbound::Notification(acp_proto::v2::Notification::Client(
                acp_proto::v2::ClientNotification::Cancel(n),
            )) => {
                let _ = crate::handle::catch_unwind($handler.session_cancelled(n)).await;
                None
            }
            crate::version::Inbound::Notification(notification) => Some(notification),
            crate::version::Inbound::CancelGraceExpired(session) => {
                let _ = crate::handle::catch_unwind($handler.cancel_grace_expired(session)).await;
                None
            }
        }
    };
    (inbound [Agent], $handler:ident, $item:ident) => {
        $item.notification()
    };
    (notify $side:tt, $handler:ident, $other:ident) => {{
        let _ = $other;
    }};
}
