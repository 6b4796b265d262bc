//! `join_rank_traces`: one trace of a run of several ranks, from each rank's own
//! ([`super::rank_trace`]): their events on one clock, from the wall-clock time the first
//! rank's run started (each rank's by its own wall clock, corrected by its messages with rank
//! 0 where the nodes' clocks disagree), each device's thread count from the rank that owns it,
//! and an arrow from each value's send to each of its receives.

use serde_json::{json, Value};
use std::collections::HashMap;

/// The first id of the arrows between ranks (above every rank's own).
const SENT_FLOWS: u64 = 1 << 48;

/// Timestamps (µs) closer than this are one moment: a clock correction that puts a message's
/// arrival at the moment it was sent lands there only to within rounding.
const SAME_MOMENT_US: f64 = 1e-3;

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
    let (mut names, mut by_rank) = (vec![], vec![]);
    for ((rank, trace), start) in traces.into_iter().enumerate().zip(starts) {
        let (untimed, timed): (Vec<Value>, Vec<Value>) = events_of(rank, trace)?
            .into_iter()
            .partition(|event| event["ts"].as_f64().is_none());
        names.extend(untimed);
        by_rank.push(shifted(timed, (start - origin) * 1e6));
    }
    let corrections = clock_corrections(&by_rank);
    let by_rank: Vec<Vec<Value>> = by_rank
        .into_iter()
        .zip(corrections)
        .map(|(events, correction)| shifted(events, correction))
        .collect();
    let arrows = sent_arrows(&by_rank);
    let mut timed: Vec<Value> = by_rank.into_iter().flatten().collect();
    timed.extend(arrows);
    timed.sort_by(|a, b| ts(a).total_cmp(&ts(b)));
    names.extend(timed);
    Ok(json!({ "traceEvents": names, "displayTimeUnit": "ms", "otherData": { "srcflow": run } }))
}

/// `events` moved `shift` µs later.
fn shifted(mut events: Vec<Value>, shift: f64) -> Vec<Value> {
    for event in &mut events {
        event["ts"] = json!(ts(event) + shift);
    }
    events
}

/// How many µs to move each rank's events (`by_rank`, on the wall clocks' common time) so that
/// every message between it and rank 0 arrives after it was sent: a receive slice ends after
/// the send slice of its value handed it over ([`sent_at`]). The nodes' wall clocks may
/// disagree by milliseconds (more than a message takes); the messages bound each rank's offset
/// from rank 0 on both sides, and a rank moves the least that meets those bounds (not at all
/// where its clock already agrees). Where they contradict each other (clocks that drift apart
/// during a long run), it moves to their middle, which breaks the worst of them least.
/// Messages between two ranks other than 0 do not count.
fn clock_corrections(by_rank: &[Vec<Value>]) -> Vec<f64> {
    let mut bounds = vec![(f64::NEG_INFINITY, f64::INFINITY); by_rank.len()];
    for message in messages(by_rank) {
        let (sent, arrived) = (sent_at(message.send), into_slice(message.receive, 1.0));
        match (message.from, message.to) {
            (0, to) => bounds[to].0 = bounds[to].0.max(sent - arrived),
            (from, 0) => bounds[from].1 = bounds[from].1.min(arrived - sent),
            _ => {}
        }
    }
    bounds
        .into_iter()
        .map(|(lo, hi)| least_move(lo, hi))
        .collect()
}

/// A value's way from one rank to another, as their traces show it.
struct Message<'a> {
    /// The rank that sent it.
    from: usize,
    /// Its send slice.
    send: &'a Value,
    /// The rank that received it.
    to: usize,
    /// Its receive slice.
    receive: &'a Value,
}

