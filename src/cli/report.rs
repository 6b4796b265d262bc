//! `srcflow report`: a trace summed per pass and lane — busy, idle and stalled time, bytes
//! moved and bandwidth, GFLOP/s, and how much I/O overlapped compute.

use clap::Args;
use srcflow::trace::TraceSummary;
use srcflow::Result;
use std::path::PathBuf;

/// Arguments of `srcflow report`.
#[derive(Args)]
pub struct ReportArgs {
    /// A trace written by `srcflow run --trace`.
    trace: PathBuf,
    /// Print the numbers as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `srcflow report`.
pub fn run(args: ReportArgs) -> Result<()> {
    let summary = TraceSummary::read(&args.trace)?;
    if args.json {
        let text = serde_json::to_string_pretty(&summary).expect("summary serialises");
        println!("{text}");
    } else {
        print!("{summary}");
    }
    Ok(())
}
