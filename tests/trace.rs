//! The Chrome trace of a run follows the Trace Event Format and agrees with the run report.

mod common;

use common::*;
use srcflow::engine::{MemorySink, MemorySource};
use srcflow::trace::chrome_trace;

#[test]
fn trace_has_lanes_counters_and_flows_and_agrees_with_the_report() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let engine = engine(device, host, scratch.path(), None);
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let sink = MemorySink::new(graph.output_kind(), graph.sites());
    let (report, log) = engine
        .run_graph_logged(&graph, &MemorySource::new(&stack), &sink)
        .unwrap();
    let trace = chrome_trace(&graph, &log);
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
