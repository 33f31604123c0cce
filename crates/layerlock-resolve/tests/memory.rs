//! The resolver against an in-memory package source: no network, no files.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

use std::str::FromStr;
use std::sync::Arc;

use layerlock_dist::{
    CoreMetadata, IndexFile, PackageSource, PageLines, ProjectAnswer, ProjectFiles, SourceError,
    Target,
};
use layerlock_resolve::memory::Memory;
use layerlock_resolve::{BasePin, Direct, Prerelease, ResolveError, ResolveRequest, resolve};
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_pep508::{Requirement, VerbatimUrl};

/// `name==version` of every package the layer adds.
fn pins(resolution: &layerlock_resolve::Resolution) -> Vec<String> {
    resolution
        .packages
        .iter()
        .map(|(n, r)| format!("{n}=={}", r.version))
        .collect()
}

fn request(direct: &[&str], base: &[(&str, &str)]) -> ResolveRequest {
    ResolveRequest {
        direct: direct
            .iter()
            .map(|r| Direct {
                requirement: Requirement::<VerbatimUrl>::from_str(r).unwrap(),
                via: "-r in.txt".to_string(),
                origin: String::new(),
            })
            .collect(),
        constraints: Vec::new(),
        overrides: Vec::new(),
        preferences: Default::default(),
        shared: Default::default(),
        fixed: Default::default(),
        only_binary: Default::default(),
        dynamic_reads: None,
        allow_missing_time: false,
        base: base
            .iter()
            .map(|(n, v)| {
                (
                    PackageName::from_str(n).unwrap(),
                    BasePin {
                        version: Some(uv_pep440::Version::from_str(v).unwrap()),
                        origin: format!("base.txt ({n})"),
                        source: layerlock_lock::BaseSource::Pinned,
                    },
                )
            })
            .collect(),
        target: Target::new("3.12", "x86_64-manylinux_2_28").unwrap(),
        exclude_newer: None,
        prerelease: Prerelease::default(),
        cooldown: None,
    }
}

#[test]
fn base_pins_are_fixed_and_not_emitted() {
    let source = Memory::new(&[
        ("a", "1.0", &["b>=1"]),
        ("a", "2.0", &["b>=2"]),
        ("b", "1.0", &[]),
        ("b", "2.0", &[]),
    ]);
    let resolution = resolve(&source, &request(&["a"], &[("b", "1.0")])).unwrap();
    let names = pins(&resolution);
    assert_eq!(names, vec!["a==1.0"]);
    assert!(
        resolution
            .base_used
            .contains_key(&PackageName::from_str("b").unwrap())
    );
}

#[test]
fn conflict_explanation_names_the_base_pin() {
    let source = Memory::new(&[("a", "2.0", &["b>=2"])]);
    let err = resolve(&source, &request(&["a"], &[("b", "1.0")])).unwrap_err();
    let ResolveError::NoSolution { report, .. } = err else {
        panic!("{err:?}")
    };
    assert!(
        report.contains("the base pins b==1.0 (base.txt (b))"),
        "{report}"
    );
}

#[test]
fn base_packages_are_never_asked_for() {
    // The source does not know torch at all; the base pins a local version.
    let source = Memory::new(&[("t", "1.0", &["torch>=2"])]);
    let resolution = resolve(&source, &request(&["t"], &[("torch", "2.11.0+cu130")])).unwrap();
    assert_eq!(resolution.packages.len(), 1);
}

/// A source whose only project comes as cached page lines, the newest
/// version's line damaged past its name.
struct DamagedPage;

