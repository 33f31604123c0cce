//! Where the `xfail` marker that applies to one pytest node is written in its
//! test file, read statically: parametrize cases, function and class
//! decorators, class and module `pytestmark`.
//!
//! [`find_xfail`] looks in the order pytest evaluates xfail marks: the
//! function's decorators, the parametrize case's `marks=`, its classes from
//! the innermost, the module. Markers are recognised loosely by name: any
//! dotted name ending in `xfail` (`pytest.mark.xfail`, `mark.xfail`, `xfail`).
//! A marker bound to a variable elsewhere (`slow_xfail = pytest.mark.xfail(...)`,
//! then `@slow_xfail`) is not followed, nor are marks inherited from a base
//! class.

use std::collections::HashMap;

use serde::Serialize;

use crate::lexer::{self, Lexer, Tok, Token};

/// Source beyond this is not read.
pub const MAX_SOURCE_BYTES: usize = 4 * 1024 * 1024;

/// A pytest node, from a report's test name and class.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct NodeId {
    /// The class, innermost last when nested (`TestOuter.TestInner`), or
    /// `None` for a module-level test function.
    pub class: Option<String>,
    pub function: String,
    /// The parametrize id between the brackets: `a-1` of `test_x[a-1]`.
    pub param_id: Option<String>,
}

impl NodeId {
    /// `"test_x[a-1]"` → function `test_x`, param id `a-1`. `classname_tail`
    /// is what follows the module in the report's classname (`TestX`, or
    /// `TestOuter.TestInner`); a Buildkite scope tail such as
    /// `tests/test_x.py::TestX` is accepted too.
    pub fn parse(name: &str, classname_tail: Option<&str>) -> NodeId {
        let name = name.trim();
        let (function, param_id) = match name.find('[') {
            Some(open) if open > 0 && name.ends_with(']') => (
                name.get(..open).unwrap_or(name),
                name.get(open + 1..name.len() - 1),
            ),
            _ => (name, None),
        };
        let class = classname_tail
            .map(|tail| {
                let parts: Vec<&str> = tail.split("::").collect();
                let parts = match parts.split_first() {
                    Some((first, rest)) if first.ends_with(".py") => rest,
                    _ => &parts[..],
                };
                parts.join(".").trim_matches('.').trim().to_owned()
            })
            .filter(|class| !class.is_empty());
        NodeId {
            class,
            function: function.to_owned(),
            param_id: param_id.map(str::to_owned),
        }
    }
}

/// Where a marker applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkerScope {
    /// A decorator on the test function.
    Function,
    /// `marks=` of one `pytest.param` in a `parametrize`.
    Param,
    /// A decorator on a class of the test, or its `pytestmark`.
    Class,
    /// The module's `pytestmark`.
    Module,
}

/// An `xfail` marker found in a test file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct XfailMarker {
    /// 1-based line where the `xfail` text is.
    pub line: usize,
    pub scope: MarkerScope,
    /// `strict=` when written as a literal `True` or `False`.
    pub strict: Option<bool>,
    /// `reason=` when written as a string literal.
    pub reason: Option<String>,
}

/// The xfail marker that applies to `node` in this test file's source, in the
/// order pytest evaluates them (`evaluate_xfail_marks` takes the first xfail
/// of `item.iter_markers()`):
/// 1. an xfail decorator on the function, the one nearest the `def` first
///    (pytest stores decorator marks bottom-up);
/// 2. a `pytest.param(..., marks=pytest.mark.xfail(...))` (or `marks=[...]`)
///    of a `parametrize` on the function, its classes or the module, the one
///    whose id is the node's param id: an explicit `id="..."`, the `ids=[...]`
///    entry at its position, or the id pytest makes of plain literal values.
///    When no id can be told, the only such param, or the first. (pytest
///    appends param marks after the function's own: a function decorator wins
///    over a param's marker, checked with pytest 9.2);
/// 3. `pytestmark` in the body of its class, then the class's xfail
///    decorators, then the same for each enclosing class;
/// 4. the module's `pytestmark = pytest.mark.xfail(...)` or
///    `pytestmark = [..., pytest.mark.xfail(...)]`.
///
/// A conditional xfail (`xfail(sys.platform == "win32", ...)`) is returned as
/// found: conditions are not evaluated, where pytest would pass over a false
/// one to the next marker. Reads at most [`MAX_SOURCE_BYTES`] of `source`.
pub fn find_xfail(source: &str, node: &NodeId) -> Option<XfailMarker> {
    XfailIndex::new(source).find(node)
}

