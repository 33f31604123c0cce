//! `layerlock completions` and `layerlock man`: generated from the flags
//! clap parses, never written by hand.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};

pub fn completions(args: &CompletionsArgs) -> Result<ExitCode> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "layerlock", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: &ManArgs) -> Result<ExitCode> {
    let command = Cli::command();
    match &args.dir {
        None => out!("{}", page(&command, "layerlock")?),
        Some(dir) => {
            if !dir.is_dir() {
                anyhow::bail!(
                    "man --dir {}: no such directory; create it (mkdir -p {}) or name one that exists",
                    dir.display(),
                    dir.display()
                );
            }
            write_page(dir, "layerlock", &command)?;
            for sub in command.get_subcommands() {
                write_page(dir, &format!("layerlock-{}", sub.get_name()), sub)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn page(command: &clap::Command, title: &str) -> Result<String> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(command.clone())
        .title(title.to_string())
        .render(&mut roff)
        .context("cannot render the man page")?;
    Ok(String::from_utf8_lossy(&roff).into_owned())
}

fn write_page(dir: &Path, name: &str, command: &clap::Command) -> Result<()> {
    let path = dir.join(format!("{name}.1"));
    layerlock_lock::write_atomic(&path, &page(command, name)?)
        .with_context(|| format!("cannot write {}", path.display()))
}
