//! faer's own complex128 GEMM rate on this machine: the ceiling the sweep is measured against.
//!
//! `cargo bench --bench zgemm_rate [-- THREADS]` prints one JSON line with the best rate over a
//! few shapes typical of the sweep's contractions.

use faer::{Accum, Mat, Par};
use num_complex::Complex64 as C64;
use std::time::Instant;

/// GFLOP/s of `reps` products of an `m × k` by a `k × n` complex matrix (best of the reps).
fn rate(m: usize, k: usize, n: usize, threads: usize) -> f64 {
    let a = Mat::<C64>::from_fn(m, k, |i, j| C64::new((i + 2 * j) as f64 * 1e-3, 1.0));
    let b = Mat::<C64>::from_fn(k, n, |i, j| C64::new((i * j) as f64 * 1e-4, 0.5));
    let mut c = Mat::<C64>::zeros(m, n);
    (0..6)
        .map(|_| {
            let start = Instant::now();
            faer::linalg::matmul::matmul(
                c.as_mut(),
                Accum::Replace,
                a.as_ref(),
                b.as_ref(),
                C64::new(1.0, 0.0),
                Par::rayon(threads),
            );
            8.0 * (m * n * k) as f64 / start.elapsed().as_secs_f64() / 1e9
        })
        .fold(0.0, f64::max)
}

fn main() {
    let threads = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(0);
    let shapes = [
        (1024, 1024, 1024),
        (4096, 256, 512),
        (8192, 128, 256),
        (2048, 2048, 256),
    ];
    let rates: Vec<f64> = shapes
        .iter()
        .map(|&(m, k, n)| rate(m, k, n, threads))
        .collect();
    let best = rates.iter().copied().fold(0.0, f64::max);
    let shapes: Vec<[usize; 3]> = shapes.iter().map(|&(m, k, n)| [m, k, n]).collect();
    println!("{{\"zgemm_gflops\": {best:.2}, \"per_shape\": {rates:?}, \"shapes\": {shapes:?}}}");
}
