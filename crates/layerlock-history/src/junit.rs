//! Test reports of CI jobs, JUnit XML (pytest `--junitxml`, xunit1 and xunit2)
//! and Buildkite Test Engine JSON, read into one list of [`TestCase`]s.
//!
//! Reports come from jobs we did not write and may be truncated (a job killed
//! while pytest wrote the file) or hostile, so reading is bounded: the size
//! ([`MAX_REPORT_BYTES`]), the nesting depth, and entities (only XML's five
//! predefined ones and numeric character references are expanded; nothing a
//! DTD declares is). Every problem is a [`ReportError`] with its line, never a
//! panic.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use serde::Serialize;

mod buildkite;

pub use buildkite::parse_buildkite_json;

/// The largest report read; callers bound their reads too.
pub const MAX_REPORT_BYTES: usize = 256 * 1024 * 1024;
/// Deeper nesting than this is no test report (pytest writes three levels).
const MAX_DEPTH: usize = 256;
/// Messages are one line for a table, cut to this many characters.
const MAX_MESSAGE_CHARS: usize = 300;
/// How pytest starts the failure message of a strict xfail that passed
/// (`_pytest/skipping.py`: `"[XPASS(strict)] " + reason`).
const XPASS_STRICT_PREFIX: &str = "[XPASS(strict)]";

/// What happened to one test, in pytest's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Passed,
    Failed,
    /// An error outside the test body: a fixture's setup or teardown, or
    /// collection.
    Error,
    Skipped,
    /// An expected failure that failed (`@pytest.mark.xfail`).
    #[serde(rename = "xfailed")]
    XFailed,
    /// A strict expected failure that passed, which fails the run.
    #[serde(rename = "xpass-strict")]
    XPassStrict,
}

impl Outcome {
    /// Whether this outcome fails the job: failed, error, or a strict xpass.
    pub fn is_failure(self) -> bool {
        matches!(self, Self::Failed | Self::Error | Self::XPassStrict)
    }
}

/// One test case of a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestCase {
    /// As written; pytest writes the dotted path, e.g. `tests.v1.test_nixl.TestX`.
    pub classname: String,
    /// E.g. `test_foo[param-1]`.
    pub name: String,
    /// The `file` attribute when present (pytest writes it for xunit1 only).
    pub file: Option<String>,
    /// The 1-based line of the `<testcase>` element (or JSON record) in the report.
    pub line: usize,
    pub outcome: Outcome,
    /// The first non-empty line of the failure, error or skip message, trimmed
    /// and cut to 300 characters.
    pub message: Option<String>,
    /// The enclosing `<testsuite name>`.
    pub suite: Option<String>,
}

/// A report that cannot be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", at_line(.line))]
pub struct ReportError {
    /// 1-based; 0 when the problem is the report as a whole (its size).
    pub line: usize,
    /// What is wrong and what to do about it.
    pub message: String,
}

fn at_line(line: &usize) -> String {
    if *line == 0 {
        String::new()
    } else {
        format!("line {line}: ")
    }
}

