//! Jenkinsfiles: a bounded scanner of the Groovy text, not a Groovy
//! parser. It finds the `sh`, `bat`, `powershell` and `pwsh` steps in
//! every form (`sh 'x'`, `sh """…"""`, `sh(script: '…')`, `sh script: …`)
//! inside `stage('name')`, `parallel` branches and scripted `node { }`
//! blocks; the job of a step is its innermost stage (or branch). Comments
//! and strings that are no step's argument are skipped; `environment { }`
//! and `withEnv([…])` give literal variables, `dir('x') { }` the working
//! directory. Groovy's `${env.X}` in a double-quoted string is left to the
//! shell as `${X}`. Text past the bounds is not read; no input panics.

use std::collections::BTreeMap;

use crate::script::{Phase, Script, at_columns};

/// Blocks nest at most this deep; deeper ones count but keep their
/// parent's settings.
const MAX_DEPTH: usize = 64;
/// At most this many tokens are read.
const MAX_TOKENS: usize = 500_000;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// A string's value, whether it interpolates (`"`), and where its
    /// first character is.
    Str {
        value: String,
        double: bool,
        line: usize,
        column: usize,
    },
    Punct(char),
}

/// Each token with its line.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1usize, 0usize);
    while i < chars.len() && out.len() < MAX_TOKENS {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                i += 1;
                line += 1;
                line_start = i;
            }
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    if chars[i] == '\n' {
                        line += 1;
                        line_start = i + 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            '\'' | '"' => {
                let triple = next == Some(c) && chars.get(i + 2) == Some(&c);
                let open = if triple { 3 } else { 1 };
                let start = (line, i + open - line_start + 1);
                let mut value = String::new();
                let mut k = i + open;
                while let Some(&d) = chars.get(k) {
                    if d == '\\' {
                        if let Some(&e) = chars.get(k + 1) {
                            match e {
                                'n' => value.push_str("; "),
                                't' => value.push(' '),
                                '\n' => {
                                    value.push_str("\\\n");
                                    line += 1;
                                    line_start = k + 2;
                                }
                                '$' if c == '"' => value.push_str("\\$"),
                                _ => value.push(e),
                            }
                        }
                        k += 2;
                        continue;
                    }
                    if d == c && (!triple || chars[k..].starts_with(&[c, c, c])) {
                        k += open;
                        break;
                    }
                    if d == '\n' {
                        if !triple {
                            break;
                        }
                        line += 1;
                        line_start = k + 1;
                    }
                    value.push(d);
                    k += 1;
                }
                i = k;
                out.push((
                    Tok::Str {
                        value,
                        double: c == '"',
                        line: start.0,
                        column: start.1,
                    },
                    start.0,
                ));
            }
            _ if c.is_alphanumeric() || c == '_' => {
                let end = (i..chars.len())
                    .find(|&k| !(chars[k].is_alphanumeric() || chars[k] == '_'))
                    .unwrap_or(chars.len());
                out.push((Tok::Ident(chars[i..end].iter().collect()), line));
                i = end;
            }
            _ if c.is_whitespace() => i += 1,
            _ => {
                out.push((Tok::Punct(c), line));
                i += 1;
            }
        }
    }
    out
}

/// What a block gives the steps inside it.
#[derive(Debug, Clone, Default)]
struct Block {
    label: Option<String>,
    env: BTreeMap<String, String>,
    dir: Option<String>,
    /// An `environment { }` block: its assignments are its parent's.
    environment: bool,
    /// Inside `def NAME(a, b) { … }`: the function and its parameters.
    function: Option<(String, Vec<String>)>,
}

/// How many calls of one function are read: each is a run of its steps.
const MAX_CALLS: usize = 16;

struct Scanner {
    toks: Vec<(Tok, usize)>,
    stack: Vec<Block>,
    /// Blocks opened past [`MAX_DEPTH`], not on the stack.
    beyond: usize,
    pending: Block,
    out: Vec<Script>,
    /// Each function's calls with literal arguments (`f('pytorch')`).
    calls: BTreeMap<String, Vec<Vec<String>>>,
}

fn punct(tok: Option<&(Tok, usize)>, c: char) -> bool {
    matches!(tok, Some((Tok::Punct(p), _)) if *p == c)
}

