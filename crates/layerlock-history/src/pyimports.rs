//! Static imports of Python files, read without running anything, and the
//! in-repository files a test reaches through them.
//!
//! Every `import` and `from … import` statement counts, wherever it sits:
//! inside functions, under `if TYPE_CHECKING:`, in `try:`/`except ImportError:`
//! fallbacks. Reaching a file that might not be imported at run time is the
//! cautious answer when the question is "could this change have broken that
//! test". `importlib.import_module("x")` and `__import__` are not followed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::lexer::{self, Lexer, Token};

/// Source beyond this is not read.
pub const MAX_SOURCE_BYTES: usize = 1024 * 1024;
/// Imports beyond this many in one file are not returned.
pub const MAX_IMPORTS: usize = 10_000;

/// One imported module, with the names taken from it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Import {
    /// Absolute and dotted: relative imports are resolved.
    pub module: String,
    /// For `from m import a, b`: `["a", "b"]` (`*` kept as `"*"`); empty for
    /// `import m`.
    pub names: Vec<String>,
    /// 1-based line of the `import` or `from` keyword.
    pub line: usize,
}

/// The imports of one Python file, in source order.
///
/// `module` is absolute and dotted (relative imports resolved against
/// `this_module`; `is_package` is true for an `__init__.py`, whose own name is
/// the package). For `from a.b import c, d` module = `"a.b"`, names =
/// `["c", "d"]` (`"*"` kept as `"*"`). For `import a.b.c as x, d` two imports:
/// `"a.b.c"` and `"d"`, names empty. A relative import that climbs above the
/// top package is dropped, as Python would refuse it.
///
/// Reads at most [`MAX_SOURCE_BYTES`] of `source` and returns at most
/// [`MAX_IMPORTS`] imports.
pub fn imports(source: &str, this_module: &str, is_package: bool) -> Vec<Import> {
    let here = Here {
        module: this_module,
        is_package,
    };
    let mut found = Vec::new();
    for line in Lexer::new(lexer::bounded(source, MAX_SOURCE_BYTES)) {
        for statement in lexer::statements(&line.tokens) {
            statement_imports(statement, &here, &mut found);
            if found.len() >= MAX_IMPORTS {
                found.truncate(MAX_IMPORTS);
                return found;
            }
        }
    }
    found
}

struct Here<'a> {
    module: &'a str,
    is_package: bool,
}

/// Keywords that open a block whose body may follow the `:` on the same line
/// (`if TYPE_CHECKING: import x`).
const BLOCK_KEYWORDS: &[&str] = &[
    "if", "elif", "else", "try", "except", "finally", "with", "while", "for", "def", "class",
    "async",
];

fn statement_imports(mut tokens: &[Token], here: &Here<'_>, found: &mut Vec<Import>) {
    // A loop, not recursion: a hostile `if x: if x: ...` line must not be
    // able to exhaust the stack.
    while let Some(first) = tokens.first() {
        match first.name() {
            Some("import") => return plain_import(&tokens[1..], first.line, found),
            Some("from") => return from_import(&tokens[1..], first.line, here, found),
            Some(keyword) if BLOCK_KEYWORDS.contains(&keyword) => match block_colon(tokens) {
                Some(colon) => tokens = &tokens[colon + 1..],
                None => return,
            },
            _ => return,
        }
    }
}

