//! Files that name the images a build makes: `docker buildx bake` files
//! (HCL or JSON) and Compose files (`docker compose build`). Each gives the
//! Dockerfile and context of its targets or services; the walker reads those
//! Dockerfiles as the images CI builds. Values that use a variable are taken
//! from the file's `variable` defaults, else they are not known.

use std::collections::{BTreeMap, BTreeSet};

use crate::ModelError;
use crate::yaml::{self, Node};

/// One target (bake) or service (Compose) that builds an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    /// The Dockerfile, relative to the context; `None` when it is computed.
    pub dockerfile: Option<String>,
    /// The build context, relative to the file; `None` when it is computed.
    pub context: Option<String>,
    /// The Dockerfile stage it builds (`target =` in bake, `build:
    /// target:` in Compose) as written; `None` builds the last stage.
    pub stage: Option<String>,
    /// The bake targets it `inherits` from, in order.
    pub inherits: Vec<String>,
    /// Where the target is defined.
    pub line: usize,
}

/// A bake or Compose file: its targets and groups.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BuildFile {
    pub targets: Vec<Target>,
    groups: BTreeMap<String, Vec<String>>,
}

/// Groups nest at most this deep (a group naming itself ends there).
const MAX_DEPTH: usize = 16;

impl BuildFile {
    /// Read a file by its name: `.hcl` as HCL, `.json` as JSON, anything
    /// else as a Compose file.
    pub fn read(name: &str, text: &str) -> Result<Self, ModelError> {
        if name.ends_with(".hcl") {
            Ok(hcl(text))
        } else if name.ends_with(".json") {
            json(text)
        } else {
            compose(text)
        }
    }

    /// The targets `names` build, through groups; none named is the
    /// `default` group or target, else every target (Compose builds every
    /// service). A name the file does not define selects nothing.
    pub fn select(&self, names: &[String]) -> Vec<&Target> {
        let wanted: Vec<String> = if names.is_empty() {
            if self.groups.contains_key("default") || self.target("default").is_some() {
                vec!["default".to_string()]
            } else {
                return self.targets.iter().collect();
            }
        } else {
            names.to_vec()
        };
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for name in &wanted {
            self.expand(name, 0, &mut seen, &mut out);
        }
        out
    }

    fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }

    fn expand<'a>(
        &'a self,
        name: &str,
        depth: usize,
        seen: &mut BTreeSet<String>,
        out: &mut Vec<&'a Target>,
    ) {
        if depth > MAX_DEPTH || !seen.insert(name.to_string()) {
            return;
        }
        if let Some(members) = self.groups.get(name) {
            for member in members {
                self.expand(member, depth + 1, seen, out);
            }
        } else if let Some(target) = self.target(name) {
            out.push(target);
        }
    }
}

/// A Compose file: `services: NAME: build:` as a context string or as
/// `context:` and `dockerfile:`.
fn compose(text: &str) -> Result<BuildFile, ModelError> {
    let docs = yaml::parse(text)?;
    let mut file = BuildFile::default();
    for doc in &docs {
        let Some(services) = doc.get("services") else {
            continue;
        };
        for (name, service) in services.entries() {
            let (Some(name), Some(build)) = (name.as_str(), service.get("build")) else {
                continue;
            };
            let field = |key: &str| -> Option<String> { known(build.get(key)?.as_str()?) };
            let (context, dockerfile) = match build {
                Node::Scalar { value, .. } => (known(value), Some("Dockerfile".to_string())),
                _ => (
                    build
                        .get("context")
                        .map_or(Some(".".to_string()), |_| field("context")),
                    build
                        .get("dockerfile")
                        .map_or(Some("Dockerfile".to_string()), |_| field("dockerfile")),
                ),
            };
            let stage = build
                .get("target")
                .and_then(|t| t.as_str())
                .map(str::to_string);
            file.targets.push(Target {
                name: name.to_string(),
                dockerfile,
                context,
                stage,
                inherits: Vec::new(),
                line: build.pos().line,
            });
        }
    }
    Ok(file)
}

/// A value with no `${…}` of Compose's: interpolation is known only at run
/// time.
fn known(value: &str) -> Option<String> {
    (!value.contains('$')).then(|| value.to_string())
}

