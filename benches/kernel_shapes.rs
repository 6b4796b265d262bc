//! The shape effects a compute model's features stand for (graphs/README.md), measured on the
//! CPU backend's own primitives in complex128: GEMM rates by arithmetic intensity, with the left
//! operand read transposed, tall against wide results, and with a fresh result against faer
//! writing into one it reuses; a left operand whose summed axes are not contiguous, copied into
//! GEMM order first against gathered a tile at a time; permutes of a kernel's results into the
//! order the next one reads; QR rates by the factored matrix's shape.
//!
//! `cargo bench --bench kernel_shapes [-- THREADS]` (default 2) prints one line per case: its
//! shape, its intensity (flops per byte, complex128) and its rate (best of five).

mod common;

use common::{cpu_from_args, fastest, filled};
use srcflow::backend::{Backend, CpuBackend, Gemm};
use srcflow::tensor::C64;

/// Prints the rate of the CPU backend's GEMM of `m × k` by `k × n`, the left operand stored
/// transposed where `transpose_a`.
fn backend_gemm(cpu: &CpuBackend, (m, n, k): (usize, usize, usize), transpose_a: bool) {
    let a = filled(cpu, if transpose_a { vec![k, m] } else { vec![m, k] });
    let b = filled(cpu, vec![k, n]);
    let gemm = Gemm {
        transpose_a,
        ..Gemm::new(1, m, n, k)
    };
    let seconds = fastest(|| {
        std::hint::black_box(
            cpu.batched_gemm(&a, &b, gemm, vec![m, n])
                .expect("GEMM runs"),
        );
    });
    let (flops, bytes) = (
        8.0 * (m * n * k) as f64,
        16.0 * (m * k + k * n + m * n) as f64,
    );
    let read = if transpose_a {
        "transposed"
    } else {
        "as stored"
    };
    println!(
        "GEMM {m} × {n} × {k}, left operand {read}: intensity {:.1}, {:.1} GFLOP/s ({:.2e} s)",
        flops / bytes,
        flops / seconds / 1e9,
        seconds
    );
}

/// Prints the rate of faer's GEMM of `m × k` by `k × n` writing into a result it reuses (no
/// fresh memory), on `threads` threads.
fn reused_result_gemm((m, n, k): (usize, usize, usize), threads: usize) {
    let a = faer::Mat::<C64>::from_fn(m, k, |i, j| C64::new((i + j) as f64 * 1e-3, 1.0));
    let b = faer::Mat::<C64>::from_fn(k, n, |i, j| C64::new((i * j) as f64 * 1e-4, 0.5));
    let mut c = faer::Mat::<C64>::zeros(m, n);
    let seconds = fastest(|| {
        faer::linalg::matmul::matmul(
            c.as_mut(),
            faer::Accum::Replace,
            a.as_ref(),
            b.as_ref(),
            C64::new(1.0, 0.0),
            faer::Par::rayon(threads),
        );
    });
    let flops = 8.0 * (m * n * k) as f64;
    println!(
        "GEMM {m} × {n} × {k}, result reused (faer alone): {:.1} GFLOP/s ({:.2e} s)",
        flops / seconds / 1e9,
        seconds
    );
}

/// Prints the rate of the CPU backend's thin QR of an `m × n` matrix (its flops as the dry
/// runs count them).
/// Prints the time of the CPU backend's batched GEMM whose left operand, of `dims`, is read
/// with its axes in the order `perm` (`gemm.k` summed elements last): copied into that order
/// first and then multiplied, against gathered a tile of rows at a time.
fn permuted_left_gemm(cpu: &CpuBackend, dims: Vec<usize>, perm: &[usize], gemm: Gemm) {
    let a = filled(cpu, dims.clone());
    let b = filled(cpu, vec![gemm.batch, gemm.k, gemm.n]);
    let out = vec![gemm.batch, gemm.m, gemm.n];
    let copied = fastest(|| {
        let a = cpu.permute(&a, perm).expect("permute runs");
        std::hint::black_box(
            cpu.batched_gemm(&a, &b, gemm, out.clone())
                .expect("GEMM runs"),
        );
    });
    let gathered = fastest(|| {
        let product = cpu.batched_gemm_permuted(&a, perm, &b, gemm, out.clone());
        std::hint::black_box(product.expect("GEMM runs"));
    });
    let Gemm { batch, m, n, k, .. } = gemm;
    let gflops = |seconds: f64| 8.0 * (batch * m * n * k) as f64 / seconds / 1e9;
    println!(
        "GEMM {batch} × {m} × {n} × {k}, left operand {dims:?} read as {perm:?}: copied first \
         {:.1} GFLOP/s ({copied:.2e} s), gathered {:.1} GFLOP/s ({gathered:.2e} s)",
        gflops(copied),
        gflops(gathered)
    );
}

