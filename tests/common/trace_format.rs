//! Reads a Chrome trace back and checks it against the Trace Event Format: phases, ordered
//! timestamps, slices that never overlap on a track (but a network lane under MPI, which
//! waits for many values at once), flows with a start and a finish, instant events with a
//! scope; and a trace of several ranks against what it should hold.

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
    let mut names: HashMap<(u64, u64), &str> = HashMap::new();
    let mut last_ts = 0.0;
    for event in trace["traceEvents"].as_array().unwrap() {
        let ph = event["ph"].as_str().unwrap();
        let track = (
            event["pid"].as_u64().unwrap(),
            event["tid"].as_u64().unwrap(),
        );
        if ph == "M" {
            names.insert(track, event["args"]["name"].as_str().unwrap());
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
    // Under MPI a rank's network lane waits for many values at once; in one process or a
    // simulation, every lane runs one task at a time.
    let run = &trace["otherData"]["srcflow"];
    let under_mpi = run["ranks"].as_u64().unwrap_or(1) > 1 && run["simulated"] == false;
    let many_at_once = |track: &(u64, u64)| under_mpi && names.get(track) == Some(&"network");
    for (track, spans) in parts.slices.iter().filter(|(t, _)| !many_at_once(t)) {
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

/// Checks the trace of a run of `ranks` ranks over `devices` devices (each rank owning a
/// contiguous share): a process per device and per rank's host, named by rank; an arrow from
/// each value's send to each of its receives on other ranks (the receive of an S gathered in place brings the
/// row blocks of every other rank), which ends after the send; and a summary that
/// `srcflow report` can print.
pub fn check_rank_trace(trace: &Value, ranks: usize, devices: usize) {
    let parts = check_trace(trace);
    let events = trace["traceEvents"].as_array().unwrap();
    let process_names = events.iter().filter(|e| e["name"] == "process_name");
    let rank_of_pid: HashMap<u64, &str> = process_names
        .clone()
        .map(|e| {
            let name = e["args"]["name"].as_str().unwrap();
            (
                e["pid"].as_u64().unwrap(),
                name.rsplit(" of rank ").next().unwrap(),
            )
        })
        .collect();
    let processes: Vec<&str> = process_names
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        rank_of_pid.len(),
        processes.len(),
        "a pid named twice: {processes:?}"
    );
    for event in events.iter().filter(|e| e["ph"] != "M") {
        let pid = event["pid"].as_u64().unwrap();
        assert!(
            rank_of_pid.contains_key(&pid),
            "{event} on an unnamed process"
        );
    }
    for rank in 0..ranks {
        let own = srcflow::graph::share(devices, ranks, rank);
        let host = format!("host of rank {rank}");
        assert!(processes.contains(&host.as_str()), "{processes:?}");
        for device in own.start..own.end {
            let name = format!("device {device} of rank {rank}");
            assert!(processes.contains(&name.as_str()), "{processes:?}");
        }
    }
    let of = |cat: &'static str| parts.slice_events.iter().filter(move |e| e["cat"] == cat);
    let sends: Vec<&Value> = of("send").collect();
    let end = |e: &Value| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap();
    let rank = |e: &Value| rank_of_pid[&e["pid"].as_u64().unwrap()];
    let value = |e: &Value| e["args"]["value"].as_str().unwrap().to_string();
    // What a receive brought: its value, or every other rank's row blocks of an S it joins.
    let brought = |receive: &Value| -> Vec<&Value> {
        let (received, joins) = (
            value(receive),
            value(receive).split_once("@device").is_some(),
        );
        let blocks = format!("{}/part", received.split('@').next().unwrap());
        let sent =
            |send: &Value| value(send) == received || (joins && value(send).starts_with(&blocks));
        let others = sends
            .iter()
            .copied()
            .filter(|&send| rank(send) != rank(receive));
        others.filter(|&send| sent(send)).collect()
    };
    let receives: Vec<&Value> = of("receive").collect();
    assert!(!receives.is_empty(), "no receive in the trace");
    let mut messages = 0;
    for receive in &receives {
        let brought = brought(receive);
        assert!(
            !brought.is_empty(),
            "{receive} brought nothing another rank sent"
        );
        for send in brought {
            let start = send["ts"].as_f64().unwrap();
            assert!(end(receive) >= start, "{receive} ends before {send} starts");
            messages += 1;
        }
    }
    let sent = events
        .iter()
        .filter(|e| e["name"] == "sent" && e["ph"] == "s");
    assert_eq!(sent.count(), messages, "an arrow per message");
    let summary = srcflow::trace::TraceSummary::of(trace).unwrap();
    let network = format!("host of rank {} network", ranks - 1);
    assert!(
        summary.lanes.iter().any(|l| l.lane == network),
        "no lane {network} in the summary"
    );
}