impl PackageSource for DamagedPage {
    fn project(&self, name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError> {
        let mut text = String::new();
        IndexFile {
            filename: "a-1.0-py3-none-any.whl".to_string(),
            url: "https://files.example/a-1.0-py3-none-any.whl".to_string(),
            sha256: Some("ab".repeat(32)),
            requires_python: None,
            yanked: None,
            upload_time: None,
            size: None,
            core_metadata: Some(None),
            listed_by: "memory".to_string(),
        }
        .write_line(&mut text);
        text.push_str("a-2.0-py3-none-any.whl\thttps://files.example/a-2.0-py3-none-any.whl\tnot-a-digest\t-\t-\t-\t-\t=\n");
        let page = PageLines::from_lines(&text, name, Arc::from("memory")).unwrap();
        Ok(Arc::new(ProjectAnswer::Found(ProjectFiles::new(
            Vec::new(),
            Some(Arc::new(page)),
            vec!["memory".to_string()],
        ))))
    }

    fn metadata(
        &self,
        name: &PackageName,
        _file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        let text = format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n");
        Ok(Arc::new(CoreMetadata::parse(text.as_bytes()).unwrap()))
    }
}

#[test]
fn a_damaged_cache_line_stops_the_resolution_rather_than_hiding_a_version() {
    let err = resolve(&DamagedPage, &request(&["a"], &[])).unwrap_err();
    let ResolveError::Source { source, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        source.to_string().contains("the cache is damaged"),
        "{source}"
    );
}

#[test]
fn a_package_that_keeps_losing_is_decided_before_the_one_beating_it() {
    // `t` comes first and would be decided first at 2.0; every `g` but the
    // oldest caps it below 2. Walking `g` down to 1.0 is valid but old;
    // after a few rejections `t` is decided after `g` instead (as uv does).
    let mut table: Vec<(&str, &'static str, &[&'static str])> =
        vec![("t", "1.0", &[]), ("t", "2.0", &[]), ("g", "1.0", &[])];
    for v in [
        "2.0", "3.0", "4.0", "5.0", "6.0", "7.0", "8.0", "9.0", "10.0",
    ] {
        table.push(("g", v, &["t<2"]));
    }
    let source = Memory::new(&table);
    let resolution = resolve(&source, &request(&["t", "g"], &[])).unwrap();
    let names = pins(&resolution);
    assert_eq!(names, vec!["g==10.0", "t==1.0"]);
}

#[test]
fn a_short_conflict_keeps_the_order_requirements_came_in() {
    // Fewer rejections than the threshold: `t` keeps its newest version.
    let source = Memory::new(&[
        ("t", "1.0", &[]),
        ("t", "2.0", &[]),
        ("g", "1.0", &[]),
        ("g", "2.0", &["t<2"]),
    ]);
    let resolution = resolve(&source, &request(&["t", "g"], &[])).unwrap();
    let names = pins(&resolution);
    assert_eq!(names, vec!["g==1.0", "t==2.0"]);
}

#[test]
fn the_lookahead_follows_the_target_and_knows_a_version_the_base_rules_out() {
    use layerlock_resolve::Lookahead;
    let lookahead = Lookahead::new(
        Arc::new(request(&["app[extra]"], &[("b", "1.0")])),
        Arc::default(),
    );
    let metadata = |deps: &str| {
        let text = format!(
            "Metadata-Version: 2.1\nName: app\nVersion: 2.0\n{deps}Provides-Extra: extra\n"
        );
        CoreMetadata::parse(text.as_bytes()).unwrap()
    };
    let app = PackageName::from_str("app").unwrap();
    let names = |guess: &layerlock_resolve::Guess| {
        guess
            .projects
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };

    let guess = lookahead.next(
        &app,
        &metadata(concat!(
            "Requires-Dist: c\n",
            "Requires-Dist: b>=1\n",
            "Requires-Dist: winonly; sys_platform == 'win32'\n",
            "Requires-Dist: more; extra == 'extra'\n",
            "Requires-Dist: other; extra == 'other'\n",
        )),
    );
    // The base's own package is not fetched; the extra asked counts.
    assert_eq!(names(&guess), vec!["c", "more"]);
    assert!(!guess.rejected);

    for ruled_out in ["Requires-Dist: b>=2\n", "Requires-Python: >=3.13\n"] {
        let guess = lookahead.next(&app, &metadata(ruled_out));
        assert!(guess.rejected, "{ruled_out}");
    }
    // A requirement that does not apply on the target rules nothing out.
    let guess = lookahead.next(
        &app,
        &metadata("Requires-Dist: b>=2; sys_platform == 'win32'\n"),
    );
    assert!(!guess.rejected);
}