/// A test file scanned once, for the markers of many of its nodes: what
/// [`find_xfail`] does, without reading the file again for each.
pub struct XfailIndex {
    module: Module,
}

impl XfailIndex {
    /// Reads at most [`MAX_SOURCE_BYTES`] of `source`.
    pub fn new(source: &str) -> Self {
        Self {
            module: Module::scan(lexer::bounded(source, MAX_SOURCE_BYTES)),
        }
    }

    /// The marker that applies to `node`, as [`find_xfail`] finds it.
    pub fn find(&self, node: &NodeId) -> Option<XfailMarker> {
        find_in(&self.module, node)
    }
}

fn find_in(module: &Module, node: &NodeId) -> Option<XfailMarker> {
    let function = module.functions.iter().rev().find(|function| {
        function.name == node.function
            && match (function.class, node.class.as_deref()) {
                (None, None) => true,
                (Some(class), Some(wanted)) => module.class_matches(class, wanted),
                _ => false,
            }
    });
    // A test inherited from a base class defined elsewhere is not found, but
    // its class (named by the node) still marks it.
    let innermost = match function {
        Some(function) => function.class,
        None => node.class.as_deref().and_then(|wanted| {
            (0..module.classes.len())
                .rev()
                .find(|&index| module.class_matches(index, wanted))
        }),
    };
    let classes = module.class_chain(innermost);
    let function_marks: &[Vec<Token>] = function.map_or(&[], |f| &f.decorators);

    if let Some(marker) = function_marks
        .iter()
        .rev()
        .find_map(|mark| mark_xfail(mark, MarkerScope::Function))
    {
        return Some(marker);
    }
    if let Some(param_id) = &node.param_id {
        let mut marks: Vec<&[Token]> = function_marks.iter().map(Vec::as_slice).collect();
        for class in &classes {
            marks.extend(class.marks());
        }
        marks.extend(
            module
                .pytestmark
                .as_deref()
                .map(mark_items)
                .unwrap_or_default(),
        );
        if let Some(marker) = param_marker(&marks, param_id) {
            return Some(marker);
        }
    }
    for class in &classes {
        if let Some(marker) = class
            .marks()
            .into_iter()
            .find_map(|mark| mark_xfail(mark, MarkerScope::Class))
        {
            return Some(marker);
        }
    }
    module
        .pytestmark
        .as_deref()
        .map(mark_items)
        .unwrap_or_default()
        .into_iter()
        .find_map(|mark| mark_xfail(mark, MarkerScope::Module))
}

/// The classes and collectable test functions of a file, with their markers.
#[derive(Default)]
struct Module {
    classes: Vec<ClassInfo>,
    functions: Vec<FunctionInfo>,
    /// The value of the last module-level `pytestmark = ...`.
    pytestmark: Option<Vec<Token>>,
}

struct ClassInfo {
    name: String,
    parent: Option<usize>,
    /// Each decorator's tokens after the `@`.
    decorators: Vec<Vec<Token>>,
    pytestmark: Option<Vec<Token>>,
}

impl ClassInfo {
    /// The class's marks in pytest's order: its `pytestmark` list, then the
    /// decorators from the one nearest the `class` line.
    fn marks(&self) -> Vec<&[Token]> {
        let mut marks = self
            .pytestmark
            .as_deref()
            .map(mark_items)
            .unwrap_or_default();
        marks.extend(self.decorators.iter().rev().map(Vec::as_slice));
        marks
    }
}

struct FunctionInfo {
    name: String,
    /// The innermost enclosing class.
    class: Option<usize>,
    decorators: Vec<Vec<Token>>,
}

enum Scope {
    Class(usize),
    Function,
}

