//! faer's own GEMM rates on this machine, in complex128 (the ceiling the sweep is measured
//! against), complex64 and float64.
//!
//! `cargo bench --bench zgemm_rate [-- THREADS]` prints one JSON line with the best rate of each
//! type over a few shapes typical of the sweep's contractions (`zgemm_gflops`, `cgemm_gflops`,
//! `dgemm_gflops`), and the complex128 rate of each shape.

use faer::traits::ComplexField;
use faer::{Accum, Mat, Par};
use num_complex::{Complex32, Complex64};
use std::time::Instant;

/// GFLOP/s (real flops: 8 per complex multiply-add, 2 per real one) of products of an `m × k`
/// by a `k × n` matrix of `T`, whose elements `entry` makes (best of a few repetitions).
fn rate<T: ComplexField + Copy>(
    (m, k, n): (usize, usize, usize),
    threads: usize,
    flops_per_fma: f64,
    entry: fn(f64, f64) -> T,
) -> f64 {
    let a = Mat::<T>::from_fn(m, k, |i, j| entry((i + 2 * j) as f64 * 1e-3, 1.0));
    let b = Mat::<T>::from_fn(k, n, |i, j| entry((i * j) as f64 * 1e-4, 0.5));
    let mut c = Mat::<T>::zeros(m, n);
    (0..6)
        .map(|_| {
            let start = Instant::now();
            faer::linalg::matmul::matmul(
                c.as_mut(),
                Accum::Replace,
                a.as_ref(),
                b.as_ref(),
                entry(1.0, 0.0),
                Par::rayon(threads),
            );
            flops_per_fma * (m * n * k) as f64 / start.elapsed().as_secs_f64() / 1e9
        })
        .fold(0.0, f64::max)
}

/// The best of `rates`.
fn best(rates: &[f64]) -> f64 {
    rates.iter().copied().fold(0.0, f64::max)
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
    let per_shape = |one: &dyn Fn((usize, usize, usize)) -> f64| {
        shapes.iter().map(|&s| one(s)).collect::<Vec<f64>>()
    };
    let z = per_shape(&|s| rate(s, threads, 8.0, Complex64::new));
    let c = per_shape(&|s| {
        rate(s, threads, 8.0, |re, im| {
            Complex32::new(re as f32, im as f32)
        })
    });
    let d = per_shape(&|s| rate(s, threads, 2.0, |re, _| re));
    let shapes: Vec<[usize; 3]> = shapes.iter().map(|&(m, k, n)| [m, k, n]).collect();
    println!(
        "{{\"zgemm_gflops\": {:.2}, \"cgemm_gflops\": {:.2}, \"dgemm_gflops\": {:.2}, \"per_shape\": {z:?}, \"shapes\": {shapes:?}}}",
        best(&z),
        best(&c),
        best(&d)
    );
}
