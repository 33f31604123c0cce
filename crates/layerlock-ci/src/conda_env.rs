//! Conda environment files (`environment.yml`): the packages
//! `conda env create -f` installs, each with where it is written. Entries of
//! the `pip:` list are installed by pip, inside the environment.

use crate::script::ModelError;
use crate::yaml::{self, Node, Pos};

/// Who installs an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installer {
    Conda,
    Pip,
}

/// One dependency of the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// As written: `numpy=1.26.4`, `pip`, `torch==2.5.1`, `-r requirements.txt`.
    pub spec: String,
    pub pos: Pos,
    pub installer: Installer,
}

/// What an environment file asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Environment {
    pub dependencies: Vec<Dependency>,
}

/// Read an environment file. A file that is YAML but not a mapping with a
/// `dependencies` list is an error naming the place.
pub fn read(text: &str) -> Result<Environment, ModelError> {
    let docs = yaml::parse(text)?;
    let Some(doc) = docs.first() else {
        return Ok(Environment::default());
    };
    let Node::Map { .. } = doc else {
        return Err(error(doc.pos(), "an environment file is a mapping"));
    };
    let mut env = Environment::default();
    let Some(deps) = doc.get("dependencies") else {
        return Ok(env);
    };
    if deps.is_null() {
        return Ok(env);
    }
    let Node::Seq { items, .. } = deps else {
        return Err(error(deps.pos(), "`dependencies` is a list"));
    };
    for item in items {
        match item {
            Node::Scalar { value, pos, .. } => env.dependencies.push(Dependency {
                spec: value.clone(),
                pos: *pos,
                installer: Installer::Conda,
            }),
            Node::Map { .. } => {
                let Some(pip) = item.get("pip") else {
                    return Err(error(item.pos(), "a mapping in `dependencies` is `pip:`"));
                };
                for entry in pip.items() {
                    let Node::Scalar { value, pos, .. } = entry else {
                        return Err(error(entry.pos(), "a `pip:` entry is a requirement"));
                    };
                    env.dependencies.push(Dependency {
                        spec: value.clone(),
                        pos: *pos,
                        installer: Installer::Pip,
                    });
                }
            }
            Node::Seq { pos, .. } => {
                return Err(error(*pos, "a `dependencies` entry is a package or `pip:`"));
            }
        }
    }
    Ok(env)
}

fn error(pos: Pos, message: &str) -> ModelError {
    ModelError {
        line: pos.line,
        column: pos.column,
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conda_and_pip_entries_with_their_lines() {
        let env = read(
            "name: ci\nchannels: [conda-forge]\ndependencies:\n  - python=3.11\n  - numpy=1.26.4\n  - pip\n  - pip:\n    - torch==2.5.1\n    - -r requirements.txt\n",
        )
        .unwrap();
        let got: Vec<(&str, usize, Installer)> = env
            .dependencies
            .iter()
            .map(|d| (d.spec.as_str(), d.pos.line, d.installer))
            .collect();
        assert_eq!(
            got,
            vec![
                ("python=3.11", 4, Installer::Conda),
                ("numpy=1.26.4", 5, Installer::Conda),
                ("pip", 6, Installer::Conda),
                ("torch==2.5.1", 8, Installer::Pip),
                ("-r requirements.txt", 9, Installer::Pip),
            ]
        );
    }

    #[test]
    fn malformed_files_are_errors_with_a_place() {
        assert_eq!(read("dependencies: 3\n").unwrap_err().line, 1);
        assert_eq!(read("dependencies:\n  - {a: 1}\n").unwrap_err().line, 2);
        assert!(read("- a\n").is_err());
        assert!(read("").unwrap().dependencies.is_empty());
    }
}