impl Module {
    fn scan(source: &str) -> Module {
        let mut module = Module::default();
        // Open blocks we track, with their header's indentation.
        let mut scopes: Vec<(usize, Scope)> = Vec::new();
        let mut decorators: Vec<Vec<Token>> = Vec::new();
        for line in Lexer::new(source) {
            while scopes
                .last()
                .is_some_and(|(indent, _)| line.indent <= *indent)
            {
                scopes.pop();
            }
            let tokens = &line.tokens;
            if tokens.first().is_some_and(|t| t.is_op(b'@')) {
                decorators.push(tokens[1..].to_vec());
                continue;
            }
            let in_function = scopes.iter().any(|(_, s)| matches!(s, Scope::Function));
            let class = match scopes.last() {
                Some((_, Scope::Class(index))) => Some(*index),
                _ => None,
            };
            let header = if tokens.first().is_some_and(|t| t.is_name("async")) {
                &tokens[1..]
            } else {
                &tokens[..]
            };
            let header_name = header.get(1).and_then(Token::name);
            match (header.first().and_then(Token::name), header_name) {
                (Some("def"), Some(name)) => {
                    // Functions nested in functions are not collected by pytest.
                    if !in_function {
                        module.functions.push(FunctionInfo {
                            name: name.to_owned(),
                            class,
                            decorators: std::mem::take(&mut decorators),
                        });
                    }
                    scopes.push((line.indent, Scope::Function));
                }
                (Some("class"), Some(name)) if !in_function => {
                    module.classes.push(ClassInfo {
                        name: name.to_owned(),
                        parent: class,
                        decorators: std::mem::take(&mut decorators),
                        pytestmark: None,
                    });
                    scopes.push((line.indent, Scope::Class(module.classes.len() - 1)));
                }
                _ => {
                    if let Some(value) = lexer::statements(tokens).find_map(pytestmark_value) {
                        match scopes.last() {
                            None => module.pytestmark = Some(value),
                            Some((_, Scope::Class(index))) => {
                                if let Some(info) = module.classes.get_mut(*index) {
                                    info.pytestmark = Some(value);
                                }
                            }
                            Some((_, Scope::Function)) => {}
                        }
                    }
                }
            }
            decorators.clear();
        }
        module
    }

    /// The class at `index` and its enclosing classes, innermost first.
    fn class_chain(&self, index: Option<usize>) -> Vec<&ClassInfo> {
        let mut chain = Vec::new();
        let mut next = index;
        while let Some(index) = next {
            let Some(info) = self.classes.get(index) else {
                break;
            };
            chain.push(info);
            next = info.parent;
        }
        chain
    }

    /// Whether the class at `index`, with its enclosing classes, is `wanted`
    /// (`TestInner`, or `TestOuter.TestInner`).
    fn class_matches(&self, index: usize, wanted: &str) -> bool {
        let path: Vec<&str> = self
            .class_chain(Some(index))
            .iter()
            .map(|info| info.name.as_str())
            .collect();
        wanted
            .rsplit('.')
            .zip(path.iter())
            .all(|(want, have)| want == *have)
            && wanted.split('.').count() <= path.len()
    }
}

/// The value of `pytestmark = ...` (or `pytestmark: T = ...`).
fn pytestmark_value(statement: &[Token]) -> Option<Vec<Token>> {
    if !statement.first()?.is_name("pytestmark") {
        return None;
    }
    let equals = statement.iter().position(|t| t.is_op(b'='))?;
    Some(statement[equals + 1..].to_vec())
}

/// A dotted name at the start of `tokens`: its parts and the index after it.
fn dotted_head(tokens: &[Token]) -> (Vec<&Token>, usize) {
    let mut parts = Vec::new();
    let mut index = 0;
    while let Some(token) = tokens.get(index) {
        if token.name().is_none() {
            break;
        }
        parts.push(token);
        index += 1;
        if tokens.get(index).is_some_and(|t| t.is_op(b'.')) {
            index += 1;
        } else {
            break;
        }
    }
    (parts, index)
}

/// The arguments of a call whose `(` is at `open`, split at top-level commas.
fn call_arguments(tokens: &[Token], open: usize) -> Vec<&[Token]> {
    if !tokens.get(open).is_some_and(|t| t.is_op(b'(')) {
        return Vec::new();
    }
    let close = closing(tokens, open);
    split_top_level(tokens.get(open + 1..close).unwrap_or_default())
}

