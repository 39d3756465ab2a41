//! `acp check --coverage`: which clauses of the spec the requirements check.
//!
//! The roster (`roster.jsonl`, committed beside this file) lists every sentence of the
//! vendored protocol pages (`spec/v1.21.0/docs/*.mdx`, `spec/v2.0.0-alpha.3/docs/*.mdx`) and of
//! the v1.21.0 schema's descriptions that says MUST, MUST NOT, SHOULD, SHOULD NOT or MAY, one
//! JSON object per line:
//!
//! ```json
//! {"id":"v1.prompt-turn.3f9a1c","spec":"v1.21.0","page":"prompt-turn.mdx","anchor":"cancellation",
//!  "level":"MUST","text":"…","status":"checked","by":["agent.cancel.mid-turn"]}
//! ```
//!
//! `id` is stable: the page and a hash of the sentence's normalized text, so it changes only
//! when the sentence does. `status` is `checked` (with the requirement ids in `by`),
//! `not-checkable` (with `why`: it cannot be observed on the wire, e.g. what a client shows
//! its user) or `not-yet`. The generated fields are regenerated from the pages by
//! `acp-cli/tests/cli/roster` (which fails when a page's clauses change without the roster
//! following; `ACP_BLESS=1` rewrites it, keeping each clause's status by id); the statuses are
//! kept by hand.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

/// The committed roster.
const ROSTER: &str = include_str!("roster.jsonl");

/// The clause levels, in the order the tables list them.
pub const LEVELS: [&str; 5] = ["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"];

/// Whether a clause is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// By these requirements.
    Checked(Vec<String>),
    /// It cannot be observed on the wire; why.
    NotCheckable(String),
    /// Not yet.
    NotYet,
}

impl Status {
    /// `checked`, `not-checkable` or `not-yet`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Checked(_) => "checked",
            Status::NotCheckable(_) => "not-checkable",
            Status::NotYet => "not-yet",
        }
    }
}

/// One sentence of the spec with a requirement keyword.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// Stable id (`v1.prompt-turn.3f9a1c`).
    pub id: String,
    /// The spec release (`v1.21.0`).
    pub spec: String,
    /// The page (`prompt-turn.mdx`, `schema.json`).
    pub page: String,
    /// The section's anchor (or, in the schema, the definition's path).
    pub anchor: String,
    /// `MUST`, `MUST NOT`, `SHOULD`, `SHOULD NOT` or `MAY`.
    pub level: String,
    /// The sentence.
    pub text: String,
    /// Whether and how it is checked.
    pub status: Status,
}

impl Clause {
    /// Reads one line of the roster.
    pub fn from_json(value: &Value) -> Result<Clause, String> {
        let text = |key: &str| {
            value.get(key).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| format!("no `{key}` in {value}"))
        };
        let status = match text("status")?.as_str() {
            "checked" => {
                let by =
                    value.get("by").and_then(Value::as_array).ok_or_else(|| format!("checked, no `by`: {value}"))?;
                let by: Vec<String> = by.iter().filter_map(Value::as_str).map(str::to_owned).collect();
                if by.is_empty() {
                    return Err(format!("checked by nothing: {value}"));
                }
                Status::Checked(by)
            }
            "not-checkable" => Status::NotCheckable(text("why")?),
            "not-yet" => Status::NotYet,
            other => return Err(format!("unknown status {other:?}: {value}")),
        };
        let level = text("level")?;
        if !LEVELS.contains(&level.as_str()) {
            return Err(format!("unknown level {level:?}: {value}"));
        }
        Ok(Clause {
            id: text("id")?,
            spec: text("spec")?,
            page: text("page")?,
            anchor: text("anchor")?,
            level,
            text: text("text")?,
            status,
        })
    }

    /// The clause as one line of the roster (keys in a fixed order).
    pub fn to_line(&self) -> String {
        let s = |t: &str| Value::from(t).to_string();
        let mut line = format!(
            "{{\"id\":{},\"spec\":{},\"page\":{},\"anchor\":{},\"level\":{},\"text\":{},\"status\":{}",
            s(&self.id),
            s(&self.spec),
            s(&self.page),
            s(&self.anchor),
            s(&self.level),
            s(&self.text),
            s(self.status.as_str())
        );
        match &self.status {
            Status::Checked(by) => {
                let _ = write!(line, ",\"by\":{}", json!(by));
            }
            Status::NotCheckable(why) => {
                let _ = write!(line, ",\"why\":{}", s(why));
            }
            Status::NotYet => {}
        }
        line.push('}');
        line
    }
}

/// The roster: every clause with its status.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// In roster order (by spec, page, position).
    pub clauses: Vec<Clause>,
}

/// Checked, not checkable, not yet.
type Tally = [usize; 3];

fn tally_of(status: &Status) -> usize {
    match status {
        Status::Checked(_) => 0,
        Status::NotCheckable(_) => 1,
        Status::NotYet => 2,
    }
}

