//! A YAML tree that remembers where every node came from (line, column,
//! scalar style), built from yaml-rust2's event stream. Anchors, aliases and
//! `<<` merge keys are resolved, as CI systems do.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Where a node starts, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Scalar {
        value: String,
        pos: Pos,
        style: Style,
    },
    Seq {
        items: Vec<Node>,
        pos: Pos,
    },
    Map {
        entries: Vec<(Node, Node)>,
        pos: Pos,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct YamlError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Node {
    pub fn pos(&self) -> Pos {
        match self {
            Self::Scalar { pos, .. } | Self::Seq { pos, .. } | Self::Map { pos, .. } => *pos,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Self::Map { entries, .. } => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn entries(&self) -> &[(Node, Node)] {
        match self {
            Self::Map { entries, .. } => entries,
            _ => &[],
        }
    }

    pub fn items(&self) -> &[Node] {
        match self {
            Self::Seq { items, .. } => items,
            _ => &[],
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Self::Scalar { value, style: Style::Plain, .. } if value.is_empty() || value == "~" || value == "null")
    }
}

fn pos(mark: &Marker) -> Pos {
    Pos {
        line: mark.line(),
        column: mark.col() + 1,
    }
}

enum Frame {
    Seq(Vec<Node>, Pos, usize),
    /// Entries, the key waiting for its value, where the map starts, its
    /// anchor, and each plain key's line (for duplicates).
    Map(
        Vec<(Node, Node)>,
        Option<Node>,
        Pos,
        usize,
        HashMap<String, usize>,
    ),
}

/// Limits that keep hostile YAML from exhausting memory or stack: how much
/// aliases may copy in all, weighed as [`weight`] does ("billion laughs":
/// many nodes, or one long scalar many times), and how deep collections
/// may nest. Real pipelines copy kilobytes through aliases; 16 MiB of
/// copies is already seconds of shell parsing downstream.
const MAX_ALIAS_WEIGHT: usize = 16 << 20;
const MAX_DEPTH: usize = 256;

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Node, usize)>,
    docs: Vec<Node>,
    /// The weight copied through aliases so far.
    copied: usize,
    /// Set when a limit is hit; the rest of the stream is ignored.
    failed: Option<YamlError>,
}

/// What a copy of `node` costs: the bytes of its scalars, and 256 a node.
/// A node is 32 bytes in memory, but downstream each copied item can be one
/// more step or command to read as shell, which costs about as much as a
/// few hundred bytes of script: a list of 4,096 aliases of a list of 16
/// four-letter words is only 256 KiB of text but 65,536 commands.
const NODE_WEIGHT: usize = 256;

fn weight(node: &Node) -> usize {
    // Iterative, so that measuring cannot overflow the stack either.
    let mut count: usize = 0;
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        count = count.saturating_add(NODE_WEIGHT);
        match n {
            Node::Scalar { value, .. } => count = count.saturating_add(value.len()),
            Node::Seq { items, .. } => todo.extend(items.iter()),
            Node::Map { entries, .. } => {
                for (k, v) in entries {
                    todo.push(k);
                    todo.push(v);
                }
            }
        }
    }
    count
}

impl Builder {
    fn push_value(&mut self, node: Node, anchor: usize) {
        if anchor > 0 {
            let n = weight(&node);
            self.anchors.insert(anchor, (node.clone(), n));
        }
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some(Frame::Seq(items, _, _)) => items.push(node),
            Some(Frame::Map(entries, key, _, _, seen)) => match key.take() {
                None => {
                    // A key twice in one mapping: PyYAML and Ruby keep the
                    // last, GitHub refuses the file, and a reader that kept
                    // the first would check a `script:` the CI never runs.
                    if let Node::Scalar { value, pos, .. } = &node
                        && value != "<<"
                        && let Some(first) = seen.insert(value.clone(), pos.line)
                    {
                        self.failed = Some(YamlError {
                            line: pos.line,
                            column: pos.column,
                            message: format!(
                                "the key `{}` is given twice in one mapping (first on line {first}); CI systems disagree on which one counts, so remove one",
                                short_key(value)
                            ),
                        });
                    }
                    *key = Some(node);
                }
                Some(k) => entries.push((k, node)),
            },
        }
    }
}

/// A key as an error quotes it: its first 60 characters.
fn short_key(key: &str) -> String {
    match key.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &key[..at]),
        None => key.to_string(),
    }
}