/// The index of the bracket closing the one at `open`, or the end of
/// `tokens` when it never closes.
fn closing(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (index, token) in tokens.iter().enumerate().skip(open) {
        match token.tok {
            Tok::Op(b'(' | b'[' | b'{') => depth += 1,
            Tok::Op(b')' | b']' | b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return index;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// Items of a comma-separated list, split outside brackets.
fn split_top_level(tokens: &[Token]) -> Vec<&[Token]> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, token) in tokens.iter().enumerate() {
        match token.tok {
            Tok::Op(b'(' | b'[' | b'{') => depth += 1,
            Tok::Op(b')' | b']' | b'}') => depth = depth.saturating_sub(1),
            Tok::Op(b',') if depth == 0 => {
                items.push(&tokens[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    if start < tokens.len() {
        items.push(&tokens[start..]);
    }
    items.retain(|item| !item.is_empty());
    items
}

/// `name=value` → (`name`, value tokens).
fn keyword(item: &[Token]) -> Option<(&str, &[Token])> {
    match item {
        [name, equals, value @ ..] if equals.is_op(b'=') => Some((name.name()?, value)),
        _ => None,
    }
}

fn keyword_value<'t>(arguments: &[&'t [Token]], name: &str) -> Option<&'t [Token]> {
    arguments.iter().find_map(|item| {
        keyword(item)
            .filter(|(key, _)| *key == name)
            .map(|(_, v)| v)
    })
}

fn positional<'t>(arguments: &[&'t [Token]]) -> Vec<&'t [Token]> {
    arguments
        .iter()
        .filter(|item| keyword(item).is_none())
        .copied()
        .collect()
}

/// A string literal, adjacent literals joined; `None` for anything else.
fn string_literal(tokens: &[Token]) -> Option<String> {
    if tokens.is_empty() {
        return None;
    }
    let mut value = String::new();
    for token in tokens {
        match &token.tok {
            Tok::Str(Some(part)) => value.push_str(part),
            _ => return None,
        }
    }
    Some(value)
}

fn bool_literal(tokens: &[Token]) -> Option<bool> {
    match tokens {
        [token] if token.is_name("True") => Some(true),
        [token] if token.is_name("False") => Some(false),
        _ => None,
    }
}

/// The marker of an xfail call or reference whose `xfail` name is at
/// `tokens[at]`, reading `strict=` and `reason=` from its arguments.
fn marker_at(tokens: &[Token], at: usize, scope: MarkerScope) -> Option<XfailMarker> {
    let line = tokens.get(at)?.line;
    let arguments = call_arguments(tokens, at + 1);
    Some(XfailMarker {
        line,
        scope,
        strict: keyword_value(&arguments, "strict").and_then(bool_literal),
        reason: keyword_value(&arguments, "reason").and_then(string_literal),
    })
}

/// A mark expression (a decorator after its `@`, or an item of a
/// `pytestmark` or `marks=` list) whose dotted name ends in `xfail`.
fn mark_xfail(mark: &[Token], scope: MarkerScope) -> Option<XfailMarker> {
    let (parts, after) = dotted_head(mark);
    if !parts.last()?.is_name("xfail") {
        return None;
    }
    marker_at(mark, after - 1, scope)
}

/// The marks of a `pytestmark =` or `marks=` value: the items of a list or
/// tuple, or the value itself.
fn mark_items(value: &[Token]) -> Vec<&[Token]> {
    match list_items(value) {
        items if !items.is_empty() => items,
        _ => vec![value],
    }
}

/// One case of a `parametrize`: the id pytest gives it when that can be told
/// statically, and its xfail marker when it has one.
struct Case {
    id: Option<String>,
    xfail: Option<XfailMarker>,
}

/// The xfail param of the parametrize marks that produced `param_id`.
///
/// Each `parametrize` contributes one part of the id (stacked ones join
/// theirs with `-`). A case whose id is known and is (a part of) `param_id`
/// decides for its `parametrize`; when no case of a `parametrize` can be
/// matched and it has xfail params whose ids cannot be told, the first of
/// them is taken (the only one, usually).
fn param_marker(marks: &[&[Token]], param_id: &str) -> Option<XfailMarker> {
    let calls: Vec<Vec<Case>> = marks
        .iter()
        .filter_map(|mark| parametrize_cases(mark))
        .collect();
    if let Some(marker) = calls
        .iter()
        .filter_map(|cases| matching_case(cases, param_id))
        .find_map(|case| case.xfail.clone())
    {
        return Some(marker);
    }
    calls
        .iter()
        .filter(|cases| matching_case(cases, param_id).is_none())
        .flat_map(|cases| cases.iter())
        .find(|case| case.id.is_none() && case.xfail.is_some())
        .and_then(|case| case.xfail.clone())
}

/// The case of one `parametrize` whose known id is (a part of) `param_id`.
fn matching_case<'c>(cases: &'c [Case], param_id: &str) -> Option<&'c Case> {
    cases.iter().find(|case| {
        case.id
            .as_deref()
            .is_some_and(|id| id_matches(param_id, id))
    })
}