#[test]
fn the_lookahead_rejects_what_needs_only_rejected_versions() {
    use layerlock_resolve::Lookahead;
    // The base holds core at 1.0; plugin N pins core-glue==N, and each
    // core-glue N needs core>=N.
    let lookahead = Lookahead::new(
        Arc::new(request(&["plugin"], &[("core", "1.0")])),
        Arc::default(),
    );
    let source = Memory::new(&[
        ("core-glue", "1.0", &["core>=1.0"]),
        ("core-glue", "2.0", &["core>=2.0"]),
        ("core-glue", "3.0", &["core>=3.0"]),
    ]);
    let name = |n: &str| PackageName::from_str(n).unwrap();
    let read = |n: &str, version: &str, deps: &str| {
        let text = format!("Metadata-Version: 2.1\nName: {n}\nVersion: {version}\n{deps}");
        lookahead.next(&name(n), &CoreMetadata::parse(text.as_bytes()).unwrap())
    };
    // core-glue's page arrives (the speculator sees it first).
    let ProjectAnswer::Found(glue) = source.project(&name("core-glue")).unwrap().as_ref().clone()
    else {
        panic!("core-glue is listed")
    };
    assert!(lookahead.wheel(&name("core-glue"), &glue, None).is_some());

    let plugin3 = read("plugin", "3.0", "Requires-Dist: core-glue==3.0\n");
    assert!(!plugin3.rejected);
    let plugin2 = read("plugin", "2.0", "Requires-Dist: core-glue>=2.0\n");
    assert!(!plugin2.rejected);
    // core-glue 3.0 cannot be used: plugin 3.0, which needs exactly it,
    // cannot either; plugin 2.0 still has core-glue 2.0.
    let glue3 = read("core-glue", "3.0", "Requires-Dist: core>=3.0\n");
    assert!(glue3.rejected);
    assert_eq!(
        glue3.also_rejected,
        vec![(name("plugin"), Version::from_str("3.0").unwrap())]
    );
    let glue2 = read("core-glue", "2.0", "Requires-Dist: core>=2.0\n");
    assert_eq!(
        glue2.also_rejected,
        vec![(name("plugin"), Version::from_str("2.0").unwrap())]
    );
    // A version read after its needs ran out is rejected at once.
    let late = read("plugin", "2.5", "Requires-Dist: core-glue>=2.0,<3.1\n");
    assert!(late.rejected);
    let fine = read("plugin", "1.0", "Requires-Dist: core-glue>=1.0\n");
    assert!(!fine.rejected);
}

/// A source listing one project's files by name, as an index page's lines;
/// every wheel's METADATA has no dependencies.
struct Listed(&'static [&'static str]);

