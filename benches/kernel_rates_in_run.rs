//! A run's GEMMs and factorizations against the same shapes alone (issue 42, item 2): each shape
//! that `srcflow report --json` lists for a run's trace, with the rate it ran at in the run,
//! timed alone on the CPU backend twice, with its operands in cache (the same call repeated)
//! and with the caches flushed before each call (as in a sweep, where a task's operands were
//! written by earlier tasks and its result is new memory).
//!
//! `cargo bench --bench kernel_rates_in_run -- REPORT.json [THREADS [RUN.json ZGEMM_GFLOPS]]`
//! (default 2 threads; the run's `--threads` should match) prints a markdown table, longest
//! shape first, of the shapes that took at least 1 % of the run's GEMM and factorization time;
//! given the run's `srcflow run --json` output and a zgemm rate, then a line that times every
//! shape alone and gives the sweep's rate with its kernels at those rates (the most these
//! kernels allow); `benches/kernel_rates_in_run.sh`
//! makes the runs and their reports. Like the binary, this bench allocates through srcflow's
//! block cache, so a result lands in reused memory as it does in a run.

mod common;

use common::{fastest_after, filled};
use serde_json::Value;
use srcflow::alloc::BlockCache;
use srcflow::backend::{Backend, CpuBackend, Gemm, PrimitiveShape};
use srcflow::tensor::DType;

#[global_allocator]
static ALLOCATOR: BlockCache = BlockCache;

/// Bytes written to push the operands out of every cache level before a flushed call.
const FLUSH_BYTES: usize = 256 << 20;

/// Shapes below this share of the run's GEMM and factorization time are not timed.
const LEAST_SHARE: f64 = 0.01;

/// Memory written between calls to flush the caches.
struct Flush(Vec<u8>);

impl Flush {
    /// Writes every cache line of the buffer.
    fn flush(&mut self) {
        for byte in self.0.iter_mut().step_by(64) {
            *byte = byte.wrapping_add(1);
        }
        std::hint::black_box(&self.0);
    }
}

/// The fastest of [`common::REPS`] calls of `case`, in seconds, each after a flush where
/// `flush` is given.
fn fastest(flush: Option<&mut Flush>, case: impl FnMut()) -> f64 {
    match flush {
        Some(flush) => fastest_after(|| flush.flush(), case),
        None => fastest_after(|| (), case),
    }
}

/// Seconds of the CPU backend's call of `shape` on complex128 operands of random values.
fn alone(cpu: &CpuBackend, shape: PrimitiveShape, flush: Option<&mut Flush>) -> f64 {
    match shape {
        PrimitiveShape::Gemm {
            batch,
            m,
            n,
            k,
            transpose_a,
            transpose_b,
        } => {
            let a = filled(
                cpu,
                if transpose_a {
                    vec![batch, k, m]
                } else {
                    vec![batch, m, k]
                },
            );
            let b = filled(
                cpu,
                if transpose_b {
                    vec![batch, n, k]
                } else {
                    vec![batch, k, n]
                },
            );
            let gemm = Gemm {
                transpose_a,
                transpose_b,
                ..Gemm::new(batch, m, n, k)
            };
            fastest(flush, || {
                std::hint::black_box(
                    cpu.batched_gemm(&a, &b, gemm, vec![batch, m, n])
                        .expect("GEMM runs"),
                );
            })
        }
        PrimitiveShape::Qr { rows, cols } => {
            let a = filled(cpu, vec![cols, rows]);
            fastest(flush, || {
                std::hint::black_box(cpu.thin_qr(&a).expect("QR runs"));
            })
        }
        PrimitiveShape::Svd { rows, cols } => {
            let a = filled(cpu, vec![cols, rows]);
            fastest(flush, || {
                std::hint::black_box(cpu.thin_svd(&a).expect("SVD runs"));
            })
        }
    }
}

