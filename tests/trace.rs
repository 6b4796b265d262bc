//! The Chrome trace of a run follows the Trace Event Format and agrees with the run report.

mod common;

use common::*;
use srcflow::engine::{MemorySink, MemorySource};
use srcflow::engine::{Report, Tiering};
use srcflow::sched::RunLog;
use srcflow::trace::chrome_trace;
use srcflow::{Engine, EngineBuilder, Stack};

/// Runs `stack` with `engine`; returns the run's trace, report and log.
fn traced_run(engine: &Engine, stack: &Stack) -> (serde_json::Value, Report, RunLog) {
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let sink = MemorySink::new(graph.output_kind(), graph.sites());
    let (report, log) = engine
        .run_graph_logged(&graph, &MemorySource::new(stack), &sink)
        .unwrap();
    (chrome_trace(&graph, &log), report, log)
}

#[test]
fn trace_has_lanes_counters_and_flows_and_agrees_with_the_report() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let engine = builder_for(
        options(None),
        device,
        host,
        scratch.path(),
        Tiering::default(),
    )
    .trace(true)
    .build()
    .unwrap();
    let (trace, report, log) = traced_run(&engine, &stack);
    let TraceParts {
        slices,
        counters,
        flows,
        ..
    } = check_trace(&trace);
    assert!(flows > 0, "some task waited for an input");
    for key in ["device bytes", "host bytes", "disk bytes", "bytes"] {
        assert!(
            counters.get(key).is_some_and(|&max| max > 0.0),
            "counter {key}: {counters:?}"
        );
    }
    let compute_ms: f64 = slices[&(1, 1)].iter().map(|s| s.1).sum::<f64>() / 1e3;
    let reported_ms: f64 = report
        .lanes
        .iter()
        .filter(|l| l.lane == "compute")
        .map(|l| l.busy_s * 1e3)
        .sum();
    assert!(
        (compute_ms - reported_ms).abs() <= 0.01 * reported_ms,
        "compute busy {compute_ms} ms in the trace, {reported_ms} ms in the report"
    );
    let disk_reads = slices.get(&(2, 3)).map_or(0, Vec::len);
    assert_eq!(
        disk_reads as u64,
        log.events
            .iter()
            .filter(|e| e.lane.name() == "disk-read")
            .count() as u64
    );
    assert!(disk_reads > 0);
}

#[test]
fn compute_slices_split_their_time_into_gemm_factorization_and_copies() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let engine = engine(u64::MAX, u64::MAX, scratch.path(), None);
    let (trace, _, _) = traced_run(&engine, &stack);
    let TraceParts { slice_events, .. } = check_trace(&trace);
    let seconds = |e: &serde_json::Value, key: &str| e["args"][key].as_f64();
    let mut counted = std::collections::HashMap::<String, f64>::new();
    for e in &slice_events {
        let kind = e["cat"].as_str().unwrap().to_string();
        let Some(gemm) = seconds(e, "gemm_s") else {
            assert!(
                !["env", "sketch", "fold", "project", "qr"].contains(&kind.as_str()),
                "a kernel without its primitives' times: {e}"
            );
            continue;
        };
        let parts = gemm + seconds(e, "factorization_s").unwrap() + seconds(e, "copy_s").unwrap();
        let dur = e["dur"].as_f64().unwrap() / 1e6;
        assert!(
            parts <= dur + 1e-4,
            "{parts} s of primitives in {dur} s: {e}"
        );
        *counted.entry(format!("{kind} gemm")).or_default() += gemm;
        *counted.entry(format!("{kind} factorization")).or_default() +=
            seconds(e, "factorization_s").unwrap();
    }
    for kernel in ["env", "sketch", "project"] {
        assert!(counted[&format!("{kernel} gemm")] > 0.0, "{counted:?}");
    }
    assert!(counted["qr factorization"] > 0.0, "{counted:?}");
    assert_eq!(counted["env factorization"], 0.0, "{counted:?}");
}

#[test]
fn each_device_is_a_process_with_its_own_lanes_and_pool() {
    let stack = problem();
    let mut options = options(None).with_threads(2);
    options.graph.devices = 2;
    let engine = EngineBuilder::new(options).trace(true).build().unwrap();
    let (trace, report, _) = traced_run(&engine, &stack);
    let TraceParts { slices, .. } = check_trace(&trace);
    let events = trace["traceEvents"].as_array().unwrap();
    let process = |pid: u64| {
        events
            .iter()
            .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == pid)
            .map(|e| e["args"]["name"].as_str().unwrap().to_string())
    };
    // Device 0 is process 1, the host process 2, device 1 process 3.
    assert_eq!(process(1).as_deref(), Some("device 0"));
    assert_eq!(process(2).as_deref(), Some("host"));
    assert_eq!(process(3).as_deref(), Some("device 1"));
    for (device, pid) in [(0, 1), (1, 3)] {
        let compute_ms: f64 = slices[&(pid, 1)].iter().map(|s| s.1).sum::<f64>() / 1e3;
        let reported_ms = report.devices[device].compute_busy_s * 1e3;
        assert!(
            (compute_ms - reported_ms).abs() <= 0.01 * reported_ms,
            "device {device}: {compute_ms} ms in the trace, {reported_ms} ms in the report"
        );
        assert!(
            !slices[&(pid, 5)].is_empty(),
            "device {device} moved nothing"
        );
        let pool = events
            .iter()
            .filter(|e| e["ph"] == "C" && e["name"] == "device pool" && e["pid"] == pid)
            .count();
        assert!(pool > 0, "no pool counter for device {device}");
    }
    assert!(report.devices[0].qr_s > 0.0 && report.devices[1].qr_s == 0.0);
}
