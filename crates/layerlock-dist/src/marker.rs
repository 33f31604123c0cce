//! The gate every marker from outside passes before uv-pep508 parses it.
//!
//! Three costs of a marker grow without bound on hostile input, and each is
//! measured here from the text alone, without recursion:
//!
//! - the parser recurses once per parenthesis (50,000 overflow the stack);
//! - the marker tree grows with each distinct variable it compares, and
//!   rendering it (for a lock, an error, a `# via`) grows much faster:
//!   64 distinct extras joined by `or` take 20 ms, 128 a fifth of a second,
//!   256 five seconds, 512 minutes;
//! - rendering writes the marker in disjunctive normal form, which
//!   multiplies out: eight `(a or b)` groups joined by `and` are 256 terms
//!   and take a tenth of a second, twelve (4,096 terms) most of a minute.
//!
//! Real markers, even the long ones universal resolvers write, stay far
//! below every limit.

use std::fmt;

/// Deepest parenthesis nesting read in a marker.
pub const MAX_MARKER_DEPTH: usize = 64;

/// Most comparisons read in one marker.
pub const MAX_MARKER_COMPARISONS: usize = 64;

/// Most terms the marker multiplies out to, as written (before any
/// simplification): `(a or b) and (c or d)` is four.
pub const MAX_MARKER_TERMS: u64 = 128;

/// What a marker would cost, read from its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MarkerWeight {
    /// Deepest parenthesis nesting outside quoted strings.
    pub depth: usize,
    /// Comparisons (`==`, `>=`, `in`, …), counted by their operators.
    pub comparisons: usize,
    /// Terms of the disjunctive normal form, as written; saturates.
    pub terms: u64,
}

