//! How far audit reaches into a tree, one class of mechanism per test:
//! project managers and their locks, Makefile and justfile recipes, nox and
//! tox sessions, Dockerfiles by any name, shell that builds its commands,
//! and the notes for what cannot be followed (issue 22). Every finding is
//! checked at its exact file, line and class.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use common::{Work, run};

/// A finding as (path, line, rule, class).
type Found = (String, u64, String, String);

fn repo(files: &[(&str, &str)]) -> Work {
    let work = Work::new();
    for (path, text) in files {
        work.write(path, text);
    }
    work
}

fn audit(work: &Work) -> (Vec<Found>, serde_json::Value) {
    let (code, stdout, stderr) = run(work.layerlock(&["audit", ".", "--format", "json"]));
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let found = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    (found, report)
}

fn f(path: &str, line: u64, rule: &str, class: &str) -> Found {
    (path.to_string(), line, rule.to_string(), class.to_string())
}

const JOB: &str = "job-time-install";
const IMAGE: &str = "image-build-install";
const NOTE: &str = "not-followed";
const UNEXPLAINED: &str = "unexplained-install";

const WORKFLOW_HEAD: &str = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n";

#[test]
fn project_managers_are_classed_by_the_lock_they_read() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    env:\n      UV_FROZEN: \"1\"\n    steps:\n      - run: uv sync --all-extras\n      - run: uv run --no-sync pytest\n      - run: uv run --with pytest-xdist==3.6.1 pytest\n  u:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          uv sync\n          uv run -U pytest\n          conda env create -f ci/env.yml\n          pdm sync\n          hatch run test\n          cd legacy && poetry install --no-root\n"
            ),
        ),
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("uv.lock", "version = 1\n"),
        ("pdm.lock", ""),
        ("legacy/pyproject.toml", "[tool.poetry]\n"),
        ("legacy/poetry.lock", ""),
        (
            "ci/env.yml",
            "dependencies:\n  - python=3.12\n  - numpy=1.26.4\n  - pip:\n    - torch\n",
        ),
    ]);
    let (found, report) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 8, JOB, "hash-locked"),
            f(w, 10, JOB, "pinned"),
            f(w, 15, JOB, "may-resolve"),
            f(w, 16, JOB, "unpinned"),
            f(w, 17, JOB, "unpinned"),
            f(w, 18, JOB, "hash-locked"),
            f(w, 19, JOB, "unpinned"),
            // `cd` holds for the rest of the script: poetry works in legacy/.
            f(w, 20, JOB, "hash-locked"),
        ],
        "{report:#}"
    );
    let conda = report["findings"][4]["message"].as_str().unwrap();
    assert!(conda.contains("ci/env.yml:5 `torch`"), "{conda}");
    assert!(
        report["findings"][2]["message"]
            .as_str()
            .unwrap()
            .contains("re-locks when uv.lock no longer matches"),
        "{report:#}"
    );
}

#[test]
fn makefile_and_justfile_recipes_are_followed_to_their_lines() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - run: make test PY=3.12\n      - run: just ci -m core\n      - run: make nope\n      - run: make $TARGET\n"
            ),
        ),
        (
            "Makefile",
            "PIP ?= python -m pip\nREQS := requirements/ci.txt\n\n.PHONY: install test\ninstall:\n\t@$(PIP) install -r $(REQS)\n\ntest: install\n\t$(MAKE) -C docs html\n\tuv run --python $(PY) pytest\n",
        ),
        ("requirements/ci.txt", "pytest==8.3.4\n"),
        ("docs/Makefile", "html:\n\tpip install sphinx\n"),
        (
            "justfile",
            "python := \"3.12\"\n\nci *args: lint\n    uv run --python {{ python }} pytest {{ args }}\n\nlint:\n    -uvx ruff@0.8.0 check\n",
        ),
    ]);
    let (found, report) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 8, NOTE, ""),
            f(w, 9, NOTE, ""),
            f("Makefile", 6, JOB, "pinned"),
            f("docs/Makefile", 2, JOB, "unpinned"),
            f("justfile", 7, JOB, "pinned"),
        ],
        "{report:#}"
    );
    // `uv run` outside a project syncs nothing; the via chain names the
    // recipe lines that led to docs/Makefile.
    assert_eq!(
        report["findings"][3]["via"],
        serde_json::json!([".github/workflows/ci.yml:6", "Makefile:9"])
    );
    assert!(
        report["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no recipe of Makefile makes `nope`"),
        "{report:#}"
    );
    assert_eq!(report["summary"]["not_followed"], 2);
}

