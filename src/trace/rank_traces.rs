//! `join_rank_traces`: one trace of a run of several ranks, from each rank's own
//! ([`super::rank_trace`]): their events on one clock, from the wall-clock time the first
//! rank's run started (each rank's by its own wall clock), and an arrow from each value's send
//! to each of its receives.

use serde_json::{json, Value};
use std::collections::HashMap;

/// The first id of the arrows between ranks (above every rank's own).
const SENT_FLOWS: u64 = 1 << 48;

/// The ranks' traces, in rank order, as one trace; an error names a rank whose trace is not
/// one [`super::rank_trace`] made.
pub fn join_rank_traces(traces: &[Value]) -> Result<Value, String> {
    let started = |rank: usize, trace: &Value| {
        trace["otherData"]["srcflow"]["started_unix_s"]
            .as_f64()
            .ok_or_else(|| format!("the trace of rank {rank} does not say when its run started"))
    };
    let first = traces.first().ok_or("no trace to join")?;
    let starts = traces.iter().enumerate().map(|(rank, t)| started(rank, t));
    let starts = starts.collect::<Result<Vec<f64>, String>>()?;
    let origin = starts.iter().copied().fold(f64::INFINITY, f64::min);
    let (mut names, mut timed) = (vec![], vec![]);
    for (rank, trace) in traces.iter().enumerate() {
        let shift = (starts[rank] - origin) * 1e6;
        let events = trace["traceEvents"]
            .as_array()
            .ok_or_else(|| format!("the trace of rank {rank} has no events"))?;
        for event in events {
            let mut event = event.clone();
            match event["ts"].as_f64() {
                Some(ts) => {
                    event["ts"] = json!(ts + shift);
                    timed.push(event);
                }
                None => names.push(event),
            }
        }
    }
    timed.extend(sent_arrows(&timed));
    timed.sort_by(|a, b| {
        a["ts"]
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&b["ts"].as_f64().unwrap_or(0.0))
    });
    names.extend(timed);
    let mut run = first["otherData"]["srcflow"].clone();
    run["started_unix_s"] = json!(origin);
    run.as_object_mut().map(|r| r.remove("rank"));
    Ok(json!({ "traceEvents": names, "displayTimeUnit": "ms", "otherData": { "srcflow": run } }))
}

/// The moment `fraction` of the way through `slice` (µs).
fn near(slice: &Value, fraction: f64) -> f64 {
    let ts = slice["ts"].as_f64().unwrap_or(0.0);
    ts + fraction * slice["dur"].as_f64().unwrap_or(0.0)
}

/// An arrow from each send slice to the end of each receive slice of the same value (where
/// it arrived).
fn sent_arrows(events: &[Value]) -> Vec<Value> {
    let of = |cat: &'static str| {
        events
            .iter()
            .filter(move |e| e["ph"] == "X" && e["cat"] == cat)
            .filter_map(|e| Some((e["args"]["value"].as_str()?, e)))
    };
    let sends: HashMap<&str, &Value> = of("send").collect();
    let mut arrows = vec![];
    for (value, receive) in of("receive") {
        let Some(send) = sends.get(value) else {
            continue;
        };
        // The send hands the value over while it runs, and may record its end after the
        // value arrived: the arrow leaves from the send's start.
        let (sent, arrived) = (near(send, 0.01), (near(receive, 0.99), near(receive, 1.0)));
        if arrived.1 < sent {
            continue; // the ranks' clocks disagree by more than the message took
        }
        let id = SENT_FLOWS + arrows.len() as u64 / 2;
        arrows.push(
            json!({"ph": "s", "name": "sent", "cat": "network", "id": id,
                           "ts": sent, "pid": send["pid"], "tid": send["tid"]}),
        );
        arrows.push(
            json!({"ph": "f", "bp": "e", "name": "sent", "cat": "network", "id": id,
                           "ts": arrived.0.max(sent), "pid": receive["pid"],
                           "tid": receive["tid"]}),
        );
    }
    arrows
}
