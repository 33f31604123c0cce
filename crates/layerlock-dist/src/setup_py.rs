//! What a `setup.py`'s one `setup()` call declares about dependencies,
//! read from its tokens ([`crate::python`]) and never run: keyword values
//! that are literals, or names bound once at module level to literals, are
//! what they say; anything else is computed. Each needed field is judged
//! on its own, and `extras_require` per extra, so code that computes an
//! extra nobody asks for leaves the rest known.

use std::collections::{HashMap, HashSet};

use crate::python::{self, Kind, MAX_NESTING, Tokens};

/// The keywords of `setup()` that say what a project needs.
pub(crate) const NEEDED: [&str; 3] = ["install_requires", "extras_require", "python_requires"];

/// Words in a `setup.py` that let it pass `setup()` what the file does
/// not spell out, or call it twice: with any of them called, it is code to
/// run, unless the call spells the needed keywords itself.
const RUNS_CODE: [&str; 8] = [
    "exec",
    "eval",
    "compile",
    "__import__",
    "import_module",
    "run_path",
    "run_module",
    "read_configuration",
];

/// Of [`RUNS_CODE`], the builtins: `re.compile(…)` is not `compile(…)`.
const BUILTINS: [&str; 4] = ["exec", "eval", "compile", "__import__"];

/// Names through which code can rebind a module's globals without naming
/// them: with any of them in the file, no name is taken for its binding.
const SCOPE_WRITERS: [&str; 16] = [
    "__globals__",
    "f_globals",
    "f_locals",
    "f_back",
    "_getframe",
    "exec",
    "eval",
    "globals",
    "locals",
    "vars",
    "setattr",
    "delattr",
    "__dict__",
    "__main__",
    "__builtins__",
    "modules",
];

/// Most values the evaluator builds (names bound to lists of names could
/// otherwise grow a value exponentially), and most bytes of strings.
const BUDGET: usize = 100_000;
const STRING_BUDGET: usize = 4 << 20;

/// What the `setup()` call declares.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Declared {
    pub python_requires: Option<String>,
    pub install_requires: Vec<String>,
    /// Each extra whose requirements are literals.
    pub extras: Vec<(String, Vec<String>)>,
    /// Each extra whose requirements are computed, with the code that
    /// computes them: only a request for it needs refusing.
    pub computed_extras: Vec<(String, String)>,
}

/// What `setup.py` declares, or why it cannot be read without running it.
pub(crate) fn read(py: &str) -> Result<Declared, String> {
    let call = Call::locate(py)?;
    let bindings = Bindings::of(&call);
    let splats = call.splatted(&bindings)?;
    call.refuse_indirect(&splats)?;
    call.refuse_set_elsewhere(&splats)?;
    let mut eval = Eval::new(&call.tokens, &bindings);
    let mut given: Vec<(String, Value)> = Vec::new();
    for (keyword, at) in call.keywords()? {
        if NEEDED.contains(&keyword) {
            let (value, end) = eval.expr(at, 0);
            let value = match end == call.close || call.tokens.op(end, ",") {
                true => value,
                false => Value::Computed(call.snippet(at, end)),
            };
            given.push((keyword.to_string(), value));
        }
    }
    for (_, entries) in splats {
        for (key, value) in entries {
            if let Value::Str(key) = key
                && NEEDED.contains(&key.as_str())
            {
                given.push((key, value));
            }
        }
    }
    let mut declared = Declared::default();
    for keyword in NEEDED {
        let mut named = given.iter().filter(|(k, _)| k == keyword);
        let (Some((_, value)), None) = (named.next(), named.next()) else {
            if given.iter().any(|(k, _)| k == keyword) {
                return Err(format!("its setup.py names `{keyword}` more than once"));
            }
            continue;
        };
        judge(keyword, value.clone(), &mut declared)?;
    }
    Ok(declared)
}

/// Why `setup.py` is code to run even where `setup.cfg` says the rest:
/// no readable `setup()` call, `*`/`**` arguments, or code that runs other
/// code when the call does not spell the needed keywords.
pub(crate) fn indirect(py: &str) -> Option<String> {
    let call = match Call::locate(py) {
        Ok(call) => call,
        Err(why) => return Some(why),
    };
    let bindings = Bindings::of(&call);
    call.splatted(&bindings)
        .and_then(|splats| call.refuse_indirect(&splats))
        .err()
}

/// A value as far as it is known without running anything.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Str(String),
    /// A list or a tuple.
    Seq(Vec<Value>),
    Dict(Vec<(Value, Value)>),
    /// A literal no needed field takes: a number, bytes, `True`, `None`.
    Other,
    /// What only running the file could say: the code that says it.
    Computed(String),
}

/// Why a value is not a list of requirements.
enum NotRequirements {
    Computed(String),
    Wrong,
}

/// A value as requirement strings: a list or tuple of strings, or one
/// string of lines (setuptools reads both).
fn requirements(value: Value) -> Result<Vec<String>, NotRequirements> {
    let items = match value {
        Value::Str(text) => return Ok(requirement_lines(&text)),
        Value::Seq(items) => items,
        Value::Computed(code) => return Err(NotRequirements::Computed(code)),
        Value::Dict(_) | Value::Other => return Err(NotRequirements::Wrong),
    };
    // Each item is lines too: setuptools drops blank ones and comments
    // (`install_requires=['']` declares nothing).
    let mut out = Vec::new();
    for item in items {
        match item {
            Value::Str(s) => out.extend(requirement_lines(&s)),
            Value::Computed(code) => return Err(NotRequirements::Computed(code)),
            _ => return Err(NotRequirements::Wrong),
        }
    }
    Ok(out)
}

/// The requirements of a string of lines: blank lines and `#` comments
/// left out, as setuptools' parser leaves them. Lines break where
/// Python's `str.splitlines` breaks them (a form feed or `\x85` too).
fn requirement_lines(text: &str) -> Vec<String> {
    text.split(|c| {
        matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        )
    })
    .map(|l| l.split(" #").next().unwrap_or_default().trim())
    .filter(|l| !l.is_empty() && !l.starts_with('#'))
    .map(str::to_string)
    .collect()
}

/// Records `keyword`'s value in `declared`, or says why it cannot be.
fn judge(keyword: &str, value: Value, declared: &mut Declared) -> Result<(), String> {
    let computed = |code: &str| format!("its setup.py computes `{keyword}` (`{code}`)");
    let wrong = || format!("its setup.py gives `{keyword}` a value that is not requirements");
    match (keyword, value) {
        ("python_requires", Value::Str(spec)) => declared.python_requires = Some(spec),
        ("python_requires", Value::Computed(code)) => return Err(computed(&code)),
        ("python_requires", _) => return Err(wrong()),
        ("extras_require", Value::Dict(entries)) => extras(entries, declared)?,
        ("extras_require", Value::Computed(code)) => return Err(computed(&code)),
        ("extras_require", _) => return Err(wrong()),
        (_, value) => match requirements(value) {
            Ok(list) => declared.install_requires = list,
            Err(NotRequirements::Computed(code)) => return Err(computed(&code)),
            Err(NotRequirements::Wrong) => return Err(wrong()),
        },
    }
    Ok(())
}

/// `extras_require`'s entries, each judged on its own: a computed one
/// makes that extra unknown. A computed key leaves nothing known. A key
/// may carry a condition (`"x:python_version<'3'"`, or `":sys_platform ==
/// 'win32'"` for base requirements), which the METADATA writer joins to
/// each requirement's marker as setuptools does.
fn extras(entries: Vec<(Value, Value)>, declared: &mut Declared) -> Result<(), String> {
    for (key, value) in entries {
        let extra = match key {
            Value::Str(extra) => extra,
            Value::Computed(code) => {
                return Err(format!(
                    "its setup.py computes the name of an extra (`{code}`)"
                ));
            }
            _ => return Err("its setup.py names an extra with a non-string".to_string()),
        };
        // A key given twice: the last one holds, as in Python.
        declared.extras.retain(|(e, _)| *e != extra);
        declared.computed_extras.retain(|(e, _)| *e != extra);
        match requirements(value) {
            Ok(list) => declared.extras.push((extra, list)),
            Err(NotRequirements::Computed(code)) => declared.computed_extras.push((extra, code)),
            Err(NotRequirements::Wrong) => {
                return Err(format!(
                    "its setup.py gives the extra `{extra}` a value that is not requirements"
                ));
            }
        }
    }
    Ok(())
}

