//! Commands that run another command: `sudo -E`, `env A=1`, `timeout 30`,
//! `xargs`, and containers (`docker run IMAGE …`, `docker exec C …`,
//! `docker compose run SERVICE …`, `kubectl exec POD -- …`, `apptainer exec
//! IMAGE …`). The audit, tether and script following all look through them
//! the same way; a container's volumes and working directory are kept so
//! paths inside it can be mapped back into the repository.

use crate::site::Arg;

/// The program name of a path: `/usr/bin/pip3` → `pip3`.
pub fn program(arg: &Arg) -> Option<&str> {
    let Some(value) = arg.value.as_deref() else {
        // `$VENV/bin/pip`, `"$(brew --prefix x)/bin/python3"`: a computed
        // directory, but the program's own name is written.
        let raw = arg.raw.trim_matches('"');
        let (dir, name) = raw.rsplit_once(['/', '\\'])?;
        let name = without_exe(name);
        return (!dir.is_empty()
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))
        .then_some(name);
    };
    // `C:\Python311\python.exe` too.
    Some(without_exe(
        value.rsplit(['/', '\\']).next().unwrap_or(value),
    ))
}

/// A Windows program's name without `.exe`.
fn without_exe(name: &str) -> &str {
    let cut = name.len().saturating_sub(4);
    match name.get(cut..) {
        Some(ext) if ext.eq_ignore_ascii_case(".exe") => &name[..cut],
        _ => name,
    }
}

