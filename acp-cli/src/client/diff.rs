//! A small line diff (longest common subsequence) for showing `diff` tool call content.

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

/// Above this many cells the LCS table is not built: the old text is shown removed and the
/// new one added.
const MAX_CELLS: usize = 4_000_000;

/// The diff of `old` and `new` by lines, with at most `context` unchanged lines around each
/// change (the rest collapsed into [`DiffLine::Skipped`]).
pub(crate) fn line_diff<'a>(old: &'a str, new: &'a str, context: usize) -> Vec<DiffLine<'a>> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Trim the common prefix and suffix first: most edits touch a few lines of a long file.
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);

    let mut full: Vec<DiffLine<'a>> = a[..prefix].iter().map(|l| DiffLine::Same(l)).collect();
    if ma.len().saturating_mul(mb.len()) > MAX_CELLS {
        full.extend(ma.iter().map(|l| DiffLine::Removed(l)));
        full.extend(mb.iter().map(|l| DiffLine::Added(l)));
    } else {
        // lcs[i][j]: length of the LCS of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * w + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                full.push(DiffLine::Same(ma[i]));
                i += 1;
                j += 1;
            } else if i < ma.len() && (j == mb.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                // Removals before additions, as `diff` shows them.
                full.push(DiffLine::Removed(ma[i]));
                i += 1;
            } else {
                full.push(DiffLine::Added(mb[j]));
                j += 1;
            }
        }
    }
    full.extend(a[a.len() - suffix..].iter().map(|l| DiffLine::Same(l)));
    collapse(full, context)
}

/// Keeps `context` unchanged lines around each change and collapses the rest.
fn collapse(lines: Vec<DiffLine<'_>>, context: usize) -> Vec<DiffLine<'_>> {
    let changed: Vec<usize> =
        lines.iter().enumerate().filter(|(_, l)| !matches!(l, DiffLine::Same(_))).map(|(i, _)| i).collect();
    let near = |i: usize| changed.iter().any(|&c| c.abs_diff(i) <= context);
    let mut out = Vec::new();
    let mut skipped = 0;
    for (i, line) in lines.into_iter().enumerate() {
        if matches!(line, DiffLine::Same(_)) && !near(i) {
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
}