impl PackageSource for Listed {
    fn project(&self, name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError> {
        let files: Vec<IndexFile> = self
            .0
            .iter()
            .map(|filename| IndexFile {
                filename: (*filename).to_string(),
                url: format!("https://files.example/{filename}"),
                sha256: Some("ab".repeat(32)),
                requires_python: None,
                yanked: None,
                upload_time: None,
                size: None,
                core_metadata: Some(None),
                listed_by: "memory".to_string(),
            })
            .collect();
        let page = PageLines::from_files(&files, name, Arc::from("memory")).unwrap();
        Ok(Arc::new(ProjectAnswer::Found(ProjectFiles::new(
            Vec::new(),
            Some(Arc::new(page)),
            vec!["memory".to_string()],
        ))))
    }

    fn metadata(
        &self,
        name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        let version = file.filename.split('-').nth(1).unwrap_or_default();
        let version = version.trim_end_matches(".tar.gz");
        let text = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
        Ok(Arc::new(CoreMetadata::parse(text.as_bytes()).unwrap()))
    }
}

#[test]
fn a_version_whose_file_names_cannot_be_read_is_no_version() {
    // `a-1.0-x-…`: a build tag starts with a digit, so this is no wheel's
    // name and 1.0 is no version of a. The pre-release is then all a has,
    // and is taken.
    let source = Listed(&["a-1.0-x-py3-none-any.whl", "a-2.0b1-py3-none-any.whl"]);
    let resolution = resolve(&source, &request(&["a"], &[])).unwrap();
    let a = &resolution.packages[&PackageName::from_str("a").unwrap()];
    assert_eq!(a.version.to_string(), "2.0b1");
    // Source distributions only, beside an unreadable wheel name, under
    // --only-binary: the cause is still that there is no wheel (what
    // `covers` reports).
    let source = Listed(&["a-1.0.tar.gz", "a-2.0-x-py3-none-any.whl"]);
    let mut wheels_only = request(&["a"], &[]);
    wheels_only.only_binary.all = true;
    let err = resolve(&source, &wheels_only).unwrap_err();
    let ResolveError::NoSolution { causes, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        causes,
        &vec![layerlock_resolve::Cause::NoWheel(
            PackageName::from_str("a").unwrap()
        )]
    );
}

#[test]
fn a_version_with_an_unreadable_requires_dist_is_left_out_not_locked_without_it() {
    // a 2.0 declares a dependency whose marker multiplies out to 16,384
    // terms: past the marker limits, so layerlock cannot read it. Locking
    // a 2.0 without it would drop a dependency the package declares.
    let groups: Vec<String> = (0..14)
        .map(|i| format!("(extra == 'x{i}' or extra == 'y{i}')"))
        .collect();
    let heavy: &'static str = Box::leak(format!("b ; {}", groups.join(" and ")).into_boxed_str());
    let source = Memory::new(&[
        ("a", "1.0", &["b"]),
        ("a", "2.0", &[heavy, "c"]),
        ("b", "1.0", &[]),
        ("c", "1.0", &[]),
    ]);
    let resolution = resolve(&source, &request(&["a"], &[])).unwrap();
    assert_eq!(pins(&resolution), vec!["a==1.0", "b==1.0"]);
    let err = resolve(&source, &request(&["a==2.0"], &[])).unwrap_err();
    assert!(
        err.to_string()
            .contains("a Requires-Dist layerlock cannot read"),
        "{err}"
    );
}

/// Under a cooldown, the same request is also resolved without it: what it
/// held back is named with the date each version becomes eligible, and a
/// request only the cooldown makes unsolvable says which versions it waits
/// for.
#[test]
fn a_cooldown_is_told_against_the_resolution_without_it() {
    let source = Memory::new(&[
        ("a", "1.0", &[]),
        ("a", "2.0", &[]),
        ("b", "1.0", &["a>=2"]),
    ])
    .uploaded("a==1.0", "2026-01-01T00:00:00Z")
    .uploaded("a==2.0", "2026-11-28T00:00:00Z")
    .uploaded("b==1.0", "2026-01-01T00:00:00Z");
    let cooldown = layerlock_resolve::Cooldown {
        now: "2026-12-01T00:00:00Z".parse().unwrap(),
        min_age: jiff::SignedDuration::from_hours(7 * 24),
        exempt: Vec::new(),
        allow_missing_time: false,
    };
    let memo = layerlock_resolve::CandidatesMemo::default();
    let mut held_request = request(&["a"], &[]);
    held_request.cooldown = Some(cooldown.clone());
    let told = layerlock_resolve::resolve_under_cooldown(&source, &held_request, &memo);
    assert_eq!(pins(&told.outcome.unwrap()), ["a==1.0"]);
    let held = told.held.unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].name.as_ref(), "a");
    assert_eq!(
        held[0].chosen.as_ref().map(ToString::to_string),
        Some("1.0".to_string())
    );
    assert_eq!(held[0].skipped.to_string(), "2.0");
    assert_eq!(
        held[0].eligible.unwrap().to_string(),
        "2026-12-05T00:00:00Z"
    );

    let memo = layerlock_resolve::CandidatesMemo::default();
    let mut stuck = request(&["b"], &[]);
    stuck.cooldown = Some(cooldown);
    let told = layerlock_resolve::resolve_under_cooldown(&source, &stuck, &memo);
    assert!(matches!(told.outcome, Err(ResolveError::NoSolution { .. })));
    let waits: Vec<String> = told
        .held
        .unwrap()
        .iter()
        .map(|h| format!("{}=={} at {}", h.name, h.skipped, h.eligible.unwrap()))
        .collect();
    assert_eq!(waits, ["a==2.0 at 2026-12-05T00:00:00Z"]);

    // Without a cooldown there is nothing to tell.
    let memo = layerlock_resolve::CandidatesMemo::default();
    let told = layerlock_resolve::resolve_under_cooldown(&source, &request(&["b"], &[]), &memo);
    assert!(told.outcome.is_ok() && told.held.is_none());
}

