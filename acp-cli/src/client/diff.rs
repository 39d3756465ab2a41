//! A line diff for showing `diff` tool call content, in time linear in the input (plus the
//! edit distance, bounded by a deadline).
//!
//! * The lines are compared with Myers' algorithm from `similar`, which costs
//!   O((N + M) · D) for D differing lines and gives up and approximates (still a correct,
//!   possibly longer, diff) after [`DIFF_DEADLINE`].
//! * Texts larger than [`MAX_DIFF_BYTES`] together are not compared line by line at all: the
//!   common prefix and suffix are kept and everything between is shown removed, then added.
//! * [`collapse`] keeps `context` unchanged lines around each change in one pass.
//!
//! What is *drawn* is capped by the renderer (a fixed number of diff lines, then a
//! "… N more diff lines" marker), so drawing a diff of any size is bounded too.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp};

/// One line of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiffLine<'a> {
    /// In both texts.
    Same(&'a str),
    /// Only in the old text.
    Removed(&'a str),
    /// Only in the new text.
    Added(&'a str),
    /// Unchanged lines left out (how many).
    Skipped(usize),
}

/// Above this many bytes (old and new together) the texts are not compared line by line:
/// after the common prefix and suffix, the old lines are shown removed and the new ones added.
pub(crate) const MAX_DIFF_BYTES: usize = 8 * 1024 * 1024;

/// How long the line comparison may search for a minimal diff before it approximates. The
/// crate's own unit tests run unoptimised on shared machines: they lift the deadline so that
/// what they check does not depend on the machine's load (the approximation is checked on
/// its own, with a zero deadline).
pub(crate) const DIFF_DEADLINE: Duration =
    if cfg!(test) { Duration::from_secs(3600) } else { Duration::from_millis(200) };

/// The diff of `old` and `new` by lines, with at most `context` unchanged lines around each
/// change (the rest collapsed into [`DiffLine::Skipped`]).
pub(crate) fn line_diff<'a>(old: &'a str, new: &'a str, context: usize) -> Vec<DiffLine<'a>> {
    line_diff_within(old, new, context, DIFF_DEADLINE)
}

/// [`line_diff`], searching for a minimal diff for at most `time`.
fn line_diff_within<'a>(old: &'a str, new: &'a str, context: usize, time: Duration) -> Vec<DiffLine<'a>> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let full =
        if old.len().saturating_add(new.len()) > MAX_DIFF_BYTES { replace_middle(&a, &b) } else { myers(&a, &b, time) };
    collapse(full, context)
}

/// Every line of `a` and `b`, compared with Myers' algorithm (removals before additions, as
/// `diff` shows them).
fn myers<'a>(a: &[&'a str], b: &[&'a str], time: Duration) -> Vec<DiffLine<'a>> {
    let deadline = Instant::now().checked_add(time);
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, a, b, deadline);
    let mut full = Vec::with_capacity(a.len().max(b.len()));
    for op in ops {
        let (old, new) = (op.old_range(), op.new_range());
        match op {
            DiffOp::Equal { .. } => full.extend(a[old].iter().map(|l| DiffLine::Same(l))),
            DiffOp::Delete { .. } => full.extend(a[old].iter().map(|l| DiffLine::Removed(l))),
            DiffOp::Insert { .. } => full.extend(b[new].iter().map(|l| DiffLine::Added(l))),
            DiffOp::Replace { .. } => {
                full.extend(a[old].iter().map(|l| DiffLine::Removed(l)));
                full.extend(b[new].iter().map(|l| DiffLine::Added(l)));
            }
        }
    }
    full
}

/// The common prefix and suffix kept, the lines between shown removed then added (linear).
fn replace_middle<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<DiffLine<'a>> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let mut full: Vec<DiffLine<'a>> = a[..prefix].iter().map(|l| DiffLine::Same(l)).collect();
    full.extend(a[prefix..a.len() - suffix].iter().map(|l| DiffLine::Removed(l)));
    full.extend(b[prefix..b.len() - suffix].iter().map(|l| DiffLine::Added(l)));
    full.extend(a[a.len() - suffix..].iter().map(|l| DiffLine::Same(l)));
    full
}

