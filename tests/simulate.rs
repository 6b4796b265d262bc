//! The simulator: a sweep replayed on a machine model by the real scheduler, on a virtual clock —
//! deterministic, timed exactly as the model says, sensitive to the prefetch policy, and traced
//! like a real run.

mod common;

use common::*;
use srcflow::engine::Tiering;
use srcflow::graph::Lane;
use srcflow::sched::Prefetch;
use srcflow::sim::{ComputeModel, MachineModel, Observation};
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
        network_latency_s: 0.0,
        task_overhead_s: 1e-4,
        kernel_overhead_s: BTreeMap::new(),
        compute: vec![],
        disk_requests: None,
        assumed: false,
        device_has_own_memory: false,
        notes: vec![],
    }
}

/// A compute model of a device with `threads` threads whose GEMMs run at `gflops` whatever
/// their shape, with 1 ms per task and 1 ns per byte permuted, fitted to the env tasks of
/// `graph` timed so.
fn shape_model(graph: &srcflow::graph::SweepGraph, threads: usize, gflops: f64) -> ComputeModel {
    let env = graph.tasks().filter(|t| t.op == srcflow::graph::Op::Env);
    let tasks: Vec<Observation> = env
        .map(|t| Observation {
            kernel: "env".into(),
            work: t.work,
            seconds: 1e-3 + t.work.flops() / (gflops * 1e9) + 1e-9 * t.work.copied_bytes,
        })
        .collect();
    ComputeModel::fitted(threads, &tasks, &[2e-4], "synthetic tasks")
}

#[test]
fn an_in_memory_run_takes_the_modelled_compute_time() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let engine = engine(PLENTY, PLENTY, scratch.path(), None);
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let (report, log) = engine.simulate(&graph, &machine()).unwrap();
    let compute: Vec<_> = graph.tasks().filter(|t| t.lane == Lane::Compute).collect();
    let modelled: f64 = compute.iter().map(|t| 1e-4 + t.flops / 10e9).sum();
    let rounding = 1e-9 * compute.len() as f64;
    assert!(
        (report.compute_busy_s - modelled).abs() <= rounding,
        "compute busy {} s, modelled {modelled} s (the clock counts whole nanoseconds)",
        report.compute_busy_s
    );
    assert!(report.wall_s >= modelled && report.wall_s <= 1.2 * modelled);
    assert_eq!(log.events.len(), graph.task_count());
    assert_eq!(
        report.peak_rss_bytes, None,
        "the simulator's own memory is not the modelled run's"
    );
    let again = engine.simulate(&graph, &machine()).unwrap().0;
    assert_eq!(again.wall_s, report.wall_s, "a simulation is deterministic");
    check_trace(&chrome_trace(&graph, &log));
}

#[test]
fn checkpoint_writes_are_modelled_on_the_disk_write_lane() {
    let engine = srcflow::Engine::builder(CHI_OUT).build().unwrap();
    let (graph, _) = engine.prepare(&problem().shape()).unwrap();
    let disk_writes = |report: &srcflow::Report| -> (u64, f64) {
        let lanes = report.lanes.iter().filter(|l| l.lane == "disk-write");
        lanes.fold((0, 0.0), |(b, s), l| (b + l.bytes, s + l.busy_s))
    };
    let (plain, _) = engine.simulate(&graph, &machine()).unwrap();
    assert_eq!(disk_writes(&plain), (0, 0.0));
    for every in [1, 4] {
        let checkpointed = graph.with_checkpoint_writes(every);
        let writes = checkpointed.tasks();
        let writes = writes.filter(|t| t.op == srcflow::graph::Op::Checkpoint);
        let written: u64 = writes.map(|t| t.moved_bytes).sum();
        let (report, log) = engine.simulate(&checkpointed, &machine()).unwrap();
        let (bytes, busy) = disk_writes(&report);
        assert_eq!(bytes, written, "every {every}");
        assert!(busy > 0.0 && report.wall_s >= plain.wall_s, "every {every}");
        check_trace(&chrome_trace(&checkpointed, &log));
    }
}

