//! `join_rank_traces`: one trace of a run of several ranks, from each rank's own
//! ([`super::rank_trace`]): their events on one clock, from the wall-clock time the first
//! rank's run started (each rank's by its own wall clock), each device's thread count from the
//! rank that owns it, and an arrow from each value's send to each of its receives.

use serde_json::{json, Value};
use std::collections::HashMap;

/// The first id of the arrows between ranks (above every rank's own).
const SENT_FLOWS: u64 = 1 << 48;

/// The ranks' traces, in rank order, as one trace; an error names a rank whose trace is not
/// one [`super::rank_trace`] made.
pub fn join_rank_traces(traces: Vec<Value>) -> Result<Value, String> {
    let starts = traces
        .iter()
        .enumerate()
        .map(|(rank, trace)| started(rank, trace))
        .collect::<Result<Vec<f64>, String>>()?;
    let origin = starts.iter().copied().fold(f64::INFINITY, f64::min);
    if !origin.is_finite() {
        return Err("no trace to join".into());
    }
    let mut run = traces[0]["otherData"]["srcflow"].clone();
    run["started_unix_s"] = json!(origin);
    run["threads_per_device"] = json!(threads_per_device(&traces)?);
    if let Some(run) = run.as_object_mut() {
        run.remove("rank");
        run.remove("own_devices");
    }
    let (mut names, mut timed) = (vec![], vec![]);
    for ((rank, trace), start) in traces.into_iter().enumerate().zip(starts) {
        let shift = (start - origin) * 1e6;
        for mut event in events_of(rank, trace)? {
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
    timed.sort_by(|a, b| ts(a).total_cmp(&ts(b)));
    names.extend(timed);
    Ok(json!({ "traceEvents": names, "displayTimeUnit": "ms", "otherData": { "srcflow": run } }))
}

/// The wall-clock time (seconds since the Unix epoch) `rank`'s run started.
fn started(rank: usize, trace: &Value) -> Result<f64, String> {
    trace["otherData"]["srcflow"]["started_unix_s"]
        .as_f64()
        .ok_or_else(|| format!("the trace of rank {rank} does not say when its run started"))
}

/// The events of `rank`'s trace.
fn events_of(rank: usize, mut trace: Value) -> Result<Vec<Value>, String> {
    match trace["traceEvents"].take() {
        Value::Array(events) => Ok(events),
        _ => Err(format!("the trace of rank {rank} has no events")),
    }
}

/// Every device's kernel threads, from the trace of the rank that owns it.
fn threads_per_device(traces: &[Value]) -> Result<Vec<Value>, String> {
    let mut threads = vec![];
    for (rank, trace) in traces.iter().enumerate() {
        let run = &trace["otherData"]["srcflow"];
        let own = run["own_devices"].as_array().and_then(|own| {
            let bound = |i: usize| own.get(i)?.as_u64().map(|d| d as usize);
            Some(bound(0)?..bound(1)?)
        });
        let own =
            own.ok_or_else(|| format!("the trace of rank {rank} does not name its devices"))?;
        let counts = run["threads_per_device"].as_array();
        threads.extend(own.map(|d| {
            counts
                .and_then(|c| c.get(d))
                .cloned()
                .unwrap_or(Value::Null)
        }));
    }
    Ok(threads)
}

/// A timed event's timestamp (µs).
fn ts(event: &Value) -> f64 {
    event["ts"].as_f64().unwrap_or(0.0)
}

/// The moment `fraction` of the way through `slice` (µs).
fn into_slice(slice: &Value, fraction: f64) -> f64 {
    ts(slice) + fraction * slice["dur"].as_f64().unwrap_or(0.0)
}

/// An arrow from each send slice (near its start: a send hands its value over while it runs,
/// and may end after the value arrived) to just before the end of each receive slice of the
/// same value (when it arrived). An arrow is left out where the ranks' clocks disagree by more
/// than the message took (the receive ends before the send starts).
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
        let sent = into_slice(send, 0.01);
        if into_slice(receive, 1.0) < sent {
            continue;
        }
        let arrived = into_slice(receive, 0.99).max(sent);
        let id = SENT_FLOWS + arrows.len() as u64 / 2;
        arrows.push(
            json!({"ph": "s", "name": "sent", "cat": "network", "id": id,
                           "ts": sent, "pid": send["pid"], "tid": send["tid"]}),
        );
        arrows.push(
            json!({"ph": "f", "bp": "e", "name": "sent", "cat": "network", "id": id,
                           "ts": arrived, "pid": receive["pid"], "tid": receive["tid"]}),
        );
    }
    arrows
}

