//! `chrome_trace`: a run log as Trace Event JSON.
//!
//! One process per device (lanes compute, download, upload, collective) and one for the host
//! (lanes io, disk-write, disk-read); a track per lane with a complete event per task; counter tracks
//! for the bytes each tier holds and the bytes in flight on the copy and disk lanes; flow
//! arrows from the input that a task waited for to the task; the compute lane's idle spells on
//! a track of their own, named by what compute waited for; the device pool's reserved and
//! allocated bytes; and instant events on the compute track for what the memory governor did
//! (admission refusals, failed allocations, cache releases, half-batch rewrites). A trace draws
//! a whole run (a host per rank in a simulation of several), or one rank's part of a run under
//! MPI ([`rank_trace`]), named by rank, for rank 0 to join with the others'.

use super::lane_waits::{lane_waits, LaneWait};
use super::scope::TraceScope;
use serde_json::{json, Value};
use srcflow_graph::graph::{Lane, SweepGraph};
use srcflow_sched::ranks::RankLayout;
use srcflow_sched::sched::{RunLog, TaskEvent};
use srcflow_tensor::device::PoolUsage;
use srcflow_tensor::error::Result;
use srcflow_tensor::files::durable::write_whole;
use srcflow_tensor::tensor::Work;
use std::collections::HashMap;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// Process id of device 0 (device `d` is `DEVICE + d`, skipping the host's).
const DEVICE: u32 = 1;
/// Process id of the host.
const HOST: u32 = 2;
/// Process id of the host of rank 0 (rank `r`'s is `RANK_HOSTS + r`) in a trace of several
/// ranks.
const RANK_HOSTS: u32 = 100_000;
/// Thread id of the device's track of compute waits.
const WAITS: u32 = 4;

/// The process id of `device`.
fn device_pid(device: usize) -> u32 {
    match device {
        0 => DEVICE,
        d => HOST + d as u32,
    }
}

/// The process id of the host of `rank` (the host of a run of one process is rank 0's).
fn host_pid(rank: usize) -> u32 {
    match rank {
        0 => HOST,
        r => RANK_HOSTS + r as u32,
    }
}

/// The process and thread ids of `lane` of `device` (the host's of `rank`, for the rank's
/// shared lanes).
fn track(lane: Lane, device: usize, rank: usize) -> (u32, u32) {
    let pid = device_pid(device);
    let host = host_pid(rank);
    match lane {
        Lane::Compute => (pid, 1),
        Lane::Download => (pid, 2),
        Lane::Upload => (pid, 3),
        Lane::Collective => (pid, 5),
        Lane::Io => (host, 1),
        Lane::DiskWrite => (host, 2),
        Lane::DiskRead => (host, 3),
        Lane::Network => (host, 4),
    }
}

/// Microseconds from the start of the run.
fn micros(seconds: f64) -> f64 {
    seconds * 1e6
}

/// The trace of `log`, the run of `graph`, as a Trace Event Format object.
/// Nodes split by the memory governor are taken from the graph as the run left it.
pub fn chrome_trace(graph: &SweepGraph, log: &RunLog) -> Value {
    let graph = log.graph_after.as_ref().unwrap_or(graph);
    trace_in(graph, log, TraceScope::whole(graph))
}

/// The trace of one rank's part of a run of several ranks (`log`, of the rank's graph, which
/// the log holds): its devices and its host, named by rank, for rank 0 to join with the
/// others' ([`super::join_rank_traces`]).
pub fn rank_trace(graph: &SweepGraph, log: &RunLog, layout: RankLayout) -> Value {
    let ran = log.graph_after.as_ref().unwrap_or(graph);
    let scope = TraceScope::rank(layout, graph.devices);
    let mut trace = trace_in(ran, log, scope);
    let run = &mut trace["otherData"]["srcflow"];
    run["rank"] = json!(layout.rank);
    run["ranks"] = json!(layout.ranks);
    run["own_devices"] = json!([scope.devices.start, scope.devices.end]);
    let started = log.started.duration_since(UNIX_EPOCH).unwrap_or_default();
    run["started_unix_s"] = json!(started.as_secs_f64());
    trace
}

