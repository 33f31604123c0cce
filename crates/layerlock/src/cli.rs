//! Command-line flags, as clap reads them. `settings` merges them with the
//! config file into one typed value per command.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `0.1.0 (abc123def)`: the commit when built from a git checkout.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("LAYERLOCK_VERSION_SUFFIX"));

#[derive(Parser, Debug)]
#[command(
    name = "layerlock",
    version = VERSION,
    about = "Hash-pinned package layers on top of a CI image's own lock",
    after_help = "Exit codes: 0 ok; 1 a check failed (stale lock, not covered); 2 layerlock could not do its job."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Resolve extra requirements against base locks and write a hash-pinned
    /// lock of only what the bases lack.
    Compile(CompileArgs),
    /// Say whether requirements are already satisfied by the base locks.
    Covers(CoversArgs),
    /// Say what changed between two locks: added, removed, upgraded and
    /// downgraded packages.
    Diff(DiffArgs),
    /// Install only the lock entries an environment lacks, hash-checked and
    /// without resolution, and prove nothing else changed.
    Install(InstallArgs),
    /// Prove the locked packages are present and intact; never installs.
    Verify(VerifyArgs),
    /// Find job-time package installs in CI configuration.
    Audit(AuditArgs),
    /// Check that every package a lock introduces is old enough.
    Cooldown(CooldownArgs),
    /// Check that every test file is run by some CI step.
    Tether(TetherArgs),
    /// Check that every Buildkite step has a stable, unique key.
    Steps(StepsArgs),
    /// Compare CI steps with their definition at a git revision, or before
    /// the commit that disabled them.
    Blocks(BlocksArgs),
    /// Explain test failures of jobs that were dark: the commits that landed
    /// meanwhile on what the failing tests read.
    Triage(TriageArgs),
    /// Draw the stage graph of Dockerfiles (or bake/Compose files' targets),
    /// marked with what each stage installs and which stages CI builds.
    Graph(GraphArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command into a directory.
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub struct GraphArgs {
    /// Dockerfiles, or bake/Compose files whose targets to draw.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write the picture to FILE (else to standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Default: from -o's extension (.svg, .dot, .json), else svg.
    #[arg(long, value_enum)]
    pub format: Option<GraphFormat>,
    /// Exit 1 when -o's FILE is not what would be drawn now (pre-commit).
    #[arg(long, requires = "output")]
    pub check: bool,
    /// The repository whose CI says what is built and installed.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum GraphFormat {
    Svg,
    Dot,
    Json,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write `layerlock.1` and `layerlock-COMMAND.1` here instead of
    /// printing `layerlock.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct TetherArgs {
    /// Check only these files (pre-commit passes the changed ones).
    pub files: Vec<PathBuf>,
    /// Check every test file; stale allowlist entries become errors.
    #[arg(long)]
    pub all: bool,
    /// The allowlist of untethered files (`path  # reason` a line).
    #[arg(long, value_name = "FILE")]
    pub allowlist: Option<PathBuf>,
    /// Say which steps run FILE, or why none does.
    #[arg(long, value_name = "FILE")]
    pub explain: Option<String>,
    /// Map a container path into the repository: `/vllm-workspace=.`.
    #[arg(long = "path-map", value_name = "CONTAINER=DIR")]
    pub path_map: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// The config file to read instead of searching for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct StepsArgs {
    /// Pipeline files or directories (default: .buildkite).
    pub paths: Vec<PathBuf>,
    /// Report steps nested in groups (for generators without group support).
    #[arg(long)]
    pub no_groups: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// The config file to read instead of searching for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct BlocksArgs {
    /// CI files or directories to compare (default: every Buildkite, GitHub
    /// Actions and GitLab file).
    pub paths: Vec<String>,
    /// Compare every step with the same step at this revision; with
    /// `--disabled-by auto`, the revision that lacks the restored steps
    /// (default: the merge base with the main line).
    #[arg(long, value_name = "GIT-REV")]
    pub since: Option<String>,
    /// Compare the steps this commit removed or commented out with their
    /// definition at its parent; `auto` finds, for each step new since
    /// `--since`, the last commit that removed it.
    #[arg(long, value_name = "COMMIT|auto")]
    pub disabled_by: Option<String>,
    /// Only this step (key, label or job id; repeatable).
    #[arg(long = "step", value_name = "ID")]
    pub steps: Vec<String>,
    /// An expected edit: OLD becomes NEW in the restored step (repeatable).
    #[arg(long = "rewrite", value_name = "OLD=NEW")]
    pub rewrites: Vec<String>,
    /// An expected edit: command lines matching REGEX are left out on both
    /// sides (repeatable).
    #[arg(long = "drop-line", value_name = "REGEX")]
    pub drop_lines: Vec<String>,
    /// The main line, for the default `--since` of `--disabled-by auto`
    /// (default: origin/main, main, origin/master or master).
    #[arg(long, value_name = "REF")]
    pub main: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: HistoryFormat,
    /// The config file to read instead of searching for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct TriageArgs {
    /// JUnit XML reports (pytest --junitxml) or Buildkite Test Engine JSON;
    /// `JOB=PATH` names the job (step key) a report belongs to. Reports of
    /// one job are merged (shards, retries).
    #[arg(required = true, value_name = "[JOB=]REPORT")]
    pub reports: Vec<String>,
    /// The job of reports given without `JOB=`.
    #[arg(long, value_name = "KEY")]
    pub job: Option<String>,
    /// When the jobs went dark: a revision (the commit that disabled them),
    /// a date (YYYY-MM-DD or RFC 3339), or `auto`: for each job, the last
    /// commit on the main line that removed its step.
    #[arg(long, value_name = "REV|DATE|auto")]
    pub dark_since: Option<String>,
    /// The main line (default: origin/main, main, origin/master or master).
    #[arg(long, value_name = "REF")]
    pub main: Option<String>,
    /// The branch under test.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub head: String,
    /// How many levels of in-repository imports to follow from a test file.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// The same jobs' reports on the main line (repeatable): each failure
    /// is marked `also on main` or `only here`.
    #[arg(long = "main-report", value_name = "[JOB=]REPORT")]
    pub main_reports: Vec<String>,
    /// Where likely fixes are looked for: refs not merged into the main
    /// line that match (repeatable; default refs/heads/, refs/remotes/ and
    /// refs/pull/, e.g. refs/pull/*/head).
    #[arg(long = "fix-refs", value_name = "GLOB", conflicts_with = "no_fix_refs")]
    pub fix_refs: Vec<String>,
    /// Look for no likely fixes.
    #[arg(long)]
    pub no_fix_refs: bool,
    /// An earlier run: its triage result (`--format json`), or with
    /// --previous-head its reports ([JOB=]REPORT, repeatable). Its failures
    /// that pass now are told as fixed, with the commits since.
    #[arg(long, value_name = "RESULT|[JOB=]REPORT")]
    pub previous: Vec<String>,
    /// The commit the --previous reports tested.
    #[arg(long, value_name = "REV")]
    pub previous_head: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: HistoryFormat,
    /// The config file to read instead of searching for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Report formats of the history checks: Markdown is for a pull-request
/// comment.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Args, Debug)]
pub struct CooldownArgs {
    /// The lock to check (default: every layer's output in the config).
    pub lock: Option<PathBuf>,
    /// Packages pinned at the same version in these locks are not introduced
    /// by this one (repeatable).
    #[arg(long = "base", value_name = "LOCK", conflicts_with = "since")]
    pub bases: Vec<PathBuf>,
    /// Only what the lock introduces since this git revision (e.g. the pull
    /// request's base).
    #[arg(long, value_name = "GIT-REV")]
    pub since: Option<String>,
    #[command(flatten)]
    pub cooldown: CooldownFlags,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// The config file to read instead of searching for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub index: IndexArgs,
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Files or directories to scan (default: the current directory).
    pub paths: Vec<PathBuf>,
    /// Map a container path to a directory of the repository:
    /// `/vllm-workspace=.` (repeatable).
    #[arg(long = "path-map", value_name = "CONTAINER=DIR")]
    pub path_map: Vec<String>,
    /// Where CI jobs run when a step does not say (e.g. /vllm-workspace/tests).
    #[arg(long, value_name = "DIR")]
    pub default_working_dir: Option<String>,
    /// The allowlist file (default: `.layerlock-allowlist` in the scan root).
    #[arg(long, value_name = "FILE")]
    pub allowlist: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: AuditFormat,
    /// Exit 1 only for findings at or above this severity.
    #[arg(long, value_enum)]
    pub min_severity: Option<SeverityArg>,
    /// Stale allowlist entries are errors.
    #[arg(long)]
    pub strict: bool,
    /// Write an allowlist of today's findings to FILE (each keyed by its
    /// command, so it survives line shifts) as a baseline, and exit 0.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Print every rule id with its description and exit.
    #[arg(long)]
    pub list_rules: bool,
    /// The config file to read instead of searching for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditFormat {
    Text,
    Json,
    Sarif,
    Github,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeverityArg {
    Info,
    Low,
    Medium,
    High,
}

#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The hash-pinned lock to install.
    pub lock: PathBuf,
    /// The interpreter whose environment to install into.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
    /// Which installer runs: uv when it is on PATH, else pip.
    #[arg(long, value_enum)]
    pub installer: Option<InstallerArg>,
    /// Allow this installed package to change to the locked version (repeatable).
    #[arg(long = "allow-change", value_name = "PKG", value_delimiter = ',')]
    pub allow_change: Vec<String>,
    /// Print the plan; exit 1 when changes are needed, 0 when none are.
    #[arg(long)]
    pub dry_run: bool,
    /// Write the plan and the outcome to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Passed to the installer.
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Passed to the installer (repeatable).
    #[arg(long, value_name = "URL")]
    pub extra_index_url: Vec<String>,
    /// Passed to the installer (repeatable).
    #[arg(long, value_name = "DIR")]
    pub find_links: Vec<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallerArg {
    Uv,
    Pip,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The lock whose packages must be present.
    pub lock: PathBuf,
    /// The interpreter whose environment to check.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
    /// Import these modules in one interpreter process (repeatable).
    #[arg(long = "import", value_name = "MODULE", value_delimiter = ',')]
    pub imports: Vec<String>,
    /// Check every file of each locked distribution against its RECORD sha256.
    #[arg(long)]
    pub integrity: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatArg {
    Text,
    Json,
}

#[derive(Args, Debug, Clone, Default)]
pub struct LayerArgs {
    /// Requirements files (or a `pyproject.toml`) to resolve. With none,
    /// every layer of the config file (layerlock.toml or [tool.layerlock]
    /// in pyproject.toml) is handled.
    pub inputs: Vec<PathBuf>,
    /// Constraints: narrow a package's versions wherever it is needed,
    /// never pull it in (repeatable).
    #[arg(long = "constraint", short = 'c', value_name = "FILE")]
    pub constraints: Vec<PathBuf>,
    /// Overrides: every requirement on a package this file names, the
    /// layer's or a dependency's, takes this file's version instead
    /// (repeatable), as in uv.
    #[arg(long = "override", value_name = "FILE")]
    pub overrides: Vec<PathBuf>,
    /// For a `pyproject.toml` input: its optional dependencies of this
    /// extra too (repeatable).
    #[arg(long = "extra", value_name = "NAME", value_delimiter = ',')]
    pub extras: Vec<String>,
    /// For a `pyproject.toml` input: every extra's optional dependencies.
    #[arg(long, conflicts_with = "extras")]
    pub all_extras: bool,
    /// For a `pyproject.toml` input: this `[dependency-groups]` group too
    /// (PEP 735; repeatable).
    #[arg(long = "group", value_name = "NAME", value_delimiter = ',')]
    pub groups: Vec<String>,
    /// A lock describing what the image already has (repeatable). Its pins
    /// are fixed: never re-resolved, never emitted.
    #[arg(long = "base", value_name = "FILE")]
    pub bases: Vec<PathBuf>,
    /// Target Python version, e.g. 3.12. Repeat it (or `--platform`) for
    /// one lock that serves every pairing of the versions and platforms.
    #[arg(long, value_name = "VERSION", value_delimiter = ',')]
    pub python_version: Vec<String>,
    /// Target platform, e.g. x86_64-manylinux_2_28, or as uv spells it
    /// (x86_64-unknown-linux-gnu, aarch64-manylinux2014, linux);
    /// repeatable, like `--python-version`.
    #[arg(
        long,
        visible_alias = "python-platform",
        value_name = "PLATFORM",
        value_delimiter = ','
    )]
    pub platform: Vec<String>,
    /// A package the image provides outside the base lock: PKG or PKG==VER.
    #[arg(long = "owned", value_name = "PKG[==VER]", value_delimiter = ',')]
    pub owned: Vec<String>,
    /// The image installs PKG==VER over the version its own lock pins (as
    /// vLLM's image does with NCCL): the layer resolves against it, and the
    /// lock says so.
    #[arg(long = "owned-over", value_name = "PKG==VER", value_delimiter = ',')]
    pub owned_over: Vec<String>,
    /// Replace the image's PKG on purpose: the layer may write over its
    /// files, the lock records it, and `install` removes it first.
    #[arg(long = "replace", value_name = "PKG", value_delimiter = ',')]
    pub replace: Vec<String>,
    /// A distribution whose files cannot be listed (a base pin with no
    /// wheel on the indexes asked, an sdist, a git or directory source) is
    /// an error instead of a name in the lock's header.
    #[arg(long)]
    pub require_checked: bool,
    /// Take every distribution installed for this interpreter as a base pin
    /// (the image's real environment); a base lock that disagrees with it
    /// is an error.
    #[arg(long, value_name = "PYTHON")]
    pub base_env: Option<PathBuf>,
    /// Only consider files uploaded before this time (RFC 3339, or
    /// YYYY-MM-DD: the end of that day, UTC, as uv reads a date).
    #[arg(long, value_name = "TIMESTAMP")]
    pub exclude_newer: Option<String>,
    /// Packages that must come as wheels: `:all:` or names, comma-separated
    /// or repeated (pip's and uv's spelling). Without it a version with no
    /// wheel for the target is locked from its source distribution, read
    /// statically and built by the installer.
    #[arg(
        long = "only-binary",
        value_name = ":all:|PKG[,PKG]",
        value_delimiter = ','
    )]
    pub only_binary: Vec<String>,
    /// Packages that may be locked older than newer releases whose
    /// dependencies only a build could say (sdists with dynamic metadata):
    /// `:all:` or names, comma-separated or repeated. Without it, falling
    /// back past more than one such release, or past one older than 14
    /// days, is refused.
    #[arg(
        long = "allow-walk-back",
        value_name = ":all:|PKG[,PKG]",
        value_delimiter = ','
    )]
    pub allow_walk_back: Vec<String>,
    /// Packages whose sdists are read to their end however large they are
    /// (up to 512 MiB), when the files that say what they need lie past
    /// the first 4 MiB of an archive over 32 MiB (pyspark's setup.py
    /// follows 434 MiB of jars): comma-separated or repeated.
    #[arg(
        long = "read-whole-sdist",
        value_name = "PKG[,PKG]",
        value_delimiter = ','
    )]
    pub read_whole_sdist: Vec<String>,
    /// When to choose pre-releases (default: only when no stable version fits).
    #[arg(long, value_enum)]
    pub prerelease: Option<PrereleaseArg>,
    #[command(flatten)]
    pub cooldown: CooldownFlags,
    /// Handle only these layers of the config file (repeatable).
    #[arg(long = "layer", value_name = "NAME", value_delimiter = ',')]
    pub layers: Vec<String>,
    /// The config file to read instead of searching for one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub index: IndexArgs,
    /// No progress output on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The release-age policy's flags, shared by `compile` and `cooldown`.
