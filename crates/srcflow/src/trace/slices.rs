//! A trace's events read back: the lane name of every track and the task slices on them, as
//! the summaries of a trace (`srcflow report`) and its timeline see them.

use serde_json::Value;
use srcflow_tensor::backend::{PrimitiveTimes, ShapeTime};
use std::collections::HashMap;

/// One task slice of a trace.
pub(super) struct Slice {
    /// The kind of task (the slice's category: "env", "qr", "read", …).
    pub(super) kernel: String,
    /// The time its backend primitives took, by kind.
    pub(super) primitives: PrimitiveTimes,
    pub(super) lane: String,
    pub(super) pass: String,
    pub(super) start: f64,
    pub(super) end: f64,
    pub(super) bytes: u64,
    /// Real flops it did.
    pub(super) flops: f64,
    pub(super) stall: bool,
}

impl Slice {
    /// Seconds the task ran.
    pub fn seconds(&self) -> f64 {
        self.end - self.start
    }

    /// True for a task on a compute lane (not an idle spell).
    pub fn is_compute_task(&self) -> bool {
        is_compute(&self.lane) && !self.stall
    }
}

/// True for the name of a compute lane ("compute", or "device 1 compute" on several devices).
pub(super) fn is_compute(lane: &str) -> bool {
    lane == "compute" || lane.ends_with(" compute")
}

/// The names of a trace's tracks or processes from its `kind` metadata, by id.
fn names<K: std::hash::Hash + Eq>(
    events: &[Value],
    kind: &str,
    id: impl Fn(&Value) -> std::result::Result<K, String>,
) -> std::result::Result<HashMap<K, String>, String> {
    let mut names = HashMap::new();
    for e in events.iter().filter(|e| e["name"] == kind) {
        let name = e["args"]["name"]
            .as_str()
            .ok_or_else(|| format!("a {kind} without a name"))?;
        names.insert(id(e)?, name.to_string());
    }
    Ok(names)
}

/// The lane name of every track of a trace, from its thread-name metadata; on several
/// devices, a device's lanes are named after it ("device 1 compute"), and on several ranks a
/// host's lanes after its rank ("host of rank 1 network").
pub(super) fn lane_names(
    events: &[Value],
) -> std::result::Result<HashMap<(u64, u64), String>, String> {
    let tracks = names(events, "thread_name", ids)?;
    let processes = names(events, "process_name", |e| Ok(ids(e)?.0))?;
    let devices = processes
        .values()
        .filter(|p| p.starts_with("device "))
        .count();
    Ok(tracks
        .into_iter()
        .map(|((pid, tid), lane)| {
            let name = match processes.get(&pid) {
                Some(device) if devices > 1 && device.starts_with("device ") => {
                    format!("{device} {lane}")
                }
                Some(host) if host.starts_with("host of rank ") => format!("{host} {lane}"),
                _ => lane,
            };
            ((pid, tid), name)
        })
        .collect())
}

/// The complete events of a trace with their lane names (see [`lane_names`]); the compute
/// waits count as their device's compute lane.
pub(super) fn slices(events: &[Value]) -> std::result::Result<Vec<Slice>, String> {
    let tracks = lane_names(events)?;
    let compute = |pid: u64| {
        tracks
            .iter()
            .find(|((p, _), name)| *p == pid && is_compute(name))
            .map_or_else(|| "compute".to_string(), |(_, name)| name.clone())
    };
    let mut slices = Vec::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let track = ids(e)?;
        let lane = tracks
            .get(&track)
            .ok_or_else(|| format!("a slice on the unnamed track {track:?}"))?;
        let number = |v: &Value, what: &str| {
            v.as_f64()
                .ok_or_else(|| format!("a slice without a numeric {what}: {e}"))
        };
        let start = number(&e["ts"], "ts")? / 1e6;
        let stall = e["cat"] == "stall";
        let seconds = |name: &str| e["args"][name].as_f64().unwrap_or(0.0);
        slices.push(Slice {
            kernel: e["cat"].as_str().unwrap_or_default().to_string(),
            primitives: PrimitiveTimes {
                gemm_s: seconds("gemm_s"),
                factorization_s: seconds("factorization_s"),
                copy_s: seconds("copy_s"),
                by_shape: shapes(e)?,
                blocks_mapped: e["args"]["blocks_mapped"].as_u64().unwrap_or(0) as usize,
            },
            lane: if stall {
                compute(track.0)
            } else {
                lane.clone()
            },
            pass: e["args"]["pass"]
                .as_str()
                .ok_or("a slice without a pass")?
                .to_string(),
            start,
            end: start + number(&e["dur"], "dur")? / 1e6,
            bytes: e["args"]["bytes"].as_u64().unwrap_or(0),
            flops: e["args"]["flops"].as_f64().unwrap_or(0.0),
            stall,
        });
    }
    Ok(slices)
}

/// The GEMMs and factorizations a slice's args list by shape (none in a trace without them).
fn shapes(event: &Value) -> std::result::Result<Vec<ShapeTime>, String> {
    match &event["args"]["shapes"] {
        Value::Null => Ok(Vec::new()),
        listed => serde_json::from_value(listed.clone())
            .map_err(|e| format!("a slice's shapes are not as srcflow writes them ({e}): {event}")),
    }
}

/// The (pid, tid) of an event.
fn ids(event: &Value) -> std::result::Result<(u64, u64), String> {
    match (event["pid"].as_u64(), event["tid"].as_u64()) {
        (Some(pid), Some(tid)) => Ok((pid, tid)),
        _ => Err(format!("an event without integer pid and tid: {event}")),
    }
}