#[test]
fn a_shape_model_times_each_task_by_its_work_with_its_devices_thread_count() {
    let stack = problem();
    let engine = srcflow::Engine::builder(CHI_OUT)
        .graph(srcflow::graph::GraphOptions::new(CHI_OUT).with_devices(2))
        .threads(2)
        .build()
        .unwrap();
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let (one_thread, two_threads) = (shape_model(&graph, 1, 5.0), shape_model(&graph, 2, 10.0));
    let model = MachineModel {
        compute: vec![one_thread.clone(), two_threads],
        ..machine()
    };
    let (report, _) = engine.simulate(&graph, &model).unwrap();
    // Each of the two devices has one thread: its tasks take the one-thread model's time.
    let compute = graph.tasks().filter(|t| t.lane == Lane::Compute);
    let modelled: f64 = compute
        .map(|t| 1e-4 + one_thread.seconds(t.op.name(), &t.work))
        .sum();
    assert!(
        (report.compute_busy_s - modelled).abs() <= 1e-6 * modelled,
        "compute busy {} s, modelled {modelled} s",
        report.compute_busy_s
    );
    // Only env tasks were fitted: the others are reported as extrapolated.
    let coverage = &report.model_coverage;
    let env = coverage.iter().find(|k| k.kernel == "env").unwrap();
    let qr = coverage.iter().find(|k| k.kernel == "qr").unwrap();
    assert_eq!(qr.extrapolated, qr.tasks, "{coverage:?}");
    assert!(
        qr.note.as_deref().unwrap().contains("no qr task"),
        "{coverage:?}"
    );
    assert_eq!(env.extrapolated, 0, "{coverage:?}");
    assert!(report.to_string().contains("qr: "), "{report}");
    // An assumed model says so for every task.
    let assumed = MachineModel {
        assumed: true,
        ..model
    };
    let report = engine.simulate(&graph, &assumed).unwrap().0;
    assert!(report
        .model_coverage
        .iter()
        .all(|k| k.extrapolated == k.tasks));
    assert!(report.to_string().contains("assumed"), "{report}");
}

