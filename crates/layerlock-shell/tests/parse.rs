//! Behaviour of `parse` on the shell found in CI scripts, workflow `run:`
//! blocks and Dockerfile `RUN` lines.

use std::collections::BTreeMap;

use layerlock_shell::{Command, Context, parse};

fn commands(text: &str) -> Vec<Command> {
    match parse(text) {
        Ok(script) => script.commands,
        Err(err) => panic!("{text:?} should parse: {err}"),
    }
}

/// Each word's value, or its raw text when it is not static.
fn argv(command: &Command) -> Vec<String> {
    command
        .words
        .iter()
        .map(|w| w.value.clone().unwrap_or_else(|| w.raw.clone()))
        .collect()
}

/// argv of every command, words joined with spaces.
fn argvs(text: &str) -> Vec<String> {
    commands(text).iter().map(|c| argv(c).join(" ")).collect()
}

#[test]
fn vllm_mooncake_heredoc_inside_substitution_inside_quotes() {
    let text = r#"uv pip install --python .venv/bin/python "$(.venv/bin/python - <<'PY'
from pathlib import Path
import torch

requirement = next(
    line for line in Path("requirements/kv_connectors.txt").read_text().splitlines()
    if line.startswith("mooncake-transfer-engine ")
)
if torch.version.cuda.split(".")[0] == "13":
    requirement = requirement.replace("mooncake-transfer-engine", "mooncake-transfer-engine-cuda13")
print(requirement)
PY
)"
"#;
    let found = commands(text);
    assert_eq!(found.len(), 2, "{found:#?}");

    let uv = &found[0];
    assert_eq!((uv.line, uv.column), (1, 1));
    assert_eq!(uv.words.len(), 6);
    assert_eq!(
        argv(uv)[..5],
        ["uv", "pip", "install", "--python", ".venv/bin/python"]
    );
    let last = &uv.words[5];
    assert!(last.has_substitution);
    assert_eq!(last.value, None);
    assert!(last.raw.starts_with("\"$(.venv/bin/python - <<'PY'\n"));
    assert!(last.raw.ends_with("PY\n)\""));
    assert!(uv.context.is_empty());
    assert!(uv.heredoc.is_none());
    assert!(!uv.text.contains('\n'));

    let python = &found[1];
    assert_eq!(argv(python), [".venv/bin/python", "-"]);
    assert_eq!(python.context, [Context::Substitution]);
    assert_eq!((python.line, python.column), (1, 45));
    assert_eq!(python.text, ".venv/bin/python - <<'PY'");
    let body = python.heredoc.as_deref().expect("heredoc body");
    assert!(body.starts_with("from pathlib import Path\nimport torch\n\nrequirement = next(\n"));
    assert!(body.ends_with("print(requirement)\n"));
    assert!(!body.contains("\nPY"));
    // Same without the block scalar's final newline.
    assert_eq!(commands(text.trim_end()).len(), 2);
}

#[test]
fn continuation_lines_and_single_quotes() {
    let found = commands(
        "pip install \\\n    'opentelemetry-sdk>=1.26.0' \\\n    'opentelemetry-api>=1.26.0'",
    );
    assert_eq!(found.len(), 1);
    assert_eq!(
        argv(&found[0]),
        [
            "pip",
            "install",
            "opentelemetry-sdk>=1.26.0",
            "opentelemetry-api>=1.26.0"
        ]
    );
    assert_eq!(
        found[0].text,
        "pip install     'opentelemetry-sdk>=1.26.0'     'opentelemetry-api>=1.26.0'"
    );
}

#[test]
fn echo_is_just_a_command() {
    assert_eq!(argvs("echo pip install foo"), ["echo pip install foo"]);
}

#[test]
fn bash_c_string_is_parsed() {
    let found = commands("bash -c 'pip install a && uv pip install b'");
    assert_eq!(found.len(), 3);
    assert_eq!(
        argv(&found[0]),
        ["bash", "-c", "pip install a && uv pip install b"]
    );
    assert!(found[0].context.is_empty());
    assert_eq!(argv(&found[1]), ["pip", "install", "a"]);
    assert_eq!(found[1].context, [Context::ShellC]);
    assert_eq!((found[1].line, found[1].column), (1, 10));
    assert_eq!(argv(&found[2]), ["uv", "pip", "install", "b"]);
    assert_eq!(found[2].context, [Context::ShellC]);
    assert_eq!((found[2].line, found[2].column), (1, 27));
    assert_eq!(found[2].text, "uv pip install b");
}