fn string(tok: Option<&(Tok, usize)>) -> Option<&str> {
    match tok {
        Some((Tok::Str { value, .. }, _)) => Some(value),
        _ => None,
    }
}

impl Scanner {
    fn top(&self) -> &Block {
        self.stack.last().unwrap_or(&self.pending)
    }

    fn scan(&mut self) {
        let toks = std::mem::take(&mut self.toks);
        let mut i = 0;
        while i < toks.len() {
            i = self.token(&toks, i);
        }
    }

    /// Read the token at `i`; returns the index of the next to read.
    fn token(&mut self, toks: &[(Tok, usize)], i: usize) -> usize {
        let at = |k: usize| toks.get(k);
        match &toks[i].0 {
            Tok::Punct('{') => {
                self.open();
                i + 1
            }
            Tok::Punct('}') => {
                self.close();
                i + 1
            }
            Tok::Ident(word) => {
                let word = word.clone();
                let after_dot = i > 0 && punct(at(i - 1), '.');
                if after_dot {
                    return i + 1;
                }
                match word.as_str() {
                    "sh" | "bat" | "powershell" | "pwsh" => self.step(toks, i, &word),
                    "stage" | "dir"
                        if punct(at(i + 1), '(')
                            && string(at(i + 2)).is_some()
                            && punct(at(i + 3), ')') =>
                    {
                        let value = string(at(i + 2)).map(str::to_string);
                        if word == "stage" {
                            self.pending.label = value;
                        } else {
                            self.pending.dir = value;
                        }
                        i + 4
                    }
                    "environment" if punct(at(i + 1), '{') => {
                        self.pending.environment = true;
                        i + 1
                    }
                    "withEnv" => self.with_env(toks, i + 1),
                    "def" => self.def(toks, i + 1),
                    _ if punct(at(i + 1), ':') && punct(at(i + 2), '{') => {
                        self.pending.label = Some(word);
                        i + 2
                    }
                    _ if punct(at(i + 1), '=') && self.top().environment => {
                        if let Some((Tok::Str { value, .. }, _)) = at(i + 2) {
                            let value = value.clone();
                            if let Some(block) = self.stack.last_mut() {
                                block.env.insert(word, value);
                            }
                        }
                        i + 2
                    }
                    _ => i + 1,
                }
            }
            // A parallel branch named by a string: `'linux': { … }`.
            Tok::Str { value, .. } if punct(at(i + 1), ':') && punct(at(i + 2), '{') => {
                self.pending.label = Some(value.clone());
                i + 2
            }
            _ => i + 1,
        }
    }

    fn open(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        if self.stack.len() >= MAX_DEPTH {
            self.beyond += 1;
            return;
        }
        let parent = self.stack.last().cloned().unwrap_or_default();
        let mut env = parent.env;
        env.extend(pending.env);
        self.stack.push(Block {
            label: pending.label.or(parent.label),
            env,
            dir: pending.dir.or(parent.dir),
            environment: pending.environment,
            function: pending.function.or(parent.function),
        });
    }

    fn close(&mut self) {
        self.pending = Block::default();
        if self.beyond > 0 {
            self.beyond -= 1;
            return;
        }
        if let Some(block) = self.stack.pop()
            && block.environment
            && let Some(parent) = self.stack.last_mut()
        {
            parent.env.extend(block.env);
        }
    }

    /// `withEnv(['A=1', "B=2"]) {`: the literal ones for the next block.
    fn with_env(&mut self, toks: &[(Tok, usize)], mut i: usize) -> usize {
        while i < toks.len() && !punct(toks.get(i), '{') {
            if let Some((Tok::Str { value, .. }, _)) = toks.get(i)
                && let Some((k, v)) = value.split_once('=')
            {
                self.pending.env.insert(k.to_string(), v.to_string());
            }
            if punct(toks.get(i), '}') {
                break;
            }
            i += 1;
        }
        i
    }

    /// `def NAME(a, b) {` (parameters may be typed: `String a`): the
    /// next block is the function's.
    fn def(&mut self, toks: &[(Tok, usize)], i: usize) -> usize {
        let Some((Tok::Ident(name), _)) = toks.get(i) else {
            return i;
        };
        if !punct(toks.get(i + 1), '(') {
            return i + 1;
        }
        let mut params = Vec::new();
        let mut k = i + 2;
        while let Some((tok, _)) = toks.get(k) {
            match tok {
                Tok::Punct(')') => break,
                // The last name before a `,` or `)` is the parameter's.
                Tok::Ident(p) if punct(toks.get(k + 1), ',') || punct(toks.get(k + 1), ')') => {
                    params.push(p.clone());
                }
                _ => {}
            }
            k += 1;
        }
        if punct(toks.get(k + 1), '{') {
            self.pending.function = Some((name.clone(), params));
        }
        k + 1
    }

