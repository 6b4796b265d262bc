//! `srcflow plan`: what a run would do with its memory — batch size, the tier of every
//! environment and the modelled peaks — without running it.

use super::problem_args::ProblemArgs;
use clap::Args;
use srcflow::graph::capped_chi_out;
use srcflow::plan::Plan;
use srcflow::Result;
use srcflow::SweepGraph;
use srcflow::{ByteSize, Tier};

/// Arguments of `srcflow plan` (only headers of the problem are read).
#[derive(Args)]
pub struct PlanArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `srcflow plan`.
pub fn run(args: PlanArgs) -> Result<()> {
    let (problem, engine) = args.problem.open(0, 0)?;
    let engine = engine.build()?;
    let (graph, plan) = engine.prepare(problem.shape())?;
    let plan = plan.expect("budgets are always resolved");
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&plan).expect("plan serialises")
        );
    } else {
        print!("{}", describe(&graph, &plan));
    }
    Ok(())
}

/// The plan of `graph` as a short table.
fn describe(graph: &SweepGraph, plan: &Plan) -> String {
    let b = &plan.budgets;
    let p = &plan.profile;
    let mut text = format!(
        "chi_out        {}, sketch {}\n",
        graph.chi_out, graph.sketch
    );
    if let Some(line) = capped_chi_out(graph.chi_out, graph.chi_out_asked) {
        text += &format!("               {line}\n");
    }
    text += &format!(
        "batch          {} sketch columns per task\nfetch window   {} sweep step(s) ahead\n",
        plan.batch_cols, plan.fetch_window
    );
    for tier in [Tier::Device, Tier::Host, Tier::Disk] {
        let sites: Vec<String> = (0..plan.tiers.len())
            .filter(|&j| plan.tiers[j] == tier)
            .map(|j| j.to_string())
            .collect();
        let bytes: u64 = (0..plan.tiers.len())
            .filter(|&j| plan.tiers[j] == tier)
            .map(|j| plan.env_bytes[j])
            .sum();
        text += &format!(
            "{:<14} {} environments, {}: sites [{}]\n",
            tier.to_string(),
            sites.len(),
            ByteSize(bytes),
            sites.join(", ")
        );
    }
    let row = |name: &str, peak: u64, budget: u64| {
        format!(
            "{name:<14} peak {} of {}\n",
            ByteSize(peak),
            ByteSize(budget)
        )
    };
    text += &row("device memory", p.device.bytes, b.device);
    text += &row("host memory", plan.process_peak, b.host);
    text += &row("scratch disk", p.disk.bytes, b.disk);
    text + &format!("scratch dir    {}\n", b.scratch_dir.display())
}