/// Every message between two ranks in `by_rank` (each rank's events): each receive slice with
/// each send slice of another rank of the same value. A receive of the replicas of an S
/// gathered in place (`S5@device1`, see `ranks::Exchange::in_place`) brings every rank's row
/// blocks of it (`S5/part0`, `S5/part2`, …).
fn messages(by_rank: &[Vec<Value>]) -> Vec<Message<'_>> {
    let mut sends: HashMap<&str, Vec<(usize, &Value)>> = HashMap::new();
    for (rank, events) in by_rank.iter().enumerate() {
        for (value, send) in slices_of(events, "send") {
            sends.entry(value).or_default().push((rank, send));
            if let Some((whole, _)) = value.split_once("/part") {
                sends.entry(whole).or_default().push((rank, send));
            }
        }
    }
    let mut messages = vec![];
    for (to, events) in by_rank.iter().enumerate() {
        for (value, receive) in slices_of(events, "receive") {
            let key = value
                .split_once("@device")
                .map_or(value, |(whole, _)| whole);
            for &(from, send) in sends.get(key).into_iter().flatten() {
                if from != to {
                    messages.push(Message {
                        from,
                        send,
                        to,
                        receive,
                    });
                }
            }
        }
    }
    messages
}

/// The correction within `lo..=hi` nearest 0, or their middle where `lo > hi`.
fn least_move(lo: f64, hi: f64) -> f64 {
    if lo <= hi {
        0f64.max(lo).min(hi)
    } else {
        (lo + hi) / 2.0
    }
}

