//! Reads a Chrome trace back and checks it against the Trace Event Format: phases, ordered
//! timestamps, slices that never overlap on a track, flows with a start and a finish, instant
//! events with a scope.

use serde_json::Value;
use std::collections::HashMap;

/// What a checked trace holds, by kind.
pub struct TraceParts {
    /// Complete events per (pid, tid): (ts, dur) in µs, in order.
    pub slices: HashMap<(u64, u64), Vec<(f64, f64)>>,
    /// Complete events themselves, in order.
    pub slice_events: Vec<Value>,
    /// The largest value each counter series reached.
    pub counters: HashMap<String, f64>,
    /// Flow ids seen.
    pub flows: usize,
    /// Instant events, in order.
    pub instants: Vec<Value>,
}

fn number(event: &Value, key: &str) -> f64 {
    event[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {event}"))
}

/// Checks `trace` and returns its parts; panics naming the first event that breaks the format.
pub fn check_trace(trace: &Value) -> TraceParts {
    let mut parts = TraceParts {
        slices: HashMap::new(),
        slice_events: Vec::new(),
        counters: HashMap::new(),
        flows: 0,
        instants: Vec::new(),
    };
    let mut flows: HashMap<u64, Vec<&str>> = HashMap::new();
    let mut last_ts = 0.0;
    for event in trace["traceEvents"].as_array().unwrap() {
        let ph = event["ph"].as_str().unwrap();
        let track = (
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
            "X" => {
                parts
                    .slices
                    .entry(track)
                    .or_default()
                    .push((ts, number(event, "dur")));
                parts.slice_events.push(event.clone());
            }
            "s" | "f" => flows
                .entry(event["id"].as_u64().unwrap())
                .or_default()
                .push(ph),
            "C" => {
                for (key, value) in event["args"].as_object().unwrap() {
                    let max = parts.counters.entry(key.clone()).or_default();
                    *max = max.max(value.as_f64().unwrap());
                }
            }
            "i" => {
                let scope = event["s"].as_str();
                assert!(matches!(scope, Some("t" | "p" | "g")), "scope of {event}");
                parts.instants.push(event.clone());
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    for (track, spans) in &parts.slices {
        for pair in spans.windows(2) {
            assert!(
                pair[0].0 + pair[0].1 <= pair[1].0 + 1e-3,
                "overlap on {track:?}"
            );
        }
    }
    for (id, ends) in &flows {
        assert_eq!(ends, &["s", "f"], "flow {id} has a start and a finish");
    }
    parts.flows = flows.len();
    parts
}