impl ReportError {
    fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// Reads a report of either kind, told apart by its first character: `<` is
/// JUnit XML, `[` or `{` Buildkite Test Engine JSON.
pub fn parse_report(text: &str) -> Result<Vec<TestCase>, ReportError> {
    check_size(text.len())?;
    let start = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    match start.as_bytes().first() {
        Some(b'<') => parse_junit(text),
        Some(b'[' | b'{') => parse_buildkite_json(text),
        Some(_) => Err(ReportError::new(
            line_of(text, text.len() - start.len()),
            "the report is neither XML (JUnit) nor JSON (Buildkite Test Engine): \
             pass the file pytest wrote with --junitxml, or a Test Engine JSON upload",
        )),
        None => Err(ReportError::new(
            1,
            "the report is empty: the job may have stopped before pytest wrote it",
        )),
    }
}

/// The commit a report says its run tested, when it says: a Buildkite Test
/// Engine upload's `run_env.commit_sha`, or a JUnit `<property>` named
/// `commit`, `commit_sha`, `git_commit`, `sha` or `revision`. Only a hex
/// commit id (7 to 64 digits) counts; anything else is no commit.
pub fn report_commit(text: &str) -> Option<String> {
    let hex = |v: &str| {
        let v = v.trim();
        (7..=64).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_hexdigit())
    };
    let start = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if start.starts_with('{') {
        #[derive(serde::Deserialize)]
        struct Upload {
            run_env: Option<RunEnv>,
        }
        #[derive(serde::Deserialize)]
        struct RunEnv {
            commit_sha: Option<String>,
        }
        let upload: Upload = serde_json::from_str(start).ok()?;
        let sha = upload.run_env?.commit_sha?;
        return hex(&sha).then(|| sha.trim().to_ascii_lowercase());
    }
    // JUnit: the first property that names a commit, read by the XML
    // reader (entities and attribute quoting as XML has them).
    let mut reader = Reader::from_str(start);
    let mut seen = 0usize;
    loop {
        seen += 1;
        if seen > 100_000 {
            return None;
        }
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.name().as_ref() == "property" => {
                let Ok([name, value]) = attributes(&e, ["name", "value"], 0) else {
                    return None;
                };
                let named = name.is_some_and(|n| {
                    matches!(
                        n.as_str(),
                        "commit" | "commit_sha" | "git_commit" | "sha" | "revision"
                    )
                });
                if let (true, Some(value)) = (named, value)
                    && hex(&value)
                {
                    return Some(value.trim().to_ascii_lowercase());
                }
            }
            // Properties come before the test cases; none by then, none.
            Ok(Event::Start(e) | Event::Empty(e)) if e.name().as_ref() == "testcase" => {
                return None;
            }
            Ok(Event::Eof) | Err(_) => return None,
            _ => {}
        }
    }
}

fn check_size(len: usize) -> Result<(), ReportError> {
    if len > MAX_REPORT_BYTES {
        return Err(ReportError::new(
            0,
            format!(
                "the report is {len} bytes, over the {} MiB layerlock reads: split it, \
                 or pass the reports of single jobs",
                MAX_REPORT_BYTES / (1024 * 1024)
            ),
        ));
    }
    Ok(())
}

/// Reads a JUnit XML report: `<testsuites>` or a bare `<testsuite>`, suites
/// nested to any (bounded) depth, `<testcase>` elements with `<failure>`,
/// `<error>` and `<skipped>` children.
///
/// A case with an error child is an error even when it also has a failure
/// (some writers put a teardown error beside the failure). pytest itself writes
/// a failed test whose teardown also failed as two `<testcase>` elements of the
/// same name, a failure and an error; both are returned, in report order.
pub fn parse_junit(text: &str) -> Result<Vec<TestCase>, ReportError> {
    check_size(text.len())?;
    JunitReader::new(text).read()
}

/// What an open element is to us.
enum Frame {
    Suites,
    Suite(Option<String>),
    Case,
    Result,
    Other,
}

struct Open {
    frame: Frame,
    name: String,
    line: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ResultKind {
    Failure,
    Error,
    Skipped,
}

/// A `<failure>`, `<error>` or `<skipped>` child.
struct ResultChild {
    kind: ResultKind,
    /// `type="pytest.xfail"` on `<skipped>`.
    xfail: bool,
    /// From the `message` attribute when it has a non-empty line.
    message: Option<String>,
    /// Else from the element's text.
    text: FirstLine,
}

impl ResultChild {
    fn message(self) -> Option<String> {
        self.message.or_else(|| self.text.finish())
    }
}

struct CaseInProgress {
    classname: String,
    name: String,
    file: Option<String>,
    line: usize,
    suite: Option<String>,
    failure: Option<ResultChild>,
    error: Option<ResultChild>,
    skipped: Option<ResultChild>,
}

impl CaseInProgress {
    fn add(&mut self, child: ResultChild) {
        // The first child of each kind speaks for the case.
        let slot = match child.kind {
            ResultKind::Failure => &mut self.failure,
            ResultKind::Error => &mut self.error,
            ResultKind::Skipped => &mut self.skipped,
        };
        if slot.is_none() {
            *slot = Some(child);
        }
    }