/// The `:` that ends a block header, outside brackets.
fn block_colon(tokens: &[Token]) -> Option<usize> {
    let mut depth = 0usize;
    for (index, token) in tokens.iter().enumerate() {
        match token.tok {
            lexer::Tok::Op(b'(' | b'[' | b'{') => depth += 1,
            lexer::Tok::Op(b')' | b']' | b'}') => depth = depth.saturating_sub(1),
            lexer::Tok::Op(b':') if depth == 0 => return Some(index),
            // `lambda` in a header has its own colon; such a line is left alone.
            lexer::Tok::Name(ref name) if name == "lambda" && depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// A dotted name starting at `tokens[at]`; returns it and the index after it.
fn dotted_name(tokens: &[Token], at: usize) -> Option<(String, usize)> {
    let mut name = String::new();
    let mut index = at;
    loop {
        let part = tokens.get(index)?.name()?;
        if part == "import" {
            return None;
        }
        name.push_str(part);
        index += 1;
        if tokens.get(index).is_some_and(|t| t.is_op(b'.'))
            && tokens.get(index + 1).and_then(Token::name).is_some()
        {
            name.push('.');
            index += 1;
        } else {
            return Some((name, index));
        }
    }
}

/// `import a.b.c as x, d` (after `import`).
fn plain_import(tokens: &[Token], line: usize, found: &mut Vec<Import>) {
    let mut index = 0;
    while found.len() < MAX_IMPORTS
        && let Some((module, next)) = dotted_name(tokens, index)
    {
        found.push(Import {
            module,
            names: Vec::new(),
            line,
        });
        index = next;
        if tokens.get(index).is_some_and(|t| t.is_name("as")) {
            index += 2;
        }
        if tokens.get(index).is_some_and(|t| t.is_op(b',')) {
            index += 1;
        } else {
            return;
        }
    }
}

/// `from ..a.b import (c as d, e)` (after `from`).
fn from_import(tokens: &[Token], line: usize, here: &Here<'_>, found: &mut Vec<Import>) {
    let mut index = 0;
    let mut level = 0;
    while tokens.get(index).is_some_and(|t| t.is_op(b'.')) {
        level += 1;
        index += 1;
    }
    let mut module = String::new();
    if let Some((name, next)) = dotted_name(tokens, index) {
        module = name;
        index = next;
    }
    if !tokens.get(index).is_some_and(|t| t.is_name("import")) {
        return;
    }
    index += 1;
    if tokens.get(index).is_some_and(|t| t.is_op(b'(')) {
        index += 1;
    }
    let mut names = Vec::new();
    while let Some(token) = tokens.get(index) {
        if token.is_op(b'*') {
            names.push("*".to_owned());
            index += 1;
        } else if let Some(name) = token.name() {
            names.push(name.to_owned());
            index += 1;
            if tokens.get(index).is_some_and(|t| t.is_name("as")) {
                index += 2;
            }
        } else {
            break;
        }
        if tokens.get(index).is_some_and(|t| t.is_op(b',')) {
            index += 1;
        } else {
            break;
        }
    }
    if names.is_empty() {
        return;
    }
    if let Some(module) = absolute(level, &module, here) {
        found.push(Import {
            module,
            names,
            line,
        });
    }
}

/// The absolute module of a `from` import `level` dots deep, or `None` when
/// it climbs above the top package (or there is no package to start from).
fn absolute(level: usize, module: &str, here: &Here<'_>) -> Option<String> {
    if level == 0 {
        return (!module.is_empty()).then(|| module.to_owned());
    }
    let mut package: Vec<&str> = here.module.split('.').filter(|p| !p.is_empty()).collect();
    if !here.is_package {
        package.pop();
    }
    let climb = level - 1;
    if climb >= package.len() {
        return None;
    }
    package.truncate(package.len() - climb);
    let mut absolute = package.join(".");
    if !module.is_empty() {
        absolute.push('.');
        absolute.push_str(module);
    }
    Some(absolute)
}

/// Files reached from some start files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Closure {
    /// Repository-relative, `/`-separated paths of in-repository `.py` files
    /// reached, the start files included.
    pub files: BTreeSet<String>,
    /// How many imports away from a start file each file is: 0 for the start
    /// files, 1 for what they import and their conftest.py files, and so on
    /// (the fewest, as the walk is breadth first).
    pub depth: BTreeMap<String, usize>,
}

/// How far [`closure`] goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosureOptions {
    /// Import levels followed: 0 is the start files and their conftest.py
    /// files only, 1 adds what they import, and so on.
    pub depth: usize,
    /// Files beyond this many are not added.
    pub max_files: usize,
    /// Bytes read of each file; a larger file is read up to this bound.
    pub max_file_bytes: u64,
}

impl Default for ClosureOptions {
    fn default() -> Self {
        Self {
            depth: 2,
            max_files: 2000,
            max_file_bytes: 1024 * 1024,
        }
    }
}

/// Python files in the repository that `start` (repo-relative `.py` paths)
/// import, transitively up to `options.depth` levels, plus each start file's
/// conftest.py files (its own directory and every ancestor up to the root, if
/// they exist) at depth 1.
///
/// A module `a.b.c` is looked for as `a/b/c.py` and `a/b/c/__init__.py`, under
/// the root and under `src/`; importing it also runs `a/__init__.py` and
/// `a/b/__init__.py`, which are included when they exist. For
/// `from a.b import c`, `c` may be a module (`a/b/c.py`) or a name in
/// `a/b.py` / `a/b/__init__.py`: whichever exist are included. Modules outside
/// the repository (the standard library, third-party packages) are left out
/// silently, as is anything that cannot be read. Paths stay inside the root:
/// `..` is refused and a symlink whose target leaves the root is not followed.
pub fn closure(root: &Path, start: &[String], options: &ClosureOptions) -> Closure {
    let Some(mut walk) = Walk::new(root, options) else {
        return Closure::default();
    };
    for path in start {
        let Some(file) = walk.locate(path) else {
            continue;
        };
        walk.add(&file, 0);
        for conftest in conftests(&file) {
            // Fixtures are one step away, like an import: a repository's
            // top conftest.py changes with everything.
            if let Some(conftest) = walk.locate(&conftest) {
                walk.add(&conftest, 1);
            }
        }
    }
    walk.run();
    Closure {
        files: walk.depth.keys().cloned().collect(),
        depth: walk.depth,
    }
}

/// `a/b/test_x.py` → `a/b/conftest.py`, `a/conftest.py`, `conftest.py`.
fn conftests(file: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut dir = file;
    while let Some((parent, _)) = dir.rsplit_once('/') {
        found.push(format!("{parent}/conftest.py"));
        dir = parent;
    }
    found.push("conftest.py".to_owned());
    found
}

struct Walk<'a> {
    /// Canonical.
    root: PathBuf,
    /// `""` and, when the repository has a `src/` directory, `"src/"`.
    import_roots: Vec<&'static str>,
    /// Whether `src/__init__.py` exists, making `src` a package rather than
    /// an import root for naming files.
    src_is_package: bool,
    options: &'a ClosureOptions,
    /// Every file reached, with its depth.
    depth: BTreeMap<String, usize>,
    queue: VecDeque<(String, usize)>,
}