    /// The runs of a step: one, or inside a function one per call with
    /// literal arguments, its parameters set to them.
    fn runs(&self) -> Vec<(Option<String>, BTreeMap<String, String>)> {
        let block = self.top();
        let Some((name, params)) = &block.function else {
            return vec![(block.label.clone(), block.env.clone())];
        };
        let calls = self.calls.get(name).map(Vec::as_slice).unwrap_or_default();
        if calls.is_empty() {
            return vec![(block.label.clone(), block.env.clone())];
        }
        calls
            .iter()
            .map(|args| {
                let mut env = block.env.clone();
                for (param, value) in params.iter().zip(args) {
                    env.insert(param.clone(), value.clone());
                }
                let job = block
                    .label
                    .clone()
                    .unwrap_or_else(|| format!("{name}('{}')", args.join("', '")));
                (Some(job), env)
            })
            .collect()
    }

    /// A step at `i`: its script is the string right after it (in
    /// parentheses or not), or its `script:` argument.
    fn step(&mut self, toks: &[(Tok, usize)], i: usize, word: &str) -> usize {
        let line = toks[i].1;
        let mut k = i + 1;
        let paren = punct(toks.get(k), '(');
        if paren {
            k += 1;
        }
        let mut found = None;
        let mut first = true;
        while let Some((tok, tok_line)) = toks.get(k) {
            if (!paren && *tok_line != line) || punct(toks.get(k), ')') || punct(toks.get(k), '{') {
                break;
            }
            match tok {
                Tok::Str { .. } if first => {
                    found = Some(k);
                    break;
                }
                Tok::Ident(name)
                    if name == "script"
                        && punct(toks.get(k + 1), ':')
                        && string(toks.get(k + 2)).is_some() =>
                {
                    found = Some(k + 2);
                    break;
                }
                _ => {}
            }
            first = false;
            k += 1;
        }
        let Some(at) = found else {
            return i + 1;
        };
        let Some((
            Tok::Str {
                value,
                double,
                line,
                column,
            },
            _,
        )) = toks.get(at)
        else {
            return i + 1;
        };
        let text = if *double {
            interpolation(value)
        } else {
            value.clone()
        };
        // A block opened with a newline starts on the next line.
        let (text, line, column) = match text.strip_prefix('\n') {
            Some(rest) => (rest.to_string(), line + 1, 1),
            None => (text, *line, *column),
        };
        let (text, layout) = at_columns(&text, line, column);
        let shell = match word {
            "sh" => "sh",
            "bat" => "cmd",
            _ => "pwsh",
        };
        let dir = self.top().dir.clone();
        for (job, env) in self.runs() {
            self.out.push(Script {
                text: text.clone(),
                layout: layout.clone(),
                job,
                phase: Phase::JobTime,
                env,
                working_dir: dir.clone(),
                mounts: Vec::new(),
                shell: Some(shell.to_string()),
            });
        }
        at + 1
    }
}

/// `${env.X}` and `${params.X}` (Groovy's) as the shell's `${X}`.
fn interpolation(text: &str) -> String {
    text.replace("${env.", "${").replace("${params.", "${")
}

/// Every call `NAME('a', "b")` whose arguments are all literal strings,
/// by name (at most [`MAX_CALLS`] distinct ones each); a `def` is no call.
fn calls(toks: &[(Tok, usize)]) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut out: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for i in 0..toks.len() {
        let Some((Tok::Ident(name), _)) = toks.get(i) else {
            continue;
        };
        let defined = matches!(toks.get(i.wrapping_sub(1)), Some((Tok::Ident(d), _)) if d == "def");
        if defined || !punct(toks.get(i + 1), '(') {
            continue;
        }
        let mut args = Vec::new();
        let mut k = i + 2;
        let literal = loop {
            match toks.get(k) {
                Some((Tok::Str { value, .. }, _)) if !value.contains('$') => {
                    args.push(value.clone());
                }
                Some((Tok::Punct(','), _)) => {}
                Some((Tok::Punct(')'), _)) => break !args.is_empty(),
                _ => break false,
            }
            k += 1;
        };
        let seen = out.entry(name.clone()).or_default();
        if literal && seen.len() < MAX_CALLS && !seen.contains(&args) {
            seen.push(args);
        }
    }
    out
}