impl MarkerWeight {
    /// The weight of a bare marker (a pylock `marker`, an `environments`
    /// entry, the text after a requirement's `;`). PEP 508 strings have no
    /// escapes: a quote ends at the next quote of its kind, and nothing
    /// inside one counts.
    pub fn of(text: &str) -> Self {
        // One frame per open parenthesis: the terms of the `or` branches
        // closed so far, and the product of the `and` branch being read.
        let mut frames: Vec<(u64, u64)> = vec![(0, 1)];
        let mut weight = MarkerWeight::default();
        let mut chars = text.char_indices().peekable();
        let mut operator = false;
        while let Some((at, c)) = chars.next() {
            let was_operator = std::mem::replace(&mut operator, false);
            match c {
                '\'' | '"' => {
                    // Skip to the closing quote; an unclosed one ends the text.
                    for (_, inner) in chars.by_ref() {
                        if inner == c {
                            break;
                        }
                    }
                }
                '(' => {
                    frames.push((0, 1));
                    weight.depth = weight.depth.max(frames.len() - 1);
                }
                ')' if frames.len() > 1 => {
                    let (or, and) = frames.pop().unwrap_or((0, 1));
                    let top = frames.last_mut().expect("the outermost frame stays");
                    top.1 = top.1.saturating_mul(or.saturating_add(and));
                }
                '=' | '<' | '>' | '!' | '~' => {
                    operator = true;
                    if !was_operator {
                        weight.comparisons += 1;
                    }
                }
                c if c.is_ascii_alphanumeric() || c == '_' || c == '.' => {
                    let mut end = at + c.len_utf8();
                    while let Some(&(next, d)) = chars.peek() {
                        if !(d.is_ascii_alphanumeric() || d == '_' || d == '.') {
                            break;
                        }
                        end = next + d.len_utf8();
                        chars.next();
                    }
                    let top = frames.last_mut().expect("the outermost frame stays");
                    match &text[at..end] {
                        "or" => *top = (top.0.saturating_add(top.1), 1),
                        "in" => weight.comparisons += 1,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        // Unclosed parentheses close at the end, as a count must assume.
        while frames.len() > 1 {
            let (or, and) = frames.pop().unwrap_or((0, 1));
            let top = frames.last_mut().expect("the outermost frame stays");
            top.1 = top.1.saturating_mul(or.saturating_add(and));
        }
        let (or, and) = frames[0];
        weight.terms = or.saturating_add(and);
        weight
    }

    /// The weight of a whole requirement (`name[extras] @ url ; marker` or
    /// `name>=1 ; marker`). Quotes are read only in the marker: a quote in
    /// a URL (`https://h/it's`) must not turn the marker's parentheses into
    /// a "string". The marker starts at the first `;` or, for a URL
    /// requirement, at the first `;` after the URL (a URL may hold `;`):
    /// both are weighed and the heavier one is the answer, so no placement
    /// of a stray quote or `;` hides a cost. The part before the marker
    /// (`name (>=1)`) is counted for its parentheses, quotes ignored.
    pub fn of_requirement(text: &str) -> Self {
        let first = text.find(';');
        let mut starts = Vec::from_iter(first);
        if let Some(at) = text
            .find('@')
            .filter(|&at| first.is_none_or(|semi| at < semi))
        {
            let url = text[at + 1..].trim_start();
            let url_end =
                text.len() - url.len() + url.find(char::is_whitespace).unwrap_or(url.len());
            starts.extend(text[url_end..].find(';').map(|semi| url_end + semi));
        }
        let prefix = &text[..starts.iter().copied().min().unwrap_or(text.len())];
        let head = MarkerWeight {
            depth: MarkerWeight::of(&prefix.replace(['\'', '"'], "")).depth,
            ..MarkerWeight::default()
        };
        starts
            .iter()
            .map(|&start| MarkerWeight::of(&text[start + 1..]))
            .fold(head, |a, b| MarkerWeight {
                depth: a.depth.max(b.depth),
                comparisons: a.comparisons.max(b.comparisons),
                terms: a.terms.max(b.terms),
            })
    }

    /// Why a marker of this weight is refused, or `None` when it is read.
    pub fn refusal(&self) -> Option<MarkerTooHeavy> {
        (self.depth > MAX_MARKER_DEPTH
            || self.comparisons > MAX_MARKER_COMPARISONS
            || self.terms > MAX_MARKER_TERMS)
            .then_some(MarkerTooHeavy(*self))
    }
}

/// A marker past one of the limits, named in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerTooHeavy(pub MarkerWeight);

impl fmt::Display for MarkerTooHeavy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.0;
        if w.depth > MAX_MARKER_DEPTH {
            write!(
                f,
                "markers nest {} parentheses deep; at most {MAX_MARKER_DEPTH} are read",
                w.depth
            )
        } else if w.comparisons > MAX_MARKER_COMPARISONS {
            write!(
                f,
                "the marker makes {} comparisons; at most {MAX_MARKER_COMPARISONS} are read",
                w.comparisons
            )
        } else {
            write!(
                f,
                "the marker multiplies out to {} terms; at most {MAX_MARKER_TERMS} are read",
                w.terms
            )
        }
    }
}

impl std::error::Error for MarkerTooHeavy {}

/// Why a parsed marker is refused although its text passed the gate: the
/// form uv-pep508 writes it in (disjunctive normal form, simplified) would
/// not pass it. A lock must read back as it was written, so a reader
/// refuses what it could not write back.
pub fn written_refusal(marker: &uv_pep508::MarkerTree) -> Option<WrittenTooHeavy> {
    let written = marker.try_to_string()?;
    MarkerWeight::of(&written).refusal().map(WrittenTooHeavy)
}

/// A marker whose written form is past one of the limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenTooHeavy(pub MarkerTooHeavy);

impl fmt::Display for WrittenTooHeavy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} once written out in normal form, so it would not read back",
            self.0
        )
    }
}

impl std::error::Error for WrittenTooHeavy {}

#[cfg(test)]
mod tests {
    #[test]
    fn a_marker_that_multiplies_out_past_the_limits_when_written_is_refused() {
        // Two `or` groups and sixteen extras: 20 comparisons as written,
        // 144 in the normal form the lock would hold.
        let extras: Vec<String> = (0..16).map(|i| format!("extra == 'e{i}'")).collect();
        let text = format!(
            "(python_version < '3.8' or sys_platform == 'x') and (python_version >= '3.9' or os_name == 'y') and ({})",
            extras.join(" or ")
        );
        assert_eq!(super::MarkerWeight::of(&text).refusal(), None);
        let marker: uv_pep508::MarkerTree = text.parse().unwrap();
        let refusal = super::written_refusal(&marker).expect("refused");
        assert!(
            refusal.to_string().contains("would not read back"),
            "{refusal}"
        );
        let short: uv_pep508::MarkerTree =
            "python_version >= '3.8' and extra == 'x'".parse().unwrap();
        assert_eq!(super::written_refusal(&short), None);
    }

