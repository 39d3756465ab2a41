//! How the session's config options are shown: their values in one line, or one line each.

use acp_blocking::acp_proto::types::*;

/// A config option's current value, as shown.
pub(crate) fn current(option: &SessionConfigOption) -> String {
    match &option.kind {
        SessionConfigKind::Select(select) => select.current_value.to_string(),
        SessionConfigKind::Boolean(b) => b.current_value.to_string(),
        _ => "?".to_owned(),
    }
}

/// `id = value` of each option, comma-separated (at most 16, then `…`).
pub(crate) fn summary(options: &[SessionConfigOption]) -> String {
    let mut shown: Vec<String> = options.iter().take(16).map(|o| format!("{} = {}", o.id, current(o))).collect();
    if options.len() > 16 {
        shown.push("…".to_owned());
    }
    shown.join(", ")
}

/// A select option's values (groups flattened).
pub(crate) fn values(option: &SessionConfigOption) -> Vec<&SessionConfigSelectOption> {
    match &option.kind {
        SessionConfigKind::Select(select) => match &select.options {
            SessionConfigSelectOptions::Ungrouped(options) => options.iter().collect(),
            SessionConfigSelectOptions::Grouped(groups) => groups.iter().flat_map(|g| &g.options).collect(),
        },
        _ => Vec::new(),
    }
}

/// One line per option: `id = value (name) · values: …`.
pub(crate) fn describe(option: &SessionConfigOption) -> String {
    let listed: Vec<&str> = values(option).iter().map(|v| v.value.as_ref()).collect();
    let choices = match &option.kind {
        SessionConfigKind::Boolean(_) => " · values: true, false".to_owned(),
        _ if listed.is_empty() => String::new(),
        _ => format!(" · values: {}", listed.join(", ")),
    };
    format!("  {} = {} ({}){choices}", option.id, current(option), option.name)
}