#[test]
fn bash_c_variants_and_wrappers() {
    for text in [
        "sh -c 'pip install a'",
        "/bin/bash -lc 'pip install a'",
        "bash -ec 'pip install a'",
        "bash -e -c 'pip install a'",
        "bash -xec 'pip install a'",
        "bash -o pipefail -c 'pip install a'",
        "sudo -E bash -c 'pip install a'",
        "env FOO=1 bash -c 'pip install a'",
        "timeout 10 sh -c 'pip install a'",
        "docker exec ctr bash -c 'pip install a'",
        "nohup zsh -c 'pip install a'",
        "bash -c \"pip install a\"",
    ] {
        let found = commands(text);
        assert_eq!(found.len(), 2, "{text}: {found:#?}");
        assert_eq!(argv(&found[1]), ["pip", "install", "a"], "{text}");
        assert_eq!(found[1].context, [Context::ShellC], "{text}");
    }
    // Mentioning a shell is not running one.
    assert_eq!(commands("echo bash -c 'pip install a'").len(), 1);
    // A script file is not a string.
    assert_eq!(commands("bash script.sh -c 'pip install a'").len(), 1);
}

#[test]
fn bash_c_with_variables_and_multiline_string() {
    let found = commands("bash -c \"pip install -r $REQS\"");
    assert_eq!(found.len(), 2);
    assert_eq!(found[1].words[3].variables, ["REQS"]);
    assert_eq!(found[1].context, [Context::ShellC]);

    let found = commands("true\nbash -c '\n  set -e\n  pip install x\n'");
    let pip = found
        .iter()
        .find(|c| c.program() == Some("pip"))
        .expect("pip");
    assert_eq!((pip.line, pip.column), (4, 3));
    assert_eq!(pip.context, [Context::ShellC]);

    // An opaque string runs something unknown: nothing to parse.
    assert_eq!(commands("bash -c \"$CMD\"").len(), 1);
    // A broken inner script leaves the outer command.
    assert_eq!(argvs("bash -c 'echo \"'"), ["bash -c echo \""]);
}

#[test]
fn if_and_test_brackets() {
    let found = commands("if [ -f x ]; then pip install y; fi");
    assert_eq!(
        found.iter().map(|c| argv(c).join(" ")).collect::<Vec<_>>(),
        ["[ -f x ]", "pip install y"]
    );
    assert_eq!(argvs("[[ -f x ]] && pip install z"), ["pip install z"]);
    assert_eq!(
        argvs(
            "if [[ $a < $b && ( -n \"$(uname)\" ) ]]; then pip install z; elif true; then :; else false; fi"
        ),
        ["uname", "pip install z", "true", ":", "false"]
    );
    assert_eq!(
        argvs("(( i++ )) && echo $(( i + 1 ))"),
        ["echo $(( i + 1 ))"]
    );
}

#[test]
fn for_loop_words_are_not_commands() {
    let found = commands("for p in a b; do pip install \"$p\"; done");
    assert_eq!(found.len(), 1);
    let word = &found[0].words[2];
    assert_eq!(word.raw, "\"$p\"");
    assert_eq!(word.value, None);
    assert_eq!(word.variables, ["p"]);
    assert!(!word.has_substitution);

    assert_eq!(
        argvs(
            "for ((i = 0; i < 3; i++)); do echo $i; done\nfor f in $(ls); do rm \"$f\"; done\nwhile read -r l; do echo \"$l\"; done < file.txt\nselect x in a b; do break; done"
        ),
        [
            "echo $i",
            "ls",
            "rm \"$f\"",
            "read -r l",
            "echo \"$l\"",
            "break"
        ]
    );
}

