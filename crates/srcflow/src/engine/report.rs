//! `Report`: what a run did — sizes, pass times, work and rate.

use super::{DeviceUse, MemoryReport};
use serde::Serialize;
use srcflow_graph::graph::{capped_chi_out, Lane, Pass, SweepGraph};
use srcflow_sched::ranks::ExchangeUse;
use srcflow_sched::sched::{RunLog, Stalls, TaskEvent};
use srcflow_sched::sim::KernelCoverage;
use srcflow_sched::store::TierBytes;
use srcflow_tensor::backend::Backend;
use srcflow_tensor::{ByteSize, Tier};
use std::collections::BTreeMap;
use std::fmt;

/// Summary of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Number of sites.
    pub sites: usize,
    /// Number of layers in the stack.
    pub layers: usize,
    /// Output bond cap: the one asked for, or the largest rank the product can have.
    pub chi_out: usize,
    /// The χ̄ asked for, when it was above the largest rank the product can have.
    pub chi_out_asked: Option<usize>,
    /// Sketch columns: ⌈oversample · χ̄⌉, at most the largest rank the product can have.
    pub sketch: usize,
    /// Output bonds, one per cut: as written (real runs) or their caps (simulations).
    pub out_bonds: Vec<usize>,
    /// Backend name.
    pub backend: String,
    /// Kernel threads.
    pub threads: usize,
    /// Seconds of the left-to-right pass (first env start to last env end).
    pub left_to_right_s: f64,
    /// Seconds of the right-to-left pass (first sketch start to the first core's end).
    pub right_to_left_s: f64,
    /// Seconds from start to finish of the whole run.
    pub wall_s: f64,
    /// Tasks run (the graph's, with the memory governor's rewrites).
    pub tasks: usize,
    /// Wall time outside backend primitives (GEMM, QR/SVD, copies) per task: the engine's own
    /// cost per task where tasks run one after another (a sweep of small tasks), a bound above
    /// it where lanes overlap.
    pub overhead_per_task_s: f64,
    /// Seconds the compute lane was busy.
    pub compute_busy_s: f64,
    /// Seconds the I/O lane was busy.
    pub io_busy_s: f64,
    /// Real flops of all tasks.
    pub flops: f64,
    /// Flops per second over the two passes.
    pub gflops_per_s: f64,
    /// Seconds spent in each kind of task (env, sketch, qr, …), summed over the run.
    pub busy_by_op: BTreeMap<String, f64>,
    /// Where the environments lived between the passes: how many on each tier.
    pub environments: BTreeMap<String, usize>,
    /// Idle compute of the left-to-right pass, by what it waited for.
    pub stalls_left_to_right: Stalls,
    /// Idle compute of the right-to-left pass, by what it waited for.
    pub stalls_right_to_left: Stalls,
    /// Busy time and bytes moved per lane and pass (lanes that did nothing are left out).
    pub lanes: Vec<LaneUse>,
    /// What each device did: compute, QR and collective time, idle time.
    pub devices: Vec<DeviceUse>,
    /// The most bytes each tier held, as counted by the store.
    pub peak_bytes: TierBytes,
    /// Bytes the run's spills wrote to the disk tier, all told (what the progress bar counts
    /// up to; an environment spilled in batches counts each batch once).
    pub written_to_disk_bytes: u64,
    /// The process's peak resident memory so far (`VmHWM`), where the system reports it.
    pub peak_rss_bytes: Option<u64>,
    /// Large blocks the block cache served from fresh memory during the run, not reused (0
    /// unless it is the global allocator).
    pub blocks_mapped: usize,
    /// Free ranges it gave back to the system to keep the process within the planned peak.
    pub blocks_released: usize,
    /// What the memory governor did: refusals, failed allocations, releases, rewrites.
    pub memory: MemoryReport,
    /// For a simulated run, how well the machine model knows each kernel's tasks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub model_coverage: Vec<KernelCoverage>,
    /// For a rank of several, what each kind of exchange with the other ranks did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<ExchangeUse>,
    /// What the run wrote into its checkpoint and what resuming from it skipped (runs with a
    /// checkpoint only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<super::CheckpointUse>,
}

