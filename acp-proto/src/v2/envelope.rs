//! v2 envelopes.
