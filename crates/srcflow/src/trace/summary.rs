//! `TraceSummary`: a trace read back and summed per pass and lane (`srcflow report`).

use super::kernel_summary::KernelSummary;
use super::shape_summary::ShapeSummary;
use super::slices::{is_compute, slices, Slice};
use serde::Serialize;
use serde_json::Value;
use srcflow_graph::graph::Pass;
use std::collections::BTreeMap;
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
