//! README.md's first-contact instructions hold today: the install route it
//! leads with works from a checkout, the routes that need a published
//! release say so, and its pre-commit snippets (and the mirror's) are
//! complete `.pre-commit-config.yaml` files.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

/// The part of README.md under `heading` (a whole line, e.g. `## Install`),
/// up to the next heading of the same or a higher level.
fn readme_section(heading: &str) -> String {
    let readme = std::fs::read_to_string(common::repo_root().join("README.md")).unwrap();
    let level = heading.split(' ').next().unwrap();
    let mut lines = readme.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "README.md has no `{heading}`");
    let mut out = String::new();
    let mut fenced = false;
    for line in lines {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let hashes = line.split(' ').next().unwrap_or_default();
        let heading = !fenced && !hashes.is_empty() && hashes.bytes().all(|b| b == b'#');
        if heading && hashes.len() <= level.len() {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The code blocks of `text` fenced as ```` ```lang ````, in order.
fn code_blocks(text: &str, lang: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line == format!("```{lang}") => current = Some(String::new()),
            None => {}
            Some(_) if line == "```" => blocks.push(current.take().unwrap()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks
}

#[test]
fn install_leads_with_commands_that_work_from_a_checkout() {
    let root = common::repo_root();
    let install = readme_section("## Install");
    let first = code_blocks(&install, "sh").into_iter().next().unwrap();
    let mut routes = 0;
    for line in first.lines() {
        // A command, without its trailing `# comment`.
        let command = line.split(" #").next().unwrap().trim();
        let words: Vec<&str> = command.split_whitespace().collect();
        assert!(
            !command.contains("pip install layerlock") && words.first() != Some(&"uvx"),
            "the first install route needs a published release: {command}"
        );
        match words.as_slice() {
            ["cargo", "install", rest @ ..] => {
                let path = rest
                    .iter()
                    .skip_while(|w| **w != "--path")
                    .nth(1)
                    .unwrap_or_else(|| panic!("{command}: no --path"));
                let crate_dir = root.join(path);
                let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml"))
                    .unwrap_or_else(|e| panic!("{command}: {path}/Cargo.toml: {e}"));
                assert!(manifest.contains("name = \"layerlock\""), "{command}");
                assert!(crate_dir.join("src/main.rs").is_file(), "{command}");
                routes += 1;
            }
            ["pip", "install", path] => {
                // A directory whose pyproject.toml builds the binary crate.
                let pyproject = std::fs::read_to_string(root.join(path).join("pyproject.toml"))
                    .unwrap_or_else(|e| panic!("{command}: pyproject.toml: {e}"));
                assert!(
                    pyproject.contains("build-backend = \"maturin\""),
                    "{command}"
                );
                let manifest = pyproject
                    .lines()
                    .find_map(|l| l.strip_prefix("manifest-path = "))
                    .unwrap_or_else(|| panic!("{command}: pyproject.toml has no manifest-path"))
                    .trim_matches('"');
                assert!(root.join(path).join(manifest).is_file(), "{manifest}");
                routes += 1;
            }
            ["layerlock", ..] => {}
            _ => panic!("not a command that works from a checkout: {command}"),
        }
    }
    assert!(routes >= 1, "no install route in {first}");
}

#[test]
fn install_names_the_published_routes_as_not_yet_available() {
    let install = readme_section("## Install");
    let marker = "Once a release is published (not yet)";
    let published = install
        .find("pip install layerlock")
        .expect("the published route is still documented");
    let said = install.find(marker).expect(marker);
    assert!(
        said < published,
        "`pip install layerlock` before `{marker}`"
    );
    assert!(install[said..].contains("uvx layerlock"));
    // The recipes that install the published wheel say so too.
    for heading in ["### pre-commit", "### GitHub Actions", "### Buildkite"] {
        assert!(
            readme_section(heading).contains("Once a release is published (not yet)"),
            "{heading}"
        );
    }
}

/// A `.pre-commit-config.yaml` must be a mapping with `repos:`, each hook
/// one of the published ones.
fn assert_complete_pre_commit_config(yaml_text: &str, what: &str) {
    let first = yaml_text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or_default();
    assert_eq!(first, "repos:", "{what} starts with {first:?}");
    let published =
        std::fs::read_to_string(common::repo_root().join(".pre-commit-hooks.yaml")).unwrap();
    let doc = layerlock_ci::yaml::parse(yaml_text).unwrap().remove(0);
    let repos = doc.get("repos").map(|r| r.items()).unwrap_or_default();
    assert!(!repos.is_empty(), "{what}: no repos");
    for repo in repos {
        for hook in repo.get("hooks").map(|h| h.items()).unwrap_or_default() {
            let id = hook.get("id").and_then(|i| i.as_str()).unwrap();
            assert!(
                published.contains(&format!("- id: {id}\n")),
                "{what}: {id} is not a published hook"
            );
        }
    }
}

#[test]
fn readme_pre_commit_snippet_is_a_complete_config_with_repos() {
    let section = readme_section("### pre-commit");
    let block = code_blocks(&section, "yaml").into_iter().next().unwrap();
    assert_complete_pre_commit_config(&block, "README's pre-commit snippet");
}

#[test]
fn pre_commit_mirror_readme_snippet_is_a_complete_config_with_repos() {
    let out = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("python3")
        .arg(common::repo_root().join("scripts/pre-commit-mirror"))
        .arg(out.path())
        .args(["--version", "1.2.3"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    let readme = std::fs::read_to_string(out.path().join("README.md")).unwrap();
    let block = code_blocks(&readme, "yaml").into_iter().next().unwrap();
    assert!(block.contains("rev: v1.2.3"), "{block}");
    assert_complete_pre_commit_config(&block, "the mirror's README");
}