/// The trace of `log`, the run of `graph`, drawing the lanes of `scope`.
fn trace_in(graph: &SweepGraph, log: &RunLog, scope: TraceScope) -> Value {
    let mut events = names(graph, scope);
    let arrivals = lane_waits(graph, log);
    let gaps: HashMap<_, f64> = arrivals
        .iter()
        .filter_map(|w| Some((w.event.node, w.dispatch_gap()?)))
        .collect();
    let mut timed: Vec<Value> = log
        .events
        .iter()
        .map(|e| slice(graph, e, gaps.get(&e.node), scope))
        .collect();
    timed.extend(waits(log, scope));
    timed.extend(memory_counters(log, scope));
    timed.extend(in_flight_counter(log, scope));
    timed.extend(flows(&arrivals, scope));
    timed.extend(governor_events(log, scope));
    timed.sort_by(|a, b| {
        a["ts"]
            .as_f64()
            .partial_cmp(&b["ts"].as_f64())
            .expect("finite")
    });
    events.extend(timed);
    let mut run = json!({"devices": graph.devices, "threads_per_device": log.threads_per_device,
                         "dtype": graph.dtype.name(), "simulated": log.simulated,
                         "ranks": scope.ranks});
    if let Some(resumed) = &log.resumed {
        run["resumed"] = json!(resumed);
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ms", "otherData": { "srcflow": run } })
}

/// Writes the trace to `path` (through a temporary file, so a failure leaves nothing).
pub fn write_chrome_trace(path: &Path, graph: &SweepGraph, log: &RunLog) -> Result<()> {
    let text = serde_json::to_string(&chrome_trace(graph, log)).expect("trace serialises");
    write_whole(path, text.as_bytes())
}

/// Metadata naming the processes and lanes that `scope` draws of a run of `graph`.
fn names(graph: &SweepGraph, scope: TraceScope) -> Vec<Value> {
    let mut names = vec![];
    for id in scope.lanes(graph) {
        let (pid, tid) = track(id.lane, id.device, id.rank);
        let of_rank = match scope.ranks {
            1 => String::new(),
            _ => format!(" of rank {}", id.rank),
        };
        let process = match id.lane {
            Lane::Compute => Some(format!("device {}{of_rank}", id.device)),
            Lane::Io => Some(format!("host{of_rank}")),
            _ => None,
        };
        if let Some(name) = process {
            names.push(
                json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                              "args": {"name": name}}),
            );
        }
        names.push(
            json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                          "args": {"name": id.lane.name()}}),
        );
    }
    names.push(
        json!({"ph": "M", "name": "thread_name", "pid": device_pid(scope.devices.start),
               "tid": WAITS, "args": {"name": "compute waits"}}),
    );
    names
}

/// The complete event of one task, with its site, pass, columns, bytes, flops and rate, its
/// work and dispatch gap (compute tasks), the seconds its backend primitives took by kind and
/// by shape where the backend counted them, and the blocks it took from fresh memory.
fn slice(
    graph: &SweepGraph,
    event: &TaskEvent,
    dispatch_gap: Option<&f64>,
    scope: TraceScope,
) -> Value {
    let (pid, tid) = track(event.lane, event.device, scope.rank_of(event.rank));
    let seconds = event.end - event.start;
    let pass = graph.pass_of(event.op, event.step).name();
    let mut args = json!({"site": event.site, "step": event.step, "pass": pass});
    if let Some(cols) = event.cols {
        args["cols"] = json!(format!("{cols}"));
    }
    if let Some(within) = event.within {
        args["half-batch of"] = json!(format!("{within}"));
    }
    if event.bytes > 0 {
        args["bytes"] = json!(event.bytes);
    }
    if event.flops > 0.0 {
        args["flops"] = json!(event.flops);
        args["gflops_per_s"] = json!(event.flops / seconds.max(1e-12) / 1e9);
    }
    if event.work != Work::default() {
        args["work"] = json!(event.work);
        args["device"] = json!(event.device);
    }
    if let Some(gap) = dispatch_gap {
        args["dispatch_s"] = json!(gap);
    }
    if !event.primitives.is_zero() {
        args["gemm_s"] = json!(event.primitives.gemm_s);
        args["factorization_s"] = json!(event.primitives.factorization_s);
        args["copy_s"] = json!(event.primitives.copy_s);
        if !event.primitives.by_shape.is_empty() {
            args["shapes"] = json!(event.primitives.by_shape);
        }
        if event.primitives.blocks_mapped > 0 {
            args["blocks_mapped"] = json!(event.primitives.blocks_mapped);
        }
    }
    let op = event.op.profile();
    if let Some(tier) = op.spills_to.or(op.fetches_from) {
        args["tier"] = json!(tier.to_string());
    }
    if let Some(task) = graph.task(event.node).filter(|_| op.crosses_ranks) {
        let value = task.inputs.first().or(task.outputs.first());
        args["value"] = json!(value.map(|id| id.to_string()));
    }
    json!({"ph": "X", "name": format!("{} {}", event.op.name(), event.site), "cat": event.op.name(),
           "ts": micros(event.start), "dur": micros(seconds), "pid": pid, "tid": tid,
           "args": args})
}