/// A bake file in JSON: `{"target": {NAME: {…}}, "group": {NAME: {"targets": […]}}}`.
fn json(text: &str) -> Result<BuildFile, ModelError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ModelError {
        line: e.line(),
        column: e.column(),
        message: format!("cannot parse JSON: {e}"),
    })?;
    let mut file = BuildFile::default();
    let vars: BTreeMap<String, String> = value
        .get("variable")
        .and_then(|v| v.as_object())
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.get("default")?.as_str()?.to_string())))
        .collect();
    if let Some(targets) = value.get("target").and_then(|t| t.as_object()) {
        for (name, body) in targets {
            let field = |key: &str| body.get(key).and_then(|v| v.as_str());
            file.targets.push(Target {
                name: name.clone(),
                dockerfile: field("dockerfile")
                    .map_or(Some("Dockerfile".into()), |v| interpolate(v, &vars)),
                context: field("context").map_or(Some(".".into()), |v| interpolate(v, &vars)),
                stage: field("target")
                    .map(|v| interpolate(v, &vars).unwrap_or_else(|| v.to_string())),
                inherits: body
                    .get("inherits")
                    .and_then(|t| t.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect(),
                line: 1,
            });
        }
    }
    if let Some(groups) = value.get("group").and_then(|g| g.as_object()) {
        for (name, body) in groups {
            let members = body
                .get("targets")
                .and_then(|t| t.as_array())
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            file.groups.insert(name.clone(), members);
        }
    }
    Ok(file)
}

/// `${NAME}` from the file's variable defaults; `None` when one is not
/// known (an expression, a variable without a default).
fn interpolate(value: &str, vars: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}')? + start;
        out.push_str(vars.get(rest[start + 2..end].trim())?);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// One HCL block read at the top level: `target "name" { … }`, with its
/// string and string-list attributes.
struct Block {
    kind: String,
    label: Option<String>,
    line: usize,
    strings: BTreeMap<String, String>,
    lists: BTreeMap<String, Vec<String>>,
    /// Attributes whose value is an expression.
    computed: BTreeSet<String>,
}

/// A bake file in HCL. Tolerant: what is not a top-level block's string or
/// list of strings is skipped (expressions, functions, nested blocks).
fn hcl(text: &str) -> BuildFile {
    let blocks = hcl_blocks(text);
    let vars: BTreeMap<String, String> = blocks
        .iter()
        .filter(|b| b.kind == "variable")
        .filter_map(|b| Some((b.label.clone()?, b.strings.get("default")?.clone())))
        .collect();
    let targets: BTreeMap<&str, &Block> = blocks
        .iter()
        .filter(|b| b.kind == "target")
        .filter_map(|b| Some((b.label.as_deref()?, b)))
        .collect();
    let mut file = BuildFile::default();
    for block in &blocks {
        let Some(name) = block.label.clone() else {
            continue;
        };
        match block.kind.as_str() {
            "target" => {
                let field = |key: &str, default: &str| match attribute(block, key, &targets, 0) {
                    Some(Value::Str(v)) => interpolate(&v, &vars),
                    Some(_) => None,
                    None => Some(default.to_string()),
                };
                file.targets.push(Target {
                    name,
                    dockerfile: field("dockerfile", "Dockerfile"),
                    context: field("context", "."),
                    stage: match attribute(block, "target", &targets, 0) {
                        Some(Value::Str(v)) => Some(interpolate(&v, &vars).unwrap_or(v)),
                        Some(_) => Some("${…}".to_string()),
                        None => None,
                    },
                    inherits: block.lists.get("inherits").cloned().unwrap_or_default(),
                    line: block.line,
                });
            }
            "group" => {
                let members = block.lists.get("targets").cloned().unwrap_or_default();
                file.groups.insert(name, members);
            }
            _ => {}
        }
    }
    file
}

