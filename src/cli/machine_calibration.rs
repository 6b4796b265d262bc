//! `calibrate`: measures a [`MachineModel`] of this machine — compute models fitted to the
//! traces of `srcflow run` over a grid of generated problems read from disk (each run its own
//! process, as a user's is; on one device with every thread, and on 2 and 4 devices sharing
//! them), the input lane from those runs' reads, the copy lanes from memcpy, the disk lanes
//! from a spill file written and read back.

use super::disk_calibration::calibrate_disk;
use super::trace_refinement::{add_runs, read_run, TracedRun};
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::io::write_stack;
use srcflow::sim::{MachineModel, HOST_COPY, IO_WRITE};
use srcflow::store::DiskIo;
use srcflow::tensor::{Tensor, C64};
use srcflow::{Error, Result};
use srcflow_sched::store::ScratchDir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Bytes moved by the copy and disk measurements.
const PROBE_BYTES: usize = 256 << 20;

/// One problem of the calibration grid.
struct GridProblem {
    /// Its family.
    kind: ProblemKind,
    /// Its sites.
    sites: usize,
    /// The state's bond (the second MPO's for identity), and χ̄ unless the MPO's is larger.
    bond: usize,
    /// The (first) MPO's bond.
    mpo_bond: usize,
    /// MPO layers (Ising).
    depth: usize,
}

/// The calibration grid: problems whose tasks span the shapes of MPO·MPS products (bonds 48 to
/// 384, MPO bonds 6 to 48), both orders of the MPO·MPO product and a depth-3 stack, each
/// small enough to sweep in about a second.
const GRID: [GridProblem; 7] = [
    grid(ProblemKind::Random, 16, 96, 8, 1),
    grid(ProblemKind::Random, 16, 192, 24, 1),
    grid(ProblemKind::Random, 16, 48, 48, 1),
    grid(ProblemKind::Random, 20, 384, 6, 1),
    grid(ProblemKind::Identity, 16, 6, 288, 1),
    grid(ProblemKind::Identity, 16, 288, 6, 1),
    grid(ProblemKind::Ising, 16, 96, 2, 3),
];

/// A grid problem (a `const` constructor for the table above).
const fn grid(
    kind: ProblemKind,
    sites: usize,
    bond: usize,
    mpo_bond: usize,
    depth: usize,
) -> GridProblem {
    GridProblem {
        kind,
        sites,
        bond,
        mpo_bond,
        depth,
    }
}

/// The grid in words, for the model's notes.
const GRID_NOTE: &str = "the faster of two runs of each of: random MPO·MPS of (sites, bond, MPO bond) (16, 96, 8), (16, 192, 24), (16, 48, 48) and (20, 384, 6); identity MPO·MPO of bonds 288 and 6 in both orders on 16 sites; Ising depth 3 on 16 sites of bond 96; chi = the larger bond. dispatch_s: the median gap between a compute task and the next one on its device whose inputs were ready";

/// Most devices the thread counts are calibrated for (1, 2, 4 devices sharing the threads).
const MOST_DEVICES: usize = 4;

/// Runs of each grid problem on each device layout, of which the fastest is fitted: the
/// machine at its best, as benchmarks take the best of their runs (a run slowed by another
/// process would otherwise slow every prediction).
const RUNS_PER_PROBLEM: usize = 2;

/// A model of this machine with `threads` kernel threads (0: all cores); scratch files go under
/// `scratch` and are removed.
pub fn calibrate(scratch: &Path, threads: usize, disk_io: &DiskIo) -> Result<MachineModel> {
    let work = ScratchDir::create(scratch)?;
    let result = measure(work.path(), threads, disk_io);
    drop(work);
    result
}

