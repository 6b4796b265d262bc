//! `srcflow report`: a trace summed per pass and lane — busy, idle and stalled time, bytes
//! moved and bandwidth, GFLOP/s, and how much I/O overlapped compute.

use clap::Args;
use srcflow::trace::{read_trace, timeline_svg, TraceSummary};
use srcflow::{Error, Result};
use srcflow_tensor::files::durable::write_whole;
use std::path::PathBuf;

/// Arguments of `srcflow report`.
#[derive(Args)]
pub struct ReportArgs {
    /// A trace written by `srcflow run --trace`.
    trace: PathBuf,
    /// Print the numbers as JSON.
    #[arg(long)]
    json: bool,
    /// Also draw the lanes as a Gantt chart, with the bytes on each tier underneath, to this SVG.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

/// Runs `srcflow report`.
pub fn run(args: ReportArgs) -> Result<()> {
    let trace = read_trace(&args.trace)?;
    let bad = |message: String| Error::Manifest {
        path: args.trace.clone(),
        message,
    };
    let summary = TraceSummary::of(&trace).map_err(bad)?;
    if let Some(path) = &args.svg {
        write_whole(path, timeline_svg(&trace).map_err(bad)?.as_bytes())?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&summary).expect("summary serialises");
        println!("{text}");
    } else {
        print!("{summary}");
    }
    Ok(())
}
