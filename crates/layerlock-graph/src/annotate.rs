//! What layerlock knows about each line of the Dockerfiles it draws: the
//! installs their `RUN` lines make (directly or through the scripts they
//! call), each in the audit's classes, and which stages CI builds. Both
//! come from one walk of the repository, the one the audit makes.

use std::collections::{BTreeMap, BTreeSet};

use layerlock_audit::{
    Class, CommandSite, Reach, ScanOptions, Visitor, classify, strip_wrappers, walk,
};

use layerlock_walk::program;

use crate::model::Tone;

/// One install, at a line of a Dockerfile.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mark {
    pub line: usize,
    pub tone: Tone,
    /// `pip install`, `layerlock install requirements/ci.lock.txt`.
    pub what: String,
    /// The script the install is in, when the line calls one
    /// (`tools/install.sh:12`).
    pub inside: Option<String>,
}

/// Every mark, by the file (relative to the root) its line is in, and the
/// stages CI builds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    pub installs: BTreeMap<String, BTreeSet<Mark>>,
    /// (Dockerfile, stage as written); `None` is the last stage.
    pub builds: BTreeSet<(String, Option<String>)>,
    /// (where, the Dockerfile as written) of builds whose Dockerfile is
    /// known only at run time: any of the files drawn may be one.
    pub unknown_builds: BTreeSet<(String, String)>,
}

/// Walk the repository and mark what its Dockerfiles install.
pub fn marks(options: &ScanOptions) -> Marks {
    let mut visitor = Installs::default();
    let walked = walk(options, &mut visitor);
    Marks {
        installs: visitor.marks,
        builds: walked.builds,
        unknown_builds: walked.unknown_builds,
    }
}

#[derive(Default)]
struct Installs {
    marks: BTreeMap<String, BTreeSet<Mark>>,
}

/// What one command installs, and where it is.
struct Seen {
    tone: Tone,
    what: String,
    path: String,
    line: usize,
}

impl Visitor for Installs {
    type Item = Seen;

    fn command(&mut self, site: &CommandSite<'_>, out: &mut Vec<Seen>) {
        let found = guarded(site.args).or_else(|| {
            classify(site.args, site.files)
                .map(|install| (tone_of(install.class), install.tool.clone()))
        });
        if let Some((tone, what)) = found {
            out.push(Seen {
                tone,
                what,
                path: site.location.path.to_string(),
                line: site.location.line,
            });
        }
    }

    fn reached(&mut self, item: &Seen, reach: &Reach<'_>) {
        let own = format!("{}:{}", item.path, item.line);
        let mut put = |path: &str, line: usize, inside: Option<String>| {
            self.marks
                .entry(path.to_string())
                .or_default()
                .insert(Mark {
                    line,
                    tone: item.tone,
                    what: item.what.clone(),
                    inside,
                });
        };
        put(&item.path, item.line, None);
        // Each call on the way is a line that leads to the install.
        for hop in reach.via.iter() {
            if let Some((path, line)) = hop.rsplit_once(':')
                && let Ok(line) = line.parse::<usize>()
            {
                put(path, line, Some(own.clone()));
            }
        }
    }
}

/// `layerlock install LOCK`: a lock installed under the drift guard.
fn guarded(args: &[layerlock_audit::Arg]) -> Option<(Tone, String)> {
    let args = strip_wrappers(args);
    let first = args.first().and_then(program)?;
    if first != "layerlock" || !args.get(1).is_some_and(|a| a.is("install")) {
        return None;
    }
    // The lock is the operand; flags before it may take values, so the
    // last word that is not a flag is taken.
    let lock = args[2..]
        .iter()
        .rev()
        .find(|a| !a.raw.starts_with('-'))
        .map(|a| a.raw.clone());
    let what = match lock {
        Some(lock) => format!("layerlock install {lock}"),
        None => "layerlock install".to_string(),
    };
    Some((Tone::Guarded, what))
}

fn tone_of(class: Class) -> Tone {
    match class {
        Class::HashLocked => Tone::HashLocked,
        Class::Pinned => Tone::Pinned,
        Class::RunTime => Tone::RunTime,
        Class::MayResolve => Tone::MayResolve,
        Class::Unpinned => Tone::Unpinned,
    }
}
