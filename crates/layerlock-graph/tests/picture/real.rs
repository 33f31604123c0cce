//! vLLM's real `docker/Dockerfile` drawn: every stage and every edge
//! between stages, written out by hand from the file (not computed by the
//! parser under test), and no edge more; its SVG's texts and boxes kept
//! apart, as the hand-made graph's are.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use layerlock_graph::annotate::Marks;
use layerlock_graph::{Format, GraphSettings, draw};

use crate::svg_scan::{rects, root_size, texts};

fn vllm() -> Option<PathBuf> {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/ci-trees/vllm");
    match tree.canonicalize() {
        Ok(tree) => Some(tree),
        Err(_) => {
            eprintln!("skipped: ../shared/corpus/ci-trees/vllm is not beside the repository");
            None
        }
    }
}

/// (from, to, kind), read off docker/Dockerfile by hand: its FROM lines
/// (94, 249, 305, 420, 454, 553, 602, 799, 861, 918, 988, 1057, 1063,
/// 1088), every `COPY --from=` and every `RUN --mount=…,from=`.
const EDGES: &[(&str, &str, &str)] = &[
    ("${BUILD_BASE_IMAGE}", "base", "from"),
    ("base", "rust-build", "from"),
    ("base", "csrc-build", "from"),
    ("base", "csrc-build", "copy"),
    ("base", "extensions-build", "from"),
    ("base", "build", "from"),
    ("base", "build", "copy"),
    ("csrc-build", "build", "copy"),
    ("rust-build", "build", "copy"),
    ("extensions-build", "build", "copy"),
    ("base", "dev", "from"),
    ("base", "dev", "copy"),
    ("${FINAL_BASE_IMAGE}", "vllm-runtime-base", "from"),
    ("vllm-runtime-base", "vllm-base", "from"),
    ("base", "vllm-base", "copy"),
    ("build", "vllm-base", "copy"),
    ("build", "vllm-base", "mount"),
    ("vllm-runtime-base", "test-deps", "from"),
    ("base", "test-deps", "copy"),
    ("test-deps", "test", "from"),
    ("base", "test", "copy"),
    ("build", "test", "copy"),
    ("build", "test", "mount"),
    ("vllm-base", "vllm-openai-base", "from"),
    ("vllm-openai-base", "vllm-sagemaker", "from"),
    ("vllm-openai-base", "vllm-openai", "from"),
    ("vllm-openai", "vllm-openai-nonroot", "from"),
];

const STAGES: &[&str] = &[
    "base",
    "rust-build",
    "csrc-build",
    "extensions-build",
    "build",
    "dev",
    "vllm-runtime-base",
    "vllm-base",
    "test-deps",
    "test",
    "vllm-openai-base",
    "vllm-sagemaker",
    "vllm-openai",
    "vllm-openai-nonroot",
];

fn settings(tree: &Path, file: &str, format: Format) -> GraphSettings {
    GraphSettings {
        repo: tree.to_path_buf(),
        files: vec![tree.join(file)],
        format,
    }
}

#[test]
fn every_stage_and_every_edge_of_vllms_dockerfile_and_no_other() {
    let Some(tree) = vllm() else { return };
    let graph = layerlock_graph::draw::graph(
        &settings(&tree, "docker/Dockerfile", Format::Json),
        &Marks::default(),
    )
    .expect("draws");
    let stages: Vec<&str> = graph
        .nodes
        .iter()
        .filter(|n| n.kind == layerlock_graph::NodeKind::Stage)
        .map(|n| n.label.as_str())
        .collect();
    assert_eq!(stages, STAGES);
    let drawn: BTreeSet<(String, String, String)> = graph
        .edges
        .iter()
        .map(|e| {
            (
                graph.nodes[e.from].label.clone(),
                graph.nodes[e.to].label.clone(),
                e.kind.as_str().to_string(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String, String)> = EDGES
        .iter()
        .map(|(a, b, k)| (a.to_string(), b.to_string(), k.to_string()))
        .collect();
    let extra: Vec<_> = drawn.difference(&expected).collect();
    let missing: Vec<_> = expected.difference(&drawn).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "extra {extra:?}, missing {missing:?}"
    );
    let image = graph
        .nodes
        .iter()
        .find(|n| n.label == "${FINAL_BASE_IMAGE}")
        .expect("the final base image is drawn");
    assert_eq!(
        image.detail.as_deref(),
        Some("default nvidia/cuda:13.0.3-base-ubuntu24.04")
    );
}

#[test]
fn the_stages_ci_builds_and_what_they_install_are_marked() {
    let Some(tree) = vllm() else { return };
    let (_, json) = draw(&settings(&tree, "docker/Dockerfile", Format::Json)).expect("draws");
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let node = |label: &str| {
        value["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .find(|n| n["label"] == label)
            .cloned()
            .expect("node")
    };
    for built in ["test", "build", "vllm-openai"] {
        assert_eq!(node(built)["built"], true, "{built}");
    }
    assert_eq!(node("vllm-sagemaker")["built"], false);
    assert!(!node("base")["notes"].as_array().expect("notes").is_empty());
}

#[test]
fn the_real_picture_keeps_every_text_apart_and_in_its_box() {
    let Some(tree) = vllm() else { return };
    let (_, drawn) = draw(&settings(&tree, "docker/Dockerfile", Format::Svg)).expect("draws");
    assert_eq!(
        drawn,
        draw(&settings(&tree, "docker/Dockerfile", Format::Svg))
            .expect("again")
            .1
    );
    let boxes = texts(&drawn);
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            assert!(!a.overlaps(b), "{:?} overlaps {:?}", a.text, b.text);
        }
    }
    let all = rects(&drawn);
    let holders: Vec<_> = all
        .iter()
        .filter(|r| r.class.starts_with("node ") || r.class == "legend")
        .collect();
    assert_eq!(holders.len(), 17, "16 nodes and the legend");
    for (i, a) in holders.iter().enumerate() {
        for b in &holders[i + 1..] {
            assert!(!a.overlaps(b), "{a:?} overlaps {b:?}");
        }
    }
    let (width, height) = root_size(&drawn);
    for t in boxes.iter().filter(|t| t.class != "title") {
        assert!(
            t.x1 <= width && t.y1 <= height,
            "{:?} leaves the picture",
            t.text
        );
        assert!(
            holders.iter().any(|r| r.holds(t)),
            "{:?} is in no box",
            t.text
        );
    }
}