/// `<<: *anchor` and `<<: [*a, *b]`: earlier keys win, as YAML 1.1 says.
fn merge(entries: Vec<(Node, Node)>) -> Vec<(Node, Node)> {
    if !entries.iter().any(|(k, _)| k.as_str() == Some("<<")) {
        return entries;
    }
    let mut own = Vec::new();
    let mut merged = Vec::new();
    for (key, value) in entries {
        if key.as_str() == Some("<<") {
            let sources: Vec<Node> = match value {
                Node::Seq { items, .. } => items,
                other => vec![other],
            };
            for source in sources {
                if let Node::Map { entries, .. } = source {
                    merged.extend(entries);
                }
            }
        } else {
            own.push((key, value));
        }
    }
    for (key, value) in merged {
        if !own.iter().any(|(k, _)| k.as_str() == key.as_str()) {
            own.push((key, value));
        }
    }
    own
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.failed.is_some() {
            return;
        }
        if matches!(event, Event::SequenceStart(..) | Event::MappingStart(..))
            && self.stack.len() >= MAX_DEPTH
        {
            self.failed = Some(YamlError {
                line: mark.line(),
                column: mark.col() + 1,
                message: format!("collections nest deeper than {MAX_DEPTH} levels"),
            });
            return;
        }
        match event {
            Event::Scalar(value, style, anchor, _) => {
                let style = match style {
                    TScalarStyle::SingleQuoted => Style::SingleQuoted,
                    TScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    TScalarStyle::Literal => Style::Literal,
                    TScalarStyle::Folded => Style::Folded,
                    _ => Style::Plain,
                };
                self.push_value(
                    Node::Scalar {
                        value,
                        pos: pos(&mark),
                        style,
                    },
                    anchor,
                );
            }
            Event::SequenceStart(anchor, _) => {
                self.stack.push(Frame::Seq(Vec::new(), pos(&mark), anchor))
            }
            Event::MappingStart(anchor, _) => {
                self.stack.push(Frame::Map(
                    Vec::new(),
                    None,
                    pos(&mark),
                    anchor,
                    HashMap::new(),
                ));
            }
            Event::SequenceEnd => {
                if let Some(Frame::Seq(items, pos, anchor)) = self.stack.pop() {
                    self.push_value(Node::Seq { items, pos }, anchor);
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map(entries, _, pos, anchor, _)) = self.stack.pop() {
                    self.push_value(
                        Node::Map {
                            entries: merge(entries),
                            pos,
                        },
                        anchor,
                    );
                }
            }
            Event::Alias(id) => {
                let (node, n) = self.anchors.get(&id).cloned().unwrap_or((
                    Node::Scalar {
                        value: String::new(),
                        pos: pos(&mark),
                        style: Style::Plain,
                    },
                    1,
                ));
                self.copied = self.copied.saturating_add(n);
                if self.copied > MAX_ALIAS_WEIGHT {
                    self.failed = Some(YamlError {
                        line: mark.line(),
                        column: mark.col() + 1,
                        message: format!(
                            "aliases expand to more than {} MiB of copies; refusing to expand further",
                            MAX_ALIAS_WEIGHT >> 20
                        ),
                    });
                    return;
                }
                self.push_value(node, 0);
            }
            _ => {}
        }
    }
}

/// Parse every document of `text`.
pub fn parse(text: &str) -> Result<Vec<Node>, YamlError> {
    match parse_strict(text) {
        // libyaml (and so PyYAML and the tools that read these files)
        // accepts a flow collection closed on a line of its own at the
        // indentation of its key; the YAML reader here does not. Read
        // such lines one column deeper: the same document, line for line.
        Err(e) if e.message.contains("indentation") => {
            let relaxed = indent_closing_brackets(text);
            if relaxed == text {
                return Err(e);
            }
            parse_strict(&relaxed).map_err(|_| e)
        }
        other => other,
    }
}

