//! A graph of the shape of vLLM's docker/Dockerfile, made by hand: two
//! outside images chosen by build arguments, a shared `base` most stages
//! copy from, build stages feeding `build`, and the runtime line down to
//! the OpenAI server images CI builds.

use layerlock_graph::{Edge, EdgeKind, Graph, Node, NodeKind, Note, Tone};

fn node(id: &str, kind: NodeKind, detail: Option<&str>) -> Node {
    Node {
        id: id.to_string(),
        kind,
        label: id.to_string(),
        detail: detail.map(str::to_string),
        notes: Vec::new(),
        built: false,
    }
}

fn stage(id: &str, line: u32) -> Node {
    node(
        id,
        NodeKind::Stage,
        Some(&format!("docker/Dockerfile:{line}")),
    )
}

fn note(tone: Tone, text: &str) -> Note {
    Note {
        tone,
        text: text.to_string(),
    }
}

fn nodes() -> Vec<Node> {
    vec![
        node(
            "${BUILD_BASE_IMAGE}",
            NodeKind::Image,
            Some("default nvidia/cuda:12.9.1-devel-ubuntu22.04"),
        ),
        stage("base", 94),
        stage("rust-build", 171),
        stage("csrc-build", 199),
        stage("extensions-build", 268),
        stage("build", 301),
        stage("dev", 381),
        node(
            "${FINAL_BASE_IMAGE}",
            NodeKind::Image,
            Some("default nvidia/cuda:12.9.1-base-ubuntu22.04"),
        ),
        stage("vllm-runtime-base", 410),
        stage("vllm-base", 472),
        stage("test-deps", 560),
        stage("test", 601),
        stage("vllm-openai-base", 640),
        stage("vllm-sagemaker", 701),
        stage("vllm-openai", 712),
        stage("vllm-openai-nonroot", 731),
    ]
}

/// Notes of every tone, some long enough to near the cut-off.
fn annotate(nodes: &mut [Node]) {
    let mut add = |i: usize, notes: Vec<Note>| nodes[i].notes = notes;
    add(
        1,
        vec![
            note(
                Tone::Guarded,
                "installs requirements/build.lock (layerlock install)",
            ),
            note(
                Tone::Unpinned,
                "pip install --upgrade pip setuptools wheel :121",
            ),
        ],
    );
    add(
        2,
        vec![note(
            Tone::RunTime,
            "curl https://sh.rustup.rs | sh (toolchain at run)",
        )],
    );
    add(
        3,
        vec![note(
            Tone::HashLocked,
            "uv pip install --require-hashes -r requirements/cuda.txt",
        )],
    );
    add(
        5,
        vec![
            note(
                Tone::Pinned,
                "pip install -r requirements/build.txt (exact, no hashes)",
            ),
            note(
                Tone::MayResolve,
                "uv sync --frozen in /workspace (may re-lock)",
            ),
            note(Tone::Info, "ARG USE_SCCACHE picks the compiler cache"),
        ],
    );
    add(
        9,
        vec![note(
            Tone::Unpinned,
            "uv pip install flashinfer-python (any version) :530",
        )],
    );
    add(
        10,
        vec![note(
            Tone::Pinned,
            "uv pip install -r requirements/test.txt :580",
        )],
    );
    add(
        12,
        vec![note(
            Tone::MayResolve,
            "uv pip install vllm[audio,video] accelerate :655",
        )],
    );
    add(14, vec![note(Tone::Info, "ENTRYPOINT vllm serve")]);
    nodes[11].built = true;
    nodes[14].built = true;
}

const EDGES: [(usize, usize, EdgeKind); 27] = {
    use EdgeKind::{Copy, From, Mount};
    [
        (0, 1, From),
        (1, 2, From),
        (1, 3, From),
        (1, 3, Copy),
        (1, 4, From),
        (1, 5, From),
        (1, 5, Copy),
        (3, 5, Copy),
        (2, 5, Copy),
        (4, 5, Copy),
        (1, 6, From),
        (1, 6, Copy),
        (7, 8, From),
        (8, 9, From),
        (1, 9, Copy),
        (5, 9, Copy),
        (5, 9, Mount),
        (8, 10, From),
        (1, 10, Copy),
        (10, 11, From),
        (1, 11, Copy),
        (5, 11, Copy),
        (5, 11, Mount),
        (9, 12, From),
        (12, 13, From),
        (12, 14, From),
        (14, 15, From),
    ]
};

pub fn graph() -> Graph {
    let mut nodes = nodes();
    annotate(&mut nodes);
    Graph {
        title: "docker/Dockerfile (vLLM-shaped)".to_string(),
        unknown: Vec::new(),
        nodes,
        edges: EDGES
            .iter()
            .map(|&(from, to, kind)| Edge { from, to, kind })
            .collect(),
    }
}
