//! How an install ended, as the report gives it: a status with a stable
//! name, what of the plan is in place, and what the drift guard found.

use serde::Serialize;

use crate::installed::Snapshot;
use crate::plan::{Change, Plan, guard, is_version};

/// How an install ended. The names are part of the JSON report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InstallStatus {
    /// The plan has conflicts; nothing was touched.
    Refused,
    /// The plan was only shown.
    DryRun,
    /// Everything is present at its pinned version.
    NothingToDo,
    /// The plan was carried out and nothing else changed.
    Installed,
    /// The installer exited non-zero.
    InstallerFailed,
    /// The index cannot give what the lock names (a file with one of its
    /// hashes, the package, access); nothing was touched.
    Unavailable,
    /// The installer succeeded but planned packages are missing or at
    /// another version.
    Incomplete,
    /// The environment changed beyond the plan.
    Drift,
}

/// The outcome of one install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallOutcome {
    pub status: InstallStatus,
    /// `name==version` of each planned package now in place.
    pub installed: Vec<String>,
    /// `name==version` of each planned package that is not.
    pub not_installed: Vec<String>,
    /// The installer's exit code, when it ran (-1: ended by a signal).
    pub installer_exit: Option<i32>,
    pub drift: Vec<Change>,
}

impl InstallOutcome {
    fn untouched(status: InstallStatus) -> Self {
        Self {
            status,
            installed: Vec::new(),
            not_installed: Vec::new(),
            installer_exit: None,
            drift: Vec::new(),
        }
    }

    /// The plan has conflicts and nothing was touched.
    pub fn refused() -> Self {
        Self::untouched(InstallStatus::Refused)
    }

    /// The index could not give what the lock names; nothing was touched.
    pub fn unavailable() -> Self {
        Self::untouched(InstallStatus::Unavailable)
    }

    /// The plan was shown, not carried out.
    pub fn dry_run() -> Self {
        Self::untouched(InstallStatus::DryRun)
    }

    /// The plan is empty.
    pub fn nothing_to_do() -> Self {
        Self::untouched(InstallStatus::NothingToDo)
    }

    /// After the installer ran with `exit`: which planned packages are in
    /// place in `after`, what changed beyond the plan since `before` (the
    /// drift guard), and the verdict. A failing installer comes first, then
    /// a missing planned package, then drift.
    pub fn settle(plan: &Plan, before: &Snapshot, after: &Snapshot, exit: i32) -> Self {
        let mut installed = Vec::new();
        let mut not_installed = Vec::new();
        for w in plan.to_install() {
            let done = after
                .dists
                .get(&w.name)
                .is_some_and(|d| is_version(&d.version, &w.version));
            let label = format!("{}=={}", w.name, w.version);
            if done {
                installed.push(label);
            } else {
                not_installed.push(label);
            }
        }
        let mut drift = guard(before, after, plan);
        // A kept distribution whose files a new one now owns too was
        // written over, whatever its version says.
        drift.extend(crate::overwrite::overwritten(plan, after));
        let status = if exit != 0 {
            InstallStatus::InstallerFailed
        } else if !not_installed.is_empty() {
            InstallStatus::Incomplete
        } else if !drift.is_empty() {
            InstallStatus::Drift
        } else {
            InstallStatus::Installed
        };
        Self {
            status,
            installed,
            not_installed,
            installer_exit: Some(exit),
            drift,
        }
    }

    /// Whether an interrupted install's journal can go: the plan was
    /// carried out, or nothing was written (the installer refused a hash,
    /// or the index lacks a package), so no plan is left half-done and a
    /// failed install leaves site-packages as it was.
    pub fn leaves_nothing_pending(&self, before: &Snapshot, after: &Snapshot) -> bool {
        self.status == InstallStatus::Installed || before.dists == after.dists
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::plan::plan;
    use crate::testing::{snapshot, wanted};

    /// alpha is kept, beta is to be installed.
    fn planned() -> (Plan, Snapshot) {
        let before = snapshot(&[("alpha", "1.0", "a")]);
        let plan = plan(
            &[wanted("alpha", "1.0"), wanted("beta", "2.0")],
            &before,
            &[],
        );
        (plan, before)
    }

    #[test]
    fn status_names_are_the_reports() {
        let names: Vec<String> = [
            InstallStatus::Refused,
            InstallStatus::DryRun,
            InstallStatus::NothingToDo,
            InstallStatus::Installed,
            InstallStatus::InstallerFailed,
            InstallStatus::Incomplete,
            InstallStatus::Drift,
        ]
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
        assert_eq!(
            names,
            [
                "\"refused\"",
                "\"dry-run\"",
                "\"nothing-to-do\"",
                "\"installed\"",
                "\"installer-failed\"",
                "\"incomplete\"",
                "\"drift\"",
            ]
        );
    }

    #[test]
    fn the_report_keeps_its_field_order() {
        assert_eq!(
            serde_json::to_string(&InstallOutcome::dry_run()).unwrap(),
            r#"{"status":"dry-run","installed":[],"not_installed":[],"installer_exit":null,"drift":[]}"#
        );
    }

    #[test]
    fn the_plan_carried_out_and_nothing_else_is_installed() {
        let (plan, before) = planned();
        let after = snapshot(&[("alpha", "1.0", "a"), ("beta", "2.0.0", "b")]);
        let outcome = InstallOutcome::settle(&plan, &before, &after, 0);
        assert_eq!(outcome.status, InstallStatus::Installed);
        assert_eq!(outcome.installed, ["beta==2.0"]);
        assert!(outcome.not_installed.is_empty());
        assert_eq!(outcome.installer_exit, Some(0));
    }

    #[test]
    fn a_failing_installer_wins_over_what_it_left() {
        let (plan, before) = planned();
        let after = snapshot(&[("alpha", "1.0", "changed")]);
        let outcome = InstallOutcome::settle(&plan, &before, &after, 2);
        assert_eq!(outcome.status, InstallStatus::InstallerFailed);
        assert_eq!(outcome.not_installed, ["beta==2.0"]);
        assert_eq!(outcome.drift.len(), 1);
        assert_eq!(outcome.installer_exit, Some(2));
    }

    #[test]
    fn a_planned_package_missing_after_success_is_incomplete() {
        let (plan, before) = planned();
        let after = snapshot(&[("alpha", "1.0", "a"), ("beta", "1.0", "b")]);
        let outcome = InstallOutcome::settle(&plan, &before, &after, 0);
        assert_eq!(outcome.status, InstallStatus::Incomplete);
        assert_eq!(outcome.not_installed, ["beta==2.0"]);
    }

    #[test]
    fn a_change_beyond_the_plan_is_drift() {
        let (plan, before) = planned();
        let after = snapshot(&[("alpha", "1.0", "rewritten"), ("beta", "2.0", "b")]);
        let outcome = InstallOutcome::settle(&plan, &before, &after, 0);
        assert_eq!(outcome.status, InstallStatus::Drift);
        assert_eq!(outcome.drift[0].name, "alpha");
        assert_eq!(outcome.drift[0].what, "reinstalled (RECORD differs)");
    }
}