#[derive(Args, Debug, Clone, Default)]
pub struct CooldownFlags {
    /// Only versions uploaded at least this long before --now (`7d`,
    /// `7 days`, `P7D`, `12h`); default from the config's [cooldown].
    #[arg(long, value_name = "AGE")]
    pub min_age: Option<String>,
    /// A package, or one version of it (PKG==VER), exempt from the
    /// cooldown (repeatable).
    #[arg(
        long = "min-age-exempt",
        value_name = "PKG[==VER]",
        value_delimiter = ','
    )]
    pub min_age_exempt: Vec<String>,
    /// The time ages are measured at (default: now).
    #[arg(long, value_name = "TIMESTAMP")]
    pub now: Option<String>,
    /// Accept files whose upload time cannot be found (fail closed otherwise).
    #[arg(long)]
    pub allow_missing_time: bool,
}

#[derive(Args, Debug, Clone, Default)]
pub struct IndexArgs {
    /// The package index (PEP 503 or PEP 691 simple API).
    #[arg(long, value_name = "URL", env = "LAYERLOCK_INDEX_URL")]
    pub index_url: Option<String>,
    /// Further indexes, asked before --index-url (repeatable).
    #[arg(long, value_name = "URL")]
    pub extra_index_url: Vec<String>,
    /// A directory of wheels to use as well (repeatable).
    #[arg(long, value_name = "DIR")]
    pub find_links: Vec<PathBuf>,
    /// Ask no index: only --find-links.
    #[arg(long)]
    pub no_index: bool,
    /// Where to cache index pages and metadata.
    #[arg(long, value_name = "DIR", env = "LAYERLOCK_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not use or write the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Resolve from the cache alone; fetch nothing.
    #[arg(long)]
    pub offline: bool,
    /// Seconds an index may stay silent (connect, or between two reads);
    /// a request is abandoned after four times this in all.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "LAYERLOCK_HTTP_TIMEOUT",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=3600)
    )]
    pub timeout: u64,
}