#[test]
fn subshells_pipes_and_lists() {
    let found = commands("cd /x && (source venv/bin/activate; pip install -r r.txt) | tee log");
    let summary: Vec<_> = found
        .iter()
        .map(|c| (argv(c).join(" "), c.context.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            ("cd /x".to_string(), vec![]),
            (
                "source venv/bin/activate".to_string(),
                vec![Context::Subshell]
            ),
            ("pip install -r r.txt".to_string(), vec![Context::Subshell]),
            ("tee log".to_string(), vec![]),
        ]
    );
    assert_eq!(
        argvs("a; b & c || d |& e\nf && { g; h; } > out 2>&1"),
        ["a", "b", "c", "d", "e", "f", "g", "h"]
    );
}

#[test]
fn expand_with_known_variables() {
    let found = commands("PKG=foo; pip install $PKG");
    assert_eq!(found.len(), 2);
    assert!(found[0].words.is_empty());
    assert_eq!(found[0].assignments[0].0, "PKG");
    assert_eq!(found[0].assignments[0].1.value.as_deref(), Some("foo"));
    let word = &found[1].words[2];
    let mut vars = BTreeMap::new();
    vars.insert("PKG".to_string(), "foo".to_string());
    assert_eq!(word.expand(&vars).as_deref(), Some("foo"));
    assert_eq!(word.expand(&BTreeMap::new()), None);

    let braces = &commands("pip install \"${PKG}[extra]==${VER}\"")[0].words[2];
    vars.insert("VER".to_string(), "1.0".to_string());
    assert_eq!(braces.expand(&vars).as_deref(), Some("foo[extra]==1.0"));
    assert_eq!(braces.variables, ["PKG", "VER"]);

    let default = &commands("pip install ${PKG:-bar}")[0].words[2];
    assert_eq!(default.variables, ["PKG"]);
    assert_eq!(default.expand(&vars), None);
}

#[test]
fn heredoc_fed_to_a_shell() {
    let found = commands("bash <<EOF\npip install q\nEOF");
    assert_eq!(found.len(), 2);
    assert_eq!(argv(&found[0]), ["bash"]);
    assert_eq!(found[0].heredoc.as_deref(), Some("pip install q\n"));
    assert_eq!(argv(&found[1]), ["pip", "install", "q"]);
    assert_eq!(found[1].context, [Context::HeredocShell]);
    assert_eq!((found[1].line, found[1].column), (2, 1));

    for text in [
        "bash -s <<EOF\npip install q\nEOF\n",
        "sh -ex <<'EOF'\npip install q\nEOF\n",
        "/bin/bash -s -- arg <<EOF\npip install q\nEOF\n",
        "docker exec -i ctr bash <<EOF\npip install q\nEOF\n",
        "bash <<-EOF\n\tpip install q\n\tEOF\n",
    ] {
        let found = commands(text);
        assert_eq!(found.len(), 2, "{text}: {found:#?}");
        assert_eq!(found[1].context, [Context::HeredocShell], "{text}");
        assert_eq!(argv(&found[1]), ["pip", "install", "q"], "{text}");
    }
    // A script file reads no commands from stdin.
    assert_eq!(commands("bash run.sh <<EOF\npip install q\nEOF\n").len(), 1);
}

#[test]
fn heredoc_to_other_commands_is_data() {
    let found = commands("cat > f.txt <<'EOF'\npip install not-a-command\nEOF");
    assert_eq!(found.len(), 1);
    assert_eq!(argv(&found[0]), ["cat"]);
    assert_eq!(
        found[0].heredoc.as_deref(),
        Some("pip install not-a-command\n")
    );
    assert_eq!(found[0].text, "cat > f.txt <<'EOF'");
}

#[test]
fn several_heredocs_on_one_line() {
    let text = "cat <<A; python - <<-B && echo done\nbody a\nA\n\tbody b\n\tB\necho after\n";
    let found = commands(text);
    assert_eq!(argvs(text), ["cat", "python -", "echo done", "echo after"]);
    assert_eq!(found[0].heredoc.as_deref(), Some("body a\n"));
    assert_eq!(found[1].heredoc.as_deref(), Some("body b\n"));
    assert_eq!(found[3].line, 6);
}