impl Ledger {
    /// The committed roster. Its lines are checked by the tests, so a line that does not
    /// parse cannot ship; one would be left out here rather than stop the command.
    pub fn committed() -> Ledger {
        let clauses = ROSTER
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok().and_then(|v| Clause::from_json(&v).ok()));
        Ledger { clauses: clauses.collect() }
    }

    /// Parses a roster; the first line that does not parse is the error.
    pub fn parse(text: &str) -> Result<Ledger, String> {
        let mut clauses = Vec::new();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let value: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
            clauses.push(Clause::from_json(&value).map_err(|e| format!("line {}: {e}", n + 1))?);
        }
        Ok(Ledger { clauses })
    }

    /// The specs of the roster, in order of appearance.
    fn specs(&self) -> Vec<&str> {
        let mut specs: Vec<&str> = Vec::new();
        for clause in &self.clauses {
            if !specs.contains(&clause.spec.as_str()) {
                specs.push(&clause.spec);
            }
        }
        specs
    }

    /// Per level of `spec`: checked, not checkable, not yet.
    pub fn by_level(&self, spec: &str) -> Vec<(&'static str, Tally)> {
        LEVELS
            .iter()
            .map(|level| {
                let mut tally = [0; 3];
                for c in self.clauses.iter().filter(|c| c.spec == spec && c.level == *level) {
                    tally[tally_of(&c.status)] += 1;
                }
                (*level, tally)
            })
            .collect()
    }

    /// Per page of `spec`: checked, not checkable, not yet.
    pub fn by_page(&self, spec: &str) -> BTreeMap<&str, Tally> {
        let mut pages: BTreeMap<&str, Tally> = BTreeMap::new();
        for c in self.clauses.iter().filter(|c| c.spec == spec) {
            pages.entry(&c.page).or_default()[tally_of(&c.status)] += 1;
        }
        pages
    }

    /// The tables for people: by level, then by page, for each spec.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "acp check --coverage: {} clauses of the spec (every sentence with MUST, MUST NOT, SHOULD, SHOULD NOT or MAY)",
            self.clauses.len()
        );
        for spec in self.specs() {
            let _ = writeln!(out, "\n{spec}");
            let _ = writeln!(
                out,
                "{:<12} {:>7} {:>8} {:>14} {:>8}",
                "level", "clauses", "checked", "not checkable", "not yet"
            );
            let mut total = [0; 3];
            for (level, tally) in self.by_level(spec) {
                row(&mut out, level, tally);
                (0..3).for_each(|i| total[i] += tally[i]);
            }
            row(&mut out, "total", total);
            let _ = writeln!(
                out,
                "{:<32} {:>7} {:>8} {:>14} {:>8}",
                "page", "clauses", "checked", "not checkable", "not yet"
            );
            for (page, tally) in self.by_page(spec) {
                let _ = writeln!(
                    out,
                    "{page:<32} {:>7} {:>8} {:>14} {:>8}",
                    tally.iter().sum::<usize>(),
                    tally[0],
                    tally[1],
                    tally[2]
                );
            }
        }
        out
    }

    /// Every clause and the totals, for scripts.
    pub fn to_json(&self) -> Value {
        let totals: serde_json::Map<String, Value> = self
            .specs()
            .into_iter()
            .map(|spec| {
                let levels: serde_json::Map<String, Value> =
                    self.by_level(spec).into_iter().map(|(l, t)| (l.to_owned(), tally_json(t))).collect();
                (spec.to_owned(), Value::Object(levels))
            })
            .collect();
        let clauses: Vec<Value> = self.clauses.iter().filter_map(|c| serde_json::from_str(&c.to_line()).ok()).collect();
        json!({ "clauses": clauses, "totals": totals })
    }
}

fn row(out: &mut String, name: &str, tally: Tally) {
    let _ =
        writeln!(out, "{name:<12} {:>7} {:>8} {:>14} {:>8}", tally.iter().sum::<usize>(), tally[0], tally[1], tally[2]);
}

fn tally_json(tally: Tally) -> Value {
    json!({ "clauses": tally.iter().sum::<usize>(), "checked": tally[0], "not_checkable": tally[1], "not_yet": tally[2] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_roster_parses_and_names_only_real_requirements() {
        let ledger = Ledger::parse(ROSTER).expect("the committed roster parses");
        assert_eq!(ledger.clauses.len(), Ledger::committed().clauses.len());
        assert!(!ledger.clauses.is_empty());
        let known: Vec<&str> = super::super::requirements().iter().map(|r| r.id).collect();
        let mut ids = std::collections::HashSet::new();
        for clause in &ledger.clauses {
            assert!(ids.insert(clause.id.as_str()), "duplicate id {}", clause.id);
            if let Status::Checked(by) = &clause.status {
                for id in by {
                    assert!(known.contains(&id.as_str()), "{} is checked by {id}, which is no requirement", clause.id);
                }
            }
            assert_eq!(Clause::from_json(&serde_json::from_str(&clause.to_line()).unwrap()).unwrap(), *clause);
        }
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number() {
        let good = r#"{"id":"a","spec":"v1","page":"p","anchor":"x","level":"MAY","text":"t","status":"not-yet"}"#;
        let bad =
            r#"{"id":"b","spec":"v1","page":"p","anchor":"x","level":"MAY","text":"t","status":"checked","by":[]}"#;
        assert!(Ledger::parse(good).is_ok());
        let e = Ledger::parse(&format!("{good}\n{bad}")).unwrap_err();
        assert!(e.starts_with("line 2: checked by nothing"), "{e}");
        let tables = Ledger::parse(good).unwrap().to_text();
        assert!(tables.contains("MAY                1        0              0        1"), "{tables}");
    }
}