#[cfg(test)]
mod tests {
    use super::join_rank_traces;
    use serde_json::{json, Value};

    /// The trace of `rank` owning `devices`, started at `started` (s), with one slice of
    /// category `cat` carrying `value` from `ts` for `dur` µs.
    fn trace(rank: usize, devices: [usize; 2], started: f64, slice: (&str, f64, f64)) -> Value {
        let (cat, ts, dur) = slice;
        json!({"traceEvents": [
                   {"ph": "M", "name": "process_name", "pid": rank + 1, "tid": 0,
                    "args": {"name": format!("host of rank {rank}")}},
                   {"ph": "X", "name": cat, "cat": cat, "ts": ts, "dur": dur, "pid": rank + 1,
                    "tid": 4, "args": {"value": "S3/part1"}}],
               "otherData": {"srcflow": {"started_unix_s": started, "rank": rank,
                                         "own_devices": devices,
                                         "threads_per_device": [rank + 1, rank + 1, rank + 1]}}})
    }

    fn timed(trace: &Value, ph: &str) -> Vec<f64> {
        let events = trace["traceEvents"].as_array().unwrap().iter();
        events
            .filter(|e| e["ph"] == ph)
            .map(|e| e["ts"].as_f64().unwrap())
            .collect()
    }

    #[test]
    fn traces_join_on_the_first_ranks_clock_with_an_arrow_per_receive() {
        // Rank 1 started 2 ms before rank 0: its events keep their place, rank 0's move on.
        let joined = join_rank_traces(vec![
            trace(0, [0, 2], 100.002, ("send", 0.0, 1000.0)),
            trace(1, [2, 3], 100.0, ("receive", 1000.0, 3000.0)),
        ])
        .unwrap();
        assert_eq!(timed(&joined, "X").len(), 2);
        let slices = joined["traceEvents"].as_array().unwrap().iter();
        let send = slices.clone().find(|e| e["cat"] == "send").unwrap();
        assert!(
            (send["ts"].as_f64().unwrap() - 2000.0).abs() < 1e-6,
            "{send}"
        );
        let (start, end) = (timed(&joined, "s"), timed(&joined, "f"));
        assert!((start[0] - 2010.0).abs() < 1e-6 && (end[0] - 3970.0).abs() < 1e-6);
        let run = &joined["otherData"]["srcflow"];
        assert_eq!(run["threads_per_device"], json!([1, 1, 2]));
        assert!((run["started_unix_s"].as_f64().unwrap() - 100.0).abs() < 1e-9);
        assert!(run.get("rank").is_none(), "{run}");
        assert_eq!(slices.filter(|e| e["name"] == "process_name").count(), 2);
    }

    #[test]
    fn an_arrow_is_left_out_where_the_clocks_disagree_and_bad_traces_are_named() {
        let skewed = join_rank_traces(vec![
            trace(0, [0, 1], 100.0, ("send", 5000.0, 10.0)),
            trace(1, [1, 2], 100.0, ("receive", 0.0, 100.0)),
        ])
        .unwrap();
        assert!(timed(&skewed, "s").is_empty());
        let mut unstarted = trace(1, [1, 2], 100.0, ("receive", 0.0, 1.0));
        unstarted["otherData"]["srcflow"]
            .as_object_mut()
            .unwrap()
            .remove("started_unix_s");
        let first = trace(0, [0, 1], 100.0, ("send", 0.0, 1.0));
        let err = join_rank_traces(vec![first, unstarted]).unwrap_err();
        assert!(err.contains("rank 1"), "{err}");
        assert!(join_rank_traces(vec![]).is_err());
    }
}
