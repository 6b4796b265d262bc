//! Issue 42's QR question, measured: the CPU backend's blocked Householder QR (faer's, with Q
//! formed as LAPACK's `ungqr` forms it) against shifted CholeskyQR3 (Fukaya, Kannan, Nakatsukasa,
//! Yamamoto, Yanagisawa, SIAM J. Sci. Comput. 2020), whose work is GEMMs, a triangular solve and
//! small Choleskys, on the shapes of the sketches SRC factors and on matrices as ill-conditioned
//! as those sketches get (singular values falling geometrically to `1 / condition`).
//!
//! `cargo bench --bench qr_methods [-- THREADS]` (default 2) prints one line per shape,
//! condition and method: the time (best of five), the rate counted as the backend counts a QR
//! (`kernels::qr_flops`, so the two methods' rates compare as times do), and the accuracy of the
//! factors: `‖QᴴQ − I‖_F` and `‖A − QR‖_F / ‖A‖_F`, or the breakdown where a Cholesky fails.

mod common;

use common::{cpu_from_args, fastest};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Accum, Mat, MatRef, Par};
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;
use srcflow::backend::{Backend, CpuBackend};
use srcflow::tensor::{Tensor, C64};

/// The unit roundoff of double precision.
const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// An `m × n` matrix of independent normal entries.
fn gaussian(rng: &mut Pcg64, m: usize, n: usize) -> Mat<C64> {
    Mat::from_fn(m, n, |_, _| {
        C64::new(rng.sample(StandardNormal), rng.sample(StandardNormal))
    })
}

/// The Q of a Householder QR of a random matrix: random orthonormal columns.
fn orthonormal(rng: &mut Pcg64, m: usize, n: usize) -> Mat<C64> {
    gaussian(rng, m, n).qr().compute_thin_Q()
}

/// An `m × n` matrix `U Σ Vᴴ` with random singular vectors and singular values falling
/// geometrically from 1 to `1 / condition` (a random Gaussian matrix where `condition` is 1).
fn conditioned(m: usize, n: usize, condition: f64) -> Mat<C64> {
    let mut rng = Pcg64::seed_from_u64((m * n) as u64);
    if condition == 1.0 {
        return gaussian(&mut rng, m, n);
    }
    let (u, v) = (orthonormal(&mut rng, m, n), orthonormal(&mut rng, n, n));
    let decay = condition.powf(-1.0 / (n - 1) as f64);
    let scaled = Mat::from_fn(m, n, |i, j| u[(i, j)] * decay.powi(j as i32));
    let mut a = Mat::zeros(m, n);
    matmul(
        a.as_mut(),
        Accum::Replace,
        scaled.as_ref(),
        v.adjoint(),
        C64::new(1.0, 0.0),
        Par::rayon(0),
    );
    a
}

/// One CholeskyQR pass with `shift` on the Gram matrix's diagonal: `Q = A R⁻¹` and `R`, where
/// `RᴴR = AᴴA + shift·I`; `None` where the Cholesky breaks down.
fn cholesky_qr(a: MatRef<'_, C64>, shift: f64, par: Par) -> Option<(Mat<C64>, Mat<C64>)> {
    let n = a.ncols();
    let mut gram = Mat::<C64>::zeros(n, n);
    triangular::matmul(
        gram.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        a.adjoint(),
        BlockStructure::Rectangular,
        a,
        BlockStructure::Rectangular,
        C64::new(1.0, 0.0),
        par,
    );
    for i in 0..n {
        gram[(i, i)] += shift;
    }
    let scratch = cholesky_in_place_scratch::<C64>(n, par, Default::default());
    let mut buffer = MemBuffer::new(scratch);
    cholesky_in_place(
        gram.as_mut(),
        Default::default(),
        par,
        MemStack::new(&mut buffer),
        Default::default(),
    )
    .ok()?;
    let lower = Mat::from_fn(n, n, |i, j| {
        if i >= j {
            gram[(i, j)]
        } else {
            C64::new(0.0, 0.0)
        }
    });
    // Q·Lᴴ = A, transposed: conj(L)·Qᵀ = Aᵀ.
    let mut q = a.to_owned();
    solve_lower_triangular_in_place(lower.as_ref().conjugate(), q.as_mut().transpose_mut(), par);
    Some((q, lower.adjoint().to_owned()))
}