/// The compute lane's idle spells, named by what it waited for.
fn waits(log: &RunLog, scope: TraceScope) -> Vec<Value> {
    let pid = device_pid(scope.devices.start);
    log.stall_spells
        .iter()
        .map(|&(start, end, pass, cause)| {
            json!({"ph": "X", "name": format!("wait: {}", cause.name()), "cat": "stall",
                   "ts": micros(start), "dur": micros(end - start), "pid": pid, "tid": WAITS,
                   "args": {"pass": pass.name(), "cause": cause.name()}})
        })
        .collect()
}

/// Counter events of the bytes each tier holds, after every completion.
fn memory_counters(log: &RunLog, scope: TraceScope) -> Vec<Value> {
    let (device, host) = (device_pid(scope.devices.start), host_pid(scope.rank_of(0)));
    log.memory
        .iter()
        .flat_map(|s| {
            let ts = micros(s.at);
            [
                json!({"ph": "C", "name": "memory", "ts": ts, "pid": device, "tid": 0,
                       "args": {"device bytes": s.held.device}}),
                json!({"ph": "C", "name": "memory", "ts": ts, "pid": host, "tid": 0,
                       "args": {"host bytes": s.held.host, "disk bytes": s.held.disk}}),
            ]
            .into_iter()
            .chain(pool_counters(&s.pools, ts, scope))
        })
        .collect()
}

/// Counter events of the reserved and allocated bytes of the pools of the devices `scope`
/// draws, at `ts`.
fn pool_counters(pools: &[PoolUsage], ts: f64, scope: TraceScope) -> Vec<Value> {
    let drawn = pools.iter().enumerate().filter(|(d, _)| scope.draws(*d));
    drawn
        .map(|(device, pool)| {
            json!({"ph": "C", "name": "device pool", "ts": ts, "pid": device_pid(device),
                   "tid": 0, "args": {"reserved bytes": pool.reserved,
                                      "allocated bytes": pool.allocated}})
        })
        .collect()
}

/// What the memory governor did, as instant events on the device's compute track.
fn governor_events(log: &RunLog, scope: TraceScope) -> Vec<Value> {
    let (pid, tid) = track(Lane::Compute, scope.devices.start, 0);
    log.governor
        .events
        .iter()
        .map(|e| {
            json!({"ph": "i", "s": "t", "name": e.kind.name(), "cat": "memory",
                   "ts": micros(e.at), "pid": pid, "tid": tid,
                   "args": {"task": e.task, "bytes": e.bytes, "seconds": e.seconds,
                            "injected": e.injected}})
        })
        .collect()
}

/// A counter of the bytes being moved by I/O, copy and disk tasks.
fn in_flight_counter(log: &RunLog, scope: TraceScope) -> Vec<Value> {
    let host = host_pid(scope.rank_of(0));
    let mut changes: Vec<(f64, i128)> = log
        .events
        .iter()
        .filter(|e| e.bytes > 0)
        .flat_map(|e| [(e.start, e.bytes as i128), (e.end, -(e.bytes as i128))])
        .collect();
    changes.sort_by(|a, b| a.0.partial_cmp(&b.0).expect("finite"));
    let mut moving = 0i128;
    changes
        .into_iter()
        .map(|(at, delta)| {
            moving += delta;
            json!({"ph": "C", "name": "bytes in flight", "ts": micros(at), "pid": host, "tid": 0,
                   "args": {"bytes": moving}})
        })
        .collect()
}

/// Flow arrows from the input that arrived last to each task that had to wait for it (its
/// lane was free before the input arrived).
fn flows(waits: &[LaneWait], scope: TraceScope) -> Vec<Value> {
    let mut arrows = Vec::new();
    for wait in waits.iter().filter(|w| w.waited()) {
        let (event, producer) = (
            wait.event,
            wait.last_input.expect("a task that waited has an input"),
        );
        let id = scope.first_flow() + arrows.len() as u64 / 2;
        let (from_pid, from_tid) =
            track(producer.lane, producer.device, scope.rank_of(producer.rank));
        let (to_pid, to_tid) = track(event.lane, event.device, scope.rank_of(event.rank));
        let from_ts = producer.end - 0.01 * (producer.end - producer.start);
        arrows.push(
            json!({"ph": "s", "name": "waited for", "cat": "dependency", "id": id,
                           "ts": micros(from_ts), "pid": from_pid, "tid": from_tid}),
        );
        arrows.push(
            json!({"ph": "f", "bp": "e", "name": "waited for", "cat": "dependency",
                           "id": id, "ts": micros(event.start), "pid": to_pid, "tid": to_tid}),
        );
    }
    arrows
}
