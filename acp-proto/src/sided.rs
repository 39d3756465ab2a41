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
