//! The checked-in list of known disagreements (`known_disagreements.txt`).
//!
//! One disagreement a line: `<schema label> | <def> | <kind> | <judgement>`; blank lines and
//! lines starting with `#` are ignored. Lines of other schema labels are kept for the day the
//! registry points at that schema and are not checked today.

use std::collections::BTreeSet;

/// One disagreement: a definition and its kind (see the test's module docs).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Disagreement {
    /// The schema definition.
    pub(crate) def: String,
    /// The kind, with its path for the kinds that have one.
    pub(crate) kind: String,
}

/// The listed disagreements of one schema label.
#[derive(Debug)]
pub(crate) struct Known {
    entries: BTreeSet<Disagreement>,
}

impl Known {
    /// Parses the list and keeps the lines of `label`.
    ///
    /// # Panics
    /// On a malformed line, a line without a judgement, or a line listed twice.
    pub(crate) fn parse(text: &str, label: &str) -> Known {
        let mut entries = BTreeSet::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.splitn(4, '|').map(str::trim).collect();
            let [lab, def, kind, judgement] = fields[..] else {
                panic!("known_disagreements.txt:{}: want `label | def | kind | judgement`: {line}", n + 1)
            };
            assert!(!judgement.is_empty(), "known_disagreements.txt:{}: no judgement", n + 1);
            if lab == label {
                let d = Disagreement { def: def.to_owned(), kind: kind.to_owned() };
                assert!(entries.insert(d), "known_disagreements.txt:{}: listed twice", n + 1);
            }
        }
        Known { entries }
    }

    /// Whether `d` is listed.
    pub(crate) fn contains(&self, d: &Disagreement) -> bool {
        self.entries.contains(d)
    }

    /// The disagreements listed here or in `other`.
    pub(crate) fn union(mut self, other: Known) -> Known {
        self.entries.extend(other.entries);
        self
    }

    /// The listed disagreements for which `keep` holds.
    pub(crate) fn retain(mut self, keep: impl Fn(&Disagreement) -> bool) -> Known {
        self.entries.retain(keep);
        self
    }

    /// The listed disagreements.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Disagreement> {
        self.entries.iter()
    }
}

#[test]
fn parse_keeps_the_lines_of_one_label() {
    let k = Known::parse("# c\n\nv1 | A | ours-rejects | ours: x\nv2 | B | theirs-rejects | theirs: y | z\n", "v1");
    let a = Disagreement { def: "A".into(), kind: "ours-rejects".into() };
    assert!(k.contains(&a));
    assert_eq!(k.entries().count(), 1);
    let k = Known::parse("v2 | B | theirs-rejects | theirs: y | z\n", "v2");
    assert_eq!(k.entries().next().map(|d| d.def.as_str()), Some("B"));
}

#[test]
fn union_and_retain_combine_labels() {
    let text = "v1 | A | ours-rejects | x\nv1/u | B | theirs-rejects | y\nv1 | C | ours-rejects | z\n";
    let k = Known::parse(text, "v1/u").union(Known::parse(text, "v1").retain(|d| d.def != "C"));
    let defs: Vec<&str> = k.entries().map(|d| d.def.as_str()).collect();
    assert_eq!(defs, ["A", "B"]);
}

#[test]
#[should_panic(expected = "no judgement")]
fn parse_requires_a_judgement() {
    Known::parse("v1 | A | ours-rejects |   \n", "v1");
}
