//! The `layerlock` binary: parse flags, merge settings, run one command, map
//! the outcome to an exit code (0 ok, 1 check failed, 2 could not do the job).

/// Data to stdout, as `print!`; a reader that went away (`layerlock audit |
/// head`) ends the program quietly instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::printer::write_stdout(format_args!($($arg)*), false)
    };
}

/// Data to stdout, as `println!` (see [`out!`]).
macro_rules! outln {
    () => {
        $crate::printer::write_stdout(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::printer::write_stdout(format_args!($($arg)*), true)
    };
}

/// A diagnostic line to stderr, as `eprintln!`, made safe for a terminal
/// ([`printer::for_stderr`]).
macro_rules! diag {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::printer::for_stderr(&format!($($arg)*)))
    };
}

mod cli;
mod commands;
mod config;
mod environment;
mod printer;
mod settings;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use config::Config;
use settings::{
    AuditSettings, BlocksSettings, CompileSettings, CooldownCheck, CoversSettings, DiffSettings,
    Environment, InstallSettings, StepsSettings, TetherSettings, TriageSettings, VerifySettings,
};

fn run(cli: &Cli, env: &Environment) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Compile(args) => {
            let config = Config::find(args.layer.config.as_deref(), &env.cwd)?;
            commands::compile::run(&CompileSettings::resolve(args, config.as_ref(), env)?)
        }
        Command::Covers(args) => {
            let config = Config::find(args.layer.config.as_deref(), &env.cwd)?;
            commands::covers::run(&CoversSettings::resolve(args, config.as_ref(), env)?)
        }
        Command::Diff(args) => commands::diff::run(&DiffSettings::resolve(args, env)?),
        Command::Install(args) => commands::install::run(&InstallSettings::resolve(args, env)),
        Command::Verify(args) => commands::verify::run(&VerifySettings::resolve(args, env)),
        Command::Cooldown(args) => {
            let config = Config::find(args.config.as_deref(), &env.cwd)?;
            commands::cooldown::run(&CooldownCheck::resolve(args, config.as_ref(), env)?)
        }
        Command::Tether(args) => {
            let config = Config::find(args.config.as_deref(), &env.cwd)?;
            commands::tether::run(&TetherSettings::resolve(args, config.as_ref(), env)?)
        }
        Command::Steps(args) => {
            let config = Config::find(args.config.as_deref(), &env.cwd)?;
            commands::steps::run(&StepsSettings::resolve(args, config.as_ref(), env)?)
        }
        Command::Blocks(args) => {
            let config = Config::find(args.config.as_deref(), &env.cwd)?;
            commands::blocks::run(&BlocksSettings::resolve(args, config.as_ref(), env)?)
        }
        Command::Triage(args) => {
            let config = Config::find(args.config.as_deref(), &env.cwd)?;
            commands::triage::run(&TriageSettings::resolve(args, config.as_ref(), env)?)
        }
        Command::Graph(args) => commands::graph::run(args, env),
        Command::Completions(args) => commands::docs::completions(args),
        Command::Man(args) => commands::docs::man(args),
        Command::Audit(args) if args.list_rules => {
            for (id, description) in layerlock_audit::rule_list() {
                outln!("{id:<22} {description}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Audit(args) => {
            let config = Config::find(args.config.as_deref(), &env.cwd)?;
            commands::audit::run(&AuditSettings::resolve(args, config.as_ref(), env)?)
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let outcome = Environment::capture().and_then(|env| run(&cli, &env));
    match outcome {
        Ok(code) => code,
        Err(err) => {
            printer::print_error(&err);
            ExitCode::from(2)
        }
    }
}
