//! `verify --import`: import modules in the environment's interpreter, in
//! one process, and report each module's real exception. This runs package
//! code, so it is bounded in time.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::EnvError;

/// How one import went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportResult {
    pub module: String,
    pub ok: bool,
    pub error: Option<String>,
}

/// Imports each module in turn in one interpreter, reporting the last line
/// of each failure's exception.
const IMPORT_SCRIPT: &str = r#"
import importlib, json, sys, traceback
results = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        results.append({"module": name, "ok": True, "error": None})
    except BaseException as exc:
        line = traceback.format_exception_only(type(exc), exc)[-1].strip()
        results.append({"module": name, "ok": False, "error": line})
print(json.dumps(results))
"#;

/// A module that hangs on import fails the check instead of holding the job.
pub const IMPORT_LIMIT: Duration = Duration::from_secs(600);

/// Import `modules` with `python` (isolated mode: no user site, no
/// `PYTHON*` variables). An interpreter that dies reports every module as
/// failed with what it printed; one that outlives `limit` is an error.
pub fn import_modules(
    python: &Path,
    modules: &[String],
    limit: Duration,
) -> Result<Vec<ImportResult>, EnvError> {
    if modules.is_empty() {
        return Ok(Vec::new());
    }
    let mut command = Command::new(python);
    command.args(["-I", "-c", IMPORT_SCRIPT]).args(modules);
    let limits = layerlock_process::Limits {
        time: limit,
        // One short JSON record a module.
        stdout: 64 << 20,
        // The interpreter's last words when it dies.
        stderr: 2000,
    };
    let output = match layerlock_process::run(&mut command, None, limits) {
        Ok(output) => output,
        Err(layerlock_process::Stopped::Spawn(source)) => {
            return Err(EnvError::Spawn {
                program: python.display().to_string(),
                source,
            });
        }
        Err(layerlock_process::Stopped::TimedOut(_)) => {
            return Err(EnvError::ImportHang {
                modules: modules.join(", "),
                python: python.display().to_string(),
                seconds: limit.as_secs(),
            });
        }
        Err(stopped @ layerlock_process::Stopped::TooLarge(_)) => {
            return Err(EnvError::Inspect {
                python: python.display().to_string(),
                message: format!("importing {}: {stopped}", modules.join(", ")),
            });
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    match serde_json::from_str(last) {
        Ok(results) => Ok(results),
        // The interpreter died (a crash in an extension module).
        Err(_) => Ok(modules
            .iter()
            .map(|m| ImportResult {
                module: m.clone(),
                ok: false,
                error: Some(format!(
                    "the interpreter exited with {}: {}",
                    output.status,
                    output.said()
                )),
            })
            .collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_module_reports_its_own_exception() {
        let results = import_modules(
            Path::new("python3"),
            &["json".to_string(), "no_such_module_here".to_string()],
            IMPORT_LIMIT,
        )
        .unwrap();
        assert!(results[0].ok);
        assert!(!results[1].ok);
        assert!(
            results[1]
                .error
                .as_deref()
                .unwrap()
                .contains("ModuleNotFoundError"),
            "{results:?}"
        );
    }

    #[test]
    fn a_hanging_import_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        // An "interpreter" that never answers, as an import that hangs.
        let python = dir.path().join("py");
        std::fs::write(&python, "#!/bin/sh\nexec sleep 60\n").unwrap();
        set_executable(&python);
        let err =
            import_modules(&python, &["hangs".to_string()], Duration::from_secs(1)).unwrap_err();
        assert!(err.to_string().contains("hangs on import"), "{err}");
    }

    #[cfg(unix)]
    fn set_executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
