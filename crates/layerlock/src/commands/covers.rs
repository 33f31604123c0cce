//! `layerlock covers`: are the requirements already satisfied by the bases?
//! A compile whose result must be empty.

use std::process::ExitCode;

use anyhow::Result;

use crate::layer;
use crate::printer::{Hinted, Spinner};
use crate::settings::CoversSettings;

pub fn run(settings: &CoversSettings) -> Result<ExitCode> {
    let mut covered = true;
    for layer in &settings.layers {
        let label = layer.name.clone().unwrap_or_else(|| "covers".to_string());
        let spinner = Spinner::new(settings.run.quiet, &label);
        let outcome = layer::resolve(layer, &settings.run, &spinner);
        spinner.finish();
        let inputs: Vec<&str> = layer.inputs.iter().map(|i| i.shown.as_str()).collect();
        let bases: Vec<&str> = layer.bases.iter().map(|b| b.shown.as_str()).collect();
        let what = inputs.join(", ");
        let (prepared, resolution) = match outcome {
            Ok(ok) => ok,
            Err(err) => match err.downcast::<Hinted>() {
                Ok(hinted) if hinted.message.starts_with("no layer") => {
                    covered = false;
                    outln!("{what}: not covered: the bases conflict with it");
                    diag!("{}", hinted.message);
                    for hint in &hinted.hints {
                        diag!("hint: {hint}");
                    }
                    continue;
                }
                Ok(hinted) => return Err(hinted.into()),
                Err(err) => return Err(err),
            },
        };
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
