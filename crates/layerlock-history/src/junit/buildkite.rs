//! Buildkite Test Engine JSON, the upload format of its test collectors, read
//! into the same [`TestCase`]s as JUnit XML.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    LineCounter, Outcome, ReportError, TestCase, XPASS_STRICT_PREFIX, check_size, first_line,
    line_of,
};

/// Reads Buildkite Test Engine JSON, the upload format of its collectors: an
/// array of test results, or an upload body `{"data": [...]}`. Each result
/// needs `name` and `result`; `scope` becomes the classname, `file_name` (or
/// the path of `location`) the file, and the first line of `failure_reason`
/// (else of `failure_expanded`) the message. Other fields are ignored.
///
/// Buildkite's pytest collector writes `result` as `passed`, `failed` or
/// `skipped` only: an xfail is `skipped`, a setup error `failed`, and the
/// scope is the node id's path (`tests/test_x.py::TestX`), not a dotted name.
pub fn parse_buildkite_json(text: &str) -> Result<Vec<TestCase>, ReportError> {
    check_size(text.len())?;
    let body = text.trim_start_matches('\u{feff}');
    let records: Vec<&RawValue> = if body.trim_start().starts_with('{') {
        let upload: Upload<'_> = serde_json::from_str(body).map_err(json_error(body, 0))?;
        upload.data.ok_or_else(|| {
            ReportError::new(
                1,
                "a JSON object without \"data\": Buildkite Test Engine JSON is an array \
                 of test results, or an upload body {\"data\": [...]}",
            )
        })?
    } else {
        serde_json::from_str(body).map_err(json_error(body, 0))?
    };
    let mut lines = LineCounter::new(body);
    let base = body.as_ptr() as usize;
    records
        .iter()
        .enumerate()
        .map(|(index, raw)| {
            let offset = (raw.get().as_ptr() as usize).saturating_sub(base);
            let line = lines.line_at(offset);
            let record: Record =
                serde_json::from_str(raw.get()).map_err(json_error(raw.get(), line - 1))?;
            record.into_case(index, line)
        })
        .collect()
}

#[derive(Deserialize)]
struct Upload<'a> {
    #[serde(borrow)]
    data: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct Record {
    scope: Option<String>,
    name: Option<String>,
    location: Option<String>,
    file_name: Option<String>,
    result: Option<String>,
    failure_reason: Option<String>,
    failure_expanded: Option<serde_json::Value>,
}

impl Record {
    fn into_case(self, index: usize, line: usize) -> Result<TestCase, ReportError> {
        let Some(name) = self.name else {
            return Err(ReportError::new(
                line,
                format!(
                    "the test result at index {index} has no \"name\": every Buildkite \
                     Test Engine result names its test"
                ),
            ));
        };
        let message = self
            .failure_reason
            .as_deref()
            .and_then(first_line)
            .or_else(|| self.failure_expanded.as_ref().and_then(expanded_first_line));
        let outcome = match self.result.as_deref() {
            Some("passed") => Outcome::Passed,
            Some("failed") => {
                if message
                    .as_deref()
                    .is_some_and(|m| m.starts_with(XPASS_STRICT_PREFIX))
                {
                    Outcome::XPassStrict
                } else {
                    Outcome::Failed
                }
            }
            // The minitest collector says `pending` for a skip.
            Some("skipped" | "pending") => Outcome::Skipped,
            Some(other) => {
                return Err(ReportError::new(
                    line,
                    format!(
                        "the test result at index {index} ({name}) has result {other:?}, \
                         not passed, failed or skipped"
                    ),
                ));
            }
            None => {
                return Err(ReportError::new(
                    line,
                    format!(
                        "the test result at index {index} ({name}) has no \"result\": \
                         was the upload cut short?"
                    ),
                ));
            }
        };
        let file = self
            .file_name
            .filter(|file| !file.is_empty())
            .or_else(|| self.location.as_deref().map(location_path))
            .map(|file| file.strip_prefix("./").map(str::to_owned).unwrap_or(file))
            .filter(|file| !file.is_empty());
        Ok(TestCase {
            classname: self.scope.unwrap_or_default(),
            name,
            file,
            line,
            outcome,
            message,
            suite: None,
        })
    }
}

/// `./tests/foo.py:12` → `./tests/foo.py`.
fn location_path(location: &str) -> String {
    match location.rsplit_once(':') {
        Some((path, number))
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) =>
        {
            path.to_owned()
        }
        _ => location.to_owned(),
    }
}

/// The first line of `failure_expanded`, which collectors write as
/// `[{"expanded": [lines], "backtrace": [...]}]` (or `"expanded": "text"`).
fn expanded_first_line(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(text) => first_line(text),
        serde_json::Value::Array(items) => items.iter().find_map(expanded_first_line),
        serde_json::Value::Object(object) => object.get("expanded").and_then(expanded_first_line),
        _ => None,
    }
}

fn json_error(text: &str, line_offset: usize) -> impl Fn(serde_json::Error) -> ReportError + '_ {
    move |err| {
        let line = if err.line() == 0 {
            line_of(text, text.len()) + line_offset
        } else {
            err.line() + line_offset
        };
        // serde_json ends its message with the position, which is the
        // record's own for a record; the error carries the report's line.
        let full = err.to_string();
        let what = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(what, _)| what);
        ReportError::new(
            line,
            format!(
                "not Buildkite Test Engine JSON ({what}): expected an array of test results \
                 with \"name\" and \"result\", or {{\"data\": [...]}}"
            ),
        )
    }
}
