//! The readable text of a [`SpecDiff`].

use std::fmt::Write;

use crate::diff::{Change, SpecDiff};

fn list(out: &mut String, indent: &str, what: &str, change: &Change) {
    for (sign, items) in [("+", &change.added), ("-", &change.removed)] {
        if !items.is_empty() {
            let _ = writeln!(out, "{indent}{sign} {what} ({}): {}", items.len(), items.join(", "));
        }
    }
}

/// Renders `d`, comparing folder `old` with folder `new`.
pub(crate) fn render(old: &str, new: &str, d: &SpecDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "spec-diff {old} -> {new}");
    let _ = writeln!(out, "\n## Methods (meta)");
    if d.methods.values().all(Change::is_empty) {
        let _ = writeln!(out, "  (no change)");
    }
    for (side, change) in &d.methods {
        list(&mut out, "  ", side, change);
    }
    let (a, b) = d.def_counts;
    let _ = writeln!(out, "\n## $defs: {a} -> {b}");
    list(&mut out, "  ", "defs", &d.defs);
    let _ = writeln!(out, "\n## Capability flags");
    if d.capabilities.is_empty() {
        let _ = writeln!(out, "  (no change)");
    }
    list(&mut out, "  ", "flags", &d.capabilities);
    let _ = writeln!(out, "\n## Changed definitions ({})", d.changed.len());
    for (name, c) in &d.changed {
        let _ = writeln!(out, "  {name}");
        list(&mut out, "    ", "properties", &c.properties);
        let required = Change { added: c.required.added.clone(), removed: vec![] };
        list(&mut out, "    ", "now required", &required);
        let optional = Change { added: c.required.removed.clone(), removed: vec![] };
        list(&mut out, "    ", "now optional", &optional);
        list(&mut out, "    ", "variants", &c.variants);
        list(&mut out, "    ", "annotations", &c.annotations);
        for (prop, from, to) in &c.retyped {
            let _ = writeln!(out, "    ~ {prop}: {from} -> {to}");
        }
    }
    out
}