#[test]
fn quoting_forms() {
    assert_eq!(argvs("python -c \"import pip\""), ["python -c import pip"]);
    let found = commands("tool --flag=\"a b\" $'a\\tb' \"x\\\"y\\\\z\\$w\\`\" a\\ b '' \"\"");
    assert_eq!(
        argv(&found[0]),
        ["tool", "--flag=a b", "a\tb", "x\"y\\z$w`", "a b", "", ""]
    );
    assert!(found[0].words.iter().all(|w| w.variables.is_empty()));
    // Glob characters keep a word static.
    assert_eq!(
        commands("ls *.whl dist/?.tar.gz [ab]c")[0].words[1]
            .value
            .as_deref(),
        Some("*.whl")
    );
}

#[test]
fn command_substitutions() {
    let found = commands("echo \"$(date)\"");
    assert_eq!(found.len(), 2);
    assert_eq!(argv(&found[1]), ["date"]);
    assert_eq!(found[1].context, [Context::Substitution]);
    assert!(found[0].words[1].has_substitution);

    let found = commands("echo `date +%s` \"`uname \\`arch\\``\"");
    assert_eq!(
        found
            .iter()
            .map(|c| (argv(c).join(" "), c.context.len()))
            .collect::<Vec<_>>(),
        [
            ("echo `date +%s` \"`uname \\`arch\\``\"".to_string(), 0),
            ("date +%s".to_string(), 1),
            ("uname `arch`".to_string(), 1),
            ("arch".to_string(), 2),
        ]
    );
    assert_eq!((found[3].line, found[3].column), (1, 27));

    assert_eq!(
        argvs("x=$(a $(b) \"$(c \"$(d)\")\") y=${z:-$(e)} f <(g) >(h) $(( $(i) + 1 ))"),
        [
            "f <(g) >(h) $(( $(i) + 1 ))",
            "a $(b) \"$(c \"$(d)\")\"",
            "b",
            "c \"$(d)\"",
            "d",
            "e",
            "g",
            "h",
            "i"
        ]
    );
    assert_eq!(
        argvs("echo $( (cd x; ls) )"),
        ["echo $( (cd x; ls) )", "cd x", "ls"]
    );
    assert_eq!(argvs("x=$(case $y in a) echo a;; esac)"), ["", "echo a"]);
}

#[test]
fn unterminated_constructs_are_errors() {
    let err = parse("pip install 'x").expect_err("unterminated quote");
    assert_eq!((err.line, err.column), (1, 13));
    assert_eq!(
        err.to_string(),
        "line 1, column 13: unterminated single quote"
    );

    for (text, line, column) in [
        ("echo ok\n  echo \"abc", 2, 8),
        ("echo $(date", 1, 6),
        // The `"` after `date` opens a quote inside the substitution.
        ("echo \"$(date\"", 1, 13),
        ("cat <<EOF\nno end\n", 1, 5),
        ("cat <<EOF", 1, 5),
        ("echo ${x", 1, 6),
        ("echo `date", 1, 6),
        ("echo $'x", 1, 6),
    ] {
        let err = parse(text).expect_err(text);
        assert_eq!((err.line, err.column), (line, column), "{text}: {err}");
    }
}

#[test]
fn case_items() {
    assert_eq!(
        argvs("case \"$1\" in a) pip install x ;; *) echo no ;; esac"),
        ["pip install x", "echo no"]
    );
    assert_eq!(
        argvs(
            "case $x in\n  (a|b) one;;\n  c) two ;&\n  d)\n    three\n    ;;\n  *) four\nesac\nafter"
        ),
        ["one", "two", "three", "four", "after"]
    );
}

#[test]
fn function_definitions() {
    let found = commands("function f { pip install a; }; f() ( pip install b )");
    assert_eq!(
        argvs("function f { pip install a; }; f() ( pip install b )"),
        ["pip install a", "pip install b"]
    );
    assert_eq!(found[1].context, [Context::Subshell]);
    assert_eq!(
        argvs("setup () {\n  pip install c\n}\nfunction g() {\n  echo g\n}\nsetup"),
        ["pip install c", "echo g", "setup"]
    );
}

