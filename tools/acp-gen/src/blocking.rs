//! What acp-blocking expands the tables into (the handler traits, their dispatch and the typed calls).

use crate::table::{Table, Version};

/// The files written for `version`'s table: (path from the workspace root, unformatted source).
pub fn files(version: Version, table: &Table) -> Vec<(String, String)> {
    let _ = (version, table);
    Vec::new()
}