/// `model` with its disk lanes measured anew in the filesystem of `scratch` (reached as
/// `disk_io` says): the rest of the model is kept.
pub fn calibrate_disk_of(
    mut model: MachineModel,
    scratch: &Path,
    disk_io: &DiskIo,
) -> Result<MachineModel> {
    let work = ScratchDir::create(scratch)?;
    let disk = calibrate_disk(work.path(), disk_io)?;
    drop(work);
    model
        .bytes_per_s
        .insert("disk-write".into(), disk.write_bytes_per_s);
    model
        .bytes_per_s
        .insert("disk-read".into(), disk.read_bytes_per_s);
    model.disk_requests = Some(disk.requests);
    model.notes.retain(|note| !note.starts_with("disk"));
    model.notes.push(disk.note());
    Ok(model)
}

/// Measures the model in `work` (see [`calibrate`]).
fn measure(work: &Path, threads: usize, disk_io: &DiskIo) -> Result<MachineModel> {
    let problems = write_grid(work)?;
    let total = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        t => t,
    };
    let mut compute = Vec::new();
    let mut one_device = Vec::new();
    for devices in (0..)
        .map(|i| 1 << i)
        .take_while(|&d| d <= MOST_DEVICES.min(total))
    {
        let runs = problems
            .iter()
            .map(|(dir, chi)| fastest_sweep(work, dir, *chi, devices, total))
            .collect::<Result<Vec<TracedRun>>>()?;
        add_runs(
            &mut compute,
            &runs,
            &format!("calibration grid on {devices} device(s)"),
        );
        if devices == 1 {
            one_device = runs;
        }
    }
    let copy = memcpy_rate();
    let disk = calibrate_disk(work, disk_io)?;
    let writes = io_rate(&one_device, |run| run.writes);
    let bytes_per_s = [
        ("io", io_rate(&one_device, |run| run.reads)),
        ("download", copy),
        ("upload", copy),
        ("collective", copy),
        (HOST_COPY, copy),
        ("disk-write", disk.write_bytes_per_s),
        ("disk-read", disk.read_bytes_per_s),
    ];
    let mut rates: BTreeMap<String, f64> =
        bytes_per_s.iter().map(|&(k, v)| (k.into(), v)).collect();
    if writes > 0.0 {
        rates.insert(IO_WRITE.into(), writes);
    }
    Ok(MachineModel {
        name: format!("{} (srcflow calibrate)", this_machine()),
        gflops: mean_rates(&one_device),
        bytes_per_s: rates,
        network_latency_s: 0.0,
        task_overhead_s: 0.0,
        kernel_overhead_s: BTreeMap::new(),
        compute,
        disk_requests: Some(disk.requests),
        assumed: false,
        device_has_own_memory: false,
        notes: vec![
            format!("compute: per-task models from shapes (graphs/README.md), fitted to every task of the traces of `srcflow run` over a grid of problems read from disk: {GRID_NOTE}"),
            "gflops: each kernel's mean rate over the grid on one device, used only where no compute model is fitted; exact rated as env, first as sketch".into(),
            "io lane: the input reads of the grid on one device; io-write: its output writes".into(),
            format!("copy and collective lanes, host-copy: memcpy of {} MiB", PROBE_BYTES >> 20),
            disk.note(),
        ],
    })
}

/// Writes the grid's problems under `work`; returns each folder with its χ̄.
fn write_grid(work: &Path) -> Result<Vec<(PathBuf, usize)>> {
    GRID.iter()
        .enumerate()
        .map(|(i, p)| {
            let spec = ProblemSpec {
                sites: p.sites,
                bond: p.bond,
                mpo_bond: p.mpo_bond,
                depth: p.depth,
                ..ProblemSpec::default()
            };
            let dir = work.join(format!("problem-{i}"));
            write_stack(&dir, &generate(p.kind, &spec)?)?;
            Ok((dir, p.bond.max(p.mpo_bond)))
        })
        .collect()
}

