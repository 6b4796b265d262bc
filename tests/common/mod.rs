//! Helpers shared by the out-of-core tests: a problem whose environments dominate its memory,
//! engines with given budgets, and budgets that force environments onto every tier.
// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

pub mod dense_reference;
pub mod killed;
mod trace_format;

#[allow(unused_imports)]
pub use trace_format::{check_rank_trace, check_trace, TraceParts};

use srcflow::engine::Tiering;
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::plan::{Budgets, Plan};
use srcflow::train::StackShape;
use srcflow::Tier;
use srcflow::{Engine, Options, Stack};
use std::path::Path;
use std::process::{Command, Output};

pub const CHI_OUT: usize = 32;
pub const PLENTY: u64 = 1 << 40;

/// Random MPO · MPS on 32 sites: environments of 64 kB each dominate its memory.
pub fn problem() -> Stack {
    let spec = ProblemSpec {
        sites: 32,
        bond: 32,
        mpo_bond: 4,
        ..ProblemSpec::default()
    };
    generate(ProblemKind::Random, &spec).unwrap()
}

/// An engine with budgets `device` and `host` (disk unlimited) and scratch under `scratch`.
pub fn engine(device: u64, host: u64, scratch: &Path, batch: Option<usize>) -> Engine {
    engine_with(device, host, scratch, batch, Tiering::default())
}

/// Like [`engine`], with the other tiering choices taken from `tiering`.
pub fn engine_with(
    device: u64,
    host: u64,
    scratch: &Path,
    batch: Option<usize>,
    tiering: Tiering,
) -> Engine {
    engine_for(options(batch), device, host, scratch, tiering)
}

/// χ̄ = [`CHI_OUT`] with `batch` columns per task.
pub fn options(batch: Option<usize>) -> Options {
    Options::new(CHI_OUT)
        .with_graph(srcflow::graph::GraphOptions::new(CHI_OUT).with_batch_cols(batch))
}

/// An engine running `options` with budgets `device` and `host` (disk unlimited), scratch
/// under `scratch` and the other tiering choices from `tiering`.
pub fn engine_for(
    options: Options,
    device: u64,
    host: u64,
    scratch: &Path,
    tiering: Tiering,
) -> Engine {
    builder_for(options, device, host, scratch, tiering)
        .build()
        .unwrap()
}

/// The builder of [`engine_for`]'s engine, for a test that sets more.
pub fn builder_for(
    options: Options,
    device: u64,
    host: u64,
    scratch: &Path,
    tiering: Tiering,
) -> srcflow::EngineBuilder {
    let budgets = Budgets::new(device, host, PLENTY, scratch.to_path_buf());
    srcflow::EngineBuilder::new(options).tiering(tiering.with_budgets(budgets))
}

/// The plan `engine` makes for `stack`.
pub fn plan_of(engine: &Engine, stack: &StackShape) -> Plan {
    engine.prepare(stack).unwrap().1.unwrap()
}

/// Bytes of the plan's largest environment.
pub fn largest_env(plan: &Plan) -> u64 {
    plan.env_bytes.iter().copied().max().unwrap()
}

/// The largest device budget that moves at least one environment to the host.
pub fn device_budget_with_host_tier(stack: &Stack, scratch: &Path, batch: Option<usize>) -> u64 {
    device_budget_for(options(batch), &stack.shape(), scratch)
}

/// [`device_budget_with_host_tier`] for a run of `options`.
fn device_budget_for(options: Options, stack: &StackShape, scratch: &Path) -> u64 {
    let engine = |device, host| engine_for(options, device, host, scratch, Tiering::default());
    let all_device = plan_of(&engine(PLENTY, PLENTY), stack);
    let env = largest_env(&all_device);
    let mut device = all_device.profile.device.bytes;
    loop {
        device -= env / 2;
        let plan = plan_of(&engine(device, PLENTY), stack);
        if plan.count_on(Tier::Host) > 0 {
            return device;
        }
    }
}

/// Budgets (device, host) that put some environments on the host and at least half on disk.
pub fn budgets_for_every_tier(stack: &Stack, scratch: &Path, batch: Option<usize>) -> (u64, u64) {
    budgets_for_every_tier_of(options(batch), &stack.shape(), scratch)
}

/// [`budgets_for_every_tier`] for a run of `options`.
pub fn budgets_for_every_tier_of(
    options: Options,
    stack: &StackShape,
    scratch: &Path,
) -> (u64, u64) {
    let engine = |device, host| engine_for(options, device, host, scratch, Tiering::default());
    let device = device_budget_for(options, stack, scratch);
    let all_device = plan_of(&engine(PLENTY, PLENTY), stack);
    let env = largest_env(&all_device);
    let mut host = all_device.process_peak;
    loop {
        let plan = plan_of(&engine(device, host), stack);
        if 2 * plan.count_on(Tier::Disk) >= plan.tiers.len() {
            assert!(plan.count_on(Tier::Host) + plan.count_on(Tier::Device) > 0);
            return (device, host);
        }
        host -= env / 2;
    }
}

/// Fails unless `dir` is empty.
pub fn assert_empty(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

/// The srcflow binary with `args` (`SRCFLOW_BIN` names another, for test binaries carried to a
/// machine where this build's path does not exist).
pub fn srcflow(args: &[&str]) -> Command {
    let binary = std::env::var_os("SRCFLOW_BIN").unwrap_or(env!("CARGO_BIN_EXE_srcflow").into());
    let mut command = Command::new(binary);
    command.args(args);
    command
}

/// A finished command's standard error, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes the test problem to `dir/problem`; returns that path as text (for command lines).
pub fn problem_dir(dir: &Path) -> String {
    let path = dir.join("problem");
    srcflow::io::write_stack(&path, &problem()).unwrap();
    path.to_str().unwrap().into()
}
