//! The Chrome trace of a run follows the Trace Event Format and agrees with the run report.

mod common;

use common::*;
use serde_json::Value;
use srcflow::engine::{MemorySink, MemorySource};
use srcflow::trace::chrome_trace;
use std::collections::HashMap;

fn number(event: &Value, key: &str) -> f64 {
    event[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {event}"))
}

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
    let events = trace["traceEvents"].as_array().unwrap();

    let mut last_ts = 0.0;
    let mut slices: HashMap<(u64, u64), Vec<(f64, f64)>> = HashMap::new();
    let mut flows: HashMap<u64, Vec<&Value>> = HashMap::new();
    let mut counters: HashMap<String, f64> = HashMap::new();
    for event in events {
        let ph = event["ph"].as_str().unwrap();
        let (pid, tid) = (
            event["pid"].as_u64().unwrap(),
            event["tid"].as_u64().unwrap(),
        );
        if ph == "M" {
            continue;
        }
        let ts = number(event, "ts");
        assert!(ts >= last_ts, "timed events are in order: {event}");
        last_ts = ts;
        match ph {
            "X" => slices
                .entry((pid, tid))
                .or_default()
                .push((ts, number(event, "dur"))),
            "s" | "f" => flows
                .entry(event["id"].as_u64().unwrap())
                .or_default()
                .push(event),
            "C" => {
                for (key, value) in event["args"].as_object().unwrap() {
                    let max = counters.entry(key.clone()).or_default();
                    *max = max.max(value.as_f64().unwrap());
                }
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    for (track, spans) in &slices {
        for pair in spans.windows(2) {
            assert!(
                pair[0].0 + pair[0].1 <= pair[1].0 + 1e-3,
                "overlap on {track:?}"
            );
        }
    }
    assert!(!flows.is_empty(), "some task waited for an input");
    for (id, ends) in &flows {
        assert_eq!(ends.len(), 2, "flow {id} has a start and a finish");
        assert_eq!(
            (ends[0]["ph"].as_str(), ends[1]["ph"].as_str()),
            (Some("s"), Some("f"))
        );
    }
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