/// Every shell step of a Jenkinsfile.
pub fn scripts(text: &str) -> Vec<Script> {
    let toks = tokens(text);
    let calls = calls(&toks);
    let mut scanner = Scanner {
        toks,
        stack: Vec::new(),
        beyond: 0,
        pending: Block::default(),
        out: Vec::new(),
        calls,
    };
    scanner.scan();
    scanner.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(Option<String>, String, usize, usize)> {
        scripts(text)
            .into_iter()
            .map(|s| {
                let first = s.text.lines().next().unwrap_or("");
                let indent = first.len() - first.trim_start().len();
                let pos = s.layout.map(1, indent + 1);
                (s.job, s.text.trim().to_string(), pos.line, pos.column)
            })
            .collect()
    }

    #[test]
    fn declarative_steps_in_every_form() {
        let text = r#"pipeline {
  agent any
  environment { PKG = 'foo' }
  stages {
    stage('Build') {
      steps {
        sh 'pip install $PKG'
        // sh 'pip install commented'
        /* sh 'pip install blocked' */
        sh """
          bash ci/x.sh ${env.PKG}
        """
        echo 'pip install not-a-step'
      }
    }
    stage("Test") {
      steps {
        sh(script: 'pytest', returnStatus: true)
        sh script: "tox -e py", label: 'tox'
        bat 'call ci\\win.bat'
      }
    }
  }
}
"#;
        let got = found(text);
        let s = |x: &str| x.to_string();
        assert_eq!(
            got,
            [
                (Some(s("Build")), s("pip install $PKG"), 7, 13),
                (Some(s("Build")), s("bash ci/x.sh ${PKG}"), 11, 11),
                (Some(s("Test")), s("pytest"), 18, 21),
                (Some(s("Test")), s("tox -e py"), 19, 21),
                (Some(s("Test")), s("call ci\\win.bat"), 20, 14),
            ]
        );
        let all = scripts(text);
        assert_eq!(all[0].env["PKG"], "foo");
        assert_eq!(all[0].shell.as_deref(), Some("sh"));
        assert_eq!(all[4].shell.as_deref(), Some("cmd"));
    }

    #[test]
    fn scripted_parallel_branches_and_dirs() {
        let text = "node {\n  stage('Test') {\n    parallel(\n      'linux': { dir('sub') { sh '''\n        pip install a\n''' } },\n      windows: { bat \"pip install b\" }\n    )\n  }\n}\n";
        let all = scripts(text);
        let got = found(text);
        assert_eq!(got[0], (Some("linux".into()), "pip install a".into(), 5, 9));
        assert_eq!(all[0].working_dir.as_deref(), Some("sub"));
        assert_eq!(
            got[1],
            (Some("windows".into()), "pip install b".into(), 7, 23)
        );
    }

    #[test]
    fn a_function_runs_its_steps_once_for_each_call() {
        let text = "def unit(backend, dev) {\n  sh \"bash ci/${backend}_${dev}.sh\"\n}\nstage('a') { unit('torch', 'cpu') }\nstage('b') { unit('mx', 'gpu') }\n";
        let runs: Vec<(Option<String>, Option<String>)> = scripts(text)
            .into_iter()
            .map(|s| (s.job, s.env.get("backend").cloned()))
            .collect();
        assert_eq!(
            runs,
            [
                (Some("unit('torch', 'cpu')".into()), Some("torch".into())),
                (Some("unit('mx', 'gpu')".into()), Some("mx".into())),
            ]
        );
    }

    #[test]
    fn odd_text_never_panics() {
        let deep = "{".repeat(10_000);
        for text in [
            "sh",
            "sh(",
            "sh '",
            "sh '''",
            "sh \"\"\"x",
            "/*",
            "'\\",
            "}}}}",
            "stage('x'",
            "withEnv([",
            "environment { X = ",
            deep.as_str(),
            "sh script:",
        ] {
            let _ = scripts(text);
        }
    }
}
