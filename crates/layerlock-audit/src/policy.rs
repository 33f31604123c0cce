//! Policy in one place: the allowlist file and inline ignore comments sort
//! findings into reported, allowed and suppressed; allowlist entries that
//! match nothing are stale. Rules never read policy.

use serde::Serialize;

use crate::finding::{Finding, Location};
use crate::rules::{RuleId, RuleSelector};

/// `path[:line] rule-id [job=KEY] [command="TEXT"]  # reason`. With a
/// command the entry follows it through line shifts: the line is only a
/// hint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AllowEntry {
    pub path: String,
    pub line: Option<usize>,
    pub rule: RuleSelector,
    pub job: Option<String>,
    /// The command's text, whitespace collapsed.
    pub command: Option<String>,
    pub reason: String,
    /// Where the entry is: `.layerlock-allowlist:3`.
    pub origin: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct PolicyError {
    pub origin: String,
    pub message: String,
}

pub fn parse_allowlist(text: &str, file: &str) -> Result<Vec<AllowEntry>, PolicyError> {
    let mut out = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let origin = format!("{file}:{}", index + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // A quoted command may hold ` #`: it is taken out first.
        let (line, command) = match take_command(line) {
            Ok(found) => found,
            Err(message) => return Err(PolicyError { origin, message }),
        };
        let line = line.as_str();
        let (body, reason) = match line.split_once(" #").or_else(|| line.split_once("\t#")) {
            Some((body, reason)) => (body.trim(), reason.trim()),
            None => (line, ""),
        };
        if reason.is_empty() {
            return Err(PolicyError {
                origin,
                message: format!("`{line}` has no reason; write `{line}  # why it is allowed`"),
            });
        }
        let mut parts = body.split_whitespace();
        let (Some(place), Some(rule)) = (parts.next(), parts.next()) else {
            return Err(PolicyError {
                origin,
                message: format!(
                    "`{body}` is not `path[:line] rule-id [job=KEY] [command=\"TEXT\"]`"
                ),
            });
        };
        let mut job = None;
        for extra in parts {
            match extra.strip_prefix("job=") {
                Some(key) => job = Some(key.to_string()),
                None => {
                    return Err(PolicyError {
                        origin,
                        message: format!(
                            "unexpected `{extra}`; only `job=KEY` and `command=\"TEXT\"` may follow the rule id"
                        ),
                    });
                }
            }
        }
        let (path, line_no) = match place.rsplit_once(':') {
            Some((path, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
                let Ok(n) = n.parse::<usize>() else {
                    return Err(PolicyError {
                        origin,
                        message: format!("`{n}` is not a line number"),
                    });
                };
                (path.to_string(), Some(n))
            }
            Some((_, n)) if !n.is_empty() => {
                return Err(PolicyError {
                    origin,
                    message: format!("`{place}`: after `:` comes a line number, not `{n}`"),
                });
            }
            _ => (place.to_string(), None),
        };
        let rule = match rule.parse::<RuleSelector>() {
            Ok(rule) => rule,
            Err(unknown) => {
                return Err(PolicyError {
                    origin,
                    message: unknown.to_string(),
                });
            }
        };
        out.push(AllowEntry {
            path,
            line: line_no,
            rule,
            job,
            command,
            reason: reason.to_string(),
            origin,
        });
    }
    Ok(out)
}

/// `line` without its `command="…"` (backslash escapes `"` and `\`), and
/// that command with its whitespace collapsed.
fn take_command(line: &str) -> Result<(String, Option<String>), String> {
    let Some(start) = line.find(" command=\"") else {
        return Ok((line.to_string(), None));
    };
    let mut text = String::new();
    let mut chars = line[start + " command=\"".len()..].char_indices();
    let mut end = None;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, next)) => text.push(next),
                None => break,
            },
            '"' => {
                end = Some(start + " command=\"".len() + i + 1);
                break;
            }
            c => text.push(c),
        }
    }
    let Some(end) = end else {
        return Err(
            "`command=\"` is not closed; end it with `\"` (write `\\\"` for a quote inside)"
                .to_string(),
        );
    };
    Ok((
        format!("{}{}", &line[..start], &line[end..]),
        Some(collapse(&text)),
    ))
}

