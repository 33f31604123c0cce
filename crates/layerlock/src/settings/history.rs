//! Settings of the history checks (`blocks`, `triage`): flags over the
//! config's `[blocks]` and `[triage]` tables.

use std::path::PathBuf;

use anyhow::{Result, bail};

use layerlock_history::blocks::{Baseline, Edits};
use layerlock_history::triage::{DarkSince, ReportInput};

use super::Environment;
use crate::cli::{BlocksArgs, HistoryFormat, TriageArgs};
use crate::config::Config;

/// Import levels followed from a test file when neither flag nor config
/// says: the test's own helpers and the modules they use.
const DEFAULT_DEPTH: usize = 2;

#[derive(Debug, Clone)]
pub struct BlocksSettings {
    /// Where git is asked from (the repository holding it).
    pub dir: PathBuf,
    /// CI files or folders, absolute; empty: every CI file.
    pub paths: Vec<PathBuf>,
    /// What to compare with; `Restored` with an empty `since` means the
    /// merge base with the main line.
    pub baseline: Baseline,
    pub main: Option<String>,
    pub only: Vec<String>,
    pub edits: Edits,
    pub format: HistoryFormat,
}

impl BlocksSettings {
    pub fn resolve(args: &BlocksArgs, config: Option<&Config>, env: &Environment) -> Result<Self> {
        let blocks = config
            .and_then(|c| c.file.blocks.clone())
            .unwrap_or_default();
        // Where the config's paths are from, and where git is asked.
        let root = config.map_or_else(|| env.cwd.clone(), |c| env.cwd.join(&c.root));
        let paths = if args.paths.is_empty() {
            blocks.paths.iter().map(|p| root.join(p)).collect()
        } else {
            args.paths.iter().map(|p| env.cwd.join(p)).collect()
        };
        let baseline = match (args.disabled_by.as_deref(), &args.since) {
            (Some("auto"), since) => Baseline::Restored {
                since: since.clone().unwrap_or_default(),
            },
            (Some(commit), None) => Baseline::DisabledBy(commit.to_string()),
            (Some(_), Some(_)) => bail!(
                "--since and --disabled-by COMMIT name two baselines; give one (--since goes with --disabled-by auto)"
            ),
            (None, Some(since)) => Baseline::Since(since.clone()),
            (None, None) => bail!(
                "nothing to compare with: give --since REV, --disabled-by COMMIT or --disabled-by auto"
            ),
        };
        // Flags add to the config's expected edits.
        let rewrites: Vec<String> = blocks
            .rewrite
            .iter()
            .chain(&args.rewrites)
            .cloned()
            .collect();
        let drop_lines: Vec<String> = blocks
            .drop_line
            .iter()
            .chain(&args.drop_lines)
            .cloned()
            .collect();
        Ok(Self {
            dir: root,
            paths,
            baseline,
            main: args.main.clone(),
            only: args.steps.clone(),
            edits: Edits::parse(&rewrites, &drop_lines)?,
            format: args.format,
        })
    }
}

#[derive(Debug, Clone)]
pub struct TriageSettings {
    pub dir: PathBuf,
    pub reports: Vec<ReportInput>,
    pub dark_since: DarkSince,
    pub main: Option<String>,
    pub head: String,
    pub depth: usize,
    /// `[blocks] paths`, where `--dark-since auto` looks for the steps.
    pub pipeline_paths: Vec<PathBuf>,
    pub format: HistoryFormat,
    /// `--main-report`: the same jobs on the main line.
    pub main_reports: Vec<ReportInput>,
    /// Ref patterns where likely fixes are looked for; `None`:
    /// `--no-fix-refs`.
    pub fix_refs: Option<Vec<String>>,
    pub previous: Option<layerlock_history::triage::Previous>,
}

/// A job key as Buildkite allows it: what may stand before `=` in
/// `JOB=REPORT`.
fn looks_like_key(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'))
}

impl TriageSettings {
    pub fn resolve(args: &TriageArgs, config: Option<&Config>, env: &Environment) -> Result<Self> {
        let triage = config
            .and_then(|c| c.file.triage.clone())
            .unwrap_or_default();
        let blocks = config
            .and_then(|c| c.file.blocks.clone())
            .unwrap_or_default();
        let root = config.map_or_else(|| env.cwd.clone(), |c| env.cwd.join(&c.root));
        let inputs = |given: &[String]| -> Vec<ReportInput> {
            given
                .iter()
                .map(|given| {
                    let (job, path) = match given.split_once('=') {
                        Some((job, path))
                            if looks_like_key(job) && !env.cwd.join(given).exists() =>
                        {
                            (Some(job.to_string()), path)
                        }
                        _ => (args.job.clone(), given.as_str()),
                    };
                    ReportInput {
                        job,
                        path: env.cwd.join(path),
                        shown: path.to_string(),
                    }
                })
                .collect()
        };
        let reports = inputs(&args.reports);
        let fix_refs = if args.no_fix_refs {
            None
        } else if args.fix_refs.is_empty() {
            Some(
                layerlock_history::triage::DEFAULT_FIX_REFS
                    .iter()
                    .map(|p| p.to_string())
                    .collect(),
            )
        } else {
            for pattern in &args.fix_refs {
                if !pattern.starts_with("refs/") || pattern.chars().any(char::is_control) {
                    bail!(
                        "--fix-refs {}: a ref pattern starts with refs/ (refs/heads/, refs/remotes/origin/*, refs/pull/*/head)",
                        layerlock_history::render::terminal(pattern)
                    );
                }
            }
            Some(args.fix_refs.clone())
        };
        let previous = match (args.previous.as_slice(), &args.previous_head) {
            ([], None) => None,
            ([], Some(_)) => bail!(
                "--previous-head names the commit of earlier reports: give them with --previous"
            ),
            ([one], None) => Some(layerlock_history::triage::Previous::Result {
                path: env.cwd.join(one),
                shown: one.clone(),
            }),
            (_, None) => bail!(
                "several --previous files are the earlier run's reports: say which commit they tested with --previous-head REV (one --previous without it is a triage result, --format json)"
            ),
            (many, Some(head)) => Some(layerlock_history::triage::Previous::Reports {
                reports: inputs(many),
                head: head.clone(),
            }),
        };
        let dark_since = match args.dark_since.as_deref() {
            Some("auto") => DarkSince::FromBlocks { paths: Vec::new() },
            Some(given) => DarkSince::Rev(given.to_string()),
            None => bail!(
                "when did the jobs go dark? give --dark-since REV, --dark-since DATE or --dark-since auto (the commit that removed each job's step)"
            ),
        };
        Ok(Self {
            dir: root.clone(),
            reports,
            dark_since,
            main: args.main.clone().or(triage.main),
            head: args.head.clone(),
            depth: args.depth.or(triage.depth).unwrap_or(DEFAULT_DEPTH),
            pipeline_paths: blocks.paths.iter().map(|p| root.join(p)).collect(),
            format: args.format,
            main_reports: inputs(&args.main_reports),
            fix_refs,
            previous,
        })
    }
}
