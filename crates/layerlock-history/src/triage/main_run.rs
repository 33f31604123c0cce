//! `--main-report`: the same jobs' results on the main line. A failure
//! that main's run of the job fails too is no fault of the branch; one
//! that main passes is the branch's to look at.

use serde::Serialize;

use std::collections::BTreeMap;

use super::{Merge, TestFiles, is_bad, node_id};
use crate::junit::Outcome;

/// Where a failing test stands in main's run of its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MainStatus {
    /// Main's run fails it too.
    AlsoOnMain,
    /// Main's run passes it (or skips it): it fails only here.
    OnlyHere,
    /// Main's reports of the job do not have it: nothing to tell.
    NotRunOnMain,
}

impl MainStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AlsoOnMain => "also on main",
            Self::OnlyHere => "only here",
            Self::NotRunOnMain => "not in main's run",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OnMain {
    pub status: MainStatus,
    /// The commit main's run tested, when its report says.
    pub commit: Option<String>,
    /// Main's reports it was found in (`path:line`).
    pub seen_in: Vec<String>,
}

/// Main's run by job and node id (the test file, class and name), so that
/// a JUnit report and a Test Engine export of the same test meet.
pub(super) struct MainRun<'m> {
    tests: BTreeMap<(String, String), (Outcome, &'m [String])>,
    commits: &'m BTreeMap<String, String>,
}

impl<'m> MainRun<'m> {
    pub(super) fn new(main: &'m Merge, files: &TestFiles) -> Self {
        let mut tests = BTreeMap::new();
        for ((job, _, _), run) in &main.tests {
            let (file, class) = files.locate(&run.case);
            let node = node_id(&run.case, file.as_deref(), class.as_deref());
            tests.insert((job.clone(), node), (run.worst, run.seen_in.as_slice()));
        }
        Self {
            tests,
            commits: &main.commits,
        }
    }

    /// Where test `node` of `job` stands in main's run.
    pub(super) fn of(&self, job: &str, node: &str) -> OnMain {
        let commit = self.commits.get(job).cloned();
        match self.tests.get(&(job.to_string(), node.to_string())) {
            Some((worst, seen_in)) => OnMain {
                status: if is_bad(*worst) {
                    MainStatus::AlsoOnMain
                } else {
                    MainStatus::OnlyHere
                },
                commit,
                seen_in: seen_in.to_vec(),
            },
            None => OnMain {
                status: MainStatus::NotRunOnMain,
                commit,
                seen_in: Vec::new(),
            },
        }
    }
}