/// Python's keywords that can stand before a bracket without calling or
/// subscripting anything (`x in (a, b)`).
const KEYWORDS: [&str; 16] = [
    "in", "not", "and", "or", "is", "if", "else", "return", "yield", "await", "lambda", "for",
    "assert", "del", "elif", "while",
];

/// The one `setup()` call of a `setup.py`: its tokens and where the
/// call's parentheses are.
struct Call<'a> {
    tokens: Tokens<'a>,
    open: usize,
    close: usize,
}

/// A dict a `**` argument hands the call: the tokens of its literal and
/// its entries.
type Splat = (std::ops::RangeInclusive<usize>, Vec<(Value, Value)>);

/// An argument of the call.
enum Arg<'a> {
    Keyword(&'a str, usize),
    Star,
    /// `**` and where its operand starts.
    DoubleStar(usize),
    Positional,
}

impl<'a> Call<'a> {
    /// The call, when it is setuptools' (or distutils') own `setup()`:
    /// imported from there by its name, never bound again, called once.
    fn locate(py: &'a str) -> Result<Self, String> {
        let tokens = python::tokenize(py)
            .map_err(|e| format!("its setup.py cannot be read as Python ({e})"))?;
        let uses = SetupUses::of(&tokens);
        if !uses.imported {
            return Err("its setup.py does not call setuptools' own setup()".to_string());
        }
        if uses.rebound {
            return Err("its setup.py binds another setup()".to_string());
        }
        if uses.referenced {
            return Err("its setup.py hands setup() around instead of calling it".to_string());
        }
        let open = match uses.calls.as_slice() {
            [one] => *one,
            [] => return Err("its setup.py calls no setup() it shows".to_string()),
            _ => return Err("its setup.py calls setup() more than once".to_string()),
        };
        let close = tokens
            .toks
            .get(open)
            .and_then(|t| t.pair)
            .ok_or_else(|| "its setup.py has a setup() call that does not close".to_string())?;
        Ok(Self {
            tokens,
            open,
            close,
        })
    }

    /// `*`/`**` arguments hand `setup()` what the file does not spell out;
    /// code that runs other code could patch in a needed keyword the call
    /// leaves out. (A keyword spelled in the call is what it says,
    /// whatever else the file runs: `exec` of an `__about__.py` for the
    /// version is common.)
    fn refuse_indirect(&self, splats: &[Splat]) -> Result<(), String> {
        let args = self.arguments()?;
        if args.iter().any(|a| matches!(a, Arg::Star)) {
            return Err("its setup.py passes setup() `*` arguments".to_string());
        }
        let spelled = args
            .iter()
            .any(|a| matches!(a, Arg::Keyword(k, _) if NEEDED.contains(k)))
            || splats
                .iter()
                .flat_map(|(_, entries)| entries)
                .any(|(k, _)| matches!(k, Value::Str(k) if NEEDED.contains(&k.as_str())));
        if spelled {
            return Ok(());
        }
        let t = &self.tokens;
        let runs = (0..t.toks.len()).find_map(|i| {
            let word = t.name(i).filter(|w| RUNS_CODE.contains(w))?;
            let method = i > 0 && t.op(i - 1, ".");
            let called = t.op(i + 1, "(") && !(method && BUILTINS.contains(&word));
            called.then_some(word)
        });
        match runs {
            Some(word) => Err(format!("its setup.py calls `{word}()`")),
            None => Ok(()),
        }
    }

    /// The dicts the call's `**` arguments hand it: each a name bound once
    /// to a dict literal (see [`Bindings`]), as (where its literal lies,
    /// its entries). Any other `**` argument is refused: only running the
    /// file says what it holds.
    fn splatted(&self, bindings: &Bindings<'a>) -> Result<Vec<Splat>, String> {
        let refuse = || "its setup.py passes setup() `**` arguments".to_string();
        let stars: Vec<usize> = self
            .arguments()?
            .into_iter()
            .filter_map(|a| match a {
                Arg::DoubleStar(at) => Some(at),
                _ => None,
            })
            .collect();
        if stars.is_empty() {
            return Ok(Vec::new());
        }
        let t = &self.tokens;
        let mut out = Vec::new();
        for at in stars {
            let name = t.name(at).ok_or_else(refuse)?;
            let ends = at + 1 == self.close || t.op(at + 1, ",");
            let rhs = bindings.get(name, at).filter(|_| ends).ok_or_else(refuse)?;
            let close = t
                .toks
                .get(rhs)
                .filter(|_| t.op(rhs, "{"))
                .and_then(|tok| tok.pair)
                .ok_or_else(refuse)?;
            let (value, end) = Eval::new(t, bindings).expr(rhs, 0);
            match value {
                Value::Dict(entries)
                    if end == close + 1
                        && entries.iter().all(|(k, _)| matches!(k, Value::Str(_))) =>
                {
                    out.push((rhs..=close, entries));
                }
                _ => return Err(refuse()),
            }
        }
        Ok(out)
    }

    /// A needed keyword set anywhere but in the call (`kw["install_requires"]
    /// = …`, `dist.install_requires = …`, `dict(install_requires=…)`)
    /// reaches `setup()` in ways only running the file shows. The dict
    /// literal a `**` argument hands the call is read as the call.
    fn refuse_set_elsewhere(&self, splats: &[Splat]) -> Result<(), String> {
        let t = &self.tokens;
        for (i, token) in t.toks.iter().enumerate() {
            if (self.open..=self.close).contains(&i) || splats.iter().any(|(r, _)| r.contains(&i)) {
                continue;
            }
            let word = match &token.kind {
                Kind::Str(Some(s)) => Some(s.as_str()),
                Kind::Name => {
                    let attribute = i > 0 && t.op(i - 1, ".");
                    let keyword = token.depth > 0 && t.op(i + 1, "=");
                    (attribute || keyword).then(|| t.text(i))
                }
                _ => None,
            };
            if let Some(word) = word.filter(|w| NEEDED.contains(w)) {
                return Err(format!(
                    "its setup.py sets `{word}` outside the setup() call"
                ));
            }
        }
        Ok(())
    }

    /// The call's arguments, each read as far as where it ends.
    fn arguments(&self) -> Result<Vec<Arg<'a>>, String> {
        let t = &self.tokens;
        let unreadable = || "its setup.py passes setup() an argument it cannot read".to_string();
        let mut out = Vec::new();
        let mut pos = self.open + 1;
        while pos < self.close {
            let (arg, from) = if t.op(pos, "**") {
                (Arg::DoubleStar(pos + 1), pos + 1)
            } else if t.op(pos, "*") {
                (Arg::Star, pos + 1)
            } else if let Some(name) = t.name(pos).filter(|_| t.op(pos + 1, "=")) {
                (Arg::Keyword(name, pos + 2), pos + 2)
            } else {
                (Arg::Positional, pos)
            };
            let end = skip(t, from);
            if end.spoiled || end.at == from {
                return Err(unreadable());
            }
            out.push(arg);
            pos = end.at;
            if t.op(pos, ",") {
                pos += 1;
            } else if pos != self.close {
                return Err(unreadable());
            }
        }
        Ok(out)
    }

    /// The keyword arguments (name, where the value starts); `**`
    /// arguments are read by [`Call::splatted`]; any other argument cannot
    /// be read.
    fn keywords(&self) -> Result<Vec<(&'a str, usize)>, String> {
        self.arguments()?
            .into_iter()
            .filter(|a| !matches!(a, Arg::DoubleStar(_)))
            .map(|a| match a {
                Arg::Keyword(name, at) => Ok((name, at)),
                _ => Err("its setup.py passes setup() an argument it cannot read".to_string()),
            })
            .collect()
    }

    fn snippet(&self, from: usize, to: usize) -> String {
        snippet(&self.tokens, from, to)
    }
}

/// The code from token `from` up to `to`, on one line and cut short, to
/// show in a message.
fn snippet(t: &Tokens, from: usize, to: usize) -> String {
    let code = t
        .span(from, to)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match code.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &code[..cut]),
        None => code,
    }
}

/// Where a skipped expression ends (at a `,`, `:`, closing bracket or the
/// end of the line), and whether it holds what makes its container
/// unreadable (`for`, `lambda`, `:=`).
struct Skip {
    at: usize,
    spoiled: bool,
}

