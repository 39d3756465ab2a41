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
