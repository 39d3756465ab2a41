//! The v2 message envelopes (not routed yet).

use proptests::schema_gen::Rng;

use super::super::{Ctx, Trip};

/// The envelope definitions this module routes.
pub(super) const ENVELOPES: &[&str] = &[];

/// A trip of envelope `def`, or `None` if `def` is not an envelope.
pub(super) fn trip(_ctx: &Ctx, _def: &str, _rng: &mut Rng) -> Option<Result<Trip, String>> {
    None
}