    use super::*;

    fn depth(text: &str) -> usize {
        MarkerWeight::of(text).depth
    }

    #[test]
    fn parentheses_inside_quoted_strings_do_not_hide_nesting() {
        let level = "(platform_release == ')' or ";
        let hidden = format!(
            "{}os_name == 'posix'{}",
            level.repeat(1000),
            ")".repeat(1000)
        );
        assert_eq!(depth(&hidden), 1000);
        assert_eq!(depth("extra == '((((' and (os_name == \"(\")"), 1);
        assert_eq!(depth("extra == 'unclosed (((("), 0);
        assert_eq!(depth(")))((("), 3);
    }

    #[test]
    fn a_quote_or_semicolon_in_a_url_does_not_hide_the_marker_nesting() {
        let deep = format!("{}os_name == 'posix'{}", "(".repeat(500), ")".repeat(500));
        for line in [
            format!("a ; {deep}"),
            format!("a @ https://h/it's ; {deep}"),
            format!("a @ https://h/x;y' ; {deep}"),
            format!("a @ https://h/x;{deep}"),
            format!("a (>=1) ; {deep}"),
        ] {
            assert!(
                MarkerWeight::of_requirement(&line).depth >= 500,
                "{line:.60}"
            );
        }
        let of = |t| MarkerWeight::of_requirement(t).depth;
        assert_eq!(of("a (>=1.0) ; extra == '(((('"), 1);
        assert_eq!(of("a @ https://h/x(1).whl"), 1);
        assert_eq!(of("a"), 0);
    }

    #[test]
    fn comparisons_are_counted_by_their_operators() {
        let w = MarkerWeight::of(
            "python_version >= '3.8' and 'linux' in sys_platform or os_name not in 'nt'",
        );
        assert_eq!(w.comparisons, 3);
        // `===`, `!=` and `~=` are one operator each; `=` in strings is not.
        let w = MarkerWeight::of("a === '1' and b != '=' and c ~= '1.0'");
        assert_eq!(w.comparisons, 3);
        // No spaces needed between a string and `or`.
        assert_eq!(MarkerWeight::of("a=='1'or(b=='2')").terms, 2);
    }

    #[test]
    fn terms_multiply_across_and_and_add_across_or() {
        assert_eq!(MarkerWeight::of("a == '1'").terms, 1);
        assert_eq!(
            MarkerWeight::of("a == '1' or b == '2' or c == '3'").terms,
            3
        );
        let product = "(a == '1' or b == '2') and (c == '3' or d == '4' or e == '5')";
        assert_eq!(MarkerWeight::of(product).terms, 6);
        let groups: Vec<String> = (0..12)
            .map(|i| format!("(extra == 'a{i}' or extra == 'b{i}')"))
            .collect();
        let w = MarkerWeight::of(&groups.join(" and "));
        assert_eq!((w.terms, w.comparisons), (4096, 24));
        assert!(w.refusal().unwrap().to_string().contains("4096 terms"));
        let chain: Vec<String> = (0..400).map(|i| format!("extra == 'e{i}'")).collect();
        let w = MarkerWeight::of(&chain.join(" and "));
        assert!(w.refusal().unwrap().to_string().contains("400 comparisons"));
        // Saturates rather than overflowing.
        let huge = format!("({})", "(a=='1' or b=='2') and ".repeat(100) + "c=='3'");
        assert_eq!(MarkerWeight::of(&huge).terms, u64::MAX);
    }

    #[test]
    fn markers_a_universal_resolver_writes_are_read() {
        let written = "(platform_machine != 'aarch64' and sys_platform == 'linux' and \
             extra == 'extra-4-demo-cu124' and extra != 'extra-4-demo-cpu') or \
             (sys_platform != 'darwin' and sys_platform != 'linux' and \
             extra == 'extra-4-demo-cu124' and extra != 'extra-4-demo-cpu') or \
             (python_full_version >= '3.10' and implementation_name == 'cpython')";
        let w = MarkerWeight::of(written);
        assert_eq!(w.refusal(), None, "{w:?}");
        assert_eq!((w.terms, w.comparisons, w.depth), (3, 10, 1));
    }
}
