//! The walker in process: each test writes a small tree, walks it with a
//! visitor that writes down what it is told, and checks where each command
//! is found and the chain of calls it was reached through. One test per
//! mechanism the walker models.

#[path = "../support/mod.rs"]
mod support;

mod ci;
mod images;
mod limits;
mod recipes;
mod scripts;
mod systems;

/// The workflow most tests start from.
const WF: &str = ".github/workflows/ci.yml";

/// A workflow whose one job (`test`) has `steps`; the first step is on
/// line 6.
fn workflow(steps: &str) -> String {
    format!("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{steps}")
}

/// A tree of a workflow with one step, `run: {command}` (line 6), and
/// `files`.
fn step_and(command: &str, files: &[(&str, &str)]) -> support::Tree {
    let workflow = workflow(&format!("      - run: {command}\n"));
    let mut all = vec![(WF, workflow.as_str())];
    all.extend_from_slice(files);
    support::tree(&all)
}
