//! The whole command line under fuzzing: every subcommand with flags drawn from the extremes of
//! their types (0, 1, the largest integers, NaN, infinities, sizes past any machine, rates and
//! policies at their bounds) is parsed and, when clap accepts it, run in this process on a
//! small problem; it must end with a value or an error, never a panic. `SRCFLOW_FUZZ_CASES`
//! sets the inputs per target (300 by default, for CI); `tools/fuzz.sh` runs many more.

use super::{dispatch, Cli};
use clap::Parser;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts at their type's extremes and a few small ones.
const COUNTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "4294967296",
    "9223372036854775807",
    "18446744073709551614",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "",
];
/// Real numbers at their extremes.
const REALS: &[&str] = &[
    "0", "-0", "1", "0.5", "1.5", "2", "1e-300", "5e-324", "1e308", "-1e308", "NaN", "inf", "-inf",
    "1e400",
];
/// Sizes from nothing to past any machine.
const SIZES: &[&str] = &[
    "0",
    "1",
    "1B",
    "1kB",
    "64kB",
    "1GB",
    "1PB",
    "1PiB",
    "16EiB",
    "18446744073709551615",
    "18446744073709551615B",
    "1e30",
    "0.5B",
];
/// Every flag a problem command takes, with the values it may get.
const PROBLEM_FLAGS: &[(&str, &[&str])] = &[
    ("--chi-out", COUNTS),
    ("--cutoff", REALS),
    ("--oversample", REALS),
    ("--batch-cols", COUNTS),
    (
        "--dtype",
        &["float32", "float64", "complex64", "complex128", "int8"],
    ),
    (
        "--devices",
        &[
            "1",
            "2",
            "8",
            "9",
            "0",
            "0,1",
            "0,0",
            "18446744073709551615",
        ],
    ),
    ("--backend", &["cpu", "auto", "cuda", "tpu"]),
    ("--device-memory", SIZES),
    ("--host-memory", SIZES),
    ("--disk-space", SIZES),
    (
        "--prefetch",
        &[
            "none",
            "lookahead:1",
            "lookahead:0",
            "lookahead:18446744073709551615",
            "bandwidth",
            "bandwidth:0",
            "bandwidth:18446744073709551615",
        ],
    ),
    (
        "--disk-bandwidth",
        &[
            "1B/s",
            "1MB/s",
            "1PB/s",
            "0B/s",
            "1e300B/s",
            "read=1MB/s",
            "write=18446744073709551615B/s",
        ],
    ),
    (
        "--inject-oom",
        &["0", "1", "0.5", "0.5:18446744073709551615", "NaN", "2"],
    ),
    (
        "--inject-device-failure",
        &["0", "1", "0:0", "18446744073709551615:1"],
    ),
    ("--fragment", SIZES),
    (
        "--shrink-device",
        &[
            "1B@0",
            "1GB@1",
            "0@18446744073709551615",
            "18446744073709551615B@1",
        ],
    ),
    ("--recovery-budget", REALS),
    (
        "--inject-disk-error",
        &["enospc", "eio:0", "enospc:18446744073709551615"],
    ),
];
/// The flags only `srcflow run` takes.
const RUN_FLAGS: &[(&str, &[&str])] = &[("--seed", COUNTS), ("--threads", COUNTS)];
/// Every flag of `srcflow gen`, with the values it may get.
const GEN_FLAGS: &[(&str, &[&str])] = &[
    ("--sites", COUNTS),
    ("--phys", COUNTS),
    ("--bond", COUNTS),
    ("--mpo-bond", COUNTS),
    ("--depth", COUNTS),
    ("--dt", REALS),
    ("--decay", REALS),
    ("--eps", REALS),
    ("--seed", COUNTS),
    ("--dtype", &["float32", "complex64", "complex128", "int8"]),
];

/// Inputs per target.
fn cases() -> u32 {
    std::env::var("SRCFLOW_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

/// Up to four flags of `flags`, each with one of its values, as `--flag=value` arguments (so
/// that negative values reach the flag's parser).
fn some_flags(
    flags: &'static [(&'static str, &'static [&'static str])],
) -> BoxedStrategy<Vec<String>> {
    let flag = select(flags).prop_flat_map(|(name, values)| {
        select(values).prop_map(move |value| format!("{name}={value}"))
    });
    proptest::collection::vec(flag, 0..=4).boxed()
}