/// What one lane did in one pass.
#[derive(Clone, Debug, Serialize)]
pub struct LaneUse {
    /// The lane.
    pub lane: &'static str,
    /// The pass.
    pub pass: &'static str,
    /// Seconds it was busy.
    pub busy_s: f64,
    /// Bytes it moved.
    pub bytes: u64,
    /// Bytes per second while busy.
    pub bytes_per_s: f64,
}

impl Report {
    /// Summarises `log`, the run of `graph` that took `wall_s` seconds.
    pub fn new(graph: &SweepGraph, log: &RunLog, wall_s: f64, backend: &dyn Backend) -> Self {
        let l2r = log.span(|e| e.op.profile().kernel_pass == Some(Pass::LeftToRight));
        let r2l = log.span(|e| e.op.profile().kernel_pass == Some(Pass::RightToLeft));
        let flops = graph.total_flops();
        Report {
            sites: graph.sites(),
            layers: graph.stack.layers.len(),
            chi_out: graph.chi_out,
            chi_out_asked: graph.chi_out_asked,
            sketch: graph.sketch,
            out_bonds: graph.bond_caps(),
            backend: backend.name().into(),
            threads: backend.threads(),
            left_to_right_s: l2r,
            right_to_left_s: r2l,
            wall_s,
            tasks: log.events.len(),
            overhead_per_task_s: overhead_per_task(log, wall_s),
            compute_busy_s: log.busy(|e| e.lane == Lane::Compute),
            io_busy_s: log.busy(|e| e.lane == Lane::Io),
            flops,
            gflops_per_s: flops / (l2r + r2l).max(1e-12) / 1e9,
            busy_by_op: log.events.iter().fold(BTreeMap::new(), |mut acc, e| {
                *acc.entry(e.op.name().to_string()).or_default() += e.end - e.start;
                acc
            }),
            environments: environment_tiers(graph),
            stalls_left_to_right: log.stalls[0],
            stalls_right_to_left: log.stalls[1],
            lanes: lane_uses(graph, log),
            devices: DeviceUse::of(log, graph.devices, wall_s),
            peak_bytes: log.peak,
            written_to_disk_bytes: log
                .events
                .iter()
                .filter(|e| e.op.profile().spills_to == Some(Tier::Disk))
                .map(|e| e.bytes)
                .sum(),
            peak_rss_bytes: peak_rss(),
            blocks_mapped: 0,
            blocks_released: 0,
            memory: MemoryReport::of(log),
            model_coverage: vec![],
            network: vec![],
            checkpoint: None,
        }
    }
}

/// Seconds of `wall_s` outside the backend primitives of `log`'s tasks, per task.
fn overhead_per_task(log: &RunLog, wall_s: f64) -> f64 {
    let primitives: f64 = log
        .events
        .iter()
        .map(|e| e.primitives.gemm_s + e.primitives.factorization_s + e.primitives.copy_s)
        .sum();
    (wall_s - primitives).max(0.0) / log.events.len().max(1) as f64
}

/// How many environments each tier held, from the spill tasks of `graph`.
fn environment_tiers(graph: &SweepGraph) -> BTreeMap<String, usize> {
    let mut tiers = vec![Tier::Device; graph.environments()];
    for task in graph.tasks() {
        if let Some(to) = task.op.profile().spills_to {
            tiers[task.site] = tiers[task.site].max(to);
        }
    }
    let mut counts = BTreeMap::new();
    for tier in tiers {
        *counts.entry(tier.to_string()).or_default() += 1;
    }
    counts
}