/// Whether `id` is the node's param id, or one part of it (stacked
/// parametrize decorators join their ids with `-`).
fn id_matches(param_id: &str, id: &str) -> bool {
    param_id == id
        || param_id.starts_with(&format!("{id}-"))
        || param_id.ends_with(&format!("-{id}"))
        || param_id.contains(&format!("-{id}-"))
}

/// The cases of a `parametrize(argnames, argvalues, ids=...)` mark, or
/// `None` when the mark is something else.
fn parametrize_cases(mark: &[Token]) -> Option<Vec<Case>> {
    let (parts, after) = dotted_head(mark);
    if !parts.last()?.is_name("parametrize") {
        return None;
    }
    let arguments = call_arguments(mark, after);
    let given = positional(&arguments);
    let argnames = keyword_value(&arguments, "argnames")
        .or(given.first().copied())
        .and_then(argnames);
    let values = keyword_value(&arguments, "argvalues").or(given.get(1).copied())?;
    // `ids=` as a list; a function (or anything else) leaves every id unknown.
    let ids = keyword_value(&arguments, "ids").map(literal_ids);
    let mut cases: Vec<Case> = list_items(values)
        .into_iter()
        .enumerate()
        .map(|(index, entry)| {
            let (head, open) = dotted_head(entry);
            let param = head
                .last()
                .is_some_and(|p| p.is_name("param"))
                .then(|| call_arguments(entry, open));
            let xfail = param.as_ref().and_then(|param| {
                keyword_value(param, "marks").and_then(|marks| {
                    mark_items(marks)
                        .into_iter()
                        .find_map(|mark| mark_xfail(mark, MarkerScope::Param))
                })
            });
            let explicit = param
                .as_ref()
                .and_then(|param| keyword_value(param, "id"))
                .map(string_literal);
            let id = match (explicit, &ids) {
                (Some(id), _) => id,
                (None, Some(None)) => None,
                (None, Some(Some(ids))) => match ids.get(index) {
                    Some(Some(id)) => Some(id.clone()),
                    _ => default_id(entry, param.as_deref(), argnames.as_deref(), index),
                },
                (None, None) => default_id(entry, param.as_deref(), argnames.as_deref(), index),
            };
            Case { id, xfail }
        })
        .collect();
    make_unique(&mut cases);
    Some(cases)
}

/// `"a, b"`, `("a", "b")` or `["a", "b"]` → `["a", "b"]`.
fn argnames(tokens: &[Token]) -> Option<Vec<String>> {
    let names: Vec<String> = match string_literal(tokens) {
        Some(names) => names
            .split(',')
            .map(|name| name.trim().to_owned())
            .collect(),
        None => list_items(tokens)
            .into_iter()
            .map(string_literal)
            .collect::<Option<Vec<String>>>()?,
    };
    let names: Vec<String> = names.into_iter().filter(|name| !name.is_empty()).collect();
    (!names.is_empty()).then_some(names)
}

/// `ids=["a", None, "c"]`: each entry a string, or `None` where pytest makes
/// the id itself. `None` when `ids` is not such a list.
fn literal_ids(tokens: &[Token]) -> Option<Vec<Option<String>>> {
    let items = list_items(tokens);
    if items.is_empty() {
        return None;
    }
    items
        .into_iter()
        .map(|item| match item {
            [token] if token.is_name("None") => Some(None),
            _ => string_literal(item).map(Some),
        })
        .collect()
}

/// The id pytest makes for a case from its values (`IdMaker._idval`): each
/// value's own text when it is a string, number, bool or `None`, else the
/// argument's name and the case's index (`x0`), joined by `-`. `None` when a
/// value may be an enum, class or function (named by pytest after itself) or
/// a literal whose text pytest would change.
fn default_id(
    entry: &[Token],
    param: Option<&[&[Token]]>,
    argnames: Option<&[String]>,
    index: usize,
) -> Option<String> {
    let argnames = argnames?;
    let values: Vec<&[Token]> = match param {
        Some(arguments) => positional(arguments),
        None if argnames.len() == 1 => vec![entry],
        None => list_items(entry),
    };
    if values.len() != argnames.len() {
        return None;
    }
    let parts: Option<Vec<String>> = values
        .iter()
        .zip(argnames)
        .map(|(value, argname)| match value_id(value) {
            ValueId::Text(text) => Some(text),
            ValueId::Positional => Some(format!("{argname}{index}")),
            ValueId::Unknown => None,
        })
        .collect();
    parts.map(|parts| parts.join("-"))
}