fn skip(t: &Tokens, mut pos: usize) -> Skip {
    let mut spoiled = false;
    while let Some(token) = t.toks.get(pos) {
        match token.kind {
            Kind::Newline => break,
            Kind::Op => {
                if matches!(t.text(pos), "," | ":" | ")" | "]" | "}") {
                    break;
                }
                spoiled |= t.text(pos) == ":=";
                if let Some(close) = token.pair {
                    pos = close + 1;
                    continue;
                }
            }
            Kind::Name => spoiled |= matches!(t.text(pos), "for" | "lambda"),
            _ => {}
        }
        pos += 1;
    }
    Skip { at: pos, spoiled }
}

/// How a `setup.py` uses the name `setup`.
#[derive(Default)]
struct SetupUses {
    /// Imported from setuptools or distutils.core by that name (or
    /// called as `setuptools.setup` after `import setuptools`).
    imported: bool,
    /// Bound to anything else: imported from elsewhere, assigned, defined.
    rebound: bool,
    /// Used other than by calling it.
    referenced: bool,
    /// Where each call's `(` is.
    calls: Vec<usize>,
}

impl SetupUses {
    fn of(t: &Tokens) -> Self {
        let mut uses = Self::default();
        let mut module_call = false;
        let mut statement = 0;
        for i in 0..t.toks.len() {
            if t.toks.get(i).is_some_and(|tok| tok.line_start) || (i > 0 && t.op(i - 1, ";")) {
                statement = i;
            }
            if !t.is_name(i, "setup") {
                continue;
            }
            if i > 0 && t.op(i - 1, ".") {
                // `setuptools.setup(…)`; any other `x.setup` is not it.
                let own = i >= 2 && t.is_name(i - 2, "setuptools") && !(i >= 3 && t.op(i - 3, "."));
                if own && t.op(i + 1, "(") {
                    uses.calls.push(i + 1);
                    module_call = true;
                }
                continue;
            }
            uses.classify(t, statement, i);
        }
        let module_imported = (1..t.toks.len()).any(|i| {
            t.is_name(i, "setuptools")
                && t.is_name(i - 1, "import")
                && !t.is_name(i + 1, "as")
                && !t.op(i + 1, ".")
        });
        uses.imported |= module_call && module_imported;
        uses
    }

    /// One bare `setup` at token `i`, in the statement starting at
    /// `statement`.
    fn classify(&mut self, t: &Tokens, statement: usize, i: usize) {
        let import = (statement..i).rev().find(|j| t.is_name(*j, "import"));
        if let Some(k) = import {
            let from = (statement..k).find(|j| t.is_name(*j, "from"));
            match from {
                _ if t.is_name(i - 1, "as") => self.rebound = true,
                // `from setuptools import setup as s` binds `s`, not `setup`.
                _ if t.is_name(i + 1, "as") => {}
                Some(f) => {
                    let module: String = t.span(f + 1, k).split_whitespace().collect();
                    match module.as_str() {
                        "setuptools" | "distutils.core" => self.imported = true,
                        _ => self.rebound = true,
                    }
                }
                None => self.rebound = true,
            }
            return;
        }
        let prev = i.checked_sub(1).and_then(|p| t.name(p));
        let next = t.text(i + 1);
        let next_op = t.toks.get(i + 1).is_some_and(|n| n.kind == Kind::Op);
        let binds = matches!(
            prev,
            Some("def" | "class" | "as" | "for" | "global" | "nonlocal" | "del")
        );
        let depth = t.toks.get(i).map_or(0, |tok| tok.depth);
        match (next_op, next) {
            _ if binds => self.rebound = true,
            _ if prev == Some("from") => {}
            (true, "(") => self.calls.push(i + 1),
            // A keyword argument of another call: `f(setup=…)`.
            (true, "=") if depth > 0 => {}
            (true, op) if op.ends_with('=') && !matches!(op, "==" | "!=" | "<=" | ">=") => {
                self.rebound = true;
            }
            (true, ",") if depth == 0 => self.rebound = true,
            _ => self.referenced = true,
        }
    }
}

/// Names bound once at module level, before the call, as `NAME = …`, and
/// never changed afterwards: no other binding, no method call or
/// subscript (`REQS.append(…)`, `REQS[0] = …`), not passed to a call, and
/// read only where its object cannot be reached by code that might change
/// it. Their values are what the call reads.
struct Bindings<'a> {
    /// Each name: its token and where its value starts.
    at: HashMap<&'a str, (usize, usize)>,
    /// Keys a dict bound so is given after its binding, each by a module
    /// level `NAME["key"] = …` before the call (nltk's
    /// `extras_require["all"] = set(…)`): the key, where its value starts
    /// and where the statement ends.
    keyed: HashMap<&'a str, Vec<Keyed>>,
}

/// One `NAME["key"] = value` statement (see [`Bindings::keyed`]).
#[derive(Clone)]
struct Keyed {
    key: String,
    value: usize,
    end: usize,
}

impl<'a> Bindings<'a> {
    fn of(call: &Call<'a>) -> Self {
        let t = &call.tokens;
        let none = Self {
            at: HashMap::new(),
            keyed: HashMap::new(),
        };
        let writes_scope = (0..t.toks.len()).any(|i| {
            t.name(i)
                .is_some_and(|n| SCOPE_WRITERS.contains(&n) && !own_namespace(t, i))
                || (t.is_name(i, "import") && t.op(i + 1, "*"))
        });
        if writes_scope {
            return none;
        }
        let mut found: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, token) in t.toks.iter().enumerate().take(call.open) {
            let bound = token.line_start && !token.indented && t.op(i + 1, "=");
            if bound
                && !t.line_end(i + 2)
                && let Some(name) = t.name(i)
            {
                found.entry(name).or_default().push(i);
            }
        }
        let keyed = keyed_statements(call, &found);
        let clean = clean_names(call, &found, &keyed);
        let at: HashMap<&str, (usize, usize)> = found
            .into_iter()
            .filter(|(name, _)| clean.contains(name))
            .filter_map(|(name, places)| places.first().map(|i| (name, (*i, *i + 2))))
            .collect();
        let keyed = keyed
            .into_iter()
            .filter(|(name, _)| at.contains_key(name))
            .map(|(name, list)| (name, list.into_iter().map(|(_, k)| k).collect()))
            .collect();
        Self { at, keyed }
    }

    /// The `NAME["key"] = …` statements of `name` that end before `before`.
    fn keyed(&self, name: &str, before: usize) -> Vec<Keyed> {
        self.keyed
            .get(name)
            .map(|list| list.iter().filter(|k| k.end < before).cloned().collect())
            .unwrap_or_default()
    }

    /// Where the value of `name` starts, when it is bound before `before`.
    fn get(&self, name: &str, before: usize) -> Option<usize> {
        self.at
            .get(name)
            .filter(|(i, _)| *i < before)
            .map(|(_, rhs)| *rhs)
    }
}

/// Whether the name at `i` is `exec(…)` or `eval(…)` called with a
/// namespace of its own (`exec(line, context)`): the code it runs then
/// binds names in that dict, not in the module. Only two positional
/// arguments, the second a dict literal or a name every binding of which
/// in the file is one (`context = {}`); `None`, `*`/`**`, keywords
/// (`closure=`) or anything else may leave the module's own names in
/// reach. (Called with `globals()`, the word still marks the file.)
fn own_namespace(t: &Tokens, i: usize) -> bool {
    let builtin = matches!(t.name(i), Some("exec" | "eval")) && !(i > 0 && t.op(i - 1, "."));
    let Some(close) = t
        .toks
        .get(i + 1)
        .filter(|_| builtin && t.op(i + 1, "("))
        .and_then(|open| open.pair)
    else {
        return false;
    };
    let open = i + 1;
    let top = |k: usize| t.toks.get(k).and_then(|tok| tok.parent) == Some(open);
    let commas: Vec<usize> = (open + 1..close)
        .filter(|&k| top(k) && t.op(k, ","))
        .collect();
    let loose =
        (open + 1..close).any(|k| top(k) && (t.op(k, "*") || t.op(k, "**") || t.op(k, "=")));
    let second = match commas.as_slice() {
        [comma] => comma + 1,
        [comma, last] if *last + 1 == close => comma + 1,
        _ => return false,
    };
    if loose || second >= close {
        return false;
    }
    let ends = |k: usize| k == close || t.op(k, ",");
    if t.op(second, "{") {
        return t.toks[second].pair.is_some_and(|c| ends(c + 1));
    }
    match t.name(second).filter(|_| ends(second + 1)) {
        Some(name) => bound_only_to_dicts(t, name),
        None => false,
    }
}

