//! Several devices: the same output on 1 to 4 devices (uneven splits included), exactness,
//! spill on two devices, and a failing device stopping the run cleanly.

mod common;

use common::{assert_empty, budgets_for_every_tier_of, engine_for, plan_of, srcflow, stderr};
use srcflow::engine::Tiering;
use srcflow::gen::{random_mpo, random_mps};
use srcflow::graph::{GraphOptions, Lane, Op, SweepGraph};
use srcflow::ops::{distance, exact_product};
use srcflow::Tier;
use srcflow::{Engine, Layer, Options, Stack, Train};

/// A random MPO · MPS on 9 sites: bonds of 24 and physical legs of 2, so the bonds at the
/// ends (2, 4) are narrower than the device counts tried.
fn stack() -> Stack {
    Stack::new(vec![
        layer("H", random_mpo(9, 2, 2, 3, 0.4, 11)),
        layer("psi", random_mps(9, 2, 8, 0.4, 12)),
    ])
    .unwrap()
}

fn layer(name: &str, train: Train) -> Layer {
    Layer {
        name: name.into(),
        train,
    }
}

/// The output of `options` on `devices` devices, two threads in all.
fn run_on(devices: usize, options: Options, stack: &Stack) -> Train {
    let options = options
        .with_graph(options.graph.with_devices(devices))
        .with_threads(2);
    Engine::new(options).unwrap().run(stack).unwrap().output
}

/// Fails unless every device count from 2 to 4 gives the one-device output of `options`.
fn assert_same_on_every_device_count(options: Options) {
    let stack = stack();
    let one = run_on(1, options, &stack);
    for devices in 2..=4 {
        let d = distance(&run_on(devices, options, &stack), &one).unwrap();
        assert!(
            d <= 1e-12,
            "{devices} devices: distance {d:e} to one device"
        );
    }
}

#[test]
fn one_to_four_devices_agree_with_uneven_splits() {
    // 13 columns split 7+6, 5+4+4 and 4+3+3+3; the bonds of 2 and 4 at the right end have fewer
    // rows to project than there are devices.
    assert_same_on_every_device_count(Options::new(13));
}

#[test]
fn devices_agree_with_column_batches_and_more_devices_than_columns() {
    assert_same_on_every_device_count(
        Options::new(13).with_graph(srcflow::graph::GraphOptions::new(13).with_batch_cols(3)),
    );
    assert_same_on_every_device_count(Options::new(3));
}

#[test]
fn devices_agree_with_oversampling_and_a_cutoff() {
    assert_same_on_every_device_count(
        Options::new(9).with_graph(
            srcflow::graph::GraphOptions::new(9)
                .with_oversample(1.5)
                .with_cutoff(1e-3),
        ),
    );
    assert_same_on_every_device_count(
        Options::new(9).with_graph(srcflow::graph::GraphOptions::new(9).with_cutoff(1e-3)),
    );
}

#[test]
fn three_devices_are_exact_without_truncation() {
    let stack = stack();
    let exact = exact_product(&stack).unwrap();
    let out = run_on(3, Options::new(64), &stack);
    let d = distance(&out, &exact).unwrap();
    assert!(d <= 1e-12, "distance {d:e} to the exact product");
}

#[test]
fn the_graph_gives_each_device_its_columns_and_gathers_for_one_qr() {
    let shape = stack().shape();
    let options = GraphOptions::new(13).with_devices(3).with_batch_cols(2);
    let graph = SweepGraph::build(&shape, &options).unwrap();
    let tasks: Vec<_> = graph.tasks().collect();
    for device in 0..3 {
        let owned = graph.device_cols(device);
        for task in tasks
            .iter()
            .filter(|t| matches!(t.op, Op::Env | Op::Sketch))
        {
            let cols = task.cols.unwrap();
            let inside = cols.start >= owned.start && cols.end <= owned.end;
            assert_eq!(task.device == device, inside, "{task}");
        }
    }
    assert!(tasks
        .iter()
        .filter(|t| t.op == Op::Qr)
        .all(|t| t.device == SweepGraph::QR_DEVICE));
    let reads = tasks
        .iter()
        .filter(|t| matches!(t.op, Op::ReadSite { .. }))
        .count();
    assert_eq!(reads, 2 * (2 * 9 - 1), "each core is read once per pass");
    for op in [Op::Gather, Op::Scatter, Op::AllGather] {
        assert!(
            tasks
                .iter()
                .any(|t| t.op == op && t.lane == Lane::Collective),
            "no {op:?} on a collective lane"
        );
    }
    let text = serde_json::to_string(&graph).unwrap();
    let back: SweepGraph = serde_json::from_str(&text).unwrap();
    assert_eq!(back.devices, 3);
}

#[test]
fn two_devices_spill_to_every_tier_and_agree_with_memory() {
    let scratch = tempfile::tempdir().unwrap();
    let stack = common::problem();
    let options = common::options(None)
        .with_graph(common::options(None).graph.with_devices(2))
        .with_threads(2);
    let (device, host) = budgets_for_every_tier_of(options, &stack.shape(), scratch.path());
    let engine = engine_for(options, device, host, scratch.path(), Tiering::default());
    let plan = plan_of(&engine, &stack.shape());
    assert!(2 * plan.count_on(Tier::Disk) >= plan.tiers.len());
    let out = engine.run(&stack).unwrap().output;
    let in_memory = run_on(1, common::options(None), &stack);
    let d = distance(&out, &in_memory).unwrap();
    assert!(d <= 1e-12, "distance {d:e} to the in-memory run");
    assert_empty(scratch.path());
}

#[test]
fn a_failing_device_stops_the_run_with_its_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let problem = common::problem_dir(dir.path());
    let out = dir.path().join("out");
    let options = common::options(None).with_graph(common::options(None).graph.with_devices(2));
    let (device, host) = budgets_for_every_tier_of(options, &common::problem().shape(), &scratch);
    let (device, host) = (format!("{device}B"), format!("{host}B"));
    let output = srcflow(&[
        "run",
        &problem,
        "--chi-out",
        "32",
        "--out",
        out.to_str().unwrap(),
        "--devices",
        "2",
        "--device-memory",
        &device,
        "--host-memory",
        &host,
        "--scratch-dir",
        scratch.to_str().unwrap(),
        "--inject-device-failure",
        "1:40", // in the right-to-left pass, after every spill was written
    ])
    .output()
    .unwrap();
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(
        err.contains("device 1 failed in") && err.contains("--inject-device-failure 1:40"),
        "{err}"
    );
    assert!(!out.exists(), "partial output left behind");
    assert_empty(&scratch);
}

#[test]
fn bad_device_choices_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let problem = common::problem_dir(dir.path());
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            &problem,
            "--chi-out",
            "8",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let output = srcflow(&args).output().unwrap();
        assert!(!output.status.success(), "{extra:?} was accepted");
        stderr(&output)
    };
    let err = run(&["--devices", "0"]);
    assert!(
        err.contains("--devices must be 1 to 1024, found 0"),
        "{err}"
    );
    let err = run(&["--devices", "2", "--inject-device-failure", "2"]);
    assert!(
        err.contains("names device 2") && err.contains("2 device(s)"),
        "{err}"
    );
    assert!(!out.exists());
}
