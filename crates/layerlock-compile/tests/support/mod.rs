//! A layer to compile in a folder of the test's, over an in-memory index.

#![allow(dead_code, clippy::unwrap_used)] // helpers shared by several test files

use std::path::{Path, PathBuf};

use layerlock_compile::{
    CompileOptions, Compiled, Failed, IndexPlan, LayerPlan, Only, Plain, TargetPlan, UserPath,
    compile_layer,
};
use layerlock_lock::LockFormat;
use layerlock_resolve::memory::Memory;

pub const X86: &str = "x86_64-manylinux_2_28";

/// A folder with the layer's files in it.
pub struct Work {
    pub dir: tempfile::TempDir,
}

impl Work {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write `text` to `name` in the folder.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(name)).unwrap()
    }

    pub fn user_path(&self, name: &str) -> UserPath {
        UserPath::new(name, self.path())
    }

    /// A one-target layer of `inputs` over `bases` (file names in the
    /// folder), for Python 3.12 on x86_64 manylinux 2.28.
    pub fn layer(&self, inputs: &[&str], bases: &[&str]) -> LayerPlan {
        let target = TargetPlan {
            python_version: "3.12".to_string(),
            platform: X86.to_string(),
            bases: bases.iter().map(|b| self.user_path(b)).collect(),
            base_env: None,
            owned: Vec::new(),
            index: None,
        };
        LayerPlan {
            name: None,
            inputs: inputs.iter().map(|i| self.user_path(i)).collect(),
            constraints: Vec::new(),
            overrides: Vec::new(),
            project: Default::default(),
            only_binary: Default::default(),
            allow_walk_back: Default::default(),
            bases: target.bases.clone(),
            base_env: None,
            output: None,
            format: LockFormat::Requirements,
            python_version: target.python_version.clone(),
            platform: target.platform.clone(),
            owned: Vec::new(),
            hashes: None,
            prerelease: Default::default(),
            exclude_newer: None,
            index: IndexPlan::default(),
            index_explicit: true,
            command: "layerlock compile in.txt".to_string(),
            display_root: self.path().to_path_buf(),
            cwd: self.path().to_path_buf(),
            cooldown: None,
            allow_missing_time: false,
            targets: vec![target],
            owned_over: Vec::new(),
            replace: Vec::new(),
            require_checked: false,
        }
    }

    pub fn options(&self) -> CompileOptions {
        CompileOptions {
            cwd: self.path().to_path_buf(),
            ..Default::default()
        }
    }

    /// [`Work::options`] with the checks after resolving (files, the
    /// base's closure) on, as the binary runs them.
    #[allow(dead_code)] // not every test file checks files
    pub fn checked(&self) -> CompileOptions {
        CompileOptions {
            check_files: true,
            ..self.options()
        }
    }
}

/// `layer` compiled over `index`.
pub fn compile(
    layer: &LayerPlan,
    options: &CompileOptions,
    index: &Memory,
) -> Result<Compiled, Box<Failed>> {
    compile_layer(layer, options, &Only::new(Plain(index.clone())))
}

/// `name==version` of every package of the layer's one lock.
pub fn pins(compiled: &Compiled) -> Vec<String> {
    compiled.written[0]
        .lock
        .packages
        .iter()
        .map(|p| format!("{}=={}", p.name, p.version))
        .collect()
}

/// A second target of the layer: Python `python` on the same platform.
pub fn also_for(layer: LayerPlan, python: &str) -> LayerPlan {
    let mut second = layer.targets[0].clone();
    second.python_version = python.to_string();
    let mut targets = layer.targets.clone();
    targets.push(second);
    layer.with_targets(targets)
}

/// Every line of every note.
pub fn told(notes: &[layerlock_compile::Note]) -> Vec<String> {
    notes.iter().flat_map(|n| n.lines()).collect()
}
