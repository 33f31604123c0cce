//! The `yaml_ci`, `jenkinsfile` and `dockerfile` targets: CI files read by
//! layerlock-ci,
//! then their scripts read by layerlock-shell and mapped back to the file,
//! as the walker does.

use std::hint::black_box;

use layerlock_ci::yaml::{self, Node};
use layerlock_ci::{Script, System, dockerfile as docker};

/// Where the walker would meet the file: one path per CI system, so that
/// detection by location and each system's job model all see the input.
const PATHS: &[&str] = &[
    ".buildkite/p.yaml",
    ".github/workflows/ci.yml",
    ".gitlab-ci.yml",
    ".circleci/config.yml",
    "azure-pipelines.yml",
    "appveyor.yml",
    "jjb/jobs.yaml",
];

/// Image paths asked of every Dockerfile mount.
const IMAGE_PATHS: &[&str] = &["/", "/app", "/app/requirements.txt", "/workspace/src"];

pub fn yaml_ci(data: &[u8]) {
    let text = crate::text(data);
    let docs = match yaml::parse(&text) {
        Ok(docs) => docs,
        Err(error) => return crate::render_error(&error),
    };
    walk(&docs);
    // Once per file, as the walker does: per script, a pipeline of many
    // small steps over a file of many lines costs their product.
    let lines = layerlock_ci::SourceLines::new(&text);
    for path in PATHS {
        let Some(system) = System::detect(path, &docs) else {
            continue;
        };
        // The jobs `blocks` compares, and a declared rewrite applied to each.
        for job in layerlock_ci::jobs::jobs(system, &docs) {
            black_box((&job.id, job.id.value(), &job.label, job.line, &job.commands));
            black_box(job.map_strings(|s| s.replace("install", "check")));
        }
        for note in system.notes(&docs) {
            black_box((note.line, note.text, note.why));
        }
        for template in layerlock_ci::azure::read(&docs, Some("job")).templates {
            black_box((template.path, template.line, template.job, template.env));
        }
        for script in system.scripts(&docs) {
            let layout = script.layout.clone().refine(&script.text, &lines);
            use_script(&Script { layout, ..script });
        }
    }
}

/// A Jenkinsfile, through the bounded Groovy scanner.
pub fn jenkinsfile(data: &[u8]) {
    let text = crate::text(data);
    for script in layerlock_ci::jenkins::scripts(&text) {
        use_script(&script);
    }
}

pub fn dockerfile(data: &[u8]) {
    let text = crate::text(data);
    match docker::scripts(&text) {
        Ok(scripts) => scripts.iter().for_each(use_script),
        // `ModelError` has no Display; the walker prints its fields.
        Err(error) => {
            black_box((error.line, error.column, error.message));
        }
    }
    stage_graph(&text);
}

/// The same text as a stage graph, drawn: a stage only ever names an
/// earlier one, and the layout and writers take whatever the reader gives.
fn stage_graph(text: &str) {
    let Ok(stages) = docker::stages(text) else {
        return;
    };
    for stage in &stages.stages {
        let sources = std::iter::once(&stage.base).chain(stage.uses.iter().map(|u| &u.source));
        for source in sources {
            if let docker::Source::Stage(i) = source {
                assert!(*i <= stage.index, "a stage names a later one");
            }
        }
        assert!(stage.first_line <= stage.last_line);
    }
    let mut builder = layerlock_graph::build::Builder::default();
    builder.dockerfile("Dockerfile", &stages, &Default::default());
    let graph = builder.finish("Dockerfile".to_string());
    black_box(layerlock_graph::svg(&graph));
    black_box(layerlock_graph::dot(&graph));
}

/// The build-tool files the walker follows into: the first byte picks the
/// reader (Makefile, justfile, noxfile, tox.ini, conda environment,
/// pre-commit config, bake file in HCL or JSON, Compose file), the rest is
/// the file; the goals asked of it come
/// from its own words, as a CI command names them.
pub fn recipes(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let text = crate::text(rest);
    let goals: Vec<String> = text
        .split_whitespace()
        .take(4)
        .map(|w| w.trim_end_matches(':').to_string())
        .collect();
    let scripts = match kind % 9 {
        0 => match layerlock_ci::make::read(&text) {
            Ok(make) => make.scripts(&goals, &Default::default()).0,
            Err(e) => {
                black_box((e.line, e.message));
                return;
            }
        },
        1 => match layerlock_ci::just::read(&text) {
            Ok(just) => {
                black_box(just.unknown(&goals));
                just.scripts(&goals)
            }
            Err(e) => {
                black_box((e.line, e.message));
                return;
            }
        },
        2 => {
            let nox = layerlock_ci::nox::read_noxfile(&text);
            black_box(nox.names());
            nox.selected(&goals, false)
        }
        3 => layerlock_ci::nox::read_tox_ini(&text).selected(&goals, true),
        4 => {
            let _ = black_box(layerlock_ci::conda_env::read(&text));
            return;
        }
        6..=8 => {
            let name =
                ["docker-bake.hcl", "docker-bake.json", "compose.yaml"][usize::from(kind % 9 - 6)];
            if let Ok(file) = black_box(layerlock_ci::bake::BuildFile::read(name, &text)) {
                black_box(file.select(&goals));
            }
            return;
        }
        _ => {
            let _ = black_box(layerlock_ci::pre_commit::read(&text));
            return;
        }
    };
    scripts.iter().for_each(use_script);
}

/// Visit every node without recursion (documents may nest deeply).
fn walk(docs: &[Node]) {
    let mut stack: Vec<&Node> = docs.iter().collect();
    while let Some(node) = stack.pop() {
        black_box((node.pos(), node.as_str(), node.is_null()));
        black_box(node.get("steps"));
        stack.extend(node.items());
        for (key, value) in node.entries() {
            stack.push(key);
            stack.push(value);
        }
    }
}

/// Parse the script as shell and map every command back to the file, as
/// findings are located.
fn use_script(script: &Script) {
    black_box((&script.job, script.phase, &script.env, &script.working_dir));
    for mount in &script.mounts {
        for path in IMAGE_PATHS {
            black_box(mount.candidates(path));
        }
    }
    for (index, line) in script.text.lines().enumerate() {
        black_box(script.layout.map(index + 1, 1));
        black_box(script.layout.map(index + 1, line.chars().count() + 1));
    }
    match layerlock_shell::parse(&script.text) {
        Ok(parsed) => {
            crate::shell::use_script(&parsed);
            for command in &parsed.commands {
                black_box(script.layout.map(command.line, command.column));
                for word in &command.words {
                    black_box(script.layout.map(word.line, word.column));
                }
            }
        }
        Err(error) => {
            black_box(script.layout.map(error.line, error.column));
            crate::render_error(&error);
        }
    }
}