/// Whether `name` is bound somewhere in the file, and each time (`name =
/// …` at a line's start, at any indent) to a dict literal or `dict(…)`.
fn bound_only_to_dicts(t: &Tokens, name: &str) -> bool {
    if matches!(name, "None" | "True" | "False") {
        return false;
    }
    let mut bound = false;
    for k in 0..t.toks.len() {
        if !t.is_name(k, name) || (k > 0 && t.op(k - 1, ".")) {
            continue;
        }
        let assigned = t.toks[k].line_start && t.op(k + 1, "=");
        if !assigned {
            // Read, or bound some other way (`for name in`, `as name`,
            // `name += …`): only plain reads are let through.
            let binds_otherwise = k > 0
                && matches!(
                    t.name(k - 1),
                    Some("for" | "as" | "import" | "def" | "class" | "global")
                )
                || t.toks.get(k + 1).is_some_and(|n| {
                    n.kind == Kind::Op && t.text(k + 1).ends_with('=') && t.text(k + 1) != "=="
                });
            if binds_otherwise {
                return false;
            }
            continue;
        }
        let dict = t.op(k + 2, "{") || (t.is_name(k + 2, "dict") && t.op(k + 3, "("));
        if !dict {
            return false;
        }
        bound = true;
    }
    bound
}

/// Builtins a `NAME["key"] = …` value may call and still leave `NAME`
/// as it reads (when the file never binds them to anything else).
const PURE_CALLS: [&str; 5] = ["set", "list", "sorted", "tuple", "frozenset"];

/// The module-level `NAME["key"] = …` statements before the call of the
/// names `found`, each with the token of its `NAME`, for those whose
/// value can only read `NAME` (see [`reads_only`]).
fn keyed_statements<'a>(
    call: &Call<'a>,
    found: &HashMap<&'a str, Vec<usize>>,
) -> HashMap<&'a str, Vec<(usize, Keyed)>> {
    let t = &call.tokens;
    let pure: Vec<&str> = PURE_CALLS
        .into_iter()
        .filter(|b| never_rebound(t, b))
        .collect();
    let mut out: HashMap<&str, Vec<(usize, Keyed)>> = HashMap::new();
    for i in 0..call.open {
        let Some(name) = t.name(i).filter(|n| found.contains_key(n)) else {
            continue;
        };
        // Only after the dict is bound: a key given before it is lost.
        if found[name].iter().any(|bound| *bound > i) {
            continue;
        }
        let token = &t.toks[i];
        let key = match t.toks.get(i + 2).map(|k| &k.kind) {
            Some(Kind::Str(Some(key))) => key.clone(),
            _ => continue,
        };
        if !token.line_start || token.indented || !t.op(i + 1, "[") || !t.op(i + 3, "]") {
            continue;
        }
        if !t.op(i + 4, "=") {
            continue;
        }
        // One statement to its line's end: what follows a `;` is another.
        let end = statement_end(t, i + 5);
        if end > call.open || !t.line_end(end) || !reads_only(t, name, i + 5, end, &pure) {
            continue;
        }
        out.entry(name).or_default().push((
            i,
            Keyed {
                key,
                value: i + 5,
                end,
            },
        ));
    }
    out
}

/// Where the statement that goes on at `from` ends: its line's end, or
/// a `;` outside brackets.
fn statement_end(t: &Tokens, mut from: usize) -> usize {
    while let Some(token) = t.toks.get(from) {
        if token.kind == Kind::Newline || t.op(from, ";") {
            break;
        }
        from = token.pair.map_or(from + 1, |close| close + 1);
    }
    from
}

/// Whether the tokens from `from` to `end` can only read `name`'s dict:
/// each call is of a `pure` builtin (of [`PURE_CALLS`], never rebound in
/// the file), or of `name.values()`, `.keys()` or `.items()`; nothing else
/// is called, nothing is bound or assigned (`:=`, keyword arguments,
/// augmented assignment, a `for` target that is not plain names), no
/// function is made and no f-string runs code unseen.
fn reads_only(t: &Tokens, name: &str, from: usize, end: usize, pure: &[&str]) -> bool {
    let binds = |k: usize| {
        t.toks.get(k).is_some_and(|tok| tok.kind == Kind::Op)
            && (t.text(k).ends_with('=') && !matches!(t.text(k), "==" | "!=" | "<=" | ">="))
    };
    (from..end).all(|k| {
        if matches!(t.name(k), Some("lambda" | "yield" | "await" | "del")) || binds(k) {
            return false;
        }
        if matches!(t.toks.get(k).map(|tok| &tok.kind), Some(Kind::Str(None))) {
            return false;
        }
        if t.is_name(k, "for") && !plain_targets(t, k + 1, end) {
            return false;
        }
        if !t.op(k, "(") || k == 0 {
            return true;
        }
        let callee = k - 1;
        let attribute = callee > 0 && t.op(callee - 1, ".");
        match t.name(callee) {
            Some("values" | "keys" | "items") if attribute => {
                callee >= 2
                    && t.is_name(callee - 2, name)
                    && !(callee >= 3 && t.op(callee - 3, "."))
            }
            Some(builtin) if !attribute => pure.contains(&builtin),
            _ => false,
        }
    })
}

/// Whether the targets of a `for` from `from` to its `in` are plain names
/// (in commas and parentheses): `for E['a'] in …` or `for g[:] in …`
/// would write into what they name.
fn plain_targets(t: &Tokens, from: usize, end: usize) -> bool {
    for k in from..end {
        if t.is_name(k, "in") {
            return true;
        }
        let plain = t.name(k).is_some() || t.op(k, ",") || t.op(k, "(") || t.op(k, ")");
        if !plain {
            return false;
        }
    }
    false
}

/// Whether every use of the builtin `word` in the file is a call of it
/// (`def set(…)`, `set = …`, `import … set` and `for set in` all bind it).
fn never_rebound(t: &Tokens, word: &str) -> bool {
    (0..t.toks.len()).all(|i| {
        !t.is_name(i, word)
            || (t.op(i + 1, "(")
                && !(i > 0
                    && (t.op(i - 1, ".")
                        || matches!(t.name(i - 1), Some("def" | "class" | "import" | "as")))))
    })
}

/// Of the names `found` bound at module level, those whose every other
/// use leaves their value as bound (see [`Bindings`]). A `NAME["key"] =`
/// statement of `keyed` gives the dict a key (read with it) and does not
/// spoil it, nor do its value's reads of the same dict.
fn clean_names<'a>(
    call: &Call<'a>,
    found: &HashMap<&'a str, Vec<usize>>,
    keyed: &HashMap<&'a str, Vec<(usize, Keyed)>>,
) -> HashSet<&'a str> {
    let t = &call.tokens;
    let mut dirty: HashSet<&str> = found
        .iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(name, _)| *name)
        .collect();
    // The tokens of each keyed statement of a name, where that name may
    // stand (see [`keyed_statements`]).
    let excused: HashSet<(&str, usize)> = keyed
        .iter()
        .flat_map(|(name, list)| {
            list.iter()
                .flat_map(move |(at, k)| std::iter::once(*at).chain(k.value..k.end))
                .map(move |j| (*name, j))
        })
        .collect();
    // A name an f-string's fields mention may be changed by them, unseen.
    for token in &t.toks {
        if token.kind == Kind::Str(None) {
            let text = t.src.get(token.start..token.end).unwrap_or_default();
            for word in text.split(|c: char| !(c == '_' || c.is_alphanumeric())) {
                if let Some((name, _)) = found.get_key_value(word) {
                    dirty.insert(name);
                }
            }
        }
    }
    // (binder, read): `binder = [read]` shares read's object.
    let mut reads: Vec<(&str, &str)> = Vec::new();
    let mut binder: Option<&str> = None;
    for (j, token) in t.toks.iter().enumerate() {
        if token.line_start {
            binder = t
                .name(j)
                .filter(|n| found.get(n).is_some_and(|p| p.contains(&j)));
        }
        let Some(name) = t.name(j).filter(|n| found.contains_key(n)) else {
            continue;
        };
        if (j > 0 && t.op(j - 1, ".")) || found.get(name).is_some_and(|p| p.contains(&j)) {
            continue;
        }
        if excused.contains(&(name, j)) {
            continue;
        }
        let in_call = call.open < j && j < call.close;
        let keyword = in_call
            && token.parent == Some(call.open)
            && t.op(j + 1, "=")
            && (t.op(j - 1, "(") || t.op(j - 1, ","));
        match (in_call, binder) {
            _ if keyword => {}
            (true, _) if plain_read(t, j, Some(call.open)) => {}
            (false, Some(b)) if plain_read(t, j, None) => reads.push((b, name)),
            _ => {
                dirty.insert(name);
            }
        }
    }
    // A dict given keys shares nothing: another name for it (`F = E`,
    // `conf = {'x': E}`) could give it keys unseen, or be read without
    // the keys it was given.
    for (b, read) in &reads {
        if keyed.contains_key(b) || keyed.contains_key(read) {
            dirty.insert(b);
            dirty.insert(read);
        }
    }
    for _ in 0..=found.len() {
        let before = dirty.len();
        for (b, read) in &reads {
            if dirty.contains(b) {
                dirty.insert(read);
            }
        }
        if dirty.len() == before {
            break;
        }
    }
    found
        .keys()
        .filter(|n| !dirty.contains(*n))
        .copied()
        .collect()
}

