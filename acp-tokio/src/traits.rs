//! The one definition of every handler trait: `handler_traits!`, the callback that expands a
//! version's method table (`acp_proto::method_table!` or `method_table_v2!`, whose rows have the
//! same grammar) into one side's two handler traits (a `Send` one and a local one, with the same
//! methods), their dispatch, and their driver `Handlers`. The agent and client sides of v1 and
//! v2 are four expansions of it; what a version adds of its own (v1's extension methods, the v2
//! agent's cancellation hooks) comes from that version's `$extras` macro.

/// A version's handler traits of one side, from the version's method table:
///
/// ```text
/// acp_proto::method_table!(handler_traits {
///     side: agent,              // agent: the client's requests and notifications come in; client: the agent's
///     version: V1,              // the protocol type
///     messages: methods,        // the module of its Request, Response, Notification and Method
///     params: types,            // the module of its params and results
///     extras: v1_extras,        // the version's additions (see `v1_extras!`)
///     context: RequestContext = |cx| (RequestContext::new(cx), None),
///                               // the requests' context, made from the driver's (and the signal
///                               // set once the handler answered, if any)
///     /// Docs of the `Send` trait.
///     send: Agent(AgentHandlers),
///     /// Docs of the local trait.
///     local: LocalAgent(LocalAgentHandlers),
/// });
/// ```
///
/// The client side's traits are implemented by `()` (every default).
macro_rules! handler_traits {
    (
        { side: agent, $($head:tt)* }
        client_requests: $requests:tt agent_requests: $_ar:tt
        client_notifications: $notifications:tt $($_rest:tt)*
    ) => {
        handler_traits!(@side [Client, ClientRequest, ClientNotification, Agent, AgentResponse] { $($head)* }
            $requests $notifications);
    };
    (
        { side: client, $($head:tt)* }
        client_requests: $_cr:tt agent_requests: $requests:tt
        client_notifications: $_cn:tt agent_notifications: $notifications:tt $($_rest:tt)*
    ) => {
        handler_traits!(@side [Agent, AgentRequest, AgentNotification, Client, ClientResponse] { $($head)* }
            $requests $notifications);
    };
    (
        @side $side:tt {
            version: $P:ident, messages: $m:ident, params: $t:ident, extras: $extras:ident,
            context: $Cx:ident = $make:expr,
            $(#[$attr:meta])* send: $Send:ident($SendHandlers:ident),
            $(#[$lattr:meta])* local: $Local:ident($LocalHandlers:ident) $(,)?
        }
        $requests:tt $notifications:tt
    ) => {
        handler_traits!(@trait [$(#[$attr])* $Send($SendHandlers, Arc, spawn): [Send + Sync +], [+ Send]]
            [$side, $P, $m, $t, $extras, $Cx, $make] $requests $notifications);
        handler_traits!(@trait [$(#[$lattr])* $Local($LocalHandlers, Rc, spawn_local): [], []]
            [$side, $P, $m, $t, $extras, $Cx, $make] $requests $notifications);
        handler_traits!(@unit $side $Send $Local);
    };
    // The client side's traits: `()` is a client with every default.
    (@unit [Agent, $($_names:tt)*] $Send:ident $Local:ident) => {
        impl $Send for () {}
        impl $Local for () {}
    };
    (@unit [Client, $($_names:tt)*] $Send:ident $Local:ident) => {};
    (
        @trait [$(#[$attr:meta])* $Trait:ident($Handlers:ident, $Ptr:ident, $spawn:ident): [$($bounds:tt)*], $futures:tt]
        [$side:tt, $P:ident, $m:ident, $t:ident, $extras:ident, $Cx:ident, $make:expr]
        [ $( {
            $(#[doc = $doc:literal])* $v:ident = $w:literal, $p:ident => $r:ident, gate: [$($g:literal),*],
            handler: $h:ident($cx:ident), default: $def:ident, call: $call:ident $(, feature: $f:literal)?
        } )* ]
        [ $( {
            $(#[doc = $ndoc:literal])* $nv:ident = $nw:literal, $np:ident, gate: [$($ng:literal),*], layer: $nl:ident,
            handler: $nh:tt $(, feature: $nf:literal)?
        } )* ]
    ) => {
        $(#[$attr])*
        pub trait $Trait: $($bounds)* 'static {
            $(
                handler_method! {
                    $(#[cfg(feature = $f)])?
                    $(#[doc = $doc])*
                    method: $m::Method, gate: [$($g),*], $def, $v,
                    $h($t::$p, context_type!($cx, $Cx)) -> $t::$r, $futures
                }
            )*
            $(
                notification_method! {
                    $(#[cfg(feature = $nf)])?
                    $(#[doc = $ndoc])*
                    #[doc = ""]
                    #[doc = "Default: ignored."]
                    $nh($t::$np), $futures
                }
            )*
            $extras!(methods $side, $Cx, $futures);
        }

        handler_traits!(@handlers $Trait($Handlers, $Ptr, $spawn), $futures [$side, $P, $m, $extras, $Cx, $make]
            [$( [$v, $h, $cx $(, $f)?] )*] [$( [$nv, $nh $(, $nf)?] )*]);
    };
    (
        @handlers $Trait:ident($Handlers:ident, $Ptr:ident, $spawn:ident), [$($send:tt)*]
        [[$In:ident, $InRequest:ident, $InNotification:ident, $Out:ident, $OutResponse:ident], $P:ident, $m:ident,
            $extras:ident, $Cx:ident, $make:expr]
        [$( [$v:ident, $h:ident, $cx:ident $(, $f:literal)?] )*] [$( [$nv:ident, $nh:tt $(, $nf:literal)?] )*]
    ) => {
        /// Runs the handlers of a handler trait for the driver.
        pub(crate) struct $Handlers<H>(pub(crate) $Ptr<H>);

        impl<H: $Trait> $Handlers<H> {
            /// The handlers of `handler`.
            pub(crate) fn new(handler: H) -> Self {
                $Handlers($Ptr::new(handler))
            }

            /// Calls the handler method for `request`.
            async fn dispatch(handler: &H, request: $m::Request, cx: $Cx) -> Result<$m::Response, RpcError> {
                match request {
                    $(
                        $(#[cfg(feature = $f)])?
                        $m::Request::$In($m::$InRequest::$v(r)) => {
                            let cx = make_context!($cx, cx, r);
                            Ok(handler.$h(r, cx).await?.into())
                        }
                    )*
                    other => $extras!(dispatch [$In, $InRequest, $Out, $OutResponse], handler, other, cx),
                }
            }

            /// Calls the handler method for `item`; a panic loses that notification only.
            async fn notify(handler: &H, item: Inbound<$P>) {
                let Some(notification) = $extras!(inbound [$In], handler, item) else { return };
                match notification {
                    $(
                        $(#[cfg(feature = $nf)])?
                        $m::Notification::$In($m::$InNotification::$nv(n)) => call_notification!($nh, handler, n),
                    )*
                    other => $extras!(notify [$In, $InNotification], handler, other),
                }
            }
        }

        impl<H: $Trait, D: Future $($send)* + 'static> crate::driver::DriverTask<D> for $Handlers<H> {
            fn spawn_driver<Rt: crate::runtime::Runtime>(rt: &Rt, driver: D) {
                rt.$spawn(async move {
                    let _ = driver.await;
                });
            }
        }

        impl<H: $Trait> crate::driver::Handlers<$P> for $Handlers<H> {
            fn spawn_request<Rt: crate::runtime::Runtime>(
                &self,
                rt: &Rt,
                request: $m::Request,
                cx: crate::context::HandlerContext<$P>,
                done: crate::handle::Done<$P>,
                gate: Option<tokio::sync::oneshot::Receiver<()>>,
            ) {
                let handler = $Ptr::clone(&self.0);
                let (cx, answered): (_, Option<Arc<crate::sync::Signal>>) = ($make)(cx);
                // Boxed: the dispatch future is as large as the largest handler's future (kBs),
                // and a task's future is moved several times as it is spawned and again when it
                // completes; a box is moved instead.
                let dispatch = Box::pin(async move { Self::dispatch(&*handler, request, cx).await });
                rt.$spawn(async move {
                    crate::handle::run_handler(done, gate, dispatch).await;
                    if let Some(answered) = answered {
                        answered.set();
                    }
                });
            }

            fn spawn_notifications<Rt: crate::runtime::Runtime>(
                &self,
                rt: &Rt,
                mut queue: crate::sync::QueueReceiver<Inbound<$P>>,
            ) {
                let handler = $Ptr::clone(&self.0);
                rt.$spawn(async move {
                    while let Some(item) = queue.pop().await {
                        Self::notify(&*handler, item).await;
                    }
                });
            }
        }
    };
}

/// v1's additions to a handler trait (`$side`: the side's message names, the inbound one
/// first): the extension methods (`_`-prefixed), which v2 has not.
macro_rules! v1_extras {
    (methods $side:tt, $Cx:ident, $futures:tt) => {
        ext_handler_methods!($Cx, $futures);
    };
    (dispatch [$In:ident, $InRequest:ident, $Out:ident, $OutResponse:ident], $handler:ident, $other:ident, $cx:ident) => {
        match $other {
            acp_proto::methods::Request::$In(acp_proto::methods::$InRequest::Ext(e)) => {
                let value = $handler.ext_method(&e.method, e.params, $cx).await?;
                let response = acp_proto::methods::$OutResponse::Ext(acp_proto::ext::ExtResponse(value));
                Ok(acp_proto::methods::Response::$Out(response))
            }
            other => Err(RpcError::method_not_found(other.wire())),
        }
    };
    (inbound $side:tt, $handler:ident, $item:ident) => {
        $item.notification()
    };
    (notify [$In:ident, $InNotification:ident], $handler:ident, $other:ident) => {
        if let acp_proto::methods::Notification::$In(acp_proto::methods::$InNotification::Ext(e)) = $other {
            let _ = crate::handle::catch_unwind($handler.ext_notification(&e.method, e.params)).await;
        }
    };
}