#[test]
fn nox_and_tox_installs_are_found_in_their_files() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - run: python -m nox -s lint\n      - run: tox -e py312\n"
            ),
        ),
        (
            "noxfile.py",
            "import nox\n\n@nox.session\ndef lint(session):\n    session.install(\"ruff==0.8.0\")\n\n@nox.session\ndef tests(session):\n    session.install(\"-e\", \".\")\n",
        ),
        (
            "tox.ini",
            "[testenv]\ndeps =\n    pytest==8.3.4\n    hypothesis\ncommands = pytest\n",
        ),
    ]);
    let (found, report) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 6, JOB, "unpinned"),
            f(w, 7, JOB, "unpinned"),
            f("noxfile.py", 5, JOB, "pinned"),
            f("tox.ini", 3, JOB, "pinned"),
            f("tox.ini", 4, JOB, "unpinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn dockerfiles_are_read_by_any_name_ci_builds() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - uses: docker/build-push-action@v6\n        with:\n          file: docker/ci.df\n          context: .\n      - run: |\n          DF=docker/gpu.image\n          docker build -f $DF .\n"
            ),
        ),
        ("docker/ci.df", "FROM python:3.12\nRUN pip install torch\n"),
        (
            "docker/gpu.image",
            "FROM python:3.12\nRUN pip install jax==0.4.30\n",
        ),
        ("Dockerfile_gpu", "FROM x\nRUN pip install flask\n"),
        ("cpu.containerfile", "FROM x\nRUN pip install six==1.16.0\n"),
    ]);
    let (found, report) = audit(&work);
    assert_eq!(
        found,
        vec![
            f("Dockerfile_gpu", 2, IMAGE, "unpinned"),
            f("cpu.containerfile", 2, IMAGE, "pinned"),
            f("docker/ci.df", 2, IMAGE, "unpinned"),
            f("docker/gpu.image", 2, IMAGE, "pinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn commands_the_shell_builds_are_found_and_the_rest_is_named() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!("{WORKFLOW_HEAD}    steps:\n      - run: bash ci/run.sh\n"),
        ),
        (
            "ci/run.sh",
            "#!/bin/bash\nuv_bin=\"$(command -v uv 2>/dev/null || true)\"\n\"$uv_bin\" pip install httpx\nargs=(python -m pip install)\nargs+=(requests==2.32.3)\n\"${args[@]}\"\nsu ci --login --command \"cd `pwd`; pip install --user flask\"\n\"$VENV/bin/pip\" install rich\nsource .venv/bin/activate\nbash \"$HERE/run-$STAGE.sh\"\npython ci/launch.py\nPKG_VERSION=\"${PKG_VERSION:-}\"\npip install \"torch==${TORCH_VERSION}\"\n",
        ),
        (
            "ci/launch.py",
            "import subprocess\nsubprocess.run(['pip', 'install', 'x'])\n",
        ),
    ]);
    let (found, report) = audit(&work);
    let s = "ci/run.sh";
    assert_eq!(
        found,
        vec![
            f(s, 3, JOB, "unpinned"),
            f(s, 4, JOB, "pinned"),
            f(s, 7, JOB, "unpinned"),
            f(s, 8, JOB, "unpinned"),
            f(s, 10, NOTE, ""),
            f(s, 11, NOTE, ""),
            f(s, 13, JOB, "run-time"),
        ],
        "{report:#}"
    );
    assert!(
        report["findings"][6]["message"]
            .as_str()
            .unwrap()
            .contains("`TORCH_VERSION` is not set in the repository"),
        "{report:#}"
    );
    // The text report ends with how much was read.
    let (_, stdout, _) = run(work.layerlock(&["audit", "."]));
    let last = stdout.lines().last().unwrap();
    assert!(
        last.ends_with("19 commands read, 2 not followed, 0 unexplained installs"),
        "{last}"
    );
}