/// Whether the name at `j` is only read: followed by what ends a value,
/// and inside nothing but literal brackets up to `top` (a call's or a
/// subscript's bracket could hand its object to code).
fn plain_read(t: &Tokens, j: usize, top: Option<usize>) -> bool {
    let ends = t.line_end(j + 1)
        || (t.toks.get(j + 1).is_some_and(|n| n.kind == Kind::Op)
            && matches!(t.text(j + 1), "," | ")" | "]" | "}" | "+"));
    if !ends {
        return false;
    }
    let mut parent = t.toks.get(j).and_then(|tok| tok.parent);
    for _ in 0..=MAX_NESTING {
        if parent == top {
            return true;
        }
        let Some(p) = parent else {
            return false;
        };
        if calls_or_subscripts(t, p) {
            return false;
        }
        parent = t.toks.get(p).and_then(|tok| tok.parent);
    }
    false
}

/// Whether the bracket at `p` calls or subscripts what stands before it.
fn calls_or_subscripts(t: &Tokens, p: usize) -> bool {
    if t.text(p) == "{" || p == 0 {
        return false;
    }
    match t.toks.get(p - 1).map(|tok| &tok.kind) {
        Some(Kind::Name) => !KEYWORDS.contains(&t.text(p - 1)),
        Some(Kind::Str(_) | Kind::Bytes | Kind::Number) => true,
        Some(Kind::Op) => matches!(t.text(p - 1), ")" | "]" | "}"),
        _ => false,
    }
}

/// Values of expressions, as far as literals and clean names say.
struct Eval<'t, 'a> {
    t: &'t Tokens<'a>,
    bindings: &'t Bindings<'a>,
    budget: usize,
    string_budget: usize,
}

impl<'t, 'a> Eval<'t, 'a> {
    fn new(t: &'t Tokens<'a>, bindings: &'t Bindings<'a>) -> Self {
        Self {
            t,
            bindings,
            budget: BUDGET,
            string_budget: STRING_BUDGET,
        }
    }

    /// The value of the expression at `pos`, and where it ends: terms
    /// joined by `+`; anything more is computed.
    fn expr(&mut self, pos: usize, depth: usize) -> (Value, usize) {
        let (mut value, mut end) = self.primary(pos, depth);
        while self.t.op(end, "+") {
            let (right, next) = self.primary(end + 1, depth);
            value = match (value, right) {
                (Value::Str(mut a), Value::Str(b)) => {
                    a.push_str(&self.spend(&b));
                    Value::Str(a)
                }
                (Value::Seq(mut a), Value::Seq(b)) => {
                    a.extend(b);
                    Value::Seq(a)
                }
                _ => Value::Computed(snippet(self.t, pos, next)),
            };
            end = next;
        }
        let ends = self.t.line_end(end)
            || (self.t.toks.get(end).is_some_and(|n| n.kind == Kind::Op)
                && matches!(self.t.text(end), "," | ")" | "]" | "}" | ":"));
        if ends {
            return (value, end);
        }
        let rest = skip(self.t, end);
        (Value::Computed(snippet(self.t, pos, rest.at)), rest.at)
    }

    /// Spends the string budget on `s`; past it, strings read empty, and
    /// nothing real comes near it.
    fn spend(&mut self, s: &str) -> String {
        match self.string_budget.checked_sub(s.len()) {
            Some(left) => {
                self.string_budget = left;
                s.to_string()
            }
            None => String::new(),
        }
    }

    /// One term: a literal, a name, a bracketed literal. An operator or a
    /// keyword is not consumed: the expression reading it is computed.
    fn primary(&mut self, pos: usize, depth: usize) -> (Value, usize) {
        let Some(token) = self.t.toks.get(pos) else {
            return (Value::Computed(String::new()), pos);
        };
        if depth > MAX_NESTING || self.budget == 0 || self.string_budget == 0 {
            let end = skip(self.t, pos).at;
            return (Value::Computed(snippet(self.t, pos, end)), end);
        }
        self.budget -= 1;
        let computed = || Value::Computed(snippet(self.t, pos, pos + 1));
        match &token.kind {
            Kind::Str(Some(s)) => (Value::Str(self.spend(s)), pos + 1),
            Kind::Str(None) => (computed(), pos + 1),
            Kind::Bytes | Kind::Number => (Value::Other, pos + 1),
            Kind::Name => (self.name(pos, depth), pos + 1),
            Kind::Op => match token.pair {
                Some(close) => (self.container(pos, close, depth), close + 1),
                None => (Value::Computed(String::new()), pos),
            },
            Kind::Newline => (Value::Computed(String::new()), pos),
        }
    }

    /// A name's value: a constant, or the value a clean binding gives it.
    fn name(&mut self, pos: usize, depth: usize) -> Value {
        let name = self.t.text(pos);
        if matches!(name, "True" | "False" | "None") {
            return Value::Other;
        }
        let value = match self.bindings.get(name, pos) {
            Some(rhs) => match self.expr(rhs, depth + 1) {
                (value, end) if self.t.line_end(end) => value,
                _ => Value::Computed(name.to_string()),
            },
            None => return Value::Computed(name.to_string()),
        };
        let keyed = self.bindings.keyed(name, pos);
        match value {
            Value::Dict(mut entries) if !keyed.is_empty() => {
                // Where each string key stands: a key given again keeps its
                // place and takes the last value, as a Python dict does.
                let mut place: HashMap<String, usize> = HashMap::new();
                for (i, (key, _)) in entries.iter().enumerate() {
                    if let Value::Str(key) = key {
                        place.insert(key.clone(), i);
                    }
                }
                for k in keyed {
                    let value = match self.expr(k.value, depth + 1) {
                        (value, end) if end == k.end => value,
                        _ => Value::Computed(snippet(self.t, k.value, k.end)),
                    };
                    match place.get(&k.key) {
                        Some(&i) => entries[i].1 = value,
                        None => {
                            place.insert(k.key.clone(), entries.len());
                            entries.push((Value::Str(k.key), value));
                        }
                    }
                }
                Value::Dict(entries)
            }
            // A key given to what is not a dict literal: only running says.
            _ if !keyed.is_empty() => Value::Computed(name.to_string()),
            value => value,
        }
    }

    /// `[…]`, `(…)` or `{…}` from `open` to `close`: a list, a tuple (or
    /// what parentheses hold), a dict. A comprehension, unpacking or a set
    /// is computed.
    fn container(&mut self, open: usize, close: usize, depth: usize) -> Value {
        let plain = !(open + 1..close).any(|i| {
            let level = self.t.toks.get(i).and_then(|t| t.parent) == Some(open);
            level
                && (matches!(self.t.name(i), Some("for" | "lambda" | "yield" | "await"))
                    || matches!(self.t.text(i), "*" | "**" | ":="))
        });
        let value = match self.t.text(open) {
            _ if !plain => None,
            "[" => self.items(open, close, depth).map(Value::Seq),
            "(" => self.items(open, close, depth).map(|mut items| {
                let comma = close > open + 1 && self.t.op(close - 1, ",");
                match (items.pop(), items.is_empty() && !comma) {
                    (Some(one), true) => one,
                    (last, _) => {
                        items.extend(last);
                        Value::Seq(items)
                    }
                }
            }),
            _ => self.dict(open, close, depth).map(Value::Dict),
        };
        value.unwrap_or_else(|| Value::Computed(snippet(self.t, open, close + 1)))
    }