/// `python`, `python3.12`, `pypy3.11`, and Windows' `py` launcher: a
/// Python interpreter by its program name (the audit's installs, the test
/// inventory and the walker's Python programs alike).
pub fn is_python(name: &str) -> bool {
    name == "py"
        || ["python", "pypy"].iter().any(|stem| {
            name.strip_prefix(stem)
                .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
}

/// What a container wrapper says about where its command runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Container {
    /// `-v HOST:CONTAINER` and `--mount type=bind,source=…,target=…`:
    /// (container path, host path as written).
    pub volumes: Vec<(String, Arg)>,
    /// `-w DIR` / `--workdir DIR`.
    pub workdir: Option<String>,
    /// `-e NAME=VALUE` / `--env NAME=VALUE`: variables the command sees
    /// (`None` when the value is computed).
    pub env: Vec<(String, Option<String>)>,
}

/// Options of `docker run`/`exec`/`compose run` (and podman, nerdctl) that
/// take a value as the next word.
const CONTAINER_VALUE_OPTIONS: &[&str] = &[
    "-a",
    "--attach",
    "--add-host",
    "--blkio-weight",
    "--cap-add",
    "--cap-drop",
    "--cgroup-parent",
    "--cgroupns",
    "--cidfile",
    "--cpu-period",
    "--cpu-quota",
    "--cpu-shares",
    "-c",
    "--cpus",
    "--cpuset-cpus",
    "--cpuset-mems",
    "--device",
    "--device-cgroup-rule",
    "--detach-keys",
    "--dns",
    "--dns-option",
    "--dns-search",
    "--domainname",
    "--entrypoint",
    "-e",
    "--env",
    "--env-file",
    "--expose",
    "--gpus",
    "--group-add",
    "--health-cmd",
    "--health-interval",
    "--health-retries",
    "--health-start-period",
    "--health-timeout",
    "-h",
    "--hostname",
    "--ip",
    "--ip6",
    "--ipc",
    "--isolation",
    "--kernel-memory",
    "-l",
    "--label",
    "--label-file",
    "--link",
    "--log-driver",
    "--log-opt",
    "--mac-address",
    "-m",
    "--memory",
    "--memory-reservation",
    "--memory-swap",
    "--memory-swappiness",
    "--mount",
    "--name",
    "--network",
    "--net",
    "--network-alias",
    "--oom-score-adj",
    "--pid",
    "--pids-limit",
    "--platform",
    "-p",
    "--publish",
    "--pull",
    "--restart",
    "--runtime",
    "--security-opt",
    "--shm-size",
    "--stop-signal",
    "--stop-timeout",
    "--storage-opt",
    "--sysctl",
    "--tmpfs",
    "--ulimit",
    "-u",
    "--user",
    "--userns",
    "--uts",
    "-v",
    "--volume",
    "--volume-driver",
    "--volumes-from",
    "-w",
    "--workdir",
    "--index",
    "-B",
    "--bind",
    "--env-file",
    "--home",
    "--overlay",
    "--pwd",
    "--profile",
    "--project-name",
    "--project-directory",
];

/// Where the command of a container wrapper starts, or `None` when `args`
/// does not start with one.
fn container(args: &[Arg]) -> Option<(usize, Container)> {
    let first = program(args.first()?)?;
    let mut i = 1;
    let (takes_image, until_dashes) = match first {
        "docker" | "podman" | "nerdctl" | "docker-compose" => {
            let mut sub = args.get(i)?.value.as_deref()?;
            // `docker compose run`, `docker container exec`.
            if matches!(sub, "compose" | "container") {
                i += 1;
                sub = args.get(i)?.value.as_deref()?;
            }
            if !matches!(sub, "run" | "exec") {
                return None;
            }
            i += 1;
            (true, false)
        }
        "kubectl" | "oc" => {
            if args.get(i)?.value.as_deref()? != "exec" {
                return None;
            }
            (false, true)
        }
        "singularity" | "apptainer" => {
            if !matches!(args.get(i)?.value.as_deref()?, "exec" | "run") {
                return None;
            }
            i += 1;
            (true, false)
        }
        _ => return None,
    };
    if until_dashes {
        let dashes = args.iter().position(|a| a.is("--"))?;
        return Some((dashes + 1, Container::default()));
    }
    let mut found = Container::default();
    while let Some(arg) = args.get(i) {
        // A computed word here is the image or container (`"$C"`), unless
        // it is an array of options (`"${ENV_ARGS[@]}"`).
        let Some(v) = arg.value.as_deref() else {
            if arg.raw.contains("[@]") || arg.raw.contains("[*]") {
                i += 1;
                continue;
            }
            // `--network=${NET}`: an option whose value is computed.
            let raw = arg.raw.trim_start_matches(['"', '\'']);
            if raw.starts_with('-') {
                i += 1;
                continue;
            }
            break;
        };
        if !v.starts_with('-') || v == "-" {
            break;
        }
        let (flag, inline) = match v.split_once('=') {
            Some((f, value)) if f.starts_with("--") => (f, Some(value.to_string())),
            _ => (v, None),
        };
        let takes_value = CONTAINER_VALUE_OPTIONS.contains(&flag);
        let value = match (&inline, takes_value) {
            (Some(value), _) => Some(Arg {
                value: Some(value.clone()),
                ..arg.clone()
            }),
            (None, true) => {
                i += 1;
                args.get(i).cloned()
            }
            (None, false) => None,
        };
        if let Some(value) = value {
            match flag {
                "-v" | "--volume" | "-B" | "--bind" => {
                    if let Some((host, inside)) = split_volume(&value) {
                        found.volumes.push((inside, host));
                    }
                }
                "--mount" => {
                    if let Some(spec) = value.value.as_deref() {
                        let field = |names: &[&str]| {
                            spec.split(',').find_map(|f| {
                                let (k, v) = f.split_once('=')?;
                                names.contains(&k).then(|| v.to_string())
                            })
                        };
                        if let (Some(source), Some(target)) = (
                            field(&["source", "src"]),
                            field(&["target", "dst", "destination"]),
                        ) {
                            found.volumes.push((target, Arg::lit(&source)));
                        }
                    }
                }
                "-w" | "--workdir" | "--pwd" => found.workdir = value.value.clone(),
                "-e" | "--env" => {
                    // `-e NAME=VALUE`; `-e NAME` passes the caller's value.
                    let text = value.value.as_deref().unwrap_or(&value.raw);
                    let (name, set) = match text.split_once('=') {
                        Some((name, v)) => (name, value.value.as_ref().map(|_| v.to_string())),
                        None => (text, None),
                    };
                    let name = name.trim_matches('"');
                    if !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        found.env.push((name.to_string(), set));
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    if takes_image {
        i += 1;
    }
    Some((i, found))
}

/// `HOST:CONTAINER[:ro]` of `-v`; the host part may be computed (`$PWD`).
fn split_volume(value: &Arg) -> Option<(Arg, String)> {
    let text = value.value.as_deref().unwrap_or(&value.raw);
    let mut parts = text.splitn(3, ':');
    let host = parts.next()?;
    let inside = parts.next()?;
    if !inside.starts_with('/') {
        return None;
    }
    let host = if value.value.is_some() {
        Arg::lit(host)
    } else {
        Arg {
            value: None,
            raw: host.to_string(),
            at: value.at,
            script_at: value.script_at,
        }
    };
    Some((host, inside.trim_end_matches('/').to_string()))
}

/// How many leading words a non-container wrapper takes, if `args` starts
/// with one.
fn plain_wrapper(args: &[Arg]) -> Option<usize> {
    let first = program(args.first()?)?;
    let options_then = |value_options: &[&str]| {
        let mut i = 1;
        while let Some(a) = args.get(i).and_then(|a| a.value.as_deref()) {
            if !a.starts_with('-') {
                break;
            }
            i += if value_options.contains(&a) { 2 } else { 1 };
        }
        i
    };
    Some(match first {
        "sudo" => options_then(&["-u", "-g", "-C", "-h", "-p", "-U", "-D", "-r", "-t"]),
        "env" => {
            let mut i = 1;
            while let Some(arg) = args.get(i) {
                let Some(a) = arg.value.as_deref() else {
                    // `env "${cfg[@]}" bash x.sh`, `env "$A=$B" …`: computed
                    // assignments, not the program.
                    let raw = &arg.raw;
                    if raw.contains("[@]") || raw.contains("[*]") || raw.contains('=') {
                        i += 1;
                        continue;
                    }
                    break;
                };
                if a.contains('=') || a.starts_with('-') {
                    i += if matches!(a, "-u" | "-C" | "-S") {
                        2
                    } else {
                        1
                    };
                } else {
                    break;
                }
            }
            i
        }
        // `nix develop .#ci -c CMD …`, `nix shell nixpkgs#uv --command CMD …`.
        "nix" => {
            if !matches!(args.get(1)?.value.as_deref()?, "develop" | "shell") {
                return None;
            }
            args.iter().position(|a| a.is("-c") || a.is("--command"))? + 1
        }
        // `pyenv exec python3.12 -m pip …`, `asdf exec pip …`, `mise exec --
        // pip …`, `rye run pip …`.
        "pyenv" | "asdf" | "rtx" | "mise" | "rye" => {
            if !matches!(args.get(1)?.value.as_deref()?, "exec" | "x" | "run") {
                return None;
            }
            let dashes = args.iter().position(|a| a.is("--"));
            match dashes {
                Some(at) => at + 1,
                None => 2,
            }
        }
        // `timeout [options] DURATION COMMAND`.
        "timeout" => options_then(&["-s", "--signal", "-k", "--kill-after"]) + 1,
        "nice" => options_then(&["-n", "--adjustment"]),
        "ionice" => options_then(&["-c", "-n", "-p", "-t"]),
        "taskset" => options_then(&[]) + 1,
        "flock" => options_then(&["-w", "--timeout", "-E", "--conflict-exit-code"]) + 1,
        "stdbuf" | "time" | "nohup" | "exec" | "command" | "xargs" | "setsid" | "unbuffer"
        | "xvfb-run" | "numactl" | "chronic" | "catchsegv" => options_then(&[
            "-n",
            "-P",
            "-I",
            "-L",
            "-d",
            "-s",
            "-a",
            "-E",
            "-C",
            "--cpunodebind",
            "--membind",
            "--physcpubind",
            "--preferred",
            "-e",
            "-f",
            "-o",
        ]),
        _ => return None,
    })
}

/// Options of `uv run` (and `uv` itself, poetry, pdm, hatch and conda's
/// `run`) that take a value: the command starts at the first word that is
/// neither an option nor such a value.
pub const RUN_VALUE_OPTIONS: &[&str] = &[
    "--with",
    "--with-requirements",
    "--with-editable",
    "--python",
    "-p",
    "--directory",
    "--project",
    "--package",
    "--extra",
    "--no-extra",
    "--group",
    "--only-group",
    "--no-group",
    "--env-file",
    "--index",
    "--index-url",
    "--extra-index-url",
    "--default-index",
    "-i",
    "-f",
    "--find-links",
    "--exclude-newer",
    "--exclude-newer-package",
    "--prerelease",
    "--resolution",
    "--fork-strategy",
    "--python-platform",
    "--cache-dir",
    "--config-file",
    "--color",
    "--link-mode",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "-P",
    "--config-setting",
    "--config-settings-package",
    "-C",
    "--keyring-provider",
    "--index-strategy",
    "--allow-insecure-host",
    "--no-build-isolation-package",
    "--no-build-package",
    "--no-binary-package",
    "--only-binary-package",
    "--no-sources-package",
    "--python-preference",
    "--torch-backend",
    "-e",
    "--environment",
    "-n",
    "--name",
    "--prefix",
];

/// Where the command of `uv run [options] COMMAND` starts, from `i` (the
/// word after `run`); `args.len()` when there is none. `None` for `-m`
/// (a module, not a program).
pub fn run_command_start(args: &[Arg], mut i: usize) -> Option<usize> {
    while let Some(v) = args.get(i).and_then(|a| a.value.as_deref()) {
        if v == "--" {
            return Some(i + 1);
        }
        // `-` is the script on standard input (`uv run -`).
        if !v.starts_with('-') || v == "-" {
            break;
        }
        if v == "-m" || v == "--module" {
            return None;
        }
        i += if RUN_VALUE_OPTIONS.contains(&v) { 2 } else { 1 };
    }
    Some(i.min(args.len()))
}

/// How many leading words a project manager's `run` takes before the
/// command it runs in the project's environment: `uv run`, `poetry run`,
/// `pdm run`, `pipenv run`, `hatch run [ENV:]`, `conda|mamba|micromamba
/// run -n ENV`. The audit also reads what the runner itself installs (`uv
/// run` syncs the project first).
pub fn project_runner(args: &[Arg]) -> Option<usize> {
    let first = program(args.first()?)?;
    if !matches!(
        first,
        "uv" | "poetry" | "pdm" | "pipenv" | "hatch" | "conda" | "mamba" | "micromamba"
    ) {
        return None;
    }
    // Global options before `run` (`uv --directory x run …`).
    let mut i = 1;
    while let Some(v) = args.get(i).and_then(|a| a.value.as_deref()) {
        if !v.starts_with('-') {
            break;
        }
        i += if RUN_VALUE_OPTIONS.contains(&v) { 2 } else { 1 };
    }
    if !args.get(i)?.is("run") {
        return None;
    }
    i += 1;
    while let Some(v) = args.get(i).and_then(|a| a.value.as_deref()) {
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') {
            break;
        }
        // `uv run -m pytest` runs a module, not a program.
        if v == "-m" || v == "--module" {
            return None;
        }
        i += if RUN_VALUE_OPTIONS.contains(&v) { 2 } else { 1 };
    }
    // `hatch run test:cov` runs a script of the hatch config: not a program.
    if first == "hatch"
        && args
            .get(i)
            .and_then(|a| a.value.as_deref())
            .is_some_and(|v| v.contains(':'))
    {
        return None;
    }
    (i < args.len()).then_some(i)
}

/// The command a wrapper runs, past every wrapper, with what each container
/// wrapper said about its volumes and working directory (outermost first).
pub fn unwrap(mut args: &[Arg]) -> (&[Arg], Vec<Container>) {
    let mut containers = Vec::new();
    loop {
        let skip = if let Some((skip, found)) = container(args) {
            containers.push(found);
            skip
        } else if let Some(skip) = plain_wrapper(args).or_else(|| project_runner(args)) {
            skip
        } else {
            return (args, containers);
        };
        if skip >= args.len() {
            return (&[], containers);
        }
        args = &args[skip..];
    }
}

/// The command a wrapper runs, past every wrapper.
pub fn strip_wrappers(args: &[Arg]) -> &[Arg] {
    unwrap(args).0
}

/// Past every wrapper but a project runner: `sudo uv run pip install x` →
/// `uv run pip install x`, whose `uv run` installs too.
pub fn strip_to_runner(mut args: &[Arg]) -> &[Arg] {
    loop {
        let skip = if let Some((skip, _)) = container(args) {
            skip
        } else if let Some(skip) = plain_wrapper(args) {
            skip
        } else {
            return args;
        };
        if skip >= args.len() {
            return &[];
        }
        args = &args[skip..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Arg> {
        text.split_whitespace().map(Arg::lit).collect()
    }

    fn inner(text: &str) -> String {
        let args = words(text);
        strip_wrappers(&args)
            .iter()
            .filter_map(|a| a.value.clone())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn looks_through_wrappers_and_containers() {
        assert_eq!(
            inner("sudo -E -u ci timeout -s 9 600 pip install x"),
            "pip install x"
        );
        assert_eq!(
            inner("docker run --rm -it -e A=1 -v /src:/w --gpus all img:1 pip install x"),
            "pip install x"
        );
        assert_eq!(inner("docker exec -w /w $C bash -c x"), "bash -c x");
        assert_eq!(
            inner("docker compose run --rm -T svc pytest -q"),
            "pytest -q"
        );
        assert_eq!(
            inner("kubectl exec -n ns pod -- pip install y"),
            "pip install y"
        );
        assert_eq!(inner("docker run --rm img"), "");
        assert_eq!(
            inner("uv run --with pytest --frozen -- bash ci/test.sh"),
            "bash ci/test.sh"
        );
        assert_eq!(inner("uv --directory x run pip install y"), "pip install y");
        assert_eq!(inner("poetry run pytest -q"), "pytest -q");
        assert_eq!(
            inner("pyenv exec python3.12 -m pip install x"),
            "python3.12 -m pip install x"
        );
        assert_eq!(inner("conda run -n ci pip install z"), "pip install z");
        assert_eq!(inner("hatch run test:cov"), "hatch run test:cov");
        assert_eq!(inner("uv run -m pytest"), "uv run -m pytest");
        assert_eq!(inner("uv sync --frozen"), "uv sync --frozen");
        assert_eq!(inner("docker build ."), "docker build .");
        let args = words("docker run -v /repo:/work --workdir=/work img bash x.sh");
        let (_, containers) = unwrap(&args);
        assert_eq!(containers[0].workdir.as_deref(), Some("/work"));
        assert_eq!(containers[0].volumes[0].0, "/work");
    }
}