    fn finish(self) -> TestCase {
        let (outcome, message) = if let Some(error) = self.error {
            (Outcome::Error, error.message())
        } else if let Some(failure) = self.failure {
            let message = failure.message();
            let strict = message
                .as_deref()
                .is_some_and(|m| m.starts_with(XPASS_STRICT_PREFIX));
            let outcome = if strict {
                Outcome::XPassStrict
            } else {
                Outcome::Failed
            };
            (outcome, message)
        } else if let Some(skipped) = self.skipped {
            let outcome = if skipped.xfail {
                Outcome::XFailed
            } else {
                Outcome::Skipped
            };
            (outcome, skipped.message())
        } else {
            (Outcome::Passed, None)
        };
        TestCase {
            classname: self.classname,
            name: self.name,
            file: self.file,
            line: self.line,
            outcome,
            message,
            suite: self.suite,
        }
    }
}

struct JunitReader<'a> {
    reader: Reader<&'a [u8]>,
    lines: LineCounter<'a>,
    stack: Vec<Open>,
    case: Option<CaseInProgress>,
    child: Option<ResultChild>,
    cases: Vec<TestCase>,
    saw_root: bool,
}

impl<'a> JunitReader<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            reader: Reader::from_str(text),
            lines: LineCounter::new(text),
            stack: Vec::new(),
            case: None,
            child: None,
            cases: Vec::new(),
            saw_root: false,
        }
    }

    fn read(mut self) -> Result<Vec<TestCase>, ReportError> {
        loop {
            let before = usize::try_from(self.reader.buffer_position()).unwrap_or(usize::MAX);
            let event = match self.reader.read_event() {
                Ok(event) => event,
                Err(err) => {
                    let at = usize::try_from(self.reader.error_position()).unwrap_or(usize::MAX);
                    return Err(ReportError::new(
                        self.lines.line_at(at),
                        format!(
                            "malformed XML ({err}): the report is damaged or not XML; \
                             a job stopped mid-write leaves a truncated file"
                        ),
                    ));
                }
            };
            match event {
                Event::Start(element) => {
                    let line = self.lines.line_at(before);
                    self.open(&element, line, false)?;
                }
                Event::Empty(element) => {
                    let line = self.lines.line_at(before);
                    self.open(&element, line, true)?;
                }
                Event::End(_) => self.close(),
                Event::Text(text) => self.text(&text.xml10_content(), before)?,
                Event::CData(data) => self.text(&data.xml10_content(), before)?,
                Event::GeneralRef(reference) => {
                    let line = self.lines.line_at(before);
                    let resolved = resolve_reference(&reference, line)?;
                    self.text(&resolved, before)?;
                }
                // A DTD is skipped, never applied: its entities stay undefined
                // (billion-laughs and external entities have nothing to expand).
                Event::DocType(_) | Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
                Event::Eof => return self.end(),
            }
        }
    }

    fn open(
        &mut self,
        element: &BytesStart<'_>,
        line: usize,
        empty: bool,
    ) -> Result<(), ReportError> {
        let name = element.local_name().as_ref().to_owned();
        if self.stack.len() >= MAX_DEPTH {
            return Err(ReportError::new(
                line,
                format!(
                    "elements nest deeper than {MAX_DEPTH} levels at <{name}>: \
                     this is not a test report layerlock can read"
                ),
            ));
        }
        if self.stack.is_empty() {
            if name != "testsuites" && name != "testsuite" {
                return Err(ReportError::new(
                    line,
                    format!(
                        "the report's root element is <{name}>, not <testsuites> or \
                         <testsuite>: this is not a JUnit XML report"
                    ),
                ));
            }
            self.saw_root = true;
        }
        let in_case = matches!(
            self.stack.last(),
            Some(Open {
                frame: Frame::Case,
                ..
            })
        );
        let frame = match name.as_str() {
            "testsuites" => Frame::Suites,
            "testsuite" => {
                let [suite] = attributes(element, ["name"], line)?;
                Frame::Suite(suite)
            }
            "testcase" => {
                if let Some(case) = &self.case {
                    return Err(ReportError::new(
                        line,
                        format!(
                            "a <testcase> inside the <testcase> of line {}: \
                             the report is not well formed JUnit",
                            case.line
                        ),
                    ));
                }
                self.case = Some(self.start_case(element, line)?);
                Frame::Case
            }
            "failure" | "error" | "skipped" if in_case => {
                let kind = match name.as_str() {
                    "failure" => ResultKind::Failure,
                    "error" => ResultKind::Error,
                    _ => ResultKind::Skipped,
                };
                let [message, kind_attr] = attributes(element, ["message", "type"], line)?;
                self.child = Some(ResultChild {
                    kind,
                    xfail: kind == ResultKind::Skipped
                        && kind_attr.as_deref() == Some("pytest.xfail"),
                    message: message.as_deref().and_then(first_line),
                    text: FirstLine::default(),
                });
                Frame::Result
            }
            _ => Frame::Other,
        };
        self.stack.push(Open { frame, name, line });
        if empty {
            self.close();
        }
        Ok(())
    }

    fn start_case(
        &self,
        element: &BytesStart<'_>,
        line: usize,
    ) -> Result<CaseInProgress, ReportError> {
        let [classname, name, file] = attributes(element, ["classname", "name", "file"], line)?;
        let Some(name) = name else {
            return Err(ReportError::new(
                line,
                "a <testcase> without a name attribute: the report is not JUnit \
                 as pytest writes it",
            ));
        };
        let suite = self.stack.iter().rev().find_map(|open| match &open.frame {
            Frame::Suite(name) => Some(name.clone()),
            _ => None,
        });
        Ok(CaseInProgress {
            classname: classname.unwrap_or_default(),
            name,
            file,
            line,
            suite: suite.flatten(),
            failure: None,
            error: None,
            skipped: None,
        })
    }

    fn close(&mut self) {
        let Some(open) = self.stack.pop() else {
            return;
        };
        match open.frame {
            Frame::Result => {
                if let (Some(case), Some(child)) = (self.case.as_mut(), self.child.take()) {
                    case.add(child);
                }
            }
            Frame::Case => {
                if let Some(case) = self.case.take() {
                    self.cases.push(case.finish());
                }
            }
            Frame::Suites | Frame::Suite(_) | Frame::Other => {}
        }
    }

    fn text(&mut self, text: &str, at: usize) -> Result<(), ReportError> {
        if self.stack.is_empty() {
            if text
                .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
                .is_empty()
            {
                return Ok(());
            }
            return Err(ReportError::new(
                self.lines.line_at(at),
                "text outside the report's root element: this is not a JUnit XML report",
            ));
        }
        if let (
            Some(Open {
                frame: Frame::Result,
                ..
            }),
            Some(child),
        ) = (self.stack.last(), self.child.as_mut())
            && child.message.is_none()
        {
            child.text.push(text);
        }
        Ok(())
    }

    fn end(self) -> Result<Vec<TestCase>, ReportError> {
        if let Some(open) = self.stack.last() {
            return Err(ReportError::new(
                open.line,
                format!(
                    "the report ends inside the <{}> opened here: it is truncated \
                     (was the job stopped while pytest wrote it?)",
                    open.name
                ),
            ));
        }
        if !self.saw_root {
            return Err(ReportError::new(
                1,
                "no <testsuites> or <testsuite> element: this is not a JUnit XML report",
            ));
        }
        Ok(self.cases)
    }
}