#[test]
fn redirections_are_not_words() {
    assert_eq!(
        argvs("pip install x 2>/dev/null >>log &>out >&2 <in 3<&0 <<<\"here string\" >| f"),
        ["pip install x"]
    );
    let found = commands(">out FOO=1 BAR=\"a b\" cmd arg 2>&1");
    assert_eq!(argv(&found[0]), ["cmd", "arg"]);
    assert_eq!(found[0].assignments.len(), 2);
    assert_eq!(found[0].assignments[1].1.value.as_deref(), Some("a b"));
    assert_eq!(found[0].text, ">out FOO=1 BAR=\"a b\" cmd arg 2>&1");
    // Only redirections: nothing runs.
    assert!(commands("> empty.txt").is_empty());
}

#[test]
fn assignments_and_declarations() {
    let found =
        commands("FOO=bar\nexport FOO=bar\nlocal a=1 b\ndeclare -a xs=(a \"$(b)\")\nys=(1 2)");
    assert_eq!(
        found.iter().map(|c| argv(c).join(" ")).collect::<Vec<_>>(),
        [
            "",
            "export FOO=bar",
            "local a=1 b",
            "declare -a xs=(a \"$(b)\")",
            "b",
            ""
        ]
    );
    assert!(found[0].words.is_empty());
    assert_eq!(found[0].assignments.len(), 1);
    assert!(found[3].words[2].has_substitution);
    assert_eq!(found[5].assignments[0].0, "ys");
    assert_eq!(found[5].assignments[0].1.value, None);
}

#[test]
fn positions_and_text() {
    let text = "# setup\n\nset -e\n  \tpip install \\\n  a # comment\nfoo; bar";
    let found = commands(text);
    let positions: Vec<_> = found
        .iter()
        .map(|c| (c.line, c.column, c.text.as_str()))
        .collect();
    assert_eq!(
        positions,
        [
            (3, 1, "set -e"),
            (4, 4, "pip install   a"),
            (6, 1, "foo"),
            (6, 6, "bar"),
        ]
    );
}

#[test]
fn keywords_only_in_command_position() {
    assert_eq!(argvs("echo if then fi done }"), ["echo if then fi done }"]);
    assert_eq!(
        argvs("! pip check && time -p pip install x"),
        ["pip check", "pip install x"]
    );
    assert_eq!(argvs("until false; do :; done"), ["false", ":"]);
}

#[test]
fn crlf_and_comments() {
    assert_eq!(
        argvs("pip install a\r\npip install b # c\r\n"),
        ["pip install a", "pip install b"]
    );
    assert_eq!(
        argvs("echo a#b # c ) ; d\necho '#x'"),
        ["echo a#b", "echo #x"]
    );
}

#[test]
fn parameter_expansion_forms() {
    let found =
        commands("echo ${#arr[@]} ${!ref} ${x//\\}/y} \"${x:-\"a}b\"}\" ${x:-{a}} $1 $@ $? ${10}");
    let words = &found[0].words;
    assert_eq!(words.len(), 10);
    assert_eq!(words[1].variables, ["arr"]);
    assert_eq!(words[2].variables, ["ref"]);
    assert_eq!(words[4].raw, "\"${x:-\"a}b\"}\"");
    assert_eq!(words[5].raw, "${x:-{a}}");
    assert_eq!(words[6].variables, ["1"]);
    assert_eq!(words[9].variables, ["10"]);
}

#[test]
fn heredoc_piped_from_cat_into_a_shell() {
    let found = commands("cat <<EOF | docker exec -i ctr bash\npip install piped\nEOF\n");
    assert_eq!(
        argvs("cat <<EOF | sudo sh -s\npip install piped\nEOF\n").len(),
        3
    );
    assert_eq!(found.len(), 3);
    assert_eq!(found[0].heredoc.as_deref(), Some("pip install piped\n"));
    assert_eq!(argv(&found[2]), ["pip", "install", "piped"]);
    assert_eq!(found[2].context, [Context::HeredocShell]);
    assert_eq!(found[2].line, 2);
    // `cat file` prints the file, not the heredoc; `&&` is no pipe.
    assert_eq!(
        commands("cat f <<EOF | bash\npip install x\nEOF\n").len(),
        2
    );
    assert_eq!(commands("cat <<EOF && bash\npip install x\nEOF\n").len(), 2);
}