/// The run of [`RUNS_PER_PROBLEM`] sweeps (see [`sweep`]) whose compute tasks took the least
/// time in all.
fn fastest_sweep(
    work: &Path,
    dir: &Path,
    chi: usize,
    devices: usize,
    threads: usize,
) -> Result<TracedRun> {
    let busy = |run: &TracedRun| run.tasks.iter().map(|(_, t)| t.seconds).sum::<f64>();
    let mut fastest = sweep(work, dir, chi, devices, threads)?;
    for _ in 1..RUNS_PER_PROBLEM {
        let run = sweep(work, dir, chi, devices, threads)?;
        if busy(&run) < busy(&fastest) {
            fastest = run;
        }
    }
    Ok(fastest)
}

/// Runs `srcflow run` on the problem in `dir` at χ̄ = `chi` on `devices` devices sharing
/// `threads` threads, in a process of its own, its output and trace under `work` (removed
/// after); returns what its trace measured.
fn sweep(work: &Path, dir: &Path, chi: usize, devices: usize, threads: usize) -> Result<TracedRun> {
    let (out, trace) = (work.join("out"), work.join("trace.json"));
    let exe = std::env::current_exe()
        .map_err(|e| Error::Invalid(format!("calibrate cannot find its own program: {e}")))?;
    let ran = Command::new(exe)
        .arg("run")
        .arg(dir)
        .args([
            "--chi-out",
            &chi.to_string(),
            "--devices",
            &devices.to_string(),
        ])
        .args(["--threads", &threads.to_string(), "--scratch-dir"])
        .arg(work)
        .arg("--out")
        .arg(&out)
        .arg("--trace")
        .arg(&trace)
        .output()
        .map_err(|e| Error::Invalid(format!("calibrate could not start a run: {e}")))?;
    if !ran.status.success() {
        let said = String::from_utf8_lossy(&ran.stderr);
        return Err(Error::Invalid(format!(
            "the calibration run of {} on {devices} device(s) failed ({}): {said}",
            dir.display(),
            ran.status
        )));
    }
    let run = read_run(&trace)
        .map_err(|e| Error::Invalid(format!("the calibration run of {}: {e}", dir.display())));
    std::fs::remove_dir_all(&out).map_err(|e| Error::io(&out, e))?;
    std::fs::remove_file(&trace).map_err(|e| Error::io(&trace, e))?;
    run
}

/// Each kernel's GFLOP/s over the compute tasks of `runs` (exact as env, first as sketch).
fn mean_rates(runs: &[TracedRun]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (_, task) in runs.iter().flat_map(|run| &run.tasks) {
        let sum = sums.entry(task.kernel.clone()).or_default();
        *sum = (sum.0 + task.work.flops(), sum.1 + task.seconds);
    }
    let mut rates: BTreeMap<String, f64> = sums
        .into_iter()
        .filter(|(_, (flops, _))| *flops > 0.0)
        .map(|(k, (flops, s))| (k, flops / s.max(1e-9) / 1e9))
        .collect();
    for (kernel, like) in [("exact", "env"), ("first", "sketch")] {
        let rate = rates.get(like).copied().unwrap_or(1.0);
        rates.entry(kernel.into()).or_insert(rate);
    }
    rates
}

/// Bytes per second of the reads or writes (`moved`: their bytes and seconds) of `runs` (0
/// when they moved nothing).
fn io_rate(runs: &[TracedRun], moved: fn(&TracedRun) -> (f64, f64)) -> f64 {
    let (bytes, seconds) = runs
        .iter()
        .map(moved)
        .fold((0.0, 0.0), |(b, s), (rb, rs)| (b + rb, s + rs));
    bytes / seconds.max(1e-9)
}

/// This machine in words: its host name, cores and processor, as Linux reports them.
fn this_machine() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let processor = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
        .map_or("", |(_, name)| name.trim());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{}: {cores} cores, {processor}", host.trim())
}

/// Bytes per second of a large memcpy (the copy lanes of the CPU backend).
fn memcpy_rate() -> f64 {
    let source = Tensor::zeros(vec![PROBE_BYTES / std::mem::size_of::<C64>()]);
    let start = Instant::now();
    let copy = source.clone();
    let seconds = start.elapsed().as_secs_f64();
    std::hint::black_box(copy);
    PROBE_BYTES as f64 / seconds.max(1e-9)
}