/// A target's attribute: its own, else that of the last target it
/// `inherits` that has one. `None`: unset.
fn attribute(
    block: &Block,
    key: &str,
    targets: &BTreeMap<&str, &Block>,
    depth: usize,
) -> Option<Value> {
    if let Some(v) = block.strings.get(key) {
        return Some(Value::Str(v.clone()));
    }
    if block.lists.contains_key(key) || block.computed.contains(key) {
        return Some(Value::Computed);
    }
    if depth > MAX_DEPTH {
        return Some(Value::Computed);
    }
    let parents = block.lists.get("inherits")?;
    parents
        .iter()
        .rev()
        .filter_map(|p| targets.get(p.as_str()))
        .find_map(|parent| attribute(parent, key, targets, depth + 1))
}

/// Tokens of HCL text, with their lines.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Punct(char),
    /// Anything else (a number, an operator): part of an expression.
    Other,
}

fn tokens(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '#' => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            '"' => {
                let start = line;
                let mut value = String::new();
                i += 1;
                while let Some(&c) = chars.get(i) {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(&next) = chars.get(i + 1) {
                                value.push(match next {
                                    'n' => '\n',
                                    't' => '\t',
                                    other => other,
                                });
                            }
                            i += 1;
                        }
                        '\n' => {
                            line += 1;
                            value.push(c);
                        }
                        c => value.push(c),
                    }
                    i += 1;
                }
                i += 1;
                out.push((Token::Str(value), start));
            }
            '{' | '}' | '[' | ']' | '=' | ',' | '(' | ')' => {
                out.push((Token::Punct(c), line));
                i += 1;
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
                {
                    i += 1;
                }
                out.push((Token::Ident(chars[start..i].iter().collect()), line));
            }
            _ => {
                out.push((Token::Other, line));
                i += 1;
            }
        }
    }
    out
}

fn hcl_blocks(text: &str) -> Vec<Block> {
    let tokens = tokens(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (Token::Ident(kind), line) = &tokens[i] else {
            i += 1;
            continue;
        };
        // `kind "label" {` (or `kind label {`); an attribute at the top is
        // skipped.
        let mut j = i + 1;
        let mut label = None;
        while let Some((Token::Str(s) | Token::Ident(s), _)) = tokens.get(j) {
            label.get_or_insert_with(|| s.clone());
            j += 1;
        }
        if tokens.get(j).map(|t| &t.0) != Some(&Token::Punct('{')) {
            i = j.max(i + 1);
            continue;
        }
        let (block, end) = block_body(&tokens, j + 1, kind, label, *line);
        out.push(block);
        i = end;
    }
    out
}

/// A block's attributes from just after its `{` to its `}`; returns the
/// block and the index after the `}`.
fn block_body(
    tokens: &[(Token, usize)],
    mut i: usize,
    kind: &str,
    label: Option<String>,
    line: usize,
) -> (Block, usize) {
    let mut block = Block {
        kind: kind.to_string(),
        label,
        line,
        strings: BTreeMap::new(),
        lists: BTreeMap::new(),
        computed: BTreeSet::new(),
    };
    while let Some((token, _)) = tokens.get(i) {
        match token {
            Token::Punct('}') => return (block, i + 1),
            Token::Ident(name) if tokens.get(i + 1).map(|t| &t.0) == Some(&Token::Punct('=')) => {
                let (value_end, value) = expression(tokens, i + 2);
                match value {
                    Value::Str(s) => {
                        block.strings.insert(name.clone(), s);
                    }
                    Value::List(items) => {
                        block.lists.insert(name.clone(), items);
                    }
                    Value::Computed => {
                        block.strings.remove(name);
                        block.computed.insert(name.clone());
                    }
                }
                i = value_end;
            }
            Token::Punct('{') => i = skip_balanced(tokens, i),
            _ => i += 1,
        }
    }
    (block, i)
}

enum Value {
    Str(String),
    List(Vec<String>),
    Computed,
}