enum ValueId {
    Text(String),
    /// A value pytest names `argname + index`.
    Positional,
    Unknown,
}

fn value_id(value: &[Token]) -> ValueId {
    if let Some(text) = string_literal(value) {
        return ValueId::Text(ascii_escaped(&text));
    }
    match value {
        [token] => match &token.tok {
            Tok::Number(number) if is_plain_integer(number) => ValueId::Text(number.clone()),
            Tok::Name(name) if matches!(name.as_str(), "True" | "False" | "None") => {
                ValueId::Text(name.clone())
            }
            // A variable, an enum member, a class: pytest may name it by value.
            _ => ValueId::Unknown,
        },
        [minus, number] if minus.is_op(b'-') => match &number.tok {
            Tok::Number(digits) if is_plain_integer(digits) => ValueId::Text(format!("-{digits}")),
            _ => ValueId::Unknown,
        },
        _ => {
            let (head, after) = dotted_head(value);
            let opens = value
                .first()
                .is_some_and(|t| t.is_op(b'(') || t.is_op(b'[') || t.is_op(b'{'));
            let call = !head.is_empty() && value.get(after).is_some_and(|t| t.is_op(b'('));
            if after == value.len() || head.first().is_some_and(|t| t.is_name("lambda")) {
                // `torch.float16`, `Color.RED`, a lambda: named after themselves.
                ValueId::Unknown
            } else if opens || call {
                // Tuples, lists, dicts, objects made by a call.
                ValueId::Positional
            } else {
                // An expression (`1 + 2`, `"a" * 3`) has a value's text.
                ValueId::Unknown
            }
        }
    }
}

fn is_plain_integer(number: &str) -> bool {
    number == "0"
        || (!number.starts_with('0')
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit()))
}

/// Python's `str.encode("unicode_escape").decode("ascii")`, which pytest
/// applies to string ids.
fn ascii_escaped(text: &str) -> String {
    let mut escaped = String::new();
    for ch in text.chars() {
        match ch {
            '\\' => escaped.push_str("\\\\"),
            '\t' => escaped.push_str("\\t"),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            ' '..='~' => escaped.push(ch),
            ch if (ch as u32) < 0x100 => escaped.push_str(&format!("\\x{:02x}", ch as u32)),
            ch if (ch as u32) < 0x10000 => escaped.push_str(&format!("\\u{:04x}", ch as u32)),
            ch => escaped.push_str(&format!("\\U{:08x}", ch as u32)),
        }
    }
    escaped
}

/// pytest suffixes ids that repeat within one `parametrize` with their
/// occurrence (`a0`, `a1`; `1_0`, `1_1` after a digit). Done only when every
/// id is known, as an unknown one may be among the repeats.
fn make_unique(cases: &mut [Case]) {
    let Some(ids) = cases
        .iter()
        .map(|case| case.id.clone())
        .collect::<Option<Vec<String>>>()
    else {
        return;
    };
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for id in &ids {
        *counts.entry(id).or_default() += 1;
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (case, id) in cases.iter_mut().zip(&ids) {
        if counts.get(id.as_str()).is_none_or(|&count| count < 2) {
            continue;
        }
        let count = seen.entry(id).or_default();
        let separator = if id.ends_with(|c: char| c.is_ascii_digit()) {
            "_"
        } else {
            ""
        };
        case.id = Some(format!("{id}{separator}{count}"));
        *count += 1;
    }
}

/// The items of a list or tuple literal (`[a, b]`, `(a, b)`).
fn list_items(tokens: &[Token]) -> Vec<&[Token]> {
    match tokens.first() {
        Some(first) if first.is_op(b'[') || first.is_op(b'(') => {
            let close = closing(tokens, 0);
            if close + 1 != tokens.len() {
                return Vec::new();
            }
            split_top_level(tokens.get(1..close).unwrap_or_default())
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
