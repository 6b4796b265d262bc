//! `calibrate`: measures a [`MachineModel`] of this machine — kernel rates and fixed costs from
//! two sweeps of generated problems read from disk, the input lane from those reads, the copy
//! lanes from memcpy, the disk lanes from a spill file written and read back.

use srcflow::engine::Engine;
use srcflow::error::Result;
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::graph::Lane;
use srcflow::io::{write_stack, OutputDir, ProblemDir};
use srcflow::sched::RunLog;
use srcflow::sim::MachineModel;
use srcflow::store::{ScratchDir, SpillFile, Throttle};
use srcflow::tensor::{Tensor, C64};
use srcflow::CancelToken;
use srcflow::Options;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Bytes moved by the copy and disk measurements.
const PROBE_BYTES: usize = 256 << 20;

/// A model of this machine with `threads` kernel threads (0: all cores); scratch files go under
/// `scratch` and are removed.
pub fn calibrate(scratch: &Path, threads: usize) -> Result<MachineModel> {
    let work = ScratchDir::create(scratch)?;
    let result = measure(work.path(), threads);
    drop(work);
    result
}

fn measure(work: &Path, threads: usize) -> Result<MachineModel> {
    let small = calibration_sweep(&work.join("small"), threads, 128)?;
    let large = calibration_sweep(&work.join("large"), threads, 256)?;
    let (mut gflops, mut fixed) = (BTreeMap::new(), BTreeMap::new());
    for op in ["env", "fold", "sketch", "qr", "project"] {
        let points: Vec<(f64, f64)> = [&small, &large]
            .iter()
            .flat_map(|log| log.events.iter())
            .filter(|e| e.op.name() == op)
            .map(|e| (e.flops, e.end - e.start))
            .collect();
        if points.is_empty() {
            continue; // a kernel the sweeps did not run (the model then rates it by another)
        }
        let (seconds, per_flop) = fit_line(&points);
        gflops.insert(op.to_string(), 1.0 / per_flop / 1e9);
        fixed.insert(op.to_string(), seconds);
    }
    gflops.insert("exact".into(), gflops["env"]);
    fixed.insert("exact".into(), fixed["env"]);
    gflops.insert("first".into(), gflops["sketch"]);
    fixed.insert("first".into(), mean_seconds(&[&small, &large], "first"));
    let io = small.events.iter().filter(|e| e.lane == Lane::Io);
    let (bytes, seconds) = io.fold((0.0, 0.0), |(b, s), e| {
        (b + e.bytes as f64, s + e.end - e.start)
    });
    let copy = memcpy_rate();
    let (write, read) = disk_rates(work)?;
    let bytes_per_s = [
        ("io", bytes / seconds.max(1e-9)),
        ("download", copy),
        ("upload", copy),
        ("collective", copy),
        ("disk-write", write),
        ("disk-read", read),
    ];
    Ok(MachineModel {
        name: format!("{} (srcflow calibrate)", this_machine()),
        gflops,
        bytes_per_s: bytes_per_s.iter().map(|&(k, v)| (k.into(), v)).collect(),
        task_overhead_s: 0.0,
        kernel_overhead_s: fixed,
        device_has_own_memory: false,
        notes: vec![
            "kernels: seconds = overhead + flops / rate, fitted by least squares to every task of two sweeps of a random MPO·MPS (20 sites, MPO bond 16, bond = chi = 128 and 256) read from disk".into(),
            "exact: rated as env (the two-site path is not measured)".into(),
            "first: rated as sketch, with the mean time of its tasks as its fixed cost (one tiny task per sweep: too few to fit a rate)".into(),
            "io lane: the input reads of the smaller sweep".into(),
            format!("copy and collective lanes: memcpy of {} MiB; disk lanes: a spill file of {} MiB written and read back", PROBE_BYTES >> 20, PROBE_BYTES >> 20),
        ],
    })
}

/// The mean seconds of the `op` tasks in `logs` (0 without any).
fn mean_seconds(logs: &[&RunLog], op: &str) -> f64 {
    let times: Vec<f64> = logs
        .iter()
        .flat_map(|log| log.events.iter())
        .filter(|e| e.op.name() == op)
        .map(|e| e.end - e.start)
        .collect();
    times.iter().sum::<f64>() / times.len().max(1) as f64
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

/// Least-squares line `seconds = a + b · flops` through `points`, with `a ≥ 0` and `b > 0`.
fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len().max(1) as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(xy, xx), p| {
        (xy + (p.0 - mx) * (p.1 - my), xx + (p.0 - mx) * (p.0 - mx))
    });
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    if slope > 0.0 && my - slope * mx >= 0.0 {
        return (my - slope * mx, slope);
    }
    let through_zero =
        points.iter().map(|p| p.1).sum::<f64>() / points.iter().map(|p| p.0).sum::<f64>().max(1.0);
    (0.0, through_zero.max(1e-15))
}

/// Runs a calibration problem (bond = χ̄ = `chi`) from the folder `work` (made here, inside
/// the scratch directory); returns its log.
fn calibration_sweep(work: &Path, threads: usize, chi: usize) -> Result<RunLog> {
    std::fs::create_dir(work).map_err(|e| srcflow::Error::io(work, e))?;
    let spec = ProblemSpec {
        sites: 20,
        bond: chi,
        mpo_bond: 16,
        ..ProblemSpec::default()
    };
    let dir = work.join("problem");
    write_stack(&dir, &generate(ProblemKind::Random, &spec)?)?;
    let problem = ProblemDir::open(&dir)?;
    let engine = Engine::new(Options {
        threads,
        ..Options::new(chi)
    })?;
    let (graph, _) = engine.prepare(problem.shape())?;
    let output = OutputDir::create(&work.join("out"), graph.output_kind(), graph.sites())?;
    let (_, log) = engine.run_graph_logged(&graph, &problem, &output)?;
    output.commit()?;
    Ok(log)
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

/// Bytes per second of writing and of reading back a spill file under `work`.
fn disk_rates(work: &Path) -> Result<(f64, f64)> {
    let data = (0..PROBE_BYTES / std::mem::size_of::<C64>())
        .map(|i| C64::new(i as f64, 1.0))
        .collect();
    let tensor = Tensor::new(vec![PROBE_BYTES / std::mem::size_of::<C64>()], data)?;
    let start = Instant::now();
    let file = SpillFile::write(
        work.join("probe.spill"),
        &tensor.into(),
        Throttle::new(None),
        None,
        &CancelToken::new(),
    )?;
    let write = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let back = file.read(Throttle::new(None), &CancelToken::new())?;
    let read = start.elapsed().as_secs_f64();
    std::hint::black_box(back);
    Ok((PROBE_BYTES as f64 / write, PROBE_BYTES as f64 / read))
}
