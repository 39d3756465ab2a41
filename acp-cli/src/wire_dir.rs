//! Which way a line or frame went between client and agent, as the recorder, the replayer,
//! `acp check` and the client's `--summary` tap all name it (`c2a`, `a2c`).

/// Which way a line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// From the client to the agent.
    C2a,
    /// From the agent to the client.
    A2c,
}

impl Dir {
    /// `"c2a"` or `"a2c"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::C2a => "c2a",
            Dir::A2c => "a2c",
        }
    }

    /// The other way.
    pub(crate) fn reverse(self) -> Dir {
        match self {
            Dir::C2a => Dir::A2c,
            Dir::A2c => Dir::C2a,
        }
    }

    /// 0 for `C2a`, 1 for `A2c`: an index into a per-direction pair.
    pub(crate) fn index(self) -> usize {
        match self {
            Dir::C2a => 0,
            Dir::A2c => 1,
        }
    }
}
