//! `grammask`: compile grammars into mask stores and exercise them. One
//! subcommand per module.

mod bench;
mod bench_schema;
mod check;
mod common;
mod compile;
mod constraint_args;
mod explain;
mod generate;
mod masks;
mod parse;
mod stats;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "grammask", version, about = "Grammar-constrained decoding: compile grammars into token mask stores")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Parse(parse::Args),
    Compile(compile::Args),
    Check(check::Args),
    Generate(generate::Args),
    Bench(bench::Args),
    Masks(masks::Args),
    Stats(stats::Args),
}

fn main() -> ExitCode {
    // Output piped into `head` and the like: end quietly when the reader
    // goes away (Rust ignores SIGPIPE, so `println!` would panic instead).
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let r = match Cli::parse().cmd {
        Cmd::Parse(a) => parse::run(a),
        Cmd::Compile(a) => compile::run(a),
        Cmd::Check(a) => check::run(a),
        Cmd::Generate(a) => generate::run(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Masks(a) => masks::run(a),
        Cmd::Stats(a) => stats::run(a),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("grammask: error: {e}");
            ExitCode::from(2)
        }
    }
}
