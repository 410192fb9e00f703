//! `gpib-diag`: time GPIB transfers like the 1988 HP 9000/350 io_test measurement, measure
//! their CPU cost, and compare bus configurations. Runs on the simulated bus by default.
#![deny(unsafe_code)]

mod calibrate;
mod cli;
mod cmd;
#[allow(unsafe_code)] // getrusage
mod cpu;
mod device_arg;
mod doctor;
mod driver;
mod error;
mod export;
mod host;
mod host_arg;
mod linear_fit;
mod measure;
#[allow(dead_code)]
mod plot;
mod record;
mod run;
mod sample;
mod saved;
mod session_options;
mod size;
mod stats;
mod target;
mod what_if;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::IoTest(a) => cmd::io_test::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Scan(a) => cmd::scan::run(a),
        Command::Discover(a) => cmd::discover::run(a),
        Command::Contention(a) => cmd::contention::run(a),
        Command::Doctor(a) => match cmd::doctor::run(a) {
            Ok(true) => return ExitCode::from(cmd::doctor::FOUND_EXIT),
            Ok(false) => Ok(()),
            Err(e) => Err(e),
        },
        Command::Calibrate(a) => match cmd::calibrate::run(a) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(cmd::doctor::FOUND_EXIT),
            Err(e) => Err(e),
        },
        Command::Serve(a) => cmd::serve::run(a),
        Command::Query(a) => cmd::instrument::query(a),
        Command::Write(a) => cmd::instrument::write(a),
        Command::Read(a) => cmd::instrument::read(a),
        Command::List(a) => cmd::instrument::list(a),
        Command::Shell(a) => cmd::shell::run(a),
        Command::Trace(a) => cmd::trace::run(a),
        Command::Completions(a) => cmd::completions::run(a),
        Command::Manpage => cmd::manpage::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let text = e.to_string();
            eprintln!("gpib-diag: error: {text}");
            // Causes the message does not already say (many errors include their cause).
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                let cause = s.to_string();
                if !text.contains(&cause) {
                    eprintln!("  caused by: {cause}");
                }
                source = s.source();
            }
            ExitCode::from(e.exit_code())
        }
    }
}