#[derive(Args, Debug)]
pub struct CompileArgs {
    #[command(flatten)]
    pub layer: LayerArgs,
    /// Write the lock here (default: stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Which files' hashes to write: every file of the version, or only the
    /// ones installable on the target.
    #[arg(long, value_enum)]
    pub hashes: Option<HashesArg>,
    /// Write nothing; exit 1 with a diff when the output file is stale.
    #[arg(long)]
    pub check: bool,
    /// The lock format (default: from the output's name; `pylock.*.toml`
    /// is PEP 751).
    #[arg(long, value_enum)]
    pub format: Option<LockFormatArg>,
    /// The command the lock header tells readers to run instead of the
    /// one that ran (e.g. `make locks`).
    #[arg(long, value_name = "COMMAND", env = "LAYERLOCK_CUSTOM_COMPILE_COMMAND")]
    pub custom_compile_command: Option<String>,
    /// Write what the run fetched and when to FILE (JSON): requests and
    /// bytes by kind, cache answers, the resolver's waits, and when each
    /// level of the dependency tree arrived.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// Free every pin of the existing output: resolve as if it were not
    /// there (pins are kept otherwise).
    #[arg(long, short = 'U')]
    pub upgrade: bool,
    /// Free one package's pin (PKG) or move it to one version (PKG==VER);
    /// repeatable.
    #[arg(long = "upgrade-package", short = 'P', value_name = "PKG[==VER]")]
    pub upgrade_package: Vec<String>,
    /// Print what changed against the existing output: added, removed,
    /// upgraded and downgraded packages, with why and when uploaded.
    #[arg(long)]
    pub diff: bool,
    /// Write what changed to FILE (text; JSON or Markdown by its extension,
    /// `.json` or `.md`, or by --report-format).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// The form of --report and of `layerlock diff`.
    #[arg(long, value_enum)]
    pub report_format: Option<ReportFormat>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
    /// A summary line and a table, to paste into a pull request.
    Markdown,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The lock before (requirements.txt or pylock.toml).
    pub old: PathBuf,
    /// The lock after.
    pub new: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// The time ages are measured at (default: now).
    #[arg(long, value_name = "TIMESTAMP")]
    pub now: Option<String>,
    /// Exit 1 when the locks differ.
    #[arg(long)]
    pub exit_code: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockFormatArg {
    /// A pip requirements file with `--hash` options.
    #[value(name = "requirements.txt", alias = "requirements")]
    Requirements,
    /// PEP 751 `pylock.toml`.
    #[value(name = "pylock.toml", alias = "pylock")]
    Pylock,
}

#[derive(Args, Debug)]
pub struct CoversArgs {
    #[command(flatten)]
    pub layer: LayerArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashesArg {
    All,
    Target,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrereleaseArg {
    Allow,
    Disallow,
    /// Stable versions first, pre-releases only when none fits (the default).
    /// `if-necessary-or-explicit`, uv's older name, means the same.
    #[value(alias = "if-necessary-or-explicit")]
    #[serde(alias = "if-necessary-or-explicit")]
    IfNecessary,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Command {
        let argv = std::iter::once("layerlock").chain(args.iter().copied());
        Cli::try_parse_from(argv).expect("parses").command
    }

    /// Every list flag takes its values repeated, comma-separated, or both.
    #[test]
    fn list_flags_take_commas_and_repeats_alike() {
        let Command::Install(install) = parse(&[
            "install",
            "l.txt",
            "--allow-change",
            "a,b",
            "--allow-change",
            "c",
        ]) else {
            panic!("install")
        };
        assert_eq!(install.allow_change, ["a", "b", "c"]);
        let Command::Compile(compile) = parse(&[
            "compile",
            "in.txt",
            "--replace",
            "cupy-cuda12x,nixl-cu12",
            "--python-version",
            "3.11,3.12",
            "--platform",
            "linux",
            "--only-binary",
            "x,y",
            "--allow-walk-back",
            "a,b",
            "--allow-walk-back",
            "c",
            "--owned",
            "nccl==2.1,cuda-python",
        ]) else {
            panic!("compile")
        };
        assert_eq!(compile.layer.replace, ["cupy-cuda12x", "nixl-cu12"]);
        assert_eq!(compile.layer.python_version, ["3.11", "3.12"]);
        assert_eq!(compile.layer.only_binary, ["x", "y"]);
        assert_eq!(compile.layer.allow_walk_back, ["a", "b", "c"]);
        assert_eq!(compile.layer.owned, ["nccl==2.1", "cuda-python"]);
    }
}