/// An attribute's value starting at `i`: a string, a list of strings, or
/// anything else (computed). Returns the index after it.
fn expression(tokens: &[(Token, usize)], i: usize) -> (usize, Value) {
    let line = tokens.get(i).map_or(0, |t| t.1);
    match tokens.get(i).map(|t| &t.0) {
        Some(Token::Str(s)) if ends_value(tokens, i + 1, line) => (i + 1, Value::Str(s.clone())),
        Some(Token::Punct('[')) => {
            let end = skip_balanced(tokens, i);
            let inner = &tokens[i + 1..end.saturating_sub(1).max(i + 1)];
            let plain = inner
                .iter()
                .all(|(t, _)| matches!(t, Token::Str(_) | Token::Punct(',')));
            if plain {
                let items = inner
                    .iter()
                    .filter_map(|(t, _)| match t {
                        Token::Str(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect();
                (end, Value::List(items))
            } else {
                (end, Value::Computed)
            }
        }
        _ => {
            // To the end of the line, past any brackets it opens.
            let mut j = i;
            while let Some((t, l)) = tokens.get(j) {
                if *l != line {
                    break;
                }
                j = match t {
                    Token::Punct('[' | '(' | '{') => skip_balanced(tokens, j),
                    Token::Punct('}') => break,
                    _ => j + 1,
                };
            }
            (j.max(i + 1), Value::Computed)
        }
    }
}

/// A string value ends where the next token is on a later line or closes
/// the block.
fn ends_value(tokens: &[(Token, usize)], i: usize, line: usize) -> bool {
    match tokens.get(i) {
        None => true,
        Some((Token::Punct('}' | ','), _)) => true,
        Some((_, l)) => *l != line,
    }
}

/// The index after the bracket that closes the one at `i`.
fn skip_balanced(tokens: &[(Token, usize)], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some((t, _)) = tokens.get(i) {
        match t {
            Token::Punct('[' | '(' | '{') => depth += 1,
            Token::Punct(']' | ')' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(targets: &[&Target]) -> Vec<(String, Option<String>, Option<String>)> {
        targets
            .iter()
            .map(|t| (t.name.clone(), t.context.clone(), t.dockerfile.clone()))
            .collect()
    }

    #[test]
    fn hcl_targets_groups_and_variable_defaults() {
        let text = r#"
variable "FLAVOUR" {
  default = "cuda"
}
// the groups
group "default" {
  targets = ["app", "tests"]
}
target "app" {
  context = "docker"
  dockerfile = "Dockerfile.${FLAVOUR}"
  tags = ["x:latest"]
}
target "tests" {
  inherits = ["app"]
  dockerfile = "ci/tests.Dockerfile" # comment
  args = { A = "1" }
}
target "other" {
  dockerfile = lower("X")
}
"#;
        let file = BuildFile::read("docker-bake.hcl", text).unwrap();
        assert_eq!(
            names(&file.select(&[])),
            [
                (
                    "app".into(),
                    Some("docker".into()),
                    Some("Dockerfile.cuda".into())
                ),
                (
                    "tests".into(),
                    Some("docker".into()),
                    Some("ci/tests.Dockerfile".into())
                ),
            ]
        );
        assert_eq!(file.targets[0].line, 9);
        assert_eq!(
            names(&file.select(&["other".into()])),
            [("other".into(), Some(".".into()), None)]
        );
        assert!(file.select(&["missing".into()]).is_empty());
    }

    #[test]
    fn json_bake_and_compose_files() {
        let json = r#"{"group": {"default": {"targets": ["a"]}},
            "target": {"a": {"dockerfile": "a.Dockerfile"}, "b": {}}}"#;
        let file = BuildFile::read("docker-bake.json", json).unwrap();
        assert_eq!(
            names(&file.select(&[])),
            [("a".into(), Some(".".into()), Some("a.Dockerfile".into()))]
        );
        let compose = "services:\n  web:\n    build: ./web\n  worker:\n    build:\n      context: .\n      dockerfile: ${DOCKERFILE}\n  db:\n    image: postgres\n";
        let file = BuildFile::read("compose.yaml", compose).unwrap();
        assert_eq!(
            names(&file.select(&[])),
            [
                (
                    "web".into(),
                    Some("./web".into()),
                    Some("Dockerfile".into())
                ),
                ("worker".into(), Some(".".into()), None),
            ]
        );
        assert!(BuildFile::read("docker-bake.json", "{").is_err());
    }

    #[test]
    fn hostile_hcl_ends() {
        for text in [
            "target \"a\" {",
            "target {{{{",
            "\"",
            "/*",
            "a = [[[[",
            "target \"x\" { a = }",
        ] {
            let _ = BuildFile::read("x.hcl", text);
        }
    }
}