/// Busy time and bytes of every lane in every pass.
fn lane_uses(graph: &SweepGraph, log: &RunLog) -> Vec<LaneUse> {
    let mut uses = Vec::new();
    for lane in Lane::ALL {
        for pass in Pass::BOTH {
            let mine = |e: &&TaskEvent| e.lane == lane && graph.pass_of(e.op, e.step) == pass;
            let busy_s: f64 = log
                .events
                .iter()
                .filter(mine)
                .map(|e| e.end - e.start)
                .sum();
            let bytes: u64 = log.events.iter().filter(mine).map(|e| e.bytes).sum();
            if busy_s > 0.0 {
                uses.push(LaneUse {
                    lane: lane.name(),
                    pass: pass.name(),
                    busy_s,
                    bytes,
                    bytes_per_s: bytes as f64 / busy_s,
                });
            }
        }
    }
    uses
}

/// `VmHWM` of this process from `/proc/self/status`, in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kb: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kb * 1024)
}

/// What a user reads after a run: sizes, bonds, where it ran, time, work and peak memory (and
/// any memory-governor events). [`Report::internals`] has the engine's side.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max_bond = self.out_bonds.iter().max().copied().unwrap_or(1);
        writeln!(
            f,
            "sites {}, layers {}, chi_out {}, sketch {}, max output bond {}",
            self.sites, self.layers, self.chi_out, self.sketch, max_bond
        )?;
        if let Some(line) = capped_chi_out(self.chi_out, self.chi_out_asked) {
            writeln!(f, "{line}")?;
        }
        let bonds: Vec<String> = self.out_bonds.iter().map(|b| b.to_string()).collect();
        writeln!(f, "bonds          {}", bonds.join(" "))?;
        writeln!(
            f,
            "backend {} with {} thread(s) on {} device(s)",
            self.backend,
            self.threads,
            self.devices.len()
        )?;
        writeln!(f, "wall           {:8.3} s", self.wall_s)?;
        writeln!(
            f,
            "work           {:8.2} GFLOP at {:.1} GFLOP/s",
            self.flops / 1e9,
            self.gflops_per_s
        )?;
        let peak = &self.peak_bytes;
        write!(
            f,
            "peak memory    device {}, host {}, disk {}",
            ByteSize(peak.device),
            ByteSize(peak.host),
            ByteSize(peak.disk)
        )?;
        if self.written_to_disk_bytes > 0 {
            write!(
                f,
                " ({} written to disk)",
                ByteSize(self.written_to_disk_bytes)
            )?;
        }
        if let Some(rss) = self.peak_rss_bytes {
            write!(f, "; process {}", ByteSize(rss))?;
        }
        if !self.memory.is_quiet() {
            write!(f, "\ndevice memory  {}", self.memory)?;
        }
        for (i, used) in self.network.iter().enumerate() {
            let label = if i == 0 { "network" } else { "" };
            write!(
                f,
                "\n{label:<14} {}: {} exchanges, {}, {:.3} s ({:.1} % of wall)",
                used.what,
                used.count,
                ByteSize(used.bytes),
                used.seconds,
                100.0 * used.seconds / self.wall_s.max(f64::MIN_POSITIVE)
            )?;
        }
        if let Some(checkpoint) = &self.checkpoint {
            write!(f, "\n{checkpoint}")?;
        }
        for (i, line) in coverage_lines(&self.model_coverage).iter().enumerate() {
            let label = if i == 0 { "model" } else { "" };
            write!(f, "\n{label:<14} {line}")?;
        }
        Ok(())
    }
}