/// Lines that hold only the end of a flow collection (`]`, `},`), moved
/// one column right.
fn indent_closing_brackets(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let content = line.trim();
        if !content.is_empty() && content.chars().all(|c| matches!(c, ']' | '}' | ',' | ' ')) {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

fn parse_strict(text: &str) -> Result<Vec<Node>, YamlError> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    // Pull events one by one rather than through `Parser::load`, which
    // recurses once per nesting level; the builder keeps its own stack.
    loop {
        let (event, mark) = parser.next_token().map_err(|e| YamlError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
        if event == Event::StreamEnd {
            break;
        }
        builder.on_event(event, mark);
        if let Some(error) = builder.failed.take() {
            return Err(error);
        }
    }
    Ok(builder.docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_list_closed_at_its_keys_indentation_is_read() {
        let text =
            "hooks:\n  - id: x\n    args: [\n      \"--a\",\n      \"--b\"\n    ]\n  - id: y\n";
        assert!(parse_strict(text).is_err(), "the strict reader refuses it");
        let docs = parse(text).unwrap();
        let hooks = docs[0].get("hooks").unwrap().items();
        assert_eq!(hooks[0].get("args").unwrap().items().len(), 2);
        assert_eq!(hooks[1].get("id").unwrap().pos().line, 7);
    }

    #[test]
    fn positions_styles_and_merges() {
        let text = "base: &b\n  image: x\n  env: {A: 1}\nstep:\n  <<: *b\n  image: y\n  commands:\n    - echo hi\n    - |\n      pip install a\n      pip install b\n";
        let docs = parse(text).unwrap();
        let step = docs[0].get("step").unwrap();
        assert_eq!(step.get("image").unwrap().as_str(), Some("y"));
        assert!(step.get("env").is_some());
        let commands = step.get("commands").unwrap().items();
        assert_eq!(commands[0].pos(), Pos { line: 8, column: 7 });
        let Node::Scalar { style, pos, value } = &commands[1] else {
            panic!()
        };
        assert_eq!(*style, Style::Literal);
        // A block scalar's position is its first content line.
        assert_eq!(
            *pos,
            Pos {
                line: 10,
                column: 7
            }
        );
        assert_eq!(value, "pip install a\npip install b\n");
    }

    /// Few nodes, each a copy of one 1 MiB scalar: 4 GB if expanded.
    #[test]
    fn one_long_scalar_aliased_thousands_of_times_is_refused() {
        let long = format!(
            "a: &a {}\nb: [{}]\n",
            "x".repeat(1 << 20),
            vec!["*a"; 4000].join(", ")
        );
        let err = parse(&long).unwrap_err();
        assert!(err.message.contains("aliases expand"), "{err:?}");
    }

    /// Tiny scalars, many nodes: each copy is a command to read as shell.
    #[test]
    fn many_small_nodes_through_aliases_are_refused() {
        let mut many = String::from("a: &a [x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x]\n");
        many.push_str(&format!("c: [{}]\n", vec!["*a"; 4096].join(", ")));
        let err = parse(&many).unwrap_err();
        assert!(err.message.contains("aliases expand"), "{err:?}");
        // A pipeline that copies a block of twenty nodes into 200 steps reads.
        let mut real = String::from("base: &base {");
        real.push_str(
            &(0..10)
                .map(|i| format!("k{i}: v{i}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
        real.push_str("}\nsteps:\n");
        for i in 0..200 {
            real.push_str(&format!("  - {{<<: *base, label: s{i}}}\n"));
        }
        assert!(parse(&real).is_ok());
    }

    #[test]
    fn hostile_documents_are_refused() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for i in 0..9 {
            bomb.push_str(&format!(
                "b{i}: &b{i} [{p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}]\n",
                p = if i == 0 {
                    "*a".to_string()
                } else {
                    format!("*b{}", i - 1)
                }
            ));
        }
        assert!(parse(&bomb).unwrap_err().message.contains("aliases expand"));
        let mut deep = String::new();
        for i in 0..5000 {
            deep.push_str(&" ".repeat(i));
            deep.push_str("k:\n");
        }
        deep.push_str(&" ".repeat(5000));
        deep.push_str("v: 1\n");
        assert!(parse(&deep).unwrap_err().message.contains("nest deeper"));
    }

    #[test]
    fn a_key_given_twice_is_an_error_not_the_first_one_read() {
        let text = "job:\n  script: [echo ok]\n  stage: test\n  script: [pip install x]\n";
        let err = parse(text).unwrap_err();
        assert_eq!((err.line, err.column), (4, 3), "{}", err.message);
        assert!(
            err.message.contains("`script` is given twice"),
            "{}",
            err.message
        );
        assert!(err.message.contains("first on line 2"), "{}", err.message);
        // Keys in different mappings, and merge keys, are not duplicates.
        let fine =
            "base: &b {script: x}\na: {<<: *b, script: y}\nb: {script: z}\nc: [{k: 1}, {k: 2}]\n";
        parse(fine).unwrap();
    }

    #[test]
    fn errors_carry_positions() {
        let err = parse("a: [1, 2\nb: c\n").unwrap_err();
        assert!(err.line >= 1, "{err}");
    }
}
