//! `layerlock covers`: are the requirements already satisfied by the bases?
//! A compile whose result must be empty.

use std::process::ExitCode;

use anyhow::Result;
use uv_normalize::PackageName;

use layerlock_resolve::Cause;

use layerlock_compile::{Clients, CompileError, Keep, Resolved};

use crate::printer::Spinner;
use crate::settings::CoversSettings;

pub fn run(settings: &CoversSettings) -> Result<ExitCode> {
    let mut covered = true;
    // A layer of several targets is covered when it is on each.
    for view in settings.layers.iter().flat_map(|l| l.per_target()) {
        let layer = &view;
        let label = layer.name.clone().unwrap_or_else(|| "covers".to_string());
        let spinner = Spinner::new(settings.run.quiet, &label);
        let clients = Clients {
            settings: settings.run.client_settings(),
            progress: spinner.progress(),
        };
        let outcome =
            layerlock_compile::resolve(layer, &settings.run.cwd, &clients, &Keep::default());
        spinner.finish();
        let inputs: Vec<&str> = layer.inputs.iter().map(|i| i.shown.as_str()).collect();
        let bases: Vec<&str> = layer.bases.iter().map(|b| b.shown.as_str()).collect();
        let what = inputs.join(", ");
        let Resolved {
            prepared,
            resolution,
            notes,
            ..
        } = match outcome {
            Ok(ok) => ok,
            Err(unresolved) => match unresolved.error {
                CompileError::Unsolvable {
                    message,
                    hints,
                    causes,
                } => {
                    covered = false;
                    outln!("{what}: not covered: {}", why(&causes));
                    diag!("{message}");
                    for hint in &hints {
                        diag!("hint: {hint}");
                    }
                    continue;
                }
                err => return Err(crate::printer::compile_error(err)),
            },
        };
        if !settings.run.quiet {
            for line in notes.iter().flat_map(layerlock_compile::Note::lines) {
                diag!("{line}");
            }
        }
        let target = prepared.request.target.describe();
        if resolution.packages.is_empty() {
            outln!(
                "{what}: fully covered by {} on {target}",
                if bases.is_empty() {
                    "nothing".to_string()
                } else {
                    bases.join(", ")
                }
            );
            continue;
        }
        covered = false;
        outln!(
            "{what}: not covered on {target}; {} package{} missing from the bases:",
            resolution.packages.len(),
            if resolution.packages.len() == 1 {
                " is"
            } else {
                "s are"
            }
        );
        for (name, resolved) in &resolution.packages {
            let via: Vec<&str> = resolved.via.iter().map(String::as_str).collect();
            outln!("  {name}=={} (via {})", resolved.version, via.join(", "));
        }
    }
    Ok(if covered {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The cause a reader acts on first: a package with no wheel for the
/// target or on no index is not a conflict with the bases.
fn why(causes: &[Cause]) -> String {
    let names = |pick: fn(&Cause) -> Option<&PackageName>| -> Vec<String> {
        causes
            .iter()
            .filter_map(pick)
            .map(ToString::to_string)
            .collect()
    };
    let no_wheel = names(|c| match c {
        Cause::NoWheel(n) => Some(n),
        _ => None,
    });
    if !no_wheel.is_empty() {
        return format!(
            "no wheel for the target ({}); layerlock never builds source distributions",
            no_wheel.join(", ")
        );
    }
    let missing = names(|c| match c {
        Cause::NotFound(n) => Some(n),
        _ => None,
    });
    if !missing.is_empty() {
        return format!("not on any index asked ({})", missing.join(", "));
    }
    let young = names(|c| match c {
        Cause::Cooldown(n) => Some(n),
        _ => None,
    });
    if !young.is_empty() {
        return format!("the cooldown holds back {}", young.join(", "));
    }
    "the bases conflict with it".to_string()
}