#[test]
fn loop_values_and_gitlab_templates_reach_the_jobs_that_run_them() {
    let work = repo(&[
        (
            ".gitlab-ci.yml",
            ".install:\n  variables:\n    PIP: pip3\n  before_script:\n    - $PIP install -r requirements.txt\n\nunit:\n  extends: .install\n  script:\n    - for v in 3.11 3.12; do /opt/py$v/bin/pip install \"torch==2.5.1\"; done\n    - for tool in ruff==0.8.0 black; do uvx $tool --version; done\n",
        ),
        ("requirements.txt", "pytest\n"),
    ]);
    let (found, report) = audit(&work);
    let g = ".gitlab-ci.yml";
    assert_eq!(
        found,
        vec![
            f(g, 5, JOB, "unpinned"),
            f(g, 10, JOB, "pinned"),
            // One pass is pinned, the other is not: the worse is reported.
            f(g, 11, JOB, "unpinned"),
        ],
        "{report:#}"
    );
    // The template's line is reported for the job that extends it.
    assert_eq!(report["findings"][0]["job"], "unit");
}

#[test]
fn a_script_the_job_writes_and_runs_is_read_at_its_heredoc() {
    let work = repo(&[(
        ".github/workflows/ci.yml",
        &format!(
            "{WORKFLOW_HEAD}    steps:\n      - run: |\n          cat > /tmp/setup.sh <<'EOF'\n          set -e\n          pip install black\n          EOF\n          bash /tmp/setup.sh\n"
        ),
    )]);
    let (found, report) = audit(&work);
    assert_eq!(
        found,
        vec![f(".github/workflows/ci.yml", 9, JOB, "unpinned")],
        "{report:#}"
    );
    assert_eq!(report["summary"]["not_followed"], 0);
}

#[test]
fn tox_factors_pyenv_and_retried_commands() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - uses: nick-fields/retry@v4\n        with:\n          max_attempts: 3\n          command: tox -e 3.12-unit\n"
            ),
        ),
        (
            "tox.ini",
            "[testenv]\ndeps =\n    -r{toxinidir}/requirements/test.txt\n    3.12: hypothesis==6.100.0\n    lint: pre-commit\nusedevelop = True\n",
        ),
        ("requirements/test.txt", "pytest==8.3.4\n"),
        (
            "Dockerfile",
            "FROM python:3.12\nRUN pyenv exec pypy3.11 -m pip install --no-deps -e .\n",
        ),
    ]);
    let (found, report) = audit(&work);
    assert_eq!(
        found,
        vec![
            f(".github/workflows/ci.yml", 9, JOB, "unpinned"),
            f("Dockerfile", 2, IMAGE, "unpinned"),
            f("tox.ini", 3, JOB, "pinned"),
            f("tox.ini", 4, JOB, "pinned"),
            // `lint: pre-commit` is not for 3.12-unit.
            f("tox.ini", 6, JOB, "unpinned"),
        ],
        "{report:#}"
    );
}

/// Found by an adversarial pass: each of these passed as pinned or
/// hash-locked, went unnoted, or never ended.
#[test]
fn values_the_audit_cannot_know_never_pass_as_pins() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - run: |\n          v=torch==2.0\n          for v in $(cat reqs.txt); do pip install $v; done\n          uv lock --upgrade && uv sync --frozen\n          make -f \"$MK\" test\n          $PIP install rich\n          args=(pip install torch==2.0); args[2]=torch; \"${{args[@]}}\"\n          make\n"
            ),
        ),
        (
            "Makefile",
            ".DEFAULT_GOAL := ci\nlint:\n\tuvx ruff@0.8.0 check\nci:\n\tpip install $(strip torch)==1.0\n",
        ),
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("uv.lock", ""),
    ]);
    let (found, report) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 8, JOB, "run-time"),
            f(w, 9, JOB, "unpinned"),
            f(w, 9, JOB, "hash-locked"),
            f(w, 10, NOTE, ""),
            f(w, 11, NOTE, ""),
            f(w, 12, JOB, "unpinned"),
            f("Makefile", 5, JOB, "run-time"),
        ],
        "{report:#}"
    );
}

