//! Reading a venv from pyvenv.cfg plus its cached base interpreter gives the
//! same answer as asking the venv's own Python.

use std::process::Command;

use layerlock_env::Interpreter;

#[test]
fn cached_venv_inspection_matches_running_the_venv_python() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let status = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(status.success());
    let python = venv.join("bin/python");
    let direct = Interpreter::inspect(&python).unwrap();
    let cache = dir.path().join("cache");
    // Twice: the first fills the cache, the second reads it.
    for _ in 0..2 {
        let cached = Interpreter::inspect_cached(&python, Some(&cache)).unwrap();
        assert_eq!(cached.version, direct.version);
        assert_eq!(cached.paths, direct.paths);
        assert_eq!(cached.purelib, direct.purelib);
        assert_eq!(cached.platform_machine, direct.platform_machine);
        assert_eq!(cached.libc_version, direct.libc_version);
    }
    assert!(cache.join("interpreters").is_dir());
}