/// How well the machine model knows the simulated tasks, in words: one line for a reason
/// that holds for every task, else the kernels within the fitted shapes, then one line per
/// kernel with tasks outside them.
fn coverage_lines(kernels: &[KernelCoverage]) -> Vec<String> {
    let notes: std::collections::BTreeSet<_> = kernels.iter().map(|k| &k.note).collect();
    let all_out = kernels.iter().all(|k| k.extrapolated == k.tasks);
    if let (true, [Some(why)]) = (all_out, &notes.into_iter().collect::<Vec<_>>()[..]) {
        let tasks: usize = kernels.iter().map(|k| k.tasks).sum();
        return vec![format!("all {tasks} compute tasks extrapolated: {why}")];
    }
    let seen: Vec<&str> = kernels
        .iter()
        .filter(|k| k.extrapolated == 0)
        .map(|k| k.kernel.as_str())
        .collect();
    let mut lines = vec![];
    if !seen.is_empty() {
        lines.push(format!("within the fitted shapes: {}", seen.join(", ")));
    }
    for k in kernels.iter().filter(|k| k.extrapolated > 0) {
        let why = k.note.as_deref().unwrap_or("outside the fitted shapes");
        lines.push(format!(
            "{}: {} of {} task(s) extrapolated ({why})",
            k.kernel, k.extrapolated, k.tasks
        ));
    }
    lines
}

impl Report {
    /// The engine's side of the run, for `--verbose`: pass times, busy time per kernel, where
    /// the environments lived, stalls, lanes, devices and the block cache.
    pub fn internals(&self) -> Internals<'_> {
        Internals(self)
    }
}

/// The engine's side of a [`Report`], as text ([`Report::internals`]).
pub struct Internals<'a>(&'a Report);

impl fmt::Display for Internals<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.0;
        writeln!(
            f,
            "tasks          {}, {:.1} µs each outside backend primitives",
            report.tasks,
            report.overhead_per_task_s * 1e6
        )?;
        writeln!(f, "left-to-right  {:8.3} s", report.left_to_right_s)?;
        writeln!(f, "right-to-left  {:8.3} s", report.right_to_left_s)?;
        writeln!(
            f,
            "busy           compute {:.3} s, i/o {:.3} s",
            report.compute_busy_s, report.io_busy_s
        )?;
        let ops = listed(&report.busy_by_op, |s| format!("{s:.3}"));
        writeln!(f, "busy (s)       {ops}")?;
        writeln!(
            f,
            "environments   {}",
            listed(&report.environments, usize::to_string)
        )?;
        writeln!(
            f,
            "stalls →       {}",
            stall_line(&report.stalls_left_to_right)
        )?;
        writeln!(
            f,
            "stalls ←       {}",
            stall_line(&report.stalls_right_to_left)
        )?;
        for lane in report.lanes.iter().filter(|l| l.bytes > 0) {
            writeln!(
                f,
                "{:<14} {} {:.3} s, {} at {}/s",
                lane.lane,
                if lane.pass == Pass::LeftToRight.name() {
                    "→"
                } else {
                    "←"
                },
                lane.busy_s,
                ByteSize(lane.bytes),
                ByteSize(lane.bytes_per_s as u64)
            )?;
        }
        for device in report.devices.iter().filter(|_| report.devices.len() > 1) {
            writeln!(
                f,
                "device {:<7} compute {:.3} s (qr {:.3} s), collective {:.3} s, idle {:.3} s",
                device.device,
                device.compute_busy_s,
                device.qr_s,
                device.collective_s,
                device.idle_s
            )?;
        }
        write!(
            f,
            "large blocks   {} from fresh memory, {} free ranges released to stay within the plan",
            report.blocks_mapped, report.blocks_released
        )
    }
}

/// `name value, name value, …` for a map.
fn listed<V>(map: &BTreeMap<String, V>, show: impl Fn(&V) -> String) -> String {
    let items: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k} {}", show(v)))
        .collect();
    items.join(", ")
}

/// One pass's stalls as a line of the report.
fn stall_line(stalls: &Stalls) -> String {
    format!(
        "{:.3} s waiting: environments {:.3}, input cores {:.3}, spills {:.3}, other {:.3}",
        stalls.total_s(),
        stalls.environments_s,
        stalls.input_cores_s,
        stalls.spills_s,
        stalls.other_s
    )
}