/// Runs `srcflow ARGS` in this process when clap accepts it (counting those in `ran`); any
/// panic fails the target.
fn run_command_line(args: Vec<String>, ran: &AtomicUsize) {
    if let Ok(cli) = Cli::try_parse_from(std::iter::once("srcflow".to_string()).chain(args)) {
        ran.fetch_add(1, Ordering::Relaxed);
        let _ = dispatch(cli);
    }
}

/// Runs `cases()` command lines from `strategy`, each in a fresh `work` folder; prints how
/// many were tried and how many got past the parser.
fn fuzz(name: &str, strategy: BoxedStrategy<Vec<String>>, work: &Path) {
    let n = cases();
    let ran = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |args| {
            let _ = std::fs::remove_dir_all(work);
            std::fs::create_dir(work).expect("the work folder can be made again");
            run_command_line(args, &ran);
            Ok(())
        })
        .unwrap();
    let ran = ran.into_inner();
    println!("fuzz target {name}: {n} inputs, {ran} run past the parser, no panic");
}

/// The NumPy fixture problem (4 sites).
fn fixture() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/numpy_problem").into()
}

/// `path` as an argument.
fn arg(path: PathBuf) -> String {
    path.to_string_lossy().into_owned()
}

/// `--chi-out=VALUE` with a value from [`COUNTS`], which every problem command needs.
fn chi_out() -> BoxedStrategy<Vec<String>> {
    select(COUNTS)
        .prop_map(|value| vec![format!("--chi-out={value}")])
        .boxed()
}

#[test]
fn run_plan_graph_and_simulate_survive_extreme_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/graphs/dev-vm-2-core-xeon.json"
    );
    let (out, scratch) = (arg(work.join("out")), arg(work.clone()));
    let run = vec![
        "run".into(),
        fixture(),
        "--out".into(),
        out,
        "--scratch-dir".into(),
        scratch,
    ];
    let commands = prop_oneof![
        (Just(run), some_flags(RUN_FLAGS)).prop_map(|(run, flags)| [run, flags].concat()),
        Just(vec!["plan".into(), fixture()]),
        Just(vec!["graph".into(), fixture()]),
        Just(vec![
            "simulate".into(),
            fixture(),
            "--model".into(),
            model.into()
        ]),
    ];
    let input = (commands, chi_out(), some_flags(PROBLEM_FLAGS))
        .prop_map(|(command, chi, flags)| [command, chi, flags].concat())
        .boxed();
    fuzz("command line: run, plan, graph, simulate", input, &work);
}

#[test]
fn gen_survives_extreme_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let family = select(vec!["random", "ising", "heisenberg", "identity"]);
    let problem = arg(work.join("problem"));
    let input = (family, some_flags(GEN_FLAGS))
        .prop_map(move |(family, flags)| {
            [vec!["gen".into(), family.into(), problem.clone()], flags].concat()
        })
        .boxed();
    fuzz("command line: gen", input, &work);
}

#[test]
fn svd_distance_report_and_calibrate_survive_extreme_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    let trace = arg(tmp.path().join("run.json"));
    let traced = [
        "run",
        &fixture(),
        "--chi-out",
        "4",
        "--trace",
        &trace,
        "--out",
    ];
    let traced: Vec<String> = traced.iter().map(|a| a.to_string()).collect();
    run_command_line(
        [traced, vec![arg(tmp.path().join("out"))]].concat(),
        &AtomicUsize::new(0),
    );
    let (out, svg) = (arg(work.join("out")), arg(work.join("run.svg")));
    let missing = arg(work.join("missing/model.json"));
    let commands = vec![
        vec![
            "svd".into(),
            fixture(),
            "--out".into(),
            out,
            "--chi-out".into(),
        ],
        vec!["distance".into(), fixture(), fixture()],
        vec!["distance".into(), fixture(), fixture(), "--exact".into()],
        vec!["report".into(), trace.clone(), "--json".into()],
        vec!["report".into(), trace, "--svg".into(), svg],
        vec![
            "calibrate".into(),
            "--out".into(),
            missing,
            "--threads".into(),
        ],
    ];
    let input = (select(commands), select(COUNTS))
        .prop_map(|(command, value)| match command[0].as_str() {
            "svd" | "calibrate" => [command, vec![value.to_string()]].concat(),
            _ => command,
        })
        .boxed();
    fuzz(
        "command line: svd, distance, report, calibrate",
        input,
        &work,
    );
}