/// The slices of category `cat` among `events` that carry a value, with its name.
fn slices_of<'a>(
    events: &'a [Value],
    cat: &'static str,
) -> impl Iterator<Item = (&'a str, &'a Value)> + Clone {
    events
        .iter()
        .filter(move |e| e["ph"] == "X" && e["cat"] == cat)
        .filter_map(|e| Some((e["args"]["value"].as_str()?, e)))
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

/// When a send slice hands its value over, as far as its rank's clock can tell: near its start.
/// It downloads the value and posts it to the network lane just before it ends, so the value
/// may arrive before the slice's end is taken; the start is a bound that always holds, looser
/// by the length of the download.
fn sent_at(send: &Value) -> f64 {
    into_slice(send, 0.01)
}

/// An arrow from each send slice ([`sent_at`]) to just before the end of each receive slice
/// that brought its value (when it arrived), for every message ([`messages`]) of `by_rank`.
/// An arrow is left out where the ranks' clocks still disagree by more than the message took
/// (the receive ends before the value was sent).
fn sent_arrows(by_rank: &[Vec<Value>]) -> Vec<Value> {
    let mut arrows = vec![];
    for Message { send, receive, .. } in messages(by_rank) {
        let sent = sent_at(send);
        if into_slice(receive, 1.0) + SAME_MOMENT_US < sent {
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
    /// category `cat` carrying the value `S3/part1` from `ts` for `dur` µs.
    fn trace(rank: usize, devices: [usize; 2], started: f64, slice: (&str, f64, f64)) -> Value {
        let (cat, ts, dur) = slice;
        trace_of(rank, devices, started, &[(cat, "S3/part1", ts, dur)])
    }

    /// The trace of `rank` owning `devices`, started at `started` (s), with a slice of each
    /// category `cat` carrying `value` from `ts` for `dur` µs in `slices`.
    fn trace_of(
        rank: usize,
        devices: [usize; 2],
        started: f64,
        slices: &[(&str, &str, f64, f64)],
    ) -> Value {
        let mut events = vec![json!({"ph": "M", "name": "process_name", "pid": rank + 1,
                                     "tid": 0, "args": {"name": format!("host of rank {rank}")}})];
        events.extend(slices.iter().map(|&(cat, value, ts, dur)| {
            json!({"ph": "X", "name": cat, "cat": cat, "ts": ts, "dur": dur, "pid": rank + 1,
                   "tid": 4, "args": {"value": value}})
        }));
        json!({"traceEvents": events,
               "otherData": {"srcflow": {"started_unix_s": started, "rank": rank,
                                         "own_devices": devices,
                                         "threads_per_device": [rank + 1, rank + 1, rank + 1]}}})
    }

    /// The start of the slice of category `cat` carrying `value` in `trace`.
    fn slice_ts(trace: &Value, cat: &str, value: &str) -> f64 {
        let events = trace["traceEvents"].as_array().unwrap().iter();
        let mut found = events.filter(|e| e["cat"] == cat && e["args"]["value"] == value);
        found.next().unwrap()["ts"].as_f64().unwrap()
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
    fn a_rank_whose_clock_runs_ahead_is_moved_back_by_its_messages_with_rank_0() {
        // Rank 1's wall clock is 50 ms ahead. Truly, rank 0 hands A over at 0.1 µs, which
        // arrives on rank 1 by 1000; rank 1 hands B over at 2000.1, which arrives on rank 0 by
        // 2500. Rank 1 must move back by 49 500.1 to 50 999.9 µs; it moves the least, 49 500.1.
        let joined = join_rank_traces(vec![
            trace_of(
                0,
                [0, 1],
                100.0,
                &[("send", "A", 0.0, 10.0), ("receive", "B", 2200.0, 300.0)],
            ),
            trace_of(
                1,
                [1, 2],
                100.05,
                &[("receive", "A", 500.0, 500.0), ("send", "B", 2000.0, 10.0)],
            ),
        ])
        .unwrap();
        assert!((slice_ts(&joined, "send", "B") - 2499.9).abs() < 1e-6);
        assert!((slice_ts(&joined, "receive", "A") - 999.9).abs() < 1e-6);
        assert!(
            (slice_ts(&joined, "send", "A") - 0.0).abs() < 1e-6,
            "rank 0 stays"
        );
        assert_eq!(timed(&joined, "s").len(), 2, "both arrows drawn");
    }

    #[test]
    fn a_rank_behind_moves_on_with_all_its_events_and_one_without_rank_0s_messages_stays() {
        // Rank 1's wall clock is 10 ms behind, so it seems to start first: on the joined clock
        // rank 0 hands A over at 10 000.1 µs, and A seems to arrive by 1000. Rank 1 moves on
        // by 9000.1, its counter with it; rank 2, which talks to rank 1 only, stays.
        let mut behind = trace_of(
            1,
            [1, 2],
            99.99,
            &[("receive", "A", 0.0, 1000.0), ("send", "C", 3000.0, 10.0)],
        );
        let counter = json!({"ph": "C", "name": "bytes", "ts": 500.0, "pid": 2, "args": {}});
        behind["traceEvents"].as_array_mut().unwrap().push(counter);
        let joined = join_rank_traces(vec![
            trace_of(0, [0, 1], 100.0, &[("send", "A", 0.0, 10.0)]),
            behind,
            trace_of(2, [2, 3], 100.0, &[("receive", "C", 0.0, 5.0)]),
        ])
        .unwrap();
        assert!((slice_ts(&joined, "receive", "A") - 9000.1).abs() < 1e-6);
        assert!((timed(&joined, "C")[0] - 9500.1).abs() < 1e-6);
        assert!((slice_ts(&joined, "receive", "C") - 10000.0).abs() < 1e-6);
    }

    #[test]
    fn an_s_gathered_in_place_is_received_from_every_other_ranks_row_blocks() {
        let joined = join_rank_traces(vec![
            trace_of(
                0,
                [0, 1],
                100.0,
                &[
                    ("send", "S5/part0", 0.0, 10.0),
                    ("receive", "S5@device0", 5.0, 50.0),
                ],
            ),
            trace_of(
                1,
                [1, 2],
                100.0,
                &[
                    ("send", "S5/part1", 0.0, 10.0),
                    ("receive", "S5@device1", 5.0, 60.0),
                ],
            ),
        ])
        .unwrap();
        let ends: Vec<f64> = timed(&joined, "f");
        assert_eq!(
            timed(&joined, "s").len(),
            2,
            "one arrow per other rank's block"
        );
        assert!(ends.contains(&(5.0 + 0.99 * 50.0)) && ends.contains(&(5.0 + 0.99 * 60.0)));
    }

    #[test]
    fn an_arrow_is_left_out_where_the_clocks_disagree_and_bad_traces_are_named() {
        // The messages contradict each other (A needs rank 1 moved on by at least 4900.1 µs, B
        // back by at least 100.1): rank 1 moves to the middle, 2400, and both arrows are left
        // out.
        let skewed = join_rank_traces(vec![
            trace_of(
                0,
                [0, 1],
                100.0,
                &[("send", "A", 5000.0, 10.0), ("receive", "B", 0.0, 100.0)],
            ),
            trace_of(
                1,
                [1, 2],
                100.0,
                &[("receive", "A", 0.0, 100.0), ("send", "B", 200.0, 10.0)],
            ),
        ])
        .unwrap();
        assert!((slice_ts(&skewed, "receive", "A") - 2400.0).abs() < 1e-6);
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