/// The values of the named attributes (unescaped), after checking that every
/// attribute of the element is well formed.
fn attributes<const N: usize>(
    element: &BytesStart<'_>,
    names: [&str; N],
    line: usize,
) -> Result<[Option<String>; N], ReportError> {
    let mut values: [Option<String>; N] = std::array::from_fn(|_| None);
    for attribute in element.attributes() {
        let attribute = attribute.map_err(|err| {
            ReportError::new(
                line,
                format!("a malformed attribute ({err}): the report is damaged"),
            )
        })?;
        let key = attribute.key.local_name();
        let Some(index) = names.iter().position(|name| *name == key.as_ref()) else {
            continue;
        };
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|err| {
                ReportError::new(
                    line,
                    format!(
                        "the {} attribute cannot be read ({err}): only XML's predefined \
                         entities and character references are expanded",
                        names[index]
                    ),
                )
            })?;
        values[index] = Some(value.into_owned());
    }
    Ok(values)
}

/// `&amp;` and the other predefined entities, and `&#10;`-style character
/// references; any other entity (one a DTD would declare) is an error.
fn resolve_reference(
    reference: &quick_xml::events::BytesRef<'_>,
    line: usize,
) -> Result<String, ReportError> {
    if reference.is_char_ref() {
        return match reference.resolve_char_ref() {
            Ok(Some(ch)) => Ok(ch.to_string()),
            Ok(None) | Err(_) => Err(ReportError::new(
                line,
                format!(
                    "&{}; is not a valid character reference: the report is damaged",
                    &**reference
                ),
            )),
        };
    }
    match quick_xml::escape::resolve_xml_entity(reference) {
        Some(text) => Ok(text.to_owned()),
        None => Err(ReportError::new(
            line,
            format!(
                "&{}; is not one of XML's predefined entities, and layerlock expands \
                 no entities a DTD declares: this is not a report pytest wrote",
                &**reference
            ),
        )),
    }
}

