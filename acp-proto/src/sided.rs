//! The conversions between a role-agnostic message (`Client(…)` or `Agent(…)`) and its sides'
//! enums, written once for the requests, results and notifications of both versions.

/// For `$wrapper { Client($client), Agent($agent) }`: `From` each side's enum, and
/// `into_client` / `into_agent`, the side's message if it is one. `$what` names the message in
/// the docs ("request", "result", "notification").
macro_rules! sided {
    ($wrapper:ident, $client:ident, $agent:ident, $what:literal) => {
        impl From<$client> for $wrapper {
            fn from(message: $client) -> $wrapper {
                $wrapper::Client(message)
            }
        }

        impl From<$agent> for $wrapper {
            fn from(message: $agent) -> $wrapper {
                $wrapper::Agent(message)
            }
        }

        impl $wrapper {
            #[doc = concat!("The ", $what, " the client sent, if it is one.")]
            pub fn into_client(self) -> Option<$client> {
                match self {
                    $wrapper::Client(message) => Some(message),
                    $wrapper::Agent(_) => None,
                }
            }

            #[doc = concat!("The ", $what, " the agent sent, if it is one.")]
            pub fn into_agent(self) -> Option<$agent> {
                match self {
                    $wrapper::Agent(message) => Some(message),
                    $wrapper::Client(_) => None,
                }
            }
        }
    };
}

pub(crate) use sided;

/// A version's role-agnostic call, `Call { Client(ClientCall), Agent(AgentCall) }` (a request
/// with the responder that answers it), its handle and wire name, and the machine's pairing of
/// the version's role-agnostic `Request` with its handle. Expanded in each version's module, where
/// the names resolve to that version's enums.
macro_rules! calls {
    () => {
        /// A request of either side with the responder that answers it ([`ClientCall`],
        /// [`AgentCall`]), as [`InboundRequest::into_call`](crate::InboundRequest::into_call) gives it.
        #[derive(Debug)]
        #[non_exhaustive]
        pub enum Call {
            /// Sent by the client.
            Client(ClientCall),
            /// Sent by the agent.
            Agent(AgentCall),
        }

        impl Call {
            /// The handle of the inbound request.
            pub fn id(&self) -> crate::InboundId {
                match self {
                    Call::Client(call) => call.id(),
                    Call::Agent(call) => call.id(),
                }
            }

            /// The method name on the wire.
            pub fn wire(&self) -> &str {
                match self {
                    Call::Client(call) => call.wire(),
                    Call::Agent(call) => call.wire(),
                }
            }
        }

        impl Request {
            /// This request with the responder of the inbound request `id` (the machine's only).
            pub(crate) fn into_call(self, id: crate::InboundId) -> Call {
                match self {
                    Request::Client(request) => Call::Client(request.into_call(id)),
                    Request::Agent(request) => Call::Agent(request.into_call(id)),
                }
            }
        }

        crate::sided::sided!(Call, ClientCall, AgentCall, "request");
    };
}

pub(crate) use calls;