impl<'a> Walk<'a> {
    fn new(root: &Path, options: &'a ClosureOptions) -> Option<Self> {
        let root = fs::canonicalize(root).ok()?;
        let mut walk = Self {
            root,
            import_roots: vec![""],
            src_is_package: false,
            options,
            depth: BTreeMap::new(),
            queue: VecDeque::new(),
        };
        if walk.inside("src").is_some_and(|src| src.is_dir()) {
            walk.import_roots.push("src/");
            walk.src_is_package = walk.locate("src/__init__.py").is_some();
        }
        Some(walk)
    }

    /// The canonical path of `relative` when it exists inside the root.
    fn inside(&self, relative: &str) -> Option<PathBuf> {
        let relative = Path::new(relative);
        let plain = relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !plain {
            return None;
        }
        let canonical = fs::canonicalize(self.root.join(relative)).ok()?;
        canonical.starts_with(&self.root).then_some(canonical)
    }

    /// The repository-relative path of an existing `.py` file inside the
    /// root, after symlinks are resolved.
    fn locate(&self, relative: &str) -> Option<String> {
        let canonical = self.inside(relative)?;
        if !fs::metadata(&canonical).is_ok_and(|m| m.is_file()) {
            return None;
        }
        if canonical.extension().and_then(|e| e.to_str()) != Some("py") {
            return None;
        }
        let relative = canonical.strip_prefix(&self.root).ok()?;
        let parts: Option<Vec<&str>> = relative
            .components()
            .map(|c| match c {
                Component::Normal(part) => part.to_str(),
                _ => None,
            })
            .collect();
        Some(parts?.join("/"))
    }

    fn add(&mut self, file: &str, depth: usize) {
        if self.depth.len() >= self.options.max_files || self.depth.contains_key(file) {
            return;
        }
        self.depth.insert(file.to_owned(), depth);
        self.queue.push_back((file.to_owned(), depth));
    }

    fn run(&mut self) {
        while let Some((file, depth)) = self.queue.pop_front() {
            if depth >= self.options.depth {
                continue;
            }
            let Some(source) = self.read(&file) else {
                continue;
            };
            let (module, is_package) = self.module_name(&file);
            for import in imports(&source, &module, is_package) {
                for candidate in candidates(&import, &self.import_roots) {
                    if let Some(found) = self.locate(&candidate) {
                        self.add(&found, depth + 1);
                    }
                }
            }
        }
    }

    fn read(&self, file: &str) -> Option<String> {
        let handle = fs::File::open(self.root.join(file)).ok()?;
        let mut bytes = Vec::new();
        handle
            .take(self.options.max_file_bytes)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `src/a/b.py` → `a.b`; `a/__init__.py` → (`a`, package).
    fn module_name(&self, file: &str) -> (String, bool) {
        let mut path = file;
        if !self.src_is_package
            && let Some(rest) = path.strip_prefix("src/")
        {
            path = rest;
        }
        let path = path.strip_suffix(".py").unwrap_or(path);
        let (path, is_package) = if path == "__init__" {
            ("", true)
        } else if let Some(package) = path.strip_suffix("/__init__") {
            (package, true)
        } else {
            (path, false)
        };
        (path.replace('/', "."), is_package)
    }
}

/// Module names longer than this are no path in a repository (and building
/// every parent package of a hostile one would take quadratic time).
const MAX_MODULE_BYTES: usize = 1024;

/// The repository paths an import may run, under each import root.
fn candidates(import: &Import, import_roots: &[&str]) -> Vec<String> {
    if import.module.len() > MAX_MODULE_BYTES {
        return Vec::new();
    }
    let parts: Vec<&str> = import.module.split('.').collect();
    if !parts.iter().all(|part| is_module_part(part)) {
        return Vec::new();
    }
    let mut found = Vec::new();
    for root in import_roots {
        for end in 1..parts.len() {
            found.push(format!("{root}{}/__init__.py", parts[..end].join("/")));
        }
        let module = parts.join("/");
        found.push(format!("{root}{module}.py"));
        found.push(format!("{root}{module}/__init__.py"));
        for name in &import.names {
            if name != "*" && is_module_part(name) {
                found.push(format!("{root}{module}/{name}.py"));
                found.push(format!("{root}{module}/{name}/__init__.py"));
            }
        }
    }
    found
}

/// A name that can only be one path component.
fn is_module_part(part: &str) -> bool {
    !part.is_empty() && part != "." && part != ".." && !part.contains(['/', '\\', ':', '\0'])
}

#[cfg(test)]
mod tests;
