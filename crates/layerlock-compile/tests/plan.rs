//! Plans refused before anything is read, and the config's layer tables.

#![allow(clippy::unwrap_used)]

mod support;

use layerlock_compile::{LayerConfig, UserPath, check_outputs, check_split, check_targets};
use support::{Work, also_for};

#[test]
fn a_target_that_is_not_a_target_is_named_with_its_keys() {
    let work = Work::new();
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.targets[0].platform = "nope_64".to_string();
    let err = check_targets(&layer.targets).unwrap_err().to_string();
    assert!(
        err.ends_with("(python-version = \"3.12\", platform = \"nope_64\")"),
        "{err}"
    );
}

#[test]
fn the_same_target_twice_is_refused() {
    let work = Work::new();
    let layer = also_for(work.layer(&["in.txt"], &[]), "3.12");
    assert!(check_targets(&layer.targets).is_err());
    let layer = also_for(work.layer(&["in.txt"], &[]), "3.11");
    assert!(check_targets(&layer.targets).is_ok());
}

#[test]
fn an_output_named_by_python_alone_cannot_hold_two_platforms() {
    let work = Work::new();
    let mut layer = work.layer(&["in.txt"], &[]);
    let mut arm = layer.targets[0].clone();
    arm.platform = "aarch64-manylinux_2_28".to_string();
    layer.targets.push(arm);
    layer.output = Some(UserPath::new("lock-{python}.txt", work.path()));
    let err = check_split(&layer).unwrap_err().to_string();
    assert!(
        err.contains("would both be written to lock-3.12.txt"),
        "{err}"
    );
    layer.output = Some(UserPath::new("lock-{python}-{platform}.txt", work.path()));
    assert!(check_split(&layer).is_ok());
}

#[test]
fn two_layers_writing_one_file_are_refused_by_name() {
    let work = Work::new();
    let mut a = work.layer(&["a.in"], &[]);
    a.name = Some("a".to_string());
    a.output = Some(work.user_path("lock.txt"));
    let mut b = a.clone();
    b.name = Some("b".to_string());
    let err = check_outputs(&[a, b], &[], work.path())
        .unwrap_err()
        .to_string();
    assert_eq!(err, "layers `a` and `b` both write lock.txt");
}

#[test]
fn a_lock_written_over_its_own_input_is_refused() {
    let work = Work::new();
    let mut layer = work.layer(&["in.txt"], &["base.txt"]);
    layer.output = Some(work.user_path("base.txt"));
    let err = check_outputs(&[layer], &[], work.path())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "base.txt is both an input (or base) and an output; write the lock to another file"
    );
}

#[test]
fn a_report_over_an_input_is_refused() {
    let work = Work::new();
    let mut layer = work.layer(&["in.txt"], &[]);
    layer.output = Some(work.user_path("lock.txt"));
    let report = work.user_path("in.txt");
    let err = check_outputs(&[layer], &[("--report", &report)], work.path())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("--report in.txt names an input"), "{err}");
}

#[test]
fn a_layer_takes_the_files_defaults_where_it_sets_nothing() {
    let defaults: LayerConfig =
        toml::from_str("python-version = \"3.12\"\nbases = [\"image.txt\"]\nowned = [\"nccl\"]\n")
            .unwrap();
    let layers: Vec<LayerConfig> = vec![
        toml::from_str("inputs = [\"a.in\"]\nowned = [\"other\"]\n").unwrap(),
        toml::from_str("name = \"b\"\ninputs = [\"b.in\"]\nbases = []\n").unwrap(),
    ];
    let merged = layerlock_compile::with_defaults(&defaults, &layers);
    assert_eq!(merged[0].name.as_deref(), Some("#1"));
    assert_eq!(merged[0].bases, ["image.txt"]);
    assert_eq!(merged[0].owned, ["other"]);
    assert_eq!(merged[1].name.as_deref(), Some("b"));
    assert_eq!(merged[1].owned, ["nccl"]);
    assert_eq!(
        merged[1].python_version.as_ref().map(|p| p.values()),
        Some(vec!["3.12".to_string()])
    );
}

#[test]
fn a_config_key_of_the_wrong_type_is_named() {
    let err = toml::from_str::<LayerConfig>("python-version = 3.12\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("expected a string or a list of strings"),
        "{err}"
    );
}
