//! `TraceSummary`: a trace read back and summed per pass and lane (`srcflow report`).

use super::kernel_summary::KernelSummary;
use super::shape_summary::ShapeSummary;
use crate::backend::{PrimitiveTimes, ShapeTime};
use crate::graph::Pass;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// What one lane did in one pass.
#[derive(Clone, Debug, Serialize)]
pub struct LaneSummary {
    /// The pass.
    pub pass: String,
    /// The lane.
    pub lane: String,
    /// Seconds it ran tasks.
    pub busy_s: f64,
    /// Seconds of the pass it ran none.
    pub idle_s: f64,
    /// Seconds it sat idle waiting for data (compute only: the trace's waits).
    pub stalled_s: f64,
    /// Bytes it moved.
    pub bytes: u64,
    /// Bytes per second while busy.
    pub bytes_per_s: f64,
    /// Flops per second while busy, in GFLOP/s.
    pub gflops_per_s: f64,
    /// Share of its busy time during which compute was busy too (I/O lanes).
    pub overlap_with_compute: Option<f64>,
}

/// Per-pass, per-lane sums of a trace.
#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    /// Seconds from the first to the last task of each pass.
    pub pass_s: BTreeMap<String, f64>,
    /// Every lane that ran something, pass by pass.
    pub lanes: Vec<LaneSummary>,
    /// The compute lanes' tasks summed per kernel, both passes together.
    pub kernels: Vec<KernelSummary>,
    /// Their GEMMs and factorizations summed per shape, longest first.
    pub shapes: Vec<ShapeSummary>,
}

