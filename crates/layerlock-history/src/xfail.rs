//! Where the `xfail` marker that applies to one pytest node is written in its
//! test file, read statically: parametrize cases, function and class
//! decorators, class and module `pytestmark`.
//!
//! pytest looks for markers from the node outwards (the parametrize case, the
//! function, its classes from the innermost, the module), and so does
//! [`find_xfail`]. Markers are recognised loosely by name: any dotted name
//! ending in `xfail` (`pytest.mark.xfail`, `mark.xfail`, `xfail`). A marker
//! bound to a variable elsewhere (`slow_xfail = pytest.mark.xfail(...)`, then
//! `@slow_xfail`) is not followed.

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

/// The xfail marker that applies to `node` in this test file's source, most
/// specific first:
/// 1. a `pytest.param(..., marks=pytest.mark.xfail(...))` (or `marks=[...]`)
///    in a `@pytest.mark.parametrize` of the function, the one whose id is the
///    node's param id: an explicit `id="..."`, the `ids=[...]` entry at its
///    position, or the id pytest makes of plain literal values. When no id can
///    be told, the only such param, or the first;
/// 2. an xfail decorator on the function (the one nearest the `def` when
///    there are several, as pytest applies it first);
/// 3. an xfail decorator or `pytestmark` on its class, then enclosing classes;
/// 4. the module's `pytestmark = pytest.mark.xfail(...)` or
///    `pytestmark = [..., pytest.mark.xfail(...)]`.
///
/// Reads at most [`MAX_SOURCE_BYTES`] of `source`.
pub fn find_xfail(source: &str, node: &NodeId) -> Option<XfailMarker> {
    let module = Module::scan(lexer::bounded(source, MAX_SOURCE_BYTES));
    let function = module.functions.iter().rev().find(|function| {
        function.name == node.function
            && match (function.class, node.class.as_deref()) {
                (None, None) => true,
                (Some(class), Some(wanted)) => module.class_matches(class, wanted),
                _ => false,
            }
    });
    if let Some(function) = function {
        if let Some(param_id) = &node.param_id
            && let Some(marker) = param_marker(&function.decorators, param_id)
        {
            return Some(marker);
        }
        if let Some(marker) = function
            .decorators
            .iter()
            .rev()
            .find_map(|decorator| decorator_xfail(decorator, MarkerScope::Function))
        {
            return Some(marker);
        }
    }
    // A test inherited from a base class defined elsewhere is not found, but
    // its class (named by the node) still marks it.
    let mut class = match function {
        Some(function) => function.class,
        None => node.class.as_deref().and_then(|wanted| {
            (0..module.classes.len())
                .rev()
                .find(|&index| module.class_matches(index, wanted))
        }),
    };
    while let Some(index) = class {
        let info = module.classes.get(index)?;
        let found = info
            .decorators
            .iter()
            .rev()
            .find_map(|decorator| decorator_xfail(decorator, MarkerScope::Class))
            .or_else(|| {
                info.pytestmark
                    .as_deref()
                    .and_then(|value| xfail_in(value, MarkerScope::Class))
            });
        if found.is_some() {
            return found;
        }
        class = info.parent;
    }
    module
        .pytestmark
        .as_deref()
        .and_then(|value| xfail_in(value, MarkerScope::Module))
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

    /// Whether the class at `index`, with its enclosing classes, is `wanted`
    /// (`TestInner`, or `TestOuter.TestInner`).
    fn class_matches(&self, index: usize, wanted: &str) -> bool {
        let mut path = Vec::new();
        let mut next = Some(index);
        while let Some(index) = next {
            let Some(info) = self.classes.get(index) else {
                break;
            };
            path.push(info.name.as_str());
            next = info.parent;
        }
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

/// A decorator (tokens after `@`) whose dotted name ends in `xfail`.
fn decorator_xfail(decorator: &[Token], scope: MarkerScope) -> Option<XfailMarker> {
    let (parts, after) = dotted_head(decorator);
    if !parts.last()?.is_name("xfail") {
        return None;
    }
    marker_at(decorator, after - 1, scope)
}

/// The first dotted name ending in `xfail` anywhere in an expression
/// (`pytest.mark.xfail(...)`, `[mark.a, pytest.mark.xfail]`).
fn xfail_in(tokens: &[Token], scope: MarkerScope) -> Option<XfailMarker> {
    let at = tokens.iter().enumerate().position(|(index, token)| {
        token.is_name("xfail") && !tokens.get(index + 1).is_some_and(|t| t.is_op(b'.'))
    })?;
    marker_at(tokens, at, scope)
}

/// An xfail `pytest.param` of a parametrize, with the id it runs under when
/// that can be told.
struct XfailParam {
    id: Option<String>,
    marker: XfailMarker,
}

/// The xfail param of the function's parametrize decorators that produced
/// `param_id`.
fn param_marker(decorators: &[Vec<Token>], param_id: &str) -> Option<XfailMarker> {
    let params: Vec<XfailParam> = decorators.iter().flat_map(|d| xfail_params(d)).collect();
    if let Some(matched) = params.iter().find(|param| {
        param
            .id
            .as_deref()
            .is_some_and(|id| id_matches(param_id, id))
    }) {
        return Some(matched.marker.clone());
    }
    // No id to match by: the only xfail param when there is one, else the first.
    params
        .into_iter()
        .find(|param| param.id.is_none())
        .map(|param| param.marker)
}

/// Whether `id` is the node's param id, or one part of it (stacked
/// parametrize decorators join their ids with `-`).
fn id_matches(param_id: &str, id: &str) -> bool {
    param_id == id
        || param_id.starts_with(&format!("{id}-"))
        || param_id.ends_with(&format!("-{id}"))
        || param_id.contains(&format!("-{id}-"))
}

fn xfail_params(decorator: &[Token]) -> Vec<XfailParam> {
    let (parts, after) = dotted_head(decorator);
    if !parts.last().is_some_and(|p| p.is_name("parametrize")) {
        return Vec::new();
    }
    let arguments = call_arguments(decorator, after);
    let given = positional(&arguments);
    let Some(values) = keyword_value(&arguments, "argvalues").or(given.get(1).copied()) else {
        return Vec::new();
    };
    let ids = keyword_value(&arguments, "ids").and_then(literal_ids);
    let mut found = Vec::new();
    for (position, value) in list_items(values).into_iter().enumerate() {
        let (head, open) = dotted_head(value);
        if !head.last().is_some_and(|p| p.is_name("param")) {
            continue;
        }
        let param = call_arguments(value, open);
        let Some(marker) =
            keyword_value(&param, "marks").and_then(|marks| xfail_in(marks, MarkerScope::Param))
        else {
            continue;
        };
        let id = match keyword_value(&param, "id") {
            Some(id) => string_literal(id),
            None => ids
                .as_ref()
                .and_then(|ids| ids.get(position).cloned().flatten())
                .or_else(|| literal_id(&positional(&param))),
        };
        found.push(XfailParam { id, marker });
    }
    found
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

/// `ids=["a", None, "c"]`: each entry a string, or `None` where pytest makes
/// the id itself (then unknown here). Anything else (a function) gives none.
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

/// The id pytest gives a param of plain literals: the values joined by `-`
/// (`pytest.param(4, "cuda")` → `4-cuda`). `None` when any value is not a
/// literal whose text pytest keeps as written.
fn literal_id(values: &[&[Token]]) -> Option<String> {
    if values.is_empty() {
        return None;
    }
    let parts: Option<Vec<String>> = values
        .iter()
        .map(|value| match value {
            [token] => match &token.tok {
                Tok::Number(number) if is_plain_integer(number) => Some(number.clone()),
                Tok::Name(name) if matches!(name.as_str(), "True" | "False" | "None") => {
                    Some(name.clone())
                }
                // pytest escapes non-ASCII and uses `argname + index` for "".
                Tok::Str(Some(text))
                    if !text.is_empty()
                        && text.chars().all(|c| c.is_ascii_graphic() || c == ' ') =>
                {
                    Some(text.clone())
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    parts.map(|parts| parts.join("-"))
}

fn is_plain_integer(number: &str) -> bool {
    number == "0"
        || (!number.starts_with('0')
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests;
