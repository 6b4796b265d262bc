//! The simulator: a sweep replayed on a machine model by the real scheduler, on a virtual clock —
//! deterministic, timed exactly as the model says, sensitive to the prefetch policy, and traced
//! like a real run.

mod common;

use common::*;
use srcflow::engine::Tiering;
use srcflow::graph::Lane;
use srcflow::sched::Prefetch;
use srcflow::sim::MachineModel;
use srcflow::store::DiskRates;
use srcflow::trace::chrome_trace;
use srcflow::Bandwidth;
use std::collections::BTreeMap;

/// A machine computing every kernel at 10 GFLOP/s and moving 1 GB/s on every lane.
fn machine() -> MachineModel {
    let kernels = ["env", "sketch", "qr", "project", "first", "exact"];
    let lanes = Lane::ALL.iter().filter(|&&l| l != Lane::Compute);
    MachineModel {
        name: "test machine".into(),
        gflops: kernels.iter().map(|k| (k.to_string(), 10.0)).collect(),
        bytes_per_s: lanes.map(|l| (l.name().to_string(), 1e9)).collect(),
        task_overhead_s: 1e-4,
        kernel_overhead_s: BTreeMap::new(),
        device_has_own_memory: false,
        notes: vec![],
    }
}

#[test]
fn an_in_memory_run_takes_the_modelled_compute_time() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let engine = engine(PLENTY, PLENTY, scratch.path(), None);
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let (report, log) = engine.simulate(&graph, &machine()).unwrap();
    let compute: Vec<_> = graph
        .graph
        .node_weights()
        .filter(|t| t.lane == Lane::Compute)
        .collect();
    let modelled: f64 = compute.iter().map(|t| 1e-4 + t.flops / 10e9).sum();
    let rounding = 1e-9 * compute.len() as f64;
    assert!(
        (report.compute_busy_s - modelled).abs() <= rounding,
        "compute busy {} s, modelled {modelled} s (the clock counts whole nanoseconds)",
        report.compute_busy_s
    );
    assert!(report.wall_s >= modelled && report.wall_s <= 1.2 * modelled);
    assert_eq!(log.events.len(), graph.graph.node_count());
    let again = engine.simulate(&graph, &machine()).unwrap().0;
    assert_eq!(again.wall_s, report.wall_s, "a simulation is deterministic");
    check_trace(&chrome_trace(&graph, &log));
}

#[test]
fn on_a_slow_disk_prefetching_beats_fetching_on_demand() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let wall = |prefetch| {
        let tiering = Tiering {
            prefetch,
            disk_rates: DiskRates::both(Bandwidth(2e6)),
            ..Tiering::default()
        };
        let engine = engine_with(device, host, scratch.path(), None, tiering);
        let (graph, _) = engine.prepare(&stack.shape()).unwrap();
        engine.simulate(&graph, &machine()).unwrap().0
    };
    let on_demand = wall(std::sync::Arc::new(Prefetch::None));
    let ahead = wall(std::sync::Arc::new(Prefetch::default()));
    assert!(on_demand.stalls_right_to_left.environments_s > 0.0);
    assert!(
        ahead.wall_s < on_demand.wall_s,
        "bandwidth-aware {} s, on demand {} s",
        ahead.wall_s,
        on_demand.wall_s
    );
    assert!(ahead.environments.get("disk").is_some_and(|&n| n > 0));
    assert_empty(scratch.path());
}