/// Prints the rate (bytes read and written) of the CPU backend's permute of a tensor of `dims`
/// into the order `perm`.
fn backend_permute(cpu: &CpuBackend, dims: Vec<usize>, perm: &[usize]) {
    let a = filled(cpu, dims.clone());
    let seconds = fastest(|| {
        std::hint::black_box(cpu.permute(&a, perm).expect("permute runs"));
    });
    let bytes = 2.0 * 16.0 * dims.iter().product::<usize>() as f64;
    println!(
        "permute {dims:?} to {perm:?}: {:.1} GB/s ({seconds:.2e} s)",
        bytes / seconds / 1e9
    );
}

fn backend_qr(cpu: &CpuBackend, (m, n): (usize, usize)) {
    let a = filled(cpu, vec![n, m]);
    let seconds = fastest(|| {
        std::hint::black_box(cpu.thin_qr(&a).expect("QR runs"));
    });
    let flops = srcflow_tensor::kernels::qr_flops(m, n);
    println!(
        "QR {m} × {n}: intensity {:.0}, {:.1} GFLOP/s ({:.2e} s)",
        flops / (16.0 * (m * n) as f64),
        flops / seconds / 1e9,
        seconds
    );
}

fn main() {
    let cpu = cpu_from_args();
    for (shape, transposed) in [
        ((1280, 1280, 320), false),
        ((1280, 1280, 320), true),
        ((256, 512, 8192), false),
        ((256, 512, 8192), true),
        ((4096, 256, 512), false),
        ((256, 4096, 512), false),
        ((256, 256, 256), false),
        ((128, 128, 128), false),
        ((24576, 512, 24), false),
        ((204800, 8, 8), false),
        // The three largest GEMMs of an MPO·MPS run (30 sites, bond 96, MPO bond 16).
        ((1536, 192, 96), false),
        ((96, 192, 1536), false),
        ((9216, 32, 32), false),
    ] {
        backend_gemm(&cpu, shape, transposed);
    }
    reused_result_gemm((204800, 8, 8), cpu.threads());
    // MPO·MPO's bottom core (25 sites, bonds 256 over 4), MPO·MPS's fold and environment (40
    // sites, bond 128, MPO bond 16): the left operands the backend gathers.
    permuted_left_gemm(
        &cpu,
        vec![256, 4, 256, 2, 2],
        &[0, 2, 3, 1, 4],
        Gemm::new(1, 131072, 8, 8),
    );
    permuted_left_gemm(
        &cpu,
        vec![128, 16, 128, 2],
        &[0, 2, 1, 3],
        Gemm::new(1, 16384, 32, 32),
    );
    permuted_left_gemm(
        &cpu,
        vec![128, 16, 128, 2],
        &[0, 2, 1, 3],
        Gemm::new(128, 128, 16, 32),
    );
    // The fold's result into the order the projection reads, on MPO·MPS (40 sites, bond 128,
    // MPO bond 16) and MPO·MPO (25 sites, bonds 256 over 4); the projection's result.
    backend_permute(&cpu, vec![128, 128, 1, 16, 2], &[3, 1, 4, 2, 0]);
    backend_permute(&cpu, vec![256, 256, 2, 4, 2], &[1, 3, 2, 4, 0]);
    backend_permute(&cpu, vec![16, 128, 128], &[2, 0, 1]);
    // 192 × 96: the sketch's QR in that run.
    for shape in [
        (192, 96),
        (128, 64),
        (256, 128),
        (512, 256),
        (1280, 320),
        (768, 384),
    ] {
        backend_qr(&cpu, shape);
    }
}