/// 1-based line numbers of byte offsets asked for in (mostly) increasing order.
struct LineCounter<'a> {
    bytes: &'a [u8],
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            offset: 0,
            line: 1,
        }
    }

    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.bytes.len());
        if offset >= self.offset {
            self.line += newlines(self.bytes.get(self.offset..offset));
        } else {
            self.line -= newlines(self.bytes.get(offset..self.offset));
        }
        self.offset = offset;
        self.line
    }
}

fn newlines(bytes: Option<&[u8]>) -> usize {
    bytes.map_or(0, |bytes| bytes.iter().filter(|&&b| b == b'\n').count())
}

fn line_of(text: &str, offset: usize) -> usize {
    LineCounter::new(text).line_at(offset)
}

/// The first non-empty line of a message that may arrive in pieces, trimmed,
/// cut to [`MAX_MESSAGE_CHARS`] with `…` when longer. Holds at most that many
/// characters whatever the length of the text.
#[derive(Default)]
struct FirstLine {
    line: String,
    chars: usize,
    cut: bool,
    done: bool,
}

impl FirstLine {
    fn push(&mut self, piece: &str) {
        for ch in piece.chars() {
            if self.done {
                return;
            }
            match ch {
                '\n' | '\r' if self.chars > 0 => self.done = true,
                ch if self.chars == 0 && ch.is_whitespace() => {}
                ch if self.chars == MAX_MESSAGE_CHARS => {
                    // Trailing whitespace is trimmed, so only more text cuts.
                    if !ch.is_whitespace() {
                        self.cut = true;
                        self.done = true;
                    }
                }
                ch => {
                    self.line.push(ch);
                    self.chars += 1;
                }
            }
        }
    }

    fn finish(self) -> Option<String> {
        let mut line = self.line.trim_end();
        if self.cut {
            // Cut inside a word that may be a credential (a URL's user-info,
            // a token): none of it is kept, as what is left of it would no
            // longer be recognised and redacted.
            // Past the whitespace character, whatever its width (U+0085 is
            // two bytes).
            let start = line
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
                .map_or(0, |(at, c)| at + c.len_utf8());
            if could_be_secret(&line[start..]) {
                line = line[..start].trim_end();
            }
        }
        let line = redact_tokens(line);
        if line.is_empty() && !self.cut {
            None
        } else if self.cut {
            Some(format!("{line}…"))
        } else {
            Some(line)
        }
    }
}

/// Tokens in the forms GitHub, GitLab, Hugging Face, AWS, Slack, OpenAI
/// and Buildkite issue them.
static TOKEN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|bkua_[A-Za-z0-9]{30,})",
    )
    .unwrap_or_else(|_| unreachable!("a valid pattern"))
});

/// The start of such a token.
static TOKEN_START: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"gh[pousr]_|github_pat_|glpat-|hf_|AKIA|ASIA|xox[abposr]-|sk-|bkua_")
        .unwrap_or_else(|_| unreachable!("a valid pattern"))
});

/// A failure message with every token replaced by `[redacted]`: a test
/// that prints its environment must not put a credential in a report that
/// may become a pull-request comment.
pub fn redact_tokens(text: &str) -> String {
    TOKEN.replace_all(text, "[redacted]").into_owned()
}

/// May this word, cut short, be part of a URL with user-info or a token?
fn could_be_secret(word: &str) -> bool {
    word.contains(['@', ':', '=']) || TOKEN_START.is_match(word)
}

fn first_line(text: &str) -> Option<String> {
    let mut line = FirstLine::default();
    line.push(text);
    line.finish()
}

#[cfg(test)]
mod tests;