#[test]
fn on_a_slow_disk_prefetching_beats_fetching_on_demand() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let wall = |prefetch| {
        let tiering = Tiering::default()
            .with_prefetch(prefetch)
            .with_disk_rates(DiskRates::both(Bandwidth(2e6)));
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
    let (reads, writes) = (
        &written["bytes_per_s"]["io"],
        &written["bytes_per_s"]["io-write"],
    );
    assert!(
        reads.as_f64() > Some(0.0) && writes.as_f64() > Some(0.0),
        "the io lane's reads and writes rated apart: {written}"
    );
    let cores = std::thread::available_parallelism().unwrap().get();
    let fitted = written["compute"].as_array().unwrap();
    assert_eq!(
        fitted[0]["threads"], cores,
        "one device with every thread first: {written}"
    );
    // One model per thread count a device has on 1, 2 and 4 devices sharing the cores.
    let layouts = [1, 2, 4].into_iter().filter(|&d| d <= cores);
    let shares =
        layouts.flat_map(|d| (0..d).map(move |i| srcflow::graph::share(cores, d, i).len()));
    let expected: std::collections::BTreeSet<usize> = shares.collect();
    let threads: std::collections::BTreeSet<usize> = fitted
        .iter()
        .map(|c| c["threads"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(threads, expected, "{written}");
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
    refine_from_traces(tmp.path(), &dir, &model);
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

/// `calibrate --from-trace` adds a real run's compute tasks to `model`'s fit for its thread
/// count, and refuses a simulated run's trace and a trace without task shapes by name.
fn refine_from_traces(tmp: &std::path::Path, dir: &str, model: &std::path::Path) {
    let (trace, out) = (tmp.join("run.json"), tmp.join("out"));
    let ran = srcflow(&["run", dir, "--chi-out", "32", "--threads", "1", "--trace"])
        .arg(&trace)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    let refined = tmp.join("refined.json");
    let calibrate = |traces: &[&std::path::Path]| {
        let mut command = srcflow(&["calibrate", "--model", model.to_str().unwrap(), "--out"]);
        command.arg(&refined);
        for t in traces {
            command.arg("--from-trace").arg(t);
        }
        command.output().unwrap()
    };
    let done = calibrate(&[&trace]);
    assert!(done.status.success(), "{}", stderr(&done));
    let (before, after) = (
        MachineModel::read(model).unwrap(),
        MachineModel::read(&refined).unwrap(),
    );
    let tasks = chrome_tasks(&trace);
    let one_thread = |m: &MachineModel| m.compute.iter().find(|c| c.threads == 1).cloned();
    let refined_model = one_thread(&after).expect("a one-thread model after refining");
    let observed_before = one_thread(&before).map_or(0, |c| c.fit.observations);
    assert_eq!(refined_model.fit.observations, observed_before + tasks);
    let gaps_before = one_thread(&before).map_or(0, |c| c.dispatch_gaps);
    assert!(
        refined_model.dispatch_gaps > gaps_before,
        "the run's dispatch gaps count"
    );
    assert!(
        refined_model.fitted_on.last().unwrap().contains("run.json"),
        "{refined_model:?}"
    );
    let simulated = tmp.join("simulated.json");
    let sim = srcflow(&[
        "simulate",
        dir,
        "--chi-out",
        "32",
        "--model",
        model.to_str().unwrap(),
    ])
    .arg("--trace")
    .arg(&simulated)
    .output()
    .unwrap();
    assert!(sim.status.success(), "{}", stderr(&sim));
    std::fs::remove_file(&refined).unwrap();
    // A compute slice on a device the run does not list.
    let mut stray: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = stray["traceEvents"].as_array_mut().unwrap();
    let slice = events.iter_mut().find(|e| is_compute(e)).unwrap();
    slice["args"]["device"] = serde_json::json!(3);
    let stray_path = tmp.join("stray.json");
    std::fs::write(&stray_path, stray.to_string()).unwrap();
    for (bad, says) in [
        (simulated.as_path(), "simulated run"),
        (model, "threads_per_device"),
        (stray_path.as_path(), "device 3"),
    ] {
        let refused = calibrate(&[&trace, bad]);
        let message = stderr(&refused);
        assert!(!refused.status.success());
        assert!(
            message.contains(bad.file_name().unwrap().to_str().unwrap()) && message.contains(says),
            "{message}"
        );
        assert!(!refined.exists(), "nothing written on an error");
    }
}

/// Compute slices with their work in the trace at `path`.
fn chrome_tasks(path: &std::path::Path) -> usize {
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    events.iter().filter(|e| is_compute(e)).count()
}

/// Whether a trace event is a compute task's slice with its work.
fn is_compute(event: &serde_json::Value) -> bool {
    let kernel = event["cat"].as_str().unwrap_or_default();
    srcflow::sim::KERNELS.contains(&kernel) && !event["args"]["work"].is_null()
}

#[test]
fn an_oversampled_run_is_simulated_with_its_rounding_sweep_at_the_qr_rate() {
    let stack = problem();
    let options = srcflow::Options::new(CHI_OUT)
        .with_graph(srcflow::graph::GraphOptions::new(CHI_OUT).with_oversample(1.5));
    let engine = srcflow::Engine::new(options).unwrap();
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let mut model = machine();
    model.gflops.insert("qr".into(), 5.0);
    let (report, log) = engine.simulate(&graph, &model).unwrap();
    let rounds: Vec<_> = graph
        .tasks()
        .filter(|t| t.op == srcflow::graph::Op::Round)
        .collect();
    assert_eq!(rounds.len(), 32);
    let modelled: f64 = rounds.iter().map(|t| 1e-4 + t.flops / 5e9).sum();
    let busy = report.busy_by_op["round"];
    assert!(
        (busy - modelled).abs() <= 1e-9 * 32.0,
        "round {busy} s, modelled {modelled} s"
    );
    assert_eq!(log.events.len(), graph.task_count());
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

#[test]
fn simulate_takes_a_checkpoint_interval_in_sites_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = problem_dir(tmp.path());
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/leonardo-a100.json");
    for (every, says) in [
        ("10m", "takes a number of sites here"),
        ("0", "(30s, 10m, 1.5h), found '0'"),
    ] {
        let refused = srcflow(&["simulate", &dir, "--chi-out", "32"])
            .args(["--model", model, "--checkpoint-every", every])
            .output()
            .unwrap();
        assert!(!refused.status.success(), "--checkpoint-every {every}");
        assert!(stderr(&refused).contains(says), "{}", stderr(&refused));
    }
    let sites = srcflow(&["simulate", &dir, "--chi-out", "32", "--model", model])
        .args(["--checkpoint-every", "3"])
        .output()
        .unwrap();
    assert!(sites.status.success(), "{}", stderr(&sites));
}
