//! What several benches share: operands of random values on the CPU backend, and the best of
//! a few timed calls.
// Each bench compiles this module and uses only part of it.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;
use srcflow::backend::{Backend, CpuBackend, DeviceTensor};
use srcflow::tensor::{Tensor, C64};
use std::time::Instant;

/// Repetitions of each case; the fastest counts.
pub const REPS: usize = 5;

/// A device tensor of `dims` filled with random values (normal real and imaginary parts). Random,
/// not patterned: a matrix of few distinct columns has low rank, and faer's QR of one runs
/// several times faster than of a full-rank matrix (a sketch has full rank).
pub fn filled(cpu: &CpuBackend, dims: Vec<usize>) -> DeviceTensor {
    let len = dims.iter().product::<usize>();
    let mut rng = Pcg64::seed_from_u64(len as u64);
    let data = (0..len)
        .map(|_| C64::new(rng.sample(StandardNormal), rng.sample(StandardNormal)))
        .collect();
    cpu.upload(&Tensor::new(dims, data).expect("dims match").into())
        .expect("the CPU backend uploads")
}

/// A CPU backend with the number of threads the bench's first numeric argument gives (2
/// without one).
pub fn cpu_from_args() -> CpuBackend {
    let threads = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2);
    CpuBackend::new(threads).expect("a CPU backend")
}

/// The fastest of [`REPS`] runs of `case`, in seconds.
pub fn fastest(case: impl FnMut()) -> f64 {
    fastest_after(|| (), case)
}

/// The fastest of [`REPS`] runs of `case`, in seconds, each after an untimed call of `prepare`.
pub fn fastest_after(mut prepare: impl FnMut(), mut case: impl FnMut()) -> f64 {
    (0..REPS)
        .map(|_| {
            prepare();
            let start = Instant::now();
            case();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}
