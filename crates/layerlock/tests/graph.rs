//! `layerlock graph` end to end: writing a picture, `--check` telling a
//! current one from a stale or missing one (the pre-commit hook), the
//! formats, and a Dockerfile it cannot read.

mod common;

use common::{Work, run};

const DOCKERFILE: &str = "\
FROM python:3.12-slim AS base
RUN pip install requests
FROM base AS test
COPY --from=base /opt /opt
";

fn repo() -> Work {
    let work = Work::new();
    work.write("Dockerfile", DOCKERFILE);
    work.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - run: docker build --target test -t t .\n",
    );
    work
}

#[test]
fn check_tells_a_current_picture_from_a_stale_or_missing_one() {
    let work = repo();
    let (code, _, err) = run(work.layerlock(&["graph", "Dockerfile", "-o", "graph.svg"]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) =
        run(work.layerlock(&["graph", "Dockerfile", "-o", "graph.svg", "--check"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("graph.svg is current"), "{err}");

    work.write("Dockerfile", &format!("{DOCKERFILE}FROM test AS serve\n"));
    let (code, _, err) =
        run(work.layerlock(&["graph", "--check", "Dockerfile", "-o", "graph.svg"]));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("graph.svg: differs from what would be drawn now"),
        "{err}"
    );
    assert!(
        err.contains("hint: draw it again with `layerlock graph Dockerfile -o graph.svg`"),
        "{err}"
    );

    let (code, _, err) = run(work.layerlock(&["graph", "Dockerfile", "-o", "none.svg", "--check"]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("none.svg: does not exist yet"), "{err}");
}

#[test]
fn the_picture_is_the_same_byte_for_byte_and_json_says_what_ci_builds() {
    let work = repo();
    let first = run(work.layerlock(&["graph", "Dockerfile"])).1;
    let second = run(work.layerlock(&["graph", "Dockerfile"])).1;
    assert!(
        first.starts_with("<svg") || first.starts_with("<?xml"),
        "{first}"
    );
    assert_eq!(first, second);
    let (code, json, err) = run(work.layerlock(&["graph", "Dockerfile", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let node = |label: &str| {
        value["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .find(|n| n["label"] == label)
            .cloned()
            .expect(label)
    };
    assert_eq!(node("test")["built"], true);
    assert_eq!(node("base")["built"], false);
    assert_eq!(node("base")["notes"][0]["tone"], "unpinned");
    assert_eq!(node("base")["notes"][0]["text"], "unpinned pip install :2");
    let (code, dot, _) = run(work.layerlock(&["graph", "Dockerfile", "-o", "g.dot"]));
    assert_eq!((code, dot.as_str()), (0, ""));
    assert!(work.read("g.dot").starts_with("digraph"));
}

#[test]
fn a_dockerfile_it_cannot_read_is_named_with_its_line() {
    let work = repo();
    work.write("Dockerfile", "FROM a AS x\nRUN <<EOF\necho never ends\n");
    let (code, _, err) = run(work.layerlock(&["graph", "Dockerfile"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("Dockerfile:2:1: heredoc `EOF` never ends"),
        "{err}"
    );
    let (code, _, err) = run(work.layerlock(&["graph", "/etc/hostname"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the repository"), "{err}");
}

#[test]
fn a_build_whose_stage_is_known_only_at_run_time_is_said() {
    let work = repo();
    work.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - run: docker build --target \"$STAGE\" -t t .\n",
    );
    let (code, svg, err) = run(work.layerlock(&["graph", "Dockerfile"]));
    assert_eq!(code, 0, "{err}");
    let said = "not known: CI builds Dockerfile with target `$STAGE`, known only at run time";
    assert!(err.contains(&format!("note: {said}")), "{err}");
    assert!(svg.contains(said), "{svg}");
    let (_, json, _) = run(work.layerlock(&["graph", "Dockerfile", "--format", "json"]));
    assert!(
        json.contains("\"unknown\": [\n    \"CI builds Dockerfile"),
        "{json}"
    );
    let (_, dot, _) = run(work.layerlock(&["graph", "Dockerfile", "--format", "dot"]));
    assert!(dot.contains("\\lnot known: CI builds Dockerfile"), "{dot}");
}

#[test]
fn a_build_of_a_dockerfile_known_only_at_run_time_is_said() {
    let work = repo();
    work.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: docker/build-push-action@v6\n        with:\n          file: ${{ env.DOCKERFILE }}\n",
    );
    let (code, _, err) = run(work.layerlock(&["graph", "Dockerfile", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: not known: CI builds a Dockerfile known only at run time (.github/workflows/ci.yml:6: `$COMPUTED`); it may be Dockerfile"),
        "{err}"
    );
}