/// The shapes of a `srcflow report --json` output, with their calls, seconds and rate in the run.
fn shapes_of(report: &Value) -> Vec<(PrimitiveShape, DType, u64, f64, f64)> {
    let listed = report["shapes"]
        .as_array()
        .expect("a report of srcflow report --json with shapes");
    listed
        .iter()
        .map(|s| {
            let shape =
                serde_json::from_value(s["shape"].clone()).expect("a shape as srcflow writes it");
            let dtype = serde_json::from_value(s["dtype"].clone()).expect("a dtype");
            let number = |key: &str| s[key].as_f64().expect("a number");
            (
                shape,
                dtype,
                number("calls") as u64,
                number("seconds"),
                number("gflops_per_s"),
            )
        })
        .collect()
}

/// The run's wall time and flops, from `srcflow run --json`.
fn run_of(path: &str) -> (f64, f64) {
    let text = std::fs::read_to_string(path).expect("the run's JSON reads");
    let run: Value = serde_json::from_str(&text).expect("srcflow run --json output");
    let number = |key: &str| run[key].as_f64().expect("a number");
    (number("wall_s"), number("flops"))
}

/// The run against its kernels at their rates alone: the GEMM/QR/SVD seconds of every shape in
/// the run and alone in cache, and what the sweep's rate would be with them at those rates
/// (everything else as it was), and with nothing but them.
fn print_bound(run_path: &str, zgemm: f64, in_run: f64, alone: f64) {
    let (wall, flops) = run_of(run_path);
    let rate = |seconds: f64| flops / seconds / 1e9;
    let share = |seconds: f64| 100.0 * rate(seconds) / zgemm;
    let sped_up = wall - (in_run - alone);
    println!();
    println!(
        "Every shape's GEMMs, QRs and SVDs: {in_run:.3} s in the run, {alone:.3} s at their \
         in-cache rates alone. The run: {wall:.3} s, {:.1} GFLOP/s ({:.0} % of zgemm's \
         {zgemm:.1}); with those kernels at their rates alone and the rest as it was: \
         {sped_up:.3} s, {:.1} GFLOP/s ({:.0} %); the kernels alone with nothing between them: \
         {:.1} GFLOP/s ({:.0} %).",
        rate(wall),
        share(wall),
        rate(sped_up),
        share(sped_up),
        rate(alone),
        share(alone)
    );
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let path = args
        .next()
        .expect("usage: kernel_rates_in_run REPORT.json [THREADS [RUN.json ZGEMM_GFLOPS]]");
    let threads = args
        .next()
        .map_or(2, |t| t.parse().expect("THREADS is a number"));
    let bound = args.next().map(|run| {
        let zgemm = args.next().expect("ZGEMM_GFLOPS after RUN.json");
        (run, zgemm.parse::<f64>().expect("ZGEMM_GFLOPS is a number"))
    });
    let text = std::fs::read_to_string(&path).expect("the report file reads");
    let shapes = shapes_of(&serde_json::from_str(&text).expect("the report is JSON"));
    let total: f64 = shapes.iter().map(|s| s.3).sum();
    let cpu = CpuBackend::new(threads).expect("a CPU backend");
    let mut flush = Flush(vec![0; FLUSH_BYTES]);
    let (mut in_run, mut alone_total) = (0.0, 0.0);
    println!("| shape | calls | share of the run's GEMM/QR/SVD time | in the run GFLOP/s | alone, caches flushed | alone, in cache | run / flushed | run / in cache |");
    println!("|---|---|---|---|---|---|---|---|");
    for (shape, dtype, calls, seconds, in_run_rate) in shapes {
        let share = seconds / total;
        if dtype != DType::Complex128 {
            continue;
        }
        let warm_seconds = alone(&cpu, shape, None);
        in_run += seconds;
        alone_total += calls as f64 * warm_seconds;
        if share < LEAST_SHARE {
            continue;
        }
        let rate = |s: f64| shape.flops(dtype) / s / 1e9;
        let cold = rate(alone(&cpu, shape, Some(&mut flush)));
        let warm = rate(warm_seconds);
        println!(
            "| {} | {calls} | {:.0} % | {in_run_rate:.1} | {cold:.1} | {warm:.1} | {:.2} | {:.2} |",
            shape.label(),
            100.0 * share,
            in_run_rate / cold,
            in_run_rate / warm
        );
    }
    if let Some((run, zgemm)) = bound {
        print_bound(&run, zgemm, in_run, alone_total);
    }
}