#[test]
fn paths_that_multiply_stop_at_a_budget_and_say_so() {
    let mut makefile = String::new();
    for i in 0..24 {
        makefile.push_str(&format!(
            "t{i}:\n\t$(MAKE) t{}\n\t$(MAKE) t{}\n",
            i + 1,
            i + 1
        ));
    }
    makefile.push_str("t24:\n\tpip install x\n");
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!("{WORKFLOW_HEAD}    steps:\n      - run: make t0\n"),
        ),
        ("Makefile", &makefile),
    ]);
    let (code, stdout, _) = run(work.layerlock(&["audit", ".", "--format", "json"]));
    assert_eq!(code, 2, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let message = report["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("calls of scripts and recipes"),
        "{message}"
    );
}

#[test]
fn the_shell_that_runs_a_script_decides_its_grammar() {
    // A POSIX shell (dash is Debian's and Ubuntu's `/bin/sh`) reads `((…))`
    // as two subshells, so the install runs; bash reads it as arithmetic,
    // even in `set -o posix` mode.
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - run: sh ci/both.sh\n      - run: bash ci/both.sh\n      - run: ./ci/posix.sh\n      - run: ((pip install c==1))\n        shell: sh\n      - run: ((pip install d==1))\n      - run: bash -c '((pip install e==1))'; sh -c '((pip install f==1))'\n"
            ),
        ),
        (
            "ci/both.sh",
            "#!/bin/bash\nset -o posix\n((pip install a==1))\n",
        ),
        ("ci/posix.sh", "#!/bin/sh\n((pip install b==1))\n"),
        (
            "Dockerfile",
            "FROM python:3.12\nRUN ((pip install g==1))\nSHELL [\"/bin/bash\", \"-c\"]\nRUN ((pip install h==1))\n",
        ),
        ("Makefile", "test:\n\t((pip install i==1))\n"),
        (".gitlab-ci.yml", "t:\n  script:\n    - make test\n"),
    ]);
    let (found, _) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 9, JOB, "pinned"),
            // The census greps: it cannot tell bash's arithmetic from
            // two subshells, so it names the lines the walk read as
            // arithmetic (low severity).
            f(w, 11, UNEXPLAINED, ""),
            f(w, 12, JOB, "pinned"),
            f("Dockerfile", 2, IMAGE, "pinned"),
            f("Dockerfile", 4, UNEXPLAINED, ""),
            f("Makefile", 2, JOB, "pinned"),
            f("ci/both.sh", 3, JOB, "pinned"),
            f("ci/posix.sh", 2, JOB, "pinned"),
        ]
    );
}

#[test]
fn images_a_bake_or_compose_file_names_are_read_as_builds() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - run: docker buildx bake -f ci/docker-bake.hcl\n      - run: cd ci && docker compose up -d --build\n      - uses: docker/bake-action@v5\n        with:\n          files: ci/other.json\n          targets: ${{{{ matrix.t }}}}\n      - run: docker buildx bake -f ci/missing.hcl\n"
            ),
        ),
        (
            "ci/docker-bake.hcl",
            "variable \"KIND\" {\n  default = \"gpu\"\n}\ngroup \"default\" {\n  targets = [\"app\"]\n}\ntarget \"base\" {\n  context = \"ci/images\"\n}\ntarget \"app\" {\n  inherits = [\"base\"]\n  dockerfile = \"${KIND}/image\"\n}\n",
        ),
        (
            "ci/images/gpu/image",
            "FROM python:3.12\nCOPY req.txt /r.txt\nRUN pip install -r /r.txt\n",
        ),
        ("ci/images/req.txt", "torch==2.5.1\n"),
        (
            "ci/compose.yml",
            "services:\n  db:\n    image: postgres\n  tests:\n    build:\n      context: ..\n      dockerfile: docker/tests.image\n",
        ),
        (
            "docker/tests.image",
            "FROM python:3.12\nRUN pip install pytest\n",
        ),
        // A target known only at run time may be any: `x` is read. Bake
        // takes contexts from where it runs (the top), not from the file.
        (
            "ci/other.json",
            "{\"target\": {\"x\": {\"dockerfile\": \"ci/x.image\"}}}\n",
        ),
        ("ci/x.image", "FROM python:3.12\nRUN pip install x==1\n"),
    ]);
    let (found, report) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 12, NOTE, ""),
            f("ci/images/gpu/image", 3, IMAGE, "pinned"),
            f("ci/x.image", 2, IMAGE, "pinned"),
            f("docker/tests.image", 2, IMAGE, "unpinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn values_an_if_sets_are_read_for_every_branch() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!("{WORKFLOW_HEAD}    steps:\n      - run: bash ci/test.sh\n"),
        ),
        (
            "ci/test.sh",
            "#!/bin/bash\nif [ -n \"$CI\" ]; then\n  runner=(pip install torch)\nelse\n  runner=(true)\nfi\n\"${runner[@]}\"\nV=1.0\nif [ \"$X\" = y ]; then V=2.0; fi\npip install pkg==$V\nif [ \"$X\" = y ]; then W=3.0; fi\npip install other==$W\n",
        ),
    ]);
    let (found, report) = audit(&work);
    assert_eq!(
        found,
        vec![
            // A command run from an array is reported where it is written.
            f("ci/test.sh", 3, JOB, "unpinned"),
            f("ci/test.sh", 10, JOB, "pinned"),
            f("ci/test.sh", 12, JOB, "run-time"),
        ],
        "{report:#}"
    );
}