/// Keeps `context` unchanged lines around each change and collapses the rest, in two passes:
/// the distance to the previous change (forwards) and to the next one (backwards).
fn collapse(lines: Vec<DiffLine<'_>>, context: usize) -> Vec<DiffLine<'_>> {
    let changed = |l: &DiffLine<'_>| !matches!(l, DiffLine::Same(_));
    let mut keep = vec![false; lines.len()];
    let mut since: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        since = if changed(line) { Some(0) } else { since.map(|d| d + 1) };
        keep[i] = since.is_some_and(|d| d <= context);
    }
    let mut until: Option<usize> = None;
    for (i, line) in lines.iter().enumerate().rev() {
        until = if changed(line) { Some(0) } else { until.map(|d| d + 1) };
        keep[i] |= until.is_some_and(|d| d <= context);
    }
    let mut out = Vec::new();
    let mut skipped = 0;
    for (line, keep) in lines.into_iter().zip(keep) {
        if !keep {
            skipped += 1;
            continue;
        }
        if skipped > 0 {
            out.push(DiffLine::Skipped(skipped));
            skipped = 0;
        }
        out.push(line);
    }
    if skipped > 0 {
        out.push(DiffLine::Skipped(skipped));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::DiffLine::*;
    use super::*;

    #[test]
    fn a_changed_line_in_the_middle() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nD\ne\nf\ng\n";
        assert_eq!(
            line_diff(old, new, 1),
            vec![Skipped(2), Same("c"), Removed("d"), Added("D"), Same("e"), Skipped(2)]
        );
    }

    #[test]
    fn new_files_and_insertions() {
        assert_eq!(line_diff("", "x\ny", 3), vec![Added("x"), Added("y")]);
        assert_eq!(line_diff("a\nc", "a\nb\nc", 3), vec![Same("a"), Added("b"), Same("c")]);
        assert_eq!(line_diff("a\nb\nc", "a\nc", 0), vec![Skipped(1), Removed("b"), Skipped(1)]);
        assert_eq!(line_diff("same", "same", 2), vec![Skipped(1)]);
    }

    #[test]
    fn scattered_changes_in_a_long_file_keep_their_context() {
        let old: String = (0..80_000).map(|i| format!("line {i}\n")).collect();
        let new: String =
            (0..80_000).map(|i| if i % 10_000 == 5 { format!("LINE {i}\n") } else { format!("line {i}\n") }).collect();
        let diff = line_diff(&old, &new, 1);
        // 8 changes, each: one line of context on both sides, a removal and an addition; the
        // 9 gaps between them skipped.
        assert_eq!(diff.len(), 8 * 4 + 9, "{:?}", &diff[..12]);
        assert_eq!(
            &diff[..6],
            &[Skipped(4), Same("line 4"), Removed("line 5"), Added("LINE 5"), Same("line 6"), Skipped(9997)]
        );
        assert_eq!(diff.last(), Some(&Skipped(80_000 - 70_007)));
    }

    #[test]
    fn texts_over_the_byte_cap_are_shown_replaced_between_the_common_ends() {
        let n = MAX_DIFF_BYTES / 1000;
        let line = "x".repeat(1000);
        let old: String = (0..n).map(|i| format!("{line}{i}\n")).collect();
        let edited = |i: usize| if i == 10 || i == n - 10 { format!("changed {i}\n") } else { format!("{line}{i}\n") };
        let new: String = (0..n).map(edited).collect();
        let diff = line_diff(&old, &new, 0);
        // Myers would find two changed lines; over the cap, everything between the first and
        // the last change is shown replaced.
        assert_eq!(diff[0], Skipped(10));
        assert_eq!(diff.iter().filter(|l| matches!(l, Removed(_))).count(), n - 19);
        assert_eq!(diff.iter().filter(|l| matches!(l, Added(_))).count(), n - 19);
        assert_eq!(diff[n - 19 + 1], Added("changed 10"));
        assert_eq!(diff.last(), Some(&Skipped(9)));
    }

    /// The old and new texts a diff describes (skipped lines unknown: left out).
    fn sides<'a>(diff: &[DiffLine<'a>]) -> (Vec<&'a str>, Vec<&'a str>) {
        let (mut old, mut new) = (Vec::new(), Vec::new());
        for line in diff {
            match *line {
                Same(l) => {
                    old.push(l);
                    new.push(l);
                }
                Removed(l) => old.push(l),
                Added(l) => new.push(l),
                Skipped(_) => {}
            }
        }
        (old, new)
    }

    #[test]
    fn past_the_deadline_the_diff_is_approximate_but_correct() {
        // Few distinct lines in a different order: the hard case for Myers.
        let old: String = (0..30_000u64).map(|i| format!("{}\n", (i * 2_654_435_761) % 97)).collect();
        let new: String = (0..30_000u64).map(|i| format!("{}\n", (i * 40_503) % 89)).collect();
        let diff = line_diff_within(&old, &new, usize::MAX, Duration::ZERO);
        assert!(diff.iter().any(|l| matches!(l, Same(_))), "not simply replaced");
        let (a, b) = sides(&diff);
        assert_eq!((a, b), (old.lines().collect(), new.lines().collect()));
    }
}
