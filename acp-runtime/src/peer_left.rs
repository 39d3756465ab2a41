//! [`peer_left`]: how both adapters judge a failed write after the peer's end of input.

use std::io;

/// Whether write error `e` on a connection whose peer's output ended or not (`input_ended`:
/// `Connection::input_ended`, of either protocol version) only says that the peer went away
/// altogether: its output had already ended (the connection was half-closed,
/// answering the requests it owed) and now its input is gone too (`EPIPE`, or a reset or
/// aborted socket). The answers still owed are moot then, and the connection ended as the
/// peer meant it to: the adapters close it (nothing more is answered) but do not report the
/// error. The same error before the end of input is reported: the peer stopped reading while
/// it was still talking.
///
/// ```
/// use std::io;
/// use acp_proto::role::Agent;
/// use acp_proto::{Connection, Instant};
///
/// let mut agent: Connection<Agent> = Connection::agent(Instant::ZERO);
/// let pipe = io::Error::from(io::ErrorKind::BrokenPipe);
/// assert!(!acp_runtime::peer_left(agent.input_ended(), &pipe), "still talking: an error");
/// agent.handle_eof(Instant::ZERO);
/// assert!(acp_runtime::peer_left(agent.input_ended(), &pipe), "gone after its end of input");
/// assert!(!acp_runtime::peer_left(agent.input_ended(), &io::Error::other("disk on fire")));
/// ```
pub fn peer_left(input_ended: bool, e: &io::Error) -> bool {
    use io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
    input_ended && matches!(e.kind(), BrokenPipe | ConnectionReset | ConnectionAborted)
}