    /// The items between `open` and `close`, or `None` when they are not
    /// a comma-separated list.
    fn items(&mut self, open: usize, close: usize, depth: usize) -> Option<Vec<Value>> {
        self.separated(open, close, |me, pos| Some(me.expr(pos, depth + 1)))
    }

    /// `key: value` pairs between `open` and `close`, or `None` when they
    /// are not (a set, or `**` unpacking).
    fn dict(&mut self, open: usize, close: usize, depth: usize) -> Option<Vec<(Value, Value)>> {
        self.separated(open, close, |me, pos| {
            let (key, colon) = me.expr(pos, depth + 1);
            if !me.t.op(colon, ":") {
                return None;
            }
            let (value, end) = me.expr(colon + 1, depth + 1);
            Some(((key, value), end))
        })
    }

    /// The comma-separated entries between `open` and `close`, each read
    /// by `one` from its first token to the token after it; `None` when an
    /// entry cannot be read or is not followed by a comma or `close`.
    fn separated<T>(
        &mut self,
        open: usize,
        close: usize,
        mut one: impl FnMut(&mut Self, usize) -> Option<(T, usize)>,
    ) -> Option<Vec<T>> {
        let mut out = Vec::new();
        let mut pos = open + 1;
        while pos < close {
            let (entry, end) = one(self, pos)?;
            out.push(entry);
            if end == close {
                break;
            }
            if !self.t.op(end, ",") {
                return None;
            }
            pos = end + 1;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "from setuptools import setup\n";

    fn read_ok(body: &str) -> Declared {
        let py = format!("{HEAD}{body}");
        read(&py).unwrap_or_else(|why| panic!("{py}\n=> {why}"))
    }

    fn read_err(body: &str) -> String {
        let py = format!("{HEAD}{body}");
        read(&py).expect_err(&py)
    }

    fn extras(declared: &Declared) -> Vec<&str> {
        declared.extras.iter().map(|(e, _)| e.as_str()).collect()
    }

    #[test]
    fn blank_requirements_are_dropped_as_setuptools_drops_them() {
        // bnnumerizer 0.0.2.
        let declared = read_ok("setup(install_requires=[''])");
        assert!(declared.install_requires.is_empty());
        let declared = read_ok(
            "setup(install_requires=['a', ' ', '# c\\nb'], extras_require={'x': ['', 'c']})",
        );
        assert_eq!(declared.install_requires, ["a", "b"]);
        assert_eq!(declared.extras, [("x".to_string(), vec!["c".to_string()])]);
    }

    #[test]
    fn exec_in_a_namespace_of_its_own_leaves_the_modules_names_known() {
        // encodec 0.1.1: the version is exec'd into a dict of its own.
        let body = "REQUIRES_PYTHON = '>=3.8.0'\nfor line in open('e/__init__.py'):\n    if '__version__' in line:\n        context = {}\n        exec(line, context)\n        VERSION = context['__version__']\nsetup(version=VERSION, python_requires=REQUIRES_PYTHON, install_requires=['numpy'])\n";
        let declared = read_ok(body);
        assert_eq!(declared.python_requires.as_deref(), Some(">=3.8.0"));
        assert_eq!(declared.install_requires, ["numpy"]);
        // Without a namespace, or with the module's own, nothing is known.
        for exec in ["exec(line)", "exec(line,)", "exec(line, globals())"] {
            let body = format!("R = '>=3'\n{exec}\nsetup(python_requires=R)\n");
            assert!(
                read_err(&body).contains("computes `python_requires`"),
                "{exec}"
            );
        }
    }

    #[test]
    fn a_key_given_to_a_dict_before_the_call_is_read_with_it() {
        // nltk 3.5: an "all" extra made of the others.
        let nltk = "extras_require = {\n    \"plot\": [\"matplotlib\"],\n    \"tgrep\": [\"pyparsing\"],\n}\n\nextras_require[\"all\"] = set(\n    package for group in extras_require.values() for package in group\n)\nsetup(install_requires=[\"click\", \"regex\"], extras_require=extras_require)\n";
        let declared = read_ok(nltk);
        assert_eq!(declared.install_requires, ["click", "regex"]);
        assert_eq!(extras(&declared), ["plot", "tgrep"]);
        assert_eq!(declared.computed_extras.len(), 1);
        assert_eq!(declared.computed_extras[0].0, "all");
        // A literal value is read; a key given again holds its last value.
        let declared =
            read_ok("E = {'a': ['x']}\nE['b'] = ['y']\nE['a'] = ['z']\nsetup(extras_require=E)\n");
        assert_eq!(
            declared.extras,
            [
                ("a".to_string(), vec!["z".to_string()]),
                ("b".to_string(), vec!["y".to_string()])
            ]
        );
        // What could change the dict or its lists leaves nothing known.
        for body in [
            "E = {'a': ['x']}\nE['all'] = [g.append('y') for g in E.values()]\nsetup(extras_require=E)\n",
            "E = {'a': ['x']}\nE['all'] = merge(E.values())\nsetup(extras_require=E)\n",
            "def set(v):\n    return v\nE = {'a': ['x']}\nE['all'] = set(E.values())\nsetup(extras_require=E)\n",
            "E = {'a': ['x']}\nE['all'] = sorted(E, key=lambda k: k)\nsetup(extras_require=E)\n",
            "E = {'a': ['x']}\nif X:\n    E['b'] = ['y']\nsetup(extras_require=E)\n",
            "E = {'a': ['x']}\nE[K] = ['y']\nsetup(extras_require=E)\n",
            "E = get()\nE['b'] = ['y']\nsetup(extras_require=E)\n",
        ] {
            assert!(
                read_err(body).contains("computes `extras_require`"),
                "{body}: {}",
                read_err(body)
            );
        }
        // A key given after the call is not what the call read.
        let body = "E = {'a': ['x']}\nsetup(extras_require=E)\nE['b'] = ['y']\n";
        assert!(
            read_err(body).contains("computes `extras_require`"),
            "{}",
            read_err(body)
        );
    }

    #[test]
    fn thousands_of_keys_given_to_a_dict_are_read() {
        let mut body = String::from("E = {'a': ['x']}\n");
        for i in 0..2_000 {
            body.push_str(&format!("E['k{i}'] = sorted(set(E.values()))\n"));
        }
        body.push_str("setup(extras_require=E)\n");
        let declared = read_ok(&body);
        assert_eq!(extras(&declared), ["a"]);
        assert_eq!(declared.computed_extras.len(), 2_000);
    }

    #[test]
    fn what_could_change_a_value_unseen_leaves_it_unknown() {
        // Each was read as if nothing changed it; setuptools, running the
        // file, gets `evil`. (Found by an adversarial review.)
        for (body, field) in [
            // Another name for a dict given keys.
            (
                "E = {'a': ['x']}\nF = E\nF['a'] = ['evil']\nsetup(extras_require=E)\n",
                "extras_require",
            ),
            (
                "E = {'a': ['x']}\nF = E\nE['b'] = ['y']\nsetup(extras_require=F)\n",
                "extras_require",
            ),
            // A comprehension's target writing into the dict.
            (
                "E = {'a': ['x']}\nE['all'] = [0 for E['a'] in [['evil']]]\nsetup(extras_require=E)\n",
                "extras_require",
            ),
            (
                "E = {'a': ['x']}\nE['all'] = [0 for g in E.values() for g[:] in [['evil']]]\nsetup(extras_require=E)\n",
                "extras_require",
            ),
            // A second statement after `;`.
            (
                "E = {'a': ['x']}\nE['b'] = []; E['a'] += ['evil']\nsetup(extras_require=E)\n",
                "extras_require",
            ),
            (
                "E = {'a': ['x']}\nE['b'] = []; del E['a']\nsetup(extras_require=E)\n",
                "extras_require",
            ),
            // An f-string's field runs code.
            (
                "E = {'a': ['x']}\nE['b'] = f\"{E['a'].append('evil')}\"\nsetup(extras_require=E)\n",
                "extras_require",
            ),
            (
                "R = ['a']\nV = f\"{R.append('evil')}\"\nsetup(install_requires=R)\n",
                "install_requires",
            ),
            // A key given before the binding it would join.
            (
                "E['a'] = []\nE = {'a': ['real']}\nsetup(extras_require=E)\n",
                "extras_require",
            ),
        ] {
            let why = read_err(body);
            assert!(
                why.contains(&format!("computes `{field}`")),
                "{body}: {why}"
            );
        }
        // An exec whose namespace may be the module's own.
        for exec in [
            "exec(c, None)",
            "exec(c, *[])",
            "exec(c, **{})",
            "exec(c, closure=None)",
            "exec(c, f.__globals__)",
            "exec(c, ns)\nns = make()",
            "exec(c, {}, x, y)",
        ] {
            let body = format!("R = ['a']\n{exec}\nsetup(install_requires=R)\n");
            let why = read_err(&body);
            assert!(why.contains("computes `install_requires`"), "{exec}: {why}");
        }
        for exec in [
            "exec(c, {})",
            "exec(c, {'x': 1})",
            "ns = {}\nexec(c, ns)",
            "ns = dict()\nexec(c, ns,)",
        ] {
            let body = format!("R = ['a']\n{exec}\nsetup(install_requires=R)\n");
            assert_eq!(read_ok(&body).install_requires, ["a"], "{exec}");
        }
        // Lines break where Python breaks them.
        let declared = read_ok(
            "setup(install_requires=['# pinned\\x0cevil', '# x\\x85six', 'ok # c\\x0bsix2'])",
        );
        assert_eq!(declared.install_requires, ["evil", "six", "ok", "six2"]);
    }

    #[test]
    fn a_dict_literal_handed_over_by_double_star_is_read_as_the_call() {
        // umap-learn 0.5.2.
        let body = "configuration = {\n    'name': 'umap-learn',\n    'long_description': readme(),\n    'install_requires': ['numpy >= 1.17', 'pynndescent>=0.5'],\n    'extras_require': {'plot': ['pandas'], 'parametric_umap': ['tensorflow >= 2.1']},\n}\nsetup(**configuration)\n";
        let declared = read_ok(body);
        assert_eq!(
            declared.install_requires,
            ["numpy >= 1.17", "pynndescent>=0.5"]
        );
        assert_eq!(extras(&declared), ["plot", "parametric_umap"]);
        for (body, why) in [
            // Changed after it is bound, or not a literal, or not a name.
            (
                "c = {'install_requires': ['a']}\nc['install_requires'].append('b')\nsetup(**c)\n",
                "`**`",
            ),
            ("c = dict(install_requires=['a'])\nsetup(**c)\n", ""),
            (
                "c = {'install_requires': ['a']}\nsetup(**c, install_requires=['b'])\n",
                "more than once",
            ),
            ("setup(**{'install_requires': ['a']})\n", "`**`"),
            ("c = {k: ['a'] for k in ks}\nsetup(**c)\n", "`**`"),
            ("c = {K: ['a']}\nsetup(**c)\n", "`**`"),
        ] {
            assert!(read_err(body).contains(why), "{body}: {}", read_err(body));
        }
    }

    fn computed(declared: &Declared) -> Vec<(&str, &str)> {
        declared
            .computed_extras
            .iter()
            .map(|(e, c)| (e.as_str(), c.as_str()))
            .collect()
    }

    #[test]
    fn a_comment_with_a_parenthesis_inside_the_call_is_not_code() {
        // sqlitedict's shape: a helper, a command class, then a call with a
        // comment holding `:(` and a classifier list with a comment.
        let body = "import io\n\ndef read(f):\n    return io.open(f).read()\n\n\
            setup(\n    name='kv',\n    long_description=read('README.rst'),\n\n    \
            # old tools choke on non-ascii characters :(\n    # see issue (12\n    \
            author='A, B (C)',\n    classifiers=[  # from a list (of them)\n        \
            'Topic :: Database',\n    ],\n    cmdclass={'develop': object},\n)\n";
        let declared = read_ok(body);
        assert_eq!(declared, Declared::default());
    }

    #[test]
    fn an_escaped_quote_in_a_description_is_honoured() {
        // langdetect's shape: try/except imports, an escaped quote.
        let py = "try:\n    from setuptools import setup\nexcept ImportError:\n    \
            from distutils.core import setup\n\nwith open('README.md') as f:\n    \
            readme = f.read()\n\nsetup(\n    name='ld',\n    \
            description='Ported from Someone\\'s (older) library.',\n    \
            long_description=readme,\n    install_requires=['six'],\n)\n";
        let declared = read(py).unwrap();
        assert_eq!(declared.install_requires, ["six"]);
    }

    #[test]
    fn a_computed_extra_nobody_asks_for_leaves_the_rest_known() {
        // promise's shape: a version from an import, a test list extended
        // under a condition, extras_require naming it.
        let body = "import sys\nversion = __import__('pkg').get_version()\n\
            tests_require = ['pytest>=2.7', 'mock']\nif sys.version_info[0] >= 3:\n    \
            tests_require += ['pytest-asyncio']\n\nsetup(\n    name='pkg',\n    \
            version=version,\n    long_description=open('README.rst').read(),\n    \
            extras_require={'test': tests_require},\n    install_requires=[\n        \
            \"typing>=3.6.4; python_version < '3.5'\",\n        'six'\n    ],\n    \
            tests_require=tests_require,\n)\n";
        let declared = read_ok(body);
        assert_eq!(declared.install_requires.len(), 2);
        assert!(declared.extras.is_empty());
        assert_eq!(computed(&declared), [("test", "tests_require")]);
    }

    #[test]
    fn each_extra_is_judged_on_its_own() {
        let declared =
            read_ok("setup(extras_require={'a': ['x'], 'test': tests_require, 'b': 'y\\nz'})");
        assert_eq!(extras(&declared), ["a", "b"]);
        assert_eq!(declared.extras[1].1, ["y", "z"]);
        assert_eq!(computed(&declared), [("test", "tests_require")]);
        let declared = read_ok("setup(extras_require={'a': ['x'] + ['y' if X else 'z']})");
        // The message shows the code that computes, as near as it is found.
        assert_eq!(computed(&declared), [("a", "'y' if X else 'z'")]);
        // The last of a key given twice holds.
        let declared = read_ok("setup(extras_require={'a': f(), 'a': ['x']})");
        assert_eq!(extras(&declared), ["a"]);
        assert!(declared.computed_extras.is_empty());
    }

    #[test]
    fn names_bound_once_to_literals_are_read() {
        let body = "REQS = [\n    'a>=1',  # why (not)\n    'b',\n]\nTEST = ['pytest']\n\
            EXTRAS = {'test': TEST, 'all': REQS + TEST}\nPY = '>=3.8'\n\
            setup(install_requires=REQS, extras_require=EXTRAS, python_requires=PY)\n";
        let declared = read_ok(body);
        assert_eq!(declared.install_requires, ["a>=1", "b"]);
        assert_eq!(extras(&declared), ["test", "all"]);
        assert_eq!(declared.extras[1].1, ["a>=1", "b", "pytest"]);
        assert_eq!(declared.python_requires.as_deref(), Some(">=3.8"));
        // A module-level variable may share the keyword's name.
        let declared =
            read_ok("install_requires = ['a']\nsetup(install_requires=install_requires)");
        assert_eq!(declared.install_requires, ["a"]);
    }

    #[test]
    fn names_that_may_change_are_computed() {
        for body in [
            "REQS = ['a']\nREQS.append('b')\nsetup(install_requires=REQS)",
            "REQS = ['a']\nif X:\n    REQS += ['b']\nsetup(install_requires=REQS)",
            "REQS = ['a']\nREQS = ['b']\nsetup(install_requires=REQS)",
            "REQS = ['a']\nadd(REQS)\nsetup(install_requires=REQS)",
            "REQS = ['a']\nALL = REQS\nALL.append('b')\nsetup(install_requires=REQS)",
            "REQS = ['a']\nfor REQS in x: pass\nsetup(install_requires=REQS)",
            "REQS = ['a']\nexec('REQS.append(1)')\nsetup(install_requires=REQS)",
            "REQS = ['a']\nfrom x import *\nsetup(install_requires=REQS)",
            "REQS = ['a']\nsetup(install_requires=REQS, cmdclass=f(REQS))",
            "setup(install_requires=REQS)\nREQS = ['a']",
            "if X:\n    REQS = ['a']\nsetup(install_requires=REQS)",
            "REQS = ['a'] if X else []\nsetup(install_requires=REQS)",
            "REQS = OTHER = ['a']\nsetup(install_requires=REQS)",
        ] {
            let why = read_err(body);
            assert!(why.contains("computes `install_requires`"), "{body}: {why}");
        }
    }

    #[test]
    fn a_computed_field_not_needed_does_not_matter() {
        let declared = read_ok("v = '1'\nsetup(version=f'{v}.0', install_requires=['a'])");
        assert_eq!(declared.install_requires, ["a"]);
        let declared = read_ok(
            "setup(\n    description='''Call setup( like this )''',\n    install_requires=('a', 'b'),\n)",
        );
        assert_eq!(declared.install_requires, ["a", "b"]);
    }

    #[test]
    fn what_needs_running_is_refused_with_why() {
        for (body, why) in [
            (
                "setup(install_requires=open('req.txt').read().splitlines())",
                "computes `install_requires` (`open('req.txt').read().splitlines()`)",
            ),
            (
                "setup(python_requires=f'>={MIN}')",
                "computes `python_requires`",
            ),
            (
                "setup(install_requires=[f'a>={V}'])",
                "computes `install_requires`",
            ),
            (
                "setup(install_requires=[*BASE, 'b'])",
                "computes `install_requires`",
            ),
            (
                "setup(extras_require=get_extras())",
                "computes `extras_require`",
            ),
            (
                "setup(extras_require={**BASE, 'a': ['x']})",
                "computes `extras_require`",
            ),
            (
                "setup(extras_require={k: ['x'] for k in KS})",
                "computes `extras_require`",
            ),
            ("setup(extras_require={NAME: ['x']})", "name of an extra"),
            ("setup(install_requires=3)", "not requirements"),
            (
                "setup(install_requires=['a'], install_requires=['b'])",
                "more than once",
            ),
            ("setup('a', install_requires=['b'])", "cannot read"),
            ("setup(x=lambda a, b: a)", "cannot read"),
            ("setup(*args)", "`*` arguments"),
            (
                "kw = {}\nkw['install_requires'] = ['a']\nsetup(name='a')",
                "outside the setup() call",
            ),
            (
                "class C:\n  def run(self):\n    self.distribution.install_requires = []\nsetup(name='a')",
                "outside the setup() call",
            ),
            ("s = setup\ns(name='a')", "hands setup() around"),
            ("setup = make()\nsetup(name='a')", "binds another setup()"),
            ("run(setup)", "hands setup() around"),
            ("setup(name='a'", "cannot be read as Python"),
        ] {
            let got = read_err(body);
            assert!(got.contains(why), "{body}: {got}");
        }
    }

    #[test]
    fn runpy_and_importlib_are_code_that_runs_code() {
        let why = read_err("import runpy\nrunpy.run_path('x.py')\nsetup(name='a')");
        assert!(why.contains("run_path"), "{why}");
        // A compiled regex is not `compile()`.
        let body = "import re\nV = re.compile(r'(\\d+)')\nsetup(name='a')";
        assert_eq!(read_ok(body), Declared::default());
    }

    #[test]
    fn setuptools_setup_called_through_the_module_is_its_own() {
        let py = "import setuptools\nsetuptools.setup(install_requires=['a'])\n";
        assert_eq!(read(py).unwrap().install_requires, ["a"]);
        let py = "import setuptools as s\ns.setup(install_requires=['a'])\n";
        assert!(read(py).unwrap_err().contains("setuptools' own"));
        let py = "from setuptools import setup as s\ns(install_requires=['a'])\n";
        let why = read(py).unwrap_err();
        assert!(why.contains("setuptools' own"), "{why}");
    }

    #[test]
    fn a_huge_fan_out_of_names_stays_bounded() {
        let mut py = String::from(HEAD);
        py.push_str("A0 = ['x']\n");
        for i in 1..40 {
            py.push_str(&format!("A{i} = A{} + A{}\n", i - 1, i - 1));
        }
        py.push_str("setup(install_requires=A39)\n");
        // Read or refused, but quickly and without growing past the budget.
        match read(&py) {
            Ok(d) => assert!(d.install_requires.len() <= BUDGET),
            Err(why) => assert!(why.contains("computes"), "{why}"),
        }
    }
}

/// Many mutations of real-looking setup.py files through the tokenizer and
/// the reader: no panic, and each read quick. cargo-fuzz needs nightly;
/// this runs on stable: `cargo test -p layerlock-dist --release -- --ignored`
/// (`SETUP_PY_MUTATIONS` sets how many; 200,000 by default).
#[cfg(test)]
mod mutated {
    use std::time::{Duration, Instant};

    const SEEDS: &[&str] = &[
        "from setuptools import setup\nR = ['a', \"b; python_version<'3'\"]\nT = ['c']\nif X:\n    T += ['d']\nsetup(\n    name='x',  # :(\n    description='it\\'s (fine)',\n    install_requires=R + ['e'],\n    extras_require={'t': T, 'f': ['g'], 'h': 'i\\nj'},\n    python_requires='>=3.8',\n)\n",
        "try:\n    from setuptools import setup\nexcept ImportError:\n    from distutils.core import setup\nsetup(version=f'{v!r:>{w}}', long_description='''a ( [ {\n''', install_requires=(r'\\'', rb'x', u'y'))\n",
        "import setuptools\nA = {'k': [f\"{', '.join(x)}\"]}\nsetuptools.setup(extras_require=A, install_requires=[x for x in y], **kw)\n",
        "from setuptools import setup\nE = {\"plot\": [\"m\"], 't': ['p']}\nE[\"all\"] = set(p for g in E.values() for p in g)\nE['t'] = ['q']\nsetup(install_requires=['c'], extras_require=E)\n",
        "from setuptools import setup\nP = '>=3.8'\nfor line in open('v.py'):\n    ctx = {}\n    exec(line, ctx)\nconf = {\n    'install_requires': ['', 'a'],\n    'extras_require': {':os_name == \"nt\"': ['b'], 'x:python_version<\"3.9\"': ['c']},\n}\nsetup(python_requires=P, **conf)\n",
    ];

    /// splitmix64.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Bytes Python code is made of, weighted towards what the reader
    /// treats specially.
    const PIECES: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "'",
        "\"",
        "'''",
        "\\",
        "\n",
        "#",
        ",",
        "=",
        "+",
        ":",
        "f",
        "r",
        "b",
        "rb",
        "f'{",
        "}'",
        "*",
        "**",
        " ",
        "\t",
        "setup",
        "install_requires=",
        "extras_require=",
        "R",
        "é",
        "\r",
        "{{",
        "}}",
        "\\N{",
        ":=",
        "for",
        "lambda",
        "exec(",
        ", ctx)",
        "**conf",
        "':",
        "conf = {",
        "E['all'] = ",
        ".values()",
        "set(",
    ];

    fn mutate(seed: &str, state: &mut u64) -> String {
        let mut bytes = seed.as_bytes().to_vec();
        for _ in 0..=(next(state) % 6) {
            let at = (next(state) as usize) % (bytes.len() + 1);
            match next(state) % 4 {
                0 if at < bytes.len() => {
                    bytes.remove(at);
                }
                1 => {
                    let piece = PIECES[(next(state) as usize) % PIECES.len()];
                    bytes.splice(at..at, piece.bytes());
                }
                2 if at < bytes.len() => bytes[at] = next(state) as u8,
                _ => {
                    let end = (at + (next(state) as usize) % 40).min(bytes.len());
                    let copy = bytes[at..end].to_vec();
                    bytes.splice(at..at, copy);
                }
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[test]
    #[ignore = "long: run on its own with --release"]
    fn the_reader_survives_mutated_setup_py_files() {
        let count: usize = std::env::var("SETUP_PY_MUTATIONS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(200_000);
        let mut state = 0x5eed_u64;
        let (mut read, mut slowest) = (0usize, Duration::ZERO);
        for i in 0..count {
            let seed = SEEDS[i % SEEDS.len()];
            let py = mutate(seed, &mut state);
            let started = Instant::now();
            if super::read(&py).is_ok() {
                read += 1;
            }
            let _ = super::indirect(&py);
            slowest = slowest.max(started.elapsed());
            assert!(started.elapsed() < Duration::from_secs(2), "slow: {py:?}");
        }
        eprintln!("{count} mutations, {read} read, slowest {slowest:?}");
    }
}