#[test]
fn simulate_and_calibrate_on_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let calibrated = srcflow(&["calibrate", "--scratch-dir"])
        .arg(tmp.path())
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(calibrated.status.success(), "{}", stderr(&calibrated));
    let model = tmp.path().join("machine-model.json");
    let said = String::from_utf8_lossy(&calibrated.stdout);
    let line = said.lines().find_map(|l| l.strip_prefix("written to "));
    let written = std::path::PathBuf::from(line.unwrap_or_else(|| panic!("{said}")));
    assert!(written.is_absolute(), "{said}");
    assert_eq!(
        std::fs::canonicalize(&written).unwrap(),
        std::fs::canonicalize(&model).unwrap()
    );
    let leftovers = std::fs::read_dir(tmp.path()).unwrap().count();
    assert_eq!(leftovers, 1, "only the model is left");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert!(written["gflops"]["fold"].as_f64().is_some(), "{written}");
    assert!(
        written["name"].as_str().unwrap().contains(" cores, "),
        "the model names its machine: {written}"
    );
    let dir = problem_dir(tmp.path());
    let simulated = srcflow(&["simulate", &dir, "--chi-out", "32"])
        .args(["--model", model.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(simulated.status.success(), "{}", stderr(&simulated));
    let report: serde_json::Value = serde_json::from_slice(&simulated.stdout).unwrap();
    assert!(report["backend"].as_str().unwrap().starts_with("model: "));
    // The command line simulates what the library does with the model it wrote, to the
    // nanosecond, and no faster than the model's compute allows.
    let engine = engine(PLENTY, PLENTY, tmp.path(), None);
    let (graph, _) = engine.prepare(&problem().shape()).unwrap();
    let model_read = MachineModel::read(&model).unwrap();
    let library = engine.simulate(&graph, &model_read).unwrap().0;
    let wall = report["wall_s"].as_f64().unwrap();
    assert!(
        (wall - library.wall_s).abs() < 1e-9,
        "{wall} s against {} s",
        library.wall_s
    );
    assert!(wall >= report["compute_busy_s"].as_f64().unwrap() && library.compute_busy_s > 0.0);
    std::fs::write(
        &model,
        r#"{"name": "broken", "gflops": {}, "bytes_per_s": {}}"#,
    )
    .unwrap();
    let refused = srcflow(&["simulate", &dir, "--chi-out", "32"])
        .args(["--model", model.to_str().unwrap()])
        .output()
        .unwrap();
    let message = stderr(&refused);
    assert!(!refused.status.success());
    assert!(
        message.contains("model.json") && message.contains("gflops.env"),
        "{message}"
    );
}

#[test]
fn an_oversampled_run_is_simulated_with_its_rounding_sweep_at_the_qr_rate() {
    let stack = problem();
    let options = srcflow::Options {
        graph: srcflow::graph::GraphOptions {
            oversample: 1.5,
            ..srcflow::graph::GraphOptions::new(CHI_OUT)
        },
        ..srcflow::Options::new(CHI_OUT)
    };
    let engine = srcflow::Engine::new(options).unwrap();
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let mut model = machine();
    model.gflops.insert("qr".into(), 5.0);
    let (report, log) = engine.simulate(&graph, &model).unwrap();
    let rounds: Vec<_> = graph
        .graph
        .node_weights()
        .filter(|t| t.op == srcflow::graph::Op::Round)
        .collect();
    assert_eq!(rounds.len(), 32);
    let modelled: f64 = rounds.iter().map(|t| 1e-4 + t.flops / 5e9).sum();
    let busy = report.busy_by_op["round"];
    assert!(
        (busy - modelled).abs() <= 1e-9 * 32.0,
        "round {busy} s, modelled {modelled} s"
    );
    assert_eq!(log.events.len(), graph.graph.node_count());
}

#[test]
fn calibrate_refuses_a_missing_folder_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("graphs/model.json");
    let refused = srcflow(&["calibrate", "--out", model.to_str().unwrap()])
        .output()
        .unwrap();
    let message = stderr(&refused);
    assert!(!refused.status.success());
    assert!(
        message.contains("graphs: the folder of the model") && message.contains("does not exist"),
        "{message}"
    );
    assert!(!tmp.path().join("graphs").exists());
}

#[test]
fn every_shipped_model_rates_every_kernel_calibrate_measures() {
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs");
    let mut models = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let model = MachineModel::read(&path).unwrap();
        for kernel in ["env", "fold", "sketch", "qr", "project", "first", "exact"] {
            assert!(
                model.gflops.contains_key(kernel),
                "{} does not rate {kernel}",
                path.display()
            );
        }
        models += 1;
    }
    assert!(models >= 3, "found {models} models");
}
