//! cuBLAS's GEMM rates through the CUDA backend on this machine's GPU 0, in complex128 (the
//! ceiling the GPU sweep is measured against) and complex64: the limit `tools/gpu_check.sh`
//! reports beside the sweep's rate.
//!
//! `cargo bench --bench gpu_gemm_rate` prints one JSON line: `zgemm_gflops` and `cgemm_gflops`
//! (best over a few shapes, each the best of five products), or what is missing where this
//! machine has no CUDA device.

use srcflow::backend::{Backend, CudaBackend, Gemm};
use srcflow::tensor::{AnyTensor, DType};
use srcflow::Result;
use std::time::Instant;

/// GFLOP/s (8 real flops per complex multiply-add) of `m × k` by `k × n` products in `dtype`,
/// the best of five (each primitive waits for its result).
fn rate(backend: &CudaBackend, (m, k, n): (usize, usize, usize), dtype: DType) -> Result<f64> {
    let a = backend.upload(&AnyTensor::zeros(dtype, vec![m, k]))?;
    let b = backend.upload(&AnyTensor::zeros(dtype, vec![k, n]))?;
    let mut best = 0.0_f64;
    for _ in 0..5 {
        let start = Instant::now();
        backend.batched_gemm(&a, &b, Gemm::new(1, m, n, k), vec![m, n])?;
        let flops = 8.0 * (m * n * k) as f64;
        best = best.max(flops / start.elapsed().as_secs_f64() / 1e9);
    }
    Ok(best)
}

fn main() -> Result<()> {
    if CudaBackend::device_count() == 0 {
        let why = CudaBackend::new(0)
            .err()
            .map_or("no device".into(), |e| e.to_string());
        println!("{{\"cuda\": \"not run: {}\"}}", why.replace('"', "'"));
        return Ok(());
    }
    let backend = CudaBackend::new(0)?;
    let shapes = [(4096, 4096, 4096), (8192, 1024, 1024), (16384, 1000, 4000)];
    let best = |dtype| -> Result<f64> {
        let rates = shapes
            .iter()
            .map(|&shape| rate(&backend, shape, dtype))
            .collect::<Result<Vec<f64>>>()?;
        Ok(rates.into_iter().fold(0.0, f64::max))
    };
    println!(
        "{{\"zgemm_gflops\": {:.1}, \"cgemm_gflops\": {:.1}}}",
        best(DType::Complex128)?,
        best(DType::Complex64)?
    );
    Ok(())
}