/// Shifted CholeskyQR3: a shifted pass that makes the matrix well enough conditioned for
/// CholeskyQR2 (two plain passes), with the shift `11 (mn + n(n+1)) u ‖A‖²` of the paper
/// (`‖A‖_F²` standing for `‖A‖₂²`, which it bounds); `R = R₃R₂R₁`.
fn shifted_cholesky_qr3(a: MatRef<'_, C64>, par: Par) -> Option<(Mat<C64>, Mat<C64>)> {
    let (m, n) = a.shape();
    let norm = a.norm_l2();
    let shift = 11.0 * ((m * n + n * (n + 1)) as f64) * UNIT_ROUNDOFF * norm * norm;
    let (q1, r1) = cholesky_qr(a, shift, par)?;
    let (q2, r2) = cholesky_qr(q1.as_ref(), 0.0, par)?;
    let (q3, r3) = cholesky_qr(q2.as_ref(), 0.0, par)?;
    Some((q3, &r3 * &r2 * &r1))
}

/// `‖QᴴQ − I‖_F` and `‖A − QR‖_F / ‖A‖_F`.
fn accuracy(a: MatRef<'_, C64>, q: MatRef<'_, C64>, r: MatRef<'_, C64>) -> (f64, f64) {
    let gram = q.adjoint() * q;
    let identity = Mat::<C64>::identity(q.ncols(), q.ncols());
    (
        (&gram - &identity).norm_l2(),
        (a - q * r).norm_l2() / a.norm_l2(),
    )
}

/// Prints the Householder line of `a`: the backend's own `thin_qr`, as a run calls it.
fn householder(cpu: &CpuBackend, a: &Mat<C64>) {
    let (m, n) = a.shape();
    let column_major = (0..n)
        .flat_map(|j| a.col(j).iter().copied().collect::<Vec<_>>())
        .collect();
    let tensor = Tensor::new(vec![n, m], column_major).expect("dims match");
    let on_cpu = cpu.upload(&tensor.into()).expect("the CPU backend uploads");
    let seconds = fastest(|| {
        std::hint::black_box(cpu.thin_qr(&on_cpu).expect("QR runs"));
    });
    let (q, r) = cpu.thin_qr(&on_cpu).expect("QR runs");
    let factor = |t| cpu.download(t).expect("downloads").to_c64();
    let (q, r) = (factor(q), factor(r));
    let q = MatRef::from_column_major_slice(q.data(), m, n.min(m));
    let r = MatRef::from_column_major_slice(r.data(), n.min(m), n);
    report("Householder", a, seconds, Some(accuracy(a.as_ref(), q, r)));
}

/// Prints the shifted CholeskyQR3 line of `a`, on the backend's threads.
fn cholesky_qr3(cpu: &CpuBackend, a: &Mat<C64>) {
    let mut result = None;
    let mut seconds = 0.0;
    cpu.within(srcflow::backend::Stream::Compute, &mut || {
        seconds = fastest(|| {
            std::hint::black_box(shifted_cholesky_qr3(a.as_ref(), Par::rayon(0)));
        });
        result = shifted_cholesky_qr3(a.as_ref(), Par::rayon(0));
    });
    let accuracy = result.map(|(q, r)| accuracy(a.as_ref(), q.as_ref(), r.as_ref()));
    report("shifted CholeskyQR3", a, seconds, accuracy);
}

/// One line of output.
fn report(method: &str, a: &Mat<C64>, seconds: f64, accuracy: Option<(f64, f64)>) {
    let (m, n) = a.shape();
    let rate = srcflow_tensor::kernels::qr_flops(m, n) / seconds / 1e9;
    let accuracy = match accuracy {
        Some((orthogonality, residual)) => {
            format!("‖QᴴQ − I‖ {orthogonality:.1e}, ‖A − QR‖/‖A‖ {residual:.1e}")
        }
        None => "a Cholesky broke down".into(),
    };
    println!("  {method:<20} {seconds:.2e} s, {rate:5.1} GFLOP/s, {accuracy}");
}

fn main() {
    let cpu = cpu_from_args();
    // 192 × 96: an MPO·MPS sketch (30 sites, bond 96, MPO bond 16); 1280 × 320 and 768 × 384:
    // the MPO·MPO primitive's.
    for (m, n) in [(192, 96), (1280, 320), (768, 384)] {
        for condition in [1.0, 1e8, 1e15] {
            let a = conditioned(m, n, condition);
            println!("QR {m} × {n}, condition {condition:.0e}:");
            householder(&cpu, &a);
            cholesky_qr3(&cpu, &a);
        }
    }
}