#[test]
fn an_override_whose_marker_never_holds_drops_the_requirement() {
    let source = Memory::new(&[
        ("nixl", "1.5.1", &["nixl-cu12", "nixl-cu13"]),
        ("nixl-cu12", "1.5.1", &[]),
        ("nixl-cu13", "1.5.1", &[]),
    ]);
    let mut req = request(&["nixl"], &[]);
    req.overrides.push(Direct {
        requirement: Requirement::<VerbatimUrl>::from_str("nixl-cu12 ; sys_platform == 'never'")
            .unwrap(),
        via: "--override o.txt".to_string(),
        origin: "o.txt:1".to_string(),
    });
    let resolution = resolve(&source, &req).unwrap();
    assert_eq!(pins(&resolution), ["nixl==1.5.1", "nixl-cu13==1.5.1"]);
    // One that holds still only replaces the version.
    req.overrides[0].requirement =
        Requirement::<VerbatimUrl>::from_str("nixl-cu12==1.5.1 ; sys_platform == 'linux'").unwrap();
    let resolution = resolve(&source, &req).unwrap();
    assert_eq!(
        pins(&resolution),
        ["nixl==1.5.1", "nixl-cu12==1.5.1", "nixl-cu13==1.5.1"]
    );
}

/// A source where `p` has only an sdist, whose setup.py computes its
/// `test` extra (as the sdist reader marks it) and spells its `fast` one;
/// every other name has one wheel with no dependencies.
struct ComputedExtra;

impl PackageSource for ComputedExtra {
    fn project(&self, name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError> {
        let filename = match name.as_ref() {
            "p" => "p-1.0.tar.gz".to_string(),
            other => format!("{other}-1.0-py3-none-any.whl"),
        };
        let file = IndexFile {
            url: format!("https://files.example/{filename}"),
            filename,
            sha256: Some("ab".repeat(32)),
            requires_python: None,
            yanked: None,
            upload_time: None,
            size: None,
            core_metadata: Some(None),
            listed_by: "memory".to_string(),
        };
        let page = PageLines::from_files(&[file], name, Arc::from("memory")).unwrap();
        Ok(Arc::new(ProjectAnswer::Found(ProjectFiles::new(
            Vec::new(),
            Some(Arc::new(page)),
            vec!["memory".to_string()],
        ))))
    }

    fn metadata(
        &self,
        name: &PackageName,
        _file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        let mut text = format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n");
        if name.as_ref() == "p" {
            text.push_str(&format!(
                "Requires-Dist: six\nProvides-Extra: fast\nRequires-Dist: c ; extra == 'fast'\n{}: test\n",
                layerlock_dist::COMPUTED_EXTRA_FIELD
            ));
        }
        Ok(Arc::new(CoreMetadata::parse(text.as_bytes()).unwrap()))
    }
}

#[test]
fn an_extra_the_sdist_computes_is_refused_only_when_asked_for() {
    let resolution = resolve(&ComputedExtra, &request(&["p"], &[])).unwrap();
    assert_eq!(pins(&resolution), ["p==1.0", "six==1.0"]);
    let resolution = resolve(&ComputedExtra, &request(&["p[fast]"], &[])).unwrap();
    assert_eq!(pins(&resolution), ["c==1.0", "p==1.0", "six==1.0"]);
    let err = resolve(&ComputedExtra, &request(&["p[test]"], &[])).unwrap_err();
    let ResolveError::NoSolution { report, hints, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        report
            .contains("p[test]==1.0 has no wheel for the target and its sdist computes that extra"),
        "{report}"
    );
    // The hint says why and what to do, as for an sdist that is dynamic.
    let hint = hints.join("\n");
    assert!(
        hint.contains(
            "p==1.0: its source distribution's setup.py computes what the extra `test` needs"
        ) && hint.contains("pass --owned p"),
        "{hint}"
    );
}
