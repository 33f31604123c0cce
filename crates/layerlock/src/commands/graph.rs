//! `layerlock graph`: draw, write, or check a stage graph picture.

use std::process::ExitCode;

use anyhow::{Context, Result};
use layerlock_graph::{Format, GraphSettings};

use crate::cli::{GraphArgs, GraphFormat};
use crate::settings::Environment;

pub fn run(args: &GraphArgs, env: &Environment) -> Result<ExitCode> {
    let repo = fs_err::canonicalize(env.cwd.join(&args.repo))
        .context("the repository (--repo) cannot be read")?;
    let format = match args.format {
        Some(GraphFormat::Svg) => Format::Svg,
        Some(GraphFormat::Dot) => Format::Dot,
        Some(GraphFormat::Json) => Format::Json,
        None => args
            .output
            .as_deref()
            .and_then(Format::of_path)
            .unwrap_or(Format::Svg),
    };
    let settings = GraphSettings {
        repo,
        files: args.files.iter().map(|f| env.cwd.join(f)).collect(),
        format,
    };
    let (graph, drawn) = layerlock_graph::draw(&settings)?;
    // What the picture cannot show is drawn in it and said here too.
    for unknown in &graph.unknown {
        diag!("note: not known: {unknown}");
    }
    let Some(output) = &args.output else {
        out!("{drawn}");
        return Ok(ExitCode::SUCCESS);
    };
    let path = env.cwd.join(output);
    if !args.check {
        layerlock_graph::write(&path, &drawn)?;
        diag!("wrote {}", output.display());
        return Ok(ExitCode::SUCCESS);
    }
    match layerlock_graph::stale(&path, &drawn)? {
        None => {
            diag!("{} is current", output.display());
            Ok(ExitCode::SUCCESS)
        }
        Some(why) => {
            // The command that draws it again: the check's own words
            // without `--check`.
            let again: Vec<&str> = env.argv[1..]
                .iter()
                .map(String::as_str)
                .filter(|a| *a != "--check")
                .collect();
            diag!("{}: {why}", output.display());
            diag!("hint: draw it again with `layerlock {}`", again.join(" "));
            Ok(ExitCode::from(1))
        }
    }
}
