//! CI file models with source positions: Buildkite pipelines, GitHub Actions
//! workflows and composite actions, GitLab CI, CircleCI, Azure Pipelines,
//! AppVeyor, Jenkinsfiles and Jenkins Job Builder files, Dockerfiles, and the files CI
//! reaches through them (Makefiles, justfiles, noxfiles, tox.ini, conda
//! environments, pre-commit configs, bake and Compose files). No I/O: callers pass text and get back
//! the shell scripts each job or recipe runs, with where they are.

pub mod appveyor;
pub mod azure;
pub mod bake;
pub mod buildkite;
pub mod circleci;
pub mod conda_env;
pub mod dockerfile;
pub mod github;
pub mod gitlab;
pub mod glob;
pub mod jenkins;
pub mod jjb;
pub mod jobs;
pub mod just;
pub mod make;
pub mod nox;
pub mod pre_commit;
mod script;
mod system;
pub mod yaml;

pub use script::{Layout, ModelError, Note, Phase, Script, SourceLines};
pub use system::{System, is_jenkinsfile};