#[test]
fn action_inputs_shell_programs_loop_globs_and_branch_archives() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - uses: some/setup-venv@v1\n        with:\n          python-version: \"3.12\"\n          install-cmd: uv sync --frozen\n      - run: tools/setup.bash\n      - run: tools/bootstrap\n      - run: for t in tests/*-test.sh; do $t; done\n      - run: pip install https://github.com/a/b/archive/main.zip\n      - uses: actions/github-script@v7\n        with:\n          script: console.log('pip install x')\n"
            ),
        ),
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("uv.lock", "version = 1\n"),
        ("tools/setup.bash", "pip install a==1\n"),
        ("tools/bootstrap", "#!/usr/bin/env bash\npip install b==1\n"),
        ("tests/one-test.sh", "pip install c==1\n"),
        ("tests/two-test.sh", "pip install d\n"),
    ]);
    let (found, report) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 9, JOB, "hash-locked"),
            f(w, 13, JOB, "unpinned"),
            f("tests/one-test.sh", 1, JOB, "pinned"),
            f("tests/two-test.sh", 1, JOB, "unpinned"),
            f("tools/bootstrap", 2, JOB, "pinned"),
            f("tools/setup.bash", 1, JOB, "pinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn a_scripts_inline_metadata_says_what_uv_run_installs() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - run: just version\n      - run: uv run tools/check.py\n      - run: uv run tools/plain.py\n"
            ),
        ),
        (
            "justfile",
            "version:\n    #!/usr/bin/env -S uv run --script\n    # /// script\n    # dependencies = [\"dunamai==1.22.0\"]\n    # ///\n    print(1)\n",
        ),
        (
            "tools/check.py",
            "# /// script\n# dependencies = [\"requests\"]\n# ///\nimport requests\n",
        ),
        ("tools/plain.py", "print(1)\n"),
    ]);
    let (found, report) = audit(&work);
    assert_eq!(
        found,
        vec![
            f(".github/workflows/ci.yml", 7, JOB, "unpinned"),
            f("justfile", 2, JOB, "pinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn a_gitlab_pipeline_is_read_with_its_local_includes() {
    let work = repo(&[
        (
            ".gitlab-ci.yml",
            "include:\n  - local: ci/templates.yml\n  - local: /ci/jobs/*.yml\n  - project: group/shared\n    file: /python.yml\n  - local: $CI_EXTRA\nunit:\n  extends: .py\n  script:\n    - pytest\nshared:\n  extends: .from-shared\n",
        ),
        (
            "ci/templates.yml",
            ".py:\n  before_script:\n    - pip install -r ci/req.txt\n",
        ),
        ("ci/req.txt", "pytest==8.3.3\n"),
        (
            "ci/jobs/docs.yml",
            "docs:\n  extends: .py\n  script:\n    - pip install sphinx\n",
        ),
    ]);
    let (found, report) = audit(&work);
    assert_eq!(
        found,
        vec![
            f(".gitlab-ci.yml", 4, NOTE, ""),
            f(".gitlab-ci.yml", 6, NOTE, ""),
            f(".gitlab-ci.yml", 12, NOTE, ""),
            f("ci/jobs/docs.yml", 4, JOB, "unpinned"),
            f("ci/templates.yml", 3, JOB, "pinned"),
            f("ci/templates.yml", 3, JOB, "pinned"),
        ],
        "{report:#}"
    );
    // The template's line is reported for both jobs that extend it, the
    // included file's job among them.
    let jobs: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == "ci/templates.yml")
        .map(|f| f["job"].as_str().unwrap())
        .collect();
    assert_eq!(jobs, ["docs", "unit"], "{report:#}");
}

#[test]
fn make_in_an_image_reads_the_makefile_the_image_holds() {
    let work = repo(&[
        (
            "Dockerfile",
            "FROM python:3.12 AS kernels\nWORKDIR /usr/src\nCOPY server/Makefile-kernels Makefile\nRUN make build-kernels\nFROM python:3.12 AS mpi\nWORKDIR /opt/src/mpi\nRUN make install\nFROM python:3.12\nWORKDIR /usr/src\nCOPY backends/gpu/server server\nRUN cd server && make gen && pip install --no-deps -r requirements.txt && bash ./patch.sh\nRUN conda update -y conda\n",
        ),
        ("Makefile", "install:\n\tpip install -e .\n"),
        ("server/Makefile", "gen:\n\tpip install grpcio-tools\n"),
        (
            "server/Makefile-kernels",
            "build-kernels:\n\tpip install -U ninja\n",
        ),
        (
            "backends/gpu/server/Makefile",
            "gen:\n\tpip install grpcio-tools==1.62.2\n",
        ),
        ("backends/gpu/server/requirements.txt", "torch==2.5.1\n"),
        ("backends/gpu/server/patch.sh", "python -m pip install .\n"),
    ]);
    let (found, report) = audit(&work);
    assert_eq!(
        found,
        vec![
            f("Dockerfile", 7, NOTE, ""),
            f("Dockerfile", 11, IMAGE, "pinned"),
            f("Dockerfile", 12, IMAGE, "unpinned"),
            // Makefiles no build runs: named by the census.
            f("Makefile", 2, UNEXPLAINED, ""),
            f("backends/gpu/server/Makefile", 2, IMAGE, "pinned"),
            f("backends/gpu/server/patch.sh", 1, IMAGE, "unpinned"),
            f("server/Makefile", 2, UNEXPLAINED, ""),
            f("server/Makefile-kernels", 2, IMAGE, "unpinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn make_targets_from_functions_matrix_values_and_unknown_make_variables() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        python-version: [\"3.11\", \"3.12\"]\n    steps:\n      - run: make test-${{ matrix.python-version }}\n      - run: make it\n",
        ),
        (
            "Makefile",
            "VENV := $(or $(VIRTUAL_ENV),.venv)\nACTIVATE = $(VENV)/bin/activate\nvenv: $(ACTIVATE)\n$(ACTIVATE):\n\tuv sync --locked\ntest-3.11 test-3.12: venv\n\tpip install pytest==8.3.3\nit:\n\t$(MAKE) venv ARGS=$(or $(ARGS),it/)\n",
        ),
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("uv.lock", "version = 1\n"),
    ]);
    let (found, report) = audit(&work);
    let keys: std::collections::BTreeSet<Found> = found.into_iter().collect();
    assert_eq!(
        keys.into_iter().collect::<Vec<_>>(),
        vec![
            f("Makefile", 5, JOB, "hash-locked"),
            f("Makefile", 7, JOB, "pinned"),
        ],
        "{report:#}"
    );
    assert_eq!(report["summary"]["not_followed"], 0, "{report:#}");
}

#[test]
fn a_build_whose_dockerfile_is_known_only_at_run_time_is_said() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            &format!(
                "{WORKFLOW_HEAD}    steps:\n      - run: docker build -f \"$DOCKERFILE\" .\n      - uses: docker/build-push-action@v6\n        with:\n          context: .\n          file: ${{{{ env.DOCKERFILE }}}}\n"
            ),
        ),
        ("Dockerfile", "FROM python:3.12\nRUN pip install x\n"),
    ]);
    let (found, report) = audit(&work);
    let w = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(w, 6, NOTE, ""),
            f(w, 7, NOTE, ""),
            f("Dockerfile", 2, IMAGE, "unpinned"),
        ],
        "{report:#}"
    );
    let text = format!("{report:#}");
    assert_eq!(
        text.matches("this build reads is known only at run time, so its image was not read")
            .count(),
        2,
        "{text}"
    );
}