/// One task slice of a trace.
pub(super) struct Slice {
    /// The kind of task (the slice's category: "env", "qr", "read", …).
    pub kernel: String,
    /// The time its backend primitives took, by kind.
    pub primitives: PrimitiveTimes,
    lane: String,
    pass: String,
    start: f64,
    end: f64,
    bytes: u64,
    /// Real flops it did.
    pub flops: f64,
    stall: bool,
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

impl TraceSummary {
    /// Sums a trace in the Trace Event Format as `chrome_trace` writes it.
    pub fn of(trace: &Value) -> std::result::Result<TraceSummary, String> {
        let events = trace["traceEvents"]
            .as_array()
            .ok_or("no traceEvents array")?;
        let slices = slices(events)?;
        let mut pass_s = BTreeMap::new();
        for pass in Pass::BOTH.map(|p| p.name()) {
            let mine = slices.iter().filter(|s| s.pass == pass && !s.stall);
            let (start, end) = mine.fold((f64::INFINITY, 0.0_f64), |(a, b), s| {
                (a.min(s.start), b.max(s.end))
            });
            if start.is_finite() {
                pass_s.insert(pass.to_string(), end - start);
            }
        }
        let mut lanes = Vec::new();
        for (pass, span) in &pass_s {
            let compute: Vec<(f64, f64)> = slices
                .iter()
                .filter(|s| &s.pass == pass && is_compute(&s.lane) && !s.stall)
                .map(|s| (s.start, s.end))
                .collect();
            let mut names: Vec<&str> = slices.iter().map(|s| s.lane.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            for lane in names {
                let mine: Vec<&Slice> = slices
                    .iter()
                    .filter(|s| &s.pass == pass && s.lane == lane)
                    .collect();
                let tasks = mine.iter().filter(|s| !s.stall);
                let busy = covered(tasks.map(|s| (s.start, s.end)).collect());
                if busy <= 0.0 {
                    continue;
                }
                lanes.push(lane_summary(pass, lane, *span, busy, &mine, &compute));
            }
        }
        Ok(TraceSummary {
            pass_s,
            lanes,
            kernels: KernelSummary::of(&slices),
            shapes: ShapeSummary::of(&slices),
        })
    }
}

/// Seconds that at least one of `spans` covers (a network lane under MPI holds many receives
/// at once; other lanes hold one task at a time, and this is the sum of their spans).
fn covered(mut spans: Vec<(f64, f64)>) -> f64 {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut total, mut reach) = (0.0, f64::NEG_INFINITY);
    for (start, end) in spans {
        total += (end - start.max(reach)).max(0.0);
        reach = reach.max(end);
    }
    total
}

/// The summary of one lane in one pass.
fn lane_summary(
    pass: &str,
    lane: &str,
    span: f64,
    busy: f64,
    mine: &[&Slice],
    compute: &[(f64, f64)],
) -> LaneSummary {
    let tasks = || mine.iter().filter(|s| !s.stall);
    let bytes: u64 = tasks().map(|s| s.bytes).sum();
    let flops: f64 = tasks().map(|s| s.flops).sum();
    let overlap = (!is_compute(lane)).then(|| {
        let shared: f64 = tasks()
            .map(|s| {
                compute
                    .iter()
                    .map(|&(a, b)| (s.end.min(b) - s.start.max(a)).max(0.0))
                    .sum::<f64>()
            })
            .sum();
        shared / busy
    });
    LaneSummary {
        pass: pass.to_string(),
        lane: lane.to_string(),
        busy_s: busy,
        idle_s: (span - busy).max(0.0),
        stalled_s: mine
            .iter()
            .filter(|s| s.stall)
            .map(|s| s.end - s.start)
            .fold(0.0, |a, b| a + b),
        bytes,
        bytes_per_s: bytes as f64 / busy,
        gflops_per_s: flops / busy / 1e9,
        overlap_with_compute: overlap,
    }
}

/// True for the name of a compute lane ("compute", or "device 1 compute" on several devices).
fn is_compute(lane: &str) -> bool {
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
fn slices(events: &[Value]) -> std::result::Result<Vec<Slice>, String> {
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

/// The (pid, tid) of an event.
/// The GEMMs and factorizations a slice's args list by shape (none in a trace without them).
fn shapes(event: &Value) -> std::result::Result<Vec<ShapeTime>, String> {
    match &event["args"]["shapes"] {
        Value::Null => Ok(Vec::new()),
        listed => serde_json::from_value(listed.clone())
            .map_err(|e| format!("a slice's shapes are not as srcflow writes them ({e}): {event}")),
    }
}

fn ids(event: &Value) -> std::result::Result<(u64, u64), String> {
    match (event["pid"].as_u64(), event["tid"].as_u64()) {
        (Some(pid), Some(tid)) => Ok((pid, tid)),
        _ => Err(format!("an event without integer pid and tid: {event}")),
    }
}

impl fmt::Display for TraceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (pass, span) in &self.pass_s {
            writeln!(f, "{pass}: {span:.3} s")?;
            writeln!(
                f,
                "  {:<20} {:>8} {:>8} {:>8} {:>10} {:>11} {:>8} {:>8}",
                "lane", "busy s", "idle s", "stall s", "MB", "MB/s", "GFLOP/s", "overlap"
            )?;
            for l in self.lanes.iter().filter(|l| &l.pass == pass) {
                let overlap = l
                    .overlap_with_compute
                    .map_or("—".to_string(), |o| format!("{:.0} %", 100.0 * o));
                writeln!(
                    f,
                    "  {:<20} {:>8.3} {:>8.3} {:>8.3} {:>10.1} {:>11.1} {:>8.1} {:>8}",
                    l.lane,
                    l.busy_s,
                    l.idle_s,
                    l.stalled_s,
                    l.bytes as f64 / 1e6,
                    l.bytes_per_s / 1e6,
                    l.gflops_per_s,
                    overlap
                )?;
            }
        }
        KernelSummary::write_table(&self.kernels, f)?;
        ShapeSummary::write_table(&self.shapes, f)
    }
}

#[cfg(test)]
mod tests {
    use super::covered;

    #[test]
    fn overlapping_spans_count_once() {
        assert_eq!(covered(vec![(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]), 4.0);
        assert_eq!(covered(vec![(4.0, 5.0), (0.0, 1.0), (0.5, 0.75)]), 2.0);
        assert_eq!(covered(vec![]), 0.0);
    }
}
