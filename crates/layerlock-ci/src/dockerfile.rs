//! Dockerfiles: `RUN` in shell form (with `\` continuations), exec form
//! (`["bash", "-c", "…"]`) and BuildKit heredocs (`RUN <<EOF … EOF`), with
//! `--mount`/`--network` flags skipped and `ARG`/`ENV` literals kept.

use std::collections::BTreeMap;

use crate::script::{Layout, ModelError, Phase, Script, quote};
use crate::yaml::Pos;

/// Every RUN instruction's script.
pub fn scripts(text: &str) -> Result<Vec<Script>, ModelError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut env = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let start_line = i + 1;
        let trimmed = lines[i].trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        // Join continuation lines; comment lines inside are dropped, as
        // Docker does.
        let mut logical = String::new();
        let mut j = i;
        loop {
            let line = lines[j];
            let body = line.trim_end();
            if j > i && line.trim_start().starts_with('#') {
                j += 1;
                if j >= lines.len() {
                    break;
                }
                continue;
            }
            if let Some(stripped) = body.strip_suffix('\\') {
                logical.push_str(stripped);
                logical.push('\n');
                j += 1;
                if j >= lines.len() {
                    break;
                }
            } else {
                logical.push_str(body);
                break;
            }
        }
        i = j + 1;
        let indent = lines[start_line - 1].len() - trimmed.len();
        let (instruction, rest) = logical
            .trim_start()
            .split_once(char::is_whitespace)
            .unwrap_or((logical.trim(), ""));
        let upper = instruction.to_ascii_uppercase();
        match upper.as_str() {
            "ENV" | "ARG" => {
                for part in rest.split_whitespace() {
                    if let Some((k, v)) = part.split_once('=') {
                        env.insert(k.to_string(), v.trim_matches('"').to_string());
                    }
                }
                continue;
            }
            "RUN" => {}
            _ => continue,
        }
        // Skip RUN flags (`--mount=…`, `--network=…`, `--security=…`).
        let mut body = rest.trim_start();
        while body.starts_with("--") {
            body = body
                .split_once(char::is_whitespace)
                .map_or("", |(_, r)| r)
                .trim_start();
        }
        // Where the body starts: continuation lines were joined with `\n`,
        // so count them.
        let consumed = &logical[..logical.len() - body.len()];
        let body_line = start_line + consumed.matches('\n').count();
        let column = match consumed.rfind('\n') {
            Some(nl) => consumed.len() - nl,
            None => indent + (logical.trim_start().len() - body.len()) + 1,
        };
        let mut push = |text: String, layout: Layout| {
            out.push(Script {
                text,
                layout,
                job: None,
                phase: Phase::ImageBuild,
                env: env.clone(),
                working_dir: None,
            });
        };
        if body.starts_with('[') {
            let argv: Vec<String> = serde_json::from_str(body).map_err(|e| ModelError {
                line: start_line,
                column,
                message: format!("RUN exec form is not a JSON array: {e}"),
            })?;
            let text = argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
            push(
                text,
                Layout::Folded {
                    start: Pos {
                        line: body_line,
                        column,
                    },
                },
            );
            continue;
        }
        if let Some(heredoc) = body.strip_prefix("<<") {
            // `RUN <<EOF` / `RUN <<-'EOF' bash`: the body lines are the script.
            let marker = heredoc
                .trim_start_matches('-')
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string();
            let mut script = String::new();
            let body_start = i + 1;
            while i < lines.len() && lines[i].trim() != marker {
                script.push_str(lines[i]);
                script.push('\n');
                i += 1;
            }
            i += 1;
            push(
                script,
                Layout::Lines {
                    start: Pos {
                        line: body_start,
                        column: 1,
                    },
                },
            );
            continue;
        }
        push(
            body.to_string(),
            Layout::Lines {
                start: Pos {
                    line: body_line,
                    column,
                },
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_forms() {
        let text = "FROM x\nARG V=1\nRUN --mount=type=cache,target=/c pip install a \\\n    b\n# c\nRUN [\"bash\", \"-c\", \"pip install c\"]\nRUN <<EOF\nuv pip install d\nEOF\n";
        let s = scripts(text).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].text, "pip install a \n    b");
        assert_eq!(
            s[0].layout.map(1, 1),
            Pos {
                line: 3,
                column: 34
            }
        );
        assert_eq!(s[1].text, "bash -c 'pip install c'");
        assert_eq!(s[2].text, "uv pip install d\n");
        assert_eq!(s[2].layout.map(1, 1), Pos { line: 8, column: 1 });
        assert_eq!(s[0].env.get("V").map(String::as_str), Some("1"));
    }
}