/// Whitespace runs as one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An allowlist entry for each place of `reported` (its command named, so
/// it survives line shifts): today's findings as a baseline to keep out of
/// the next reports, with one reason a reviewer can search for.
pub fn baseline(reported: &[Finding]) -> String {
    let mut out = String::from(
        "# layerlock audit baseline: the findings of the day it was written.\n# Each entry names its command; the line is a hint. Replace a reason\n# with the real one as entries are reviewed, or fix and delete them.\n",
    );
    let mut seen = std::collections::BTreeSet::new();
    for f in reported {
        let command = collapse(&f.command);
        let key = (
            f.location.path.clone(),
            f.location.line,
            f.rule,
            command.clone(),
        );
        if !seen.insert(key) {
            continue;
        }
        let quoted = command.replace('\\', "\\\\").replace('"', "\\\"");
        let place = format!("{}:{}", f.location.path, f.location.line);
        if command.is_empty() {
            out.push_str(&format!(
                "{place} {}  # baseline: not reviewed yet\n",
                f.rule
            ));
        } else {
            out.push_str(&format!(
                "{place} {} command=\"{quoted}\"  # baseline: not reviewed yet\n",
                f.rule
            ));
        }
    }
    out
}

impl AllowEntry {
    fn matches(&self, finding: &Finding) -> bool {
        *self.path == *finding.location.path
            && match &self.command {
                // The command decides; its line is a hint.
                Some(command) => *command == collapse(&finding.command),
                None => self.line.is_none_or(|l| l == finding.location.line),
            }
            && self.rule.matches(finding.rule)
            && self
                .job
                .as_ref()
                .is_none_or(|j| finding.job.as_deref() == Some(j.as_str()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excused {
    pub finding: Finding,
    pub reason: String,
    /// The allowlist entry (`file:line`) or the ignore comment's place.
    pub by: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stale {
    pub entry: String,
    pub origin: String,
    pub why: String,
}

#[derive(Debug, Default)]
pub struct Sorted {
    pub reported: Vec<Finding>,
    pub allowed: Vec<Excused>,
    pub suppressed: Vec<Excused>,
    pub stale: Vec<Stale>,
}

/// An inline `# layerlock: ignore[rule-id] reason` on `line`: the reason.
/// Names that are no rule id are passed over, not errors.
fn inline_ignore(line: &str, rule: RuleId) -> Option<String> {
    let at = line.find("layerlock: ignore[")?;
    let rest = &line[at + "layerlock: ignore[".len()..];
    let (rules, reason) = rest.split_once(']')?;
    let reason = reason.trim();
    if reason.is_empty() {
        return None;
    }
    rules
        .split(',')
        .any(|r| {
            r.trim()
                .parse::<RuleSelector>()
                .is_ok_and(|selector| selector.matches(rule))
        })
        .then(|| reason.to_string())
}

/// An inline ignore: its reason, and where the comment is.
type Ignore = (String, String);

/// The inline ignore of `rule` for a finding at `line` of `file`: on the
/// line; on the line above when that line is only the comment, or the YAML
/// block-scalar indicator that opens the command (`- run: |  # …`); or
/// on a comment line above that indicator. A comment that ends the line
/// above covers that line's command only, not this one.
fn ignore_comment(file: &[String], path: &str, line: usize, rule: RuleId) -> Option<Ignore> {
    let text = |n: usize| {
        n.checked_sub(1)
            .and_then(|i| file.get(i))
            .map(String::as_str)
    };
    let comment_only = |n: usize| text(n).is_some_and(|t| t.trim_start().starts_with('#'));
    let indicator = |n: usize| {
        text(n).is_some_and(|t| {
            let code = t.split(" #").next().unwrap_or(t).trim_end();
            code.ends_with('|')
                || code.ends_with('>')
                || code.ends_with("|-")
                || code.ends_with(">-")
        })
    };
    let above = line.saturating_sub(1);
    let mut candidates = vec![line];
    if above > 0 && (comment_only(above) || indicator(above)) {
        candidates.push(above);
    }
    if above > 1 && indicator(above) && comment_only(above - 1) {
        candidates.push(above - 1);
    }
    candidates.into_iter().find_map(|c| {
        let reason = text(c).and_then(|l| inline_ignore(l, rule))?;
        Some((reason, format!("{path}:{c}")))
    })
}

/// Sort findings. `lines(path)` gives a scanned file's lines, for inline
/// ignores on the finding's line, the line above it, or above a YAML
/// block-scalar indicator (`- |`) that opens the command.
pub fn apply(
    findings: Vec<Finding>,
    allowlist: &[AllowEntry],
    lines: &dyn Fn(&str) -> Option<std::rc::Rc<Vec<String>>>,
) -> Sorted {
    let mut sorted = Sorted {
        // Most are reported: one allocation, not a copy at every doubling.
        reported: Vec::with_capacity(findings.len()),
        ..Sorted::default()
    };
    let mut used = vec![false; allowlist.len()];
    let mut cache: std::collections::BTreeMap<std::rc::Rc<str>, Option<std::rc::Rc<Vec<String>>>> =
        Default::default();
    // Findings come sorted by place, and a script reached by many jobs has
    // a finding at each of its places for every one of them: the ignore
    // comment of a place is looked for once.
    let mut last: Option<(Location, RuleId, Option<Ignore>)> = None;
    for finding in findings {
        let Location { path, line, .. } = &finding.location;
        let inline = match &last {
            Some((place, rule, inline))
                if place.path == *path && place.line == *line && *rule == finding.rule =>
            {
                inline.clone()
            }
            _ => {
                let file = match cache.get(path) {
                    Some(file) => file.clone(),
                    None => {
                        let file = lines(path);
                        cache.insert(std::rc::Rc::clone(path), file.clone());
                        file
                    }
                };
                let inline = file.and_then(|file| ignore_comment(&file, path, *line, finding.rule));
                last = Some((finding.location.clone(), finding.rule, inline.clone()));
                inline
            }
        };
        if let Some((reason, by)) = inline {
            sorted.suppressed.push(Excused {
                finding,
                reason,
                by,
            });
            continue;
        }
        if let Some(i) = allowlist.iter().position(|e| e.matches(&finding)) {
            used[i] = true;
            let entry = &allowlist[i];
            sorted.allowed.push(Excused {
                finding,
                reason: entry.reason.clone(),
                by: entry.origin.clone(),
            });
            continue;
        }
        sorted.reported.push(finding);
    }
    for (entry, used) in allowlist.iter().zip(used) {
        if !used {
            let place = match entry.line {
                Some(l) => format!("{}:{l}", entry.path),
                None => entry.path.clone(),
            };
            sorted.stale.push(Stale {
                entry: format!(
                    "{place} {}{}{}",
                    entry.rule,
                    entry
                        .job
                        .as_ref()
                        .map(|j| format!(" job={j}"))
                        .unwrap_or_default(),
                    entry
                        .command
                        .as_ref()
                        .map(|c| format!(" command=\"{c}\""))
                        .unwrap_or_default()
                ),
                origin: entry.origin.clone(),
                why: "matches no finding".to_string(),
            });
        }
    }
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    fn ignored_at(text: &str, line: usize) -> Option<String> {
        ignore_comment(&lines(text), "f", line, RuleId::JobTimeInstall).map(|(_, by)| by)
    }

    #[test]
    fn a_command_entry_is_read_with_its_quotes_and_hash() {
        let entries = parse_allowlist(
            "ci.yml:6 job-time-install command=\"pip  install \\\"a # b\\\"\"  # reviewed\nci.yml job-time-install command=\"pip install x  # not closed\n",
            "allow",
        );
        let err = entries.unwrap_err();
        assert!(err.message.contains("is not closed"), "{err}");
        let entries = parse_allowlist(
            "ci.yml:6 job-time-install command=\"pip  install \\\"a # b\\\"\"  # reviewed\n",
            "allow",
        )
        .unwrap();
        assert_eq!(entries[0].command.as_deref(), Some("pip install \"a # b\""));
        assert_eq!(entries[0].line, Some(6));
        assert_eq!(entries[0].reason, "reviewed");
    }

    #[test]
    fn an_ignore_covers_its_line_and_the_command_below_a_comment_line_only() {
        let text = "pip install a  # layerlock: ignore[job-time-install] pinned elsewhere\npip install b\n# layerlock: ignore[job-time-install] the next one\npip install c\n- run: |  # layerlock: ignore[job-time-install] the block\n    pip install d\n# layerlock: ignore[job-time-install] above the block\n- run: |\n    pip install e\n";
        assert_eq!(ignored_at(text, 1).as_deref(), Some("f:1"));
        assert_eq!(
            ignored_at(text, 2),
            None,
            "a trailing comment covers its own line only"
        );
        assert_eq!(ignored_at(text, 4).as_deref(), Some("f:3"));
        assert_eq!(ignored_at(text, 6).as_deref(), Some("f:5"));
        assert_eq!(ignored_at(text, 9).as_deref(), Some("f:7"));
    }
}
