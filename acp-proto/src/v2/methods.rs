//! v2 methods.
