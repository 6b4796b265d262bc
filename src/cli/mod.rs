//! Command-line parsing (clap) and dispatch to one module per subcommand.

mod budget_args;
mod calibrate;
#[cfg(test)]
mod command_line_fuzz;
mod default_run;
mod device_args;
mod device_list;
mod disk_calibration;
mod distance;
mod gen;
mod graph;
mod machine_calibration;
mod mpi_launch;
mod plan;
mod problem_args;
mod process_session;
mod progress_bar;
mod report;
mod run;
mod run_paths;
mod signals;
mod simulate;
mod svd;
mod tiering;
mod trace_refinement;

use clap::{Parser, Subcommand};
pub use signals::closed_pipe_ends_quietly;
use std::process::ExitCode;

/// Compressed MPO·MPS / MPO·MPO products with Successive Randomized Compression, as a dataflow graph.
///
/// With no subcommand, runs a built-in problem end to end and prints a report.
#[derive(Parser)]
#[command(
    name = "srcflow",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand: also print the engine's internals after the report.
    #[arg(long, short)]
    verbose: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Compute the compressed product of a problem directory.
    Run(run::RunArgs),
    /// Write a built-in problem as a problem directory.
    Gen(gen::GenArgs),
    /// Relative distance ‖A − B‖ / ‖B‖ of two problem directories (QR sweep).
    Distance(distance::DistanceArgs),
    /// The exact product truncated by SVD: the near-optimal reference (small problems only).
    Svd(svd::SvdArgs),
    /// Print the sweep graph of a problem (DOT or JSON) without running it.
    Graph(graph::GraphArgs),
    /// Print the memory plan of a run (batch size, tier of every environment, peaks) without
    /// running it.
    Plan(plan::PlanArgs),
    /// Replay a problem's run on a machine model (same plan, scheduler and policies), printing
    /// the report a real run would.
    Simulate(simulate::SimulateArgs),
    /// Measure a machine model of this machine (kernel rates, copy and disk bandwidths).
    Calibrate(calibrate::CalibrateArgs),
    /// Sum a trace per pass and lane: busy, idle and stalled time, bytes, bandwidth, GFLOP/s,
    /// and the overlap of I/O with compute; then per kernel, and per GEMM and QR shape.
    Report(report::ReportArgs),
}

/// How a run's report is printed: the summary, with the engine's internals, or as JSON.
#[derive(clap::Args, Clone, Copy)]
pub struct ReportStyle {
    /// Print the report as JSON (everything, internals included).
    #[arg(long)]
    json: bool,
    /// Also print the engine's internals: pass times, busy time per kernel, where the
    /// environments lived, stalls, lanes and memory blocks.
    #[arg(long, short, conflicts_with = "json")]
    verbose: bool,
}

/// Prints a run's report in `style`.
fn print_report(report: &srcflow::Report, style: ReportStyle) {
    if style.json {
        let text = serde_json::to_string_pretty(report).expect("report serialises");
        println!("{text}");
        return;
    }
    println!("{report}");
    if style.verbose {
        println!("\nengine internals\n{}", report.internals());
    }
}

/// Parses the command line, runs it, and turns errors into a message and exit code 1.
pub fn main() -> ExitCode {
    match dispatch(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report_error(&e);
            ExitCode::from(exit_status(&e))
        }
    }
}

/// Prints "srcflow: `line`" on standard error, in one write; a closed standard error (a pipe
/// whose reader left) loses the line rather than failing the command.
pub fn note(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("srcflow: {line}\n").as_bytes());
}

/// Prints the error line of a failed command, with flags named as the command line spells them,
/// in one write (so that `mpirun --tag-output` keeps each rank's line whole).
fn report_error(error: &srcflow::Error) {
    let mut message = error.to_string();
    if let (srcflow::Error::Interrupted, Some(signal)) = (error, signals::stopped_by()) {
        message = message.replacen("interrupted", &format!("interrupted by {signal}"), 1);
    }
    note(&format!(
        "error: {}",
        srcflow::setting_names::in_flags(&message)
    ));
}

/// The exit status of a command that failed with `error`: 128 + the signal's number when a
/// signal stopped it (130 for SIGINT, 143 for SIGTERM), else 1.
fn exit_status(error: &srcflow::Error) -> u8 {
    match error {
        srcflow::Error::Interrupted => signals::exit_status(),
        _ => 1,
    }
}

/// Runs the command `cli` names.
fn dispatch(cli: Cli) -> srcflow::Result<()> {
    match cli.command {
        None => default_run::run(cli.verbose),
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Gen(args)) => gen::run(args),
        Some(Command::Distance(args)) => distance::run(args),
        Some(Command::Svd(args)) => svd::run(args),
        Some(Command::Graph(args)) => graph::run(args),
        Some(Command::Plan(args)) => plan::run(args),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Simulate(args)) => simulate::run(args),
        Some(Command::Calibrate(args)) => calibrate::run(args),
    }
}