#[test]
fn substitutions_in_unquoted_heredoc_bodies_run() {
    let text =
        "cat <<EOF > conf\nv=$(python -c 'print(1)')\n`uname`\nEOF\ncat <<'EOF'\n$(not run)\nEOF\n";
    let found = commands(text);
    assert_eq!(
        found
            .iter()
            .map(|c| (argv(c).join(" "), c.line, c.column, c.context.clone()))
            .collect::<Vec<_>>(),
        [
            ("cat".to_string(), 1, 1, vec![]),
            (
                "python -c print(1)".to_string(),
                2,
                5,
                vec![Context::Substitution]
            ),
            ("uname".to_string(), 3, 2, vec![Context::Substitution]),
            ("cat".to_string(), 5, 1, vec![]),
        ]
    );
    // Fed to a shell, the body's substitutions are the shell's to report.
    let found = commands("bash <<EOF\necho $(date)\nEOF\n");
    assert_eq!(
        found.iter().map(|c| c.context.clone()).collect::<Vec<_>>(),
        [
            vec![],
            vec![Context::HeredocShell],
            vec![Context::HeredocShell, Context::Substitution]
        ]
    );
}

#[test]
fn compound_commands_with_redirections_and_heredocs() {
    assert_eq!(
        argvs("while read -r l; do pip install \"$l\"; done <<EOF\na\nb\nEOF\necho end"),
        ["read -r l", "pip install \"$l\"", "echo end"]
    );
    assert_eq!(
        argvs("(cd x && make) > log 2>&1; { a; } | b"),
        ["cd x", "make", "a", "b"]
    );
    assert_eq!(
        argvs("x=\"$(cat <<EOF)\"\nbody\nEOF\necho $x"),
        ["", "cat", "echo $x"]
    );
}

#[test]
fn workflow_expressions_and_odd_words() {
    let found =
        commands("pip install torch==${{ matrix.torch }} --index-url https://x/${{ matrix.cuda }}");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].words.len(), 5);
    assert_eq!(found[0].words[2].raw, "torch==${{ matrix.torch }}");
    assert_eq!(found[0].words[2].value, None);
    assert_eq!(
        argvs("echo \"$(echo \")\")\" done"),
        ["echo \"$(echo \")\")\" done", "echo )"]
    );
    assert_eq!(
        argvs("\\pip install ~/.cache/x"),
        ["pip install ~/.cache/x"]
    );
}

#[test]
fn functions_and_conditional_commands_are_marked() {
    let script = layerlock_shell::parse(
        "retry() {\n  eval \"$@\"\n}\nfunction other {\n  echo hi\n}\ncase \"$1\" in\n  -w) shift 2 ;;\nesac\nwhile true; do shift; done\nshift\nretry pip install x\n",
    )
    .expect("parses");
    let names: Vec<&str> = script.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["retry", "other"]);
    let eval = &script.commands[0];
    assert!(script.functions[0].contains(eval.line, eval.column));
    let conditional: Vec<(String, bool)> = script
        .commands
        .iter()
        .map(|c| (c.text.clone(), c.conditional))
        .collect();
    assert!(conditional.contains(&("shift 2".to_string(), true)));
    assert!(conditional.contains(&("shift".to_string(), false)));
    assert!(conditional.contains(&("retry pip install x".to_string(), false)));
}

#[test]
fn if_spans_and_their_bodies() {
    let text = "if [ -n \"$CI\" ]; then\n  a=1\nelif x; then\n  a=2\nelse\n  a=3\nfi\nif y; then b=1; fi\necho $a\n";
    let script = layerlock_shell::parse(text).unwrap();
    assert_eq!(script.ifs.len(), 2);
    let first = &script.ifs[0];
    assert!(first.has_else && first.arms.len() == 3);
    let arm = |line: usize| {
        let c = script.commands.iter().find(|c| c.line == line).unwrap();
        first.arm(c.line, c.column)
    };
    assert_eq!((arm(2), arm(4), arm(6)), (Some(0), Some(1), Some(2)));
    assert_eq!(arm(3), None, "an elif's condition is no body");
    assert!(!script.ifs[1].has_else && script.ifs[1].arms.len() == 1);
    let echo = script.commands.last().unwrap();
    assert!(!first.contains(echo.line, echo.column));
}
