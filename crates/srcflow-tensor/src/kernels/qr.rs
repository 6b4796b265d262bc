//! The orthonormal basis η_j of a gathered sketch Y_j (a backend's thin QR).

use super::{kept_rank, qr_flops};
use crate::backend::{Backend, DeviceTensor, Gemm};
use crate::error::{Error, Result};
use crate::tensor::Work;

/// Q·U_k, where U_k are the `max_rank` leading left singular vectors of `r`.
fn truncated_basis(
    backend: &dyn Backend,
    q: DeviceTensor,
    r: &DeviceTensor,
    max_rank: usize,
) -> Result<DeviceTensor> {
    let (u, singular, _) = backend.thin_svd(r)?;
    let kept = kept_rank(&singular, max_rank, 0.0);
    let u = backend.slice(&u, 0, 0..kept)?;
    let [rank, rows] = q.dims()[..] else {
        unreachable!("Q is a matrix")
    };
    // Column-major Q·U_k is row-major U_kᵀ-by-column times Q: [kept, rank] · [rank, rows].
    let gemm = Gemm::new(1, kept, rows, rank);
    backend.batched_gemm(&u, &q, gemm, vec![kept, rows])
}

/// The work of a thin QR of a `rows × cols` matrix with its Q formed, and of the copies that
/// lay the matrix out before it and the `kept` columns of Q after it.
pub fn qr_work(rows: usize, cols: usize, kept: usize) -> Work {
    Work::factorization(qr_flops(rows, cols), rows * cols) + Work::copy(rows * cols + rows * kept)
}

/// η `[r, Up, Down, OutRight]` with orthonormal rows spanning Y `[Col, Up, Down, OutRight]`,
/// or its leading `max_rank` directions.
///
/// Y is factored as the `(OutRight·Up·Down) × Col` matrix; its thin Q has `min(rows, Col)`
/// columns, which become the rows of η. Where that is more than `max_rank` (the largest rank
/// the product can have at the cut), an SVD of the R factor keeps only the leading `max_rank`
/// directions. (A cutoff is not applied here: R's singular values are the sketch's, not the
/// product's, so a cutoff is the rounding sweep's.)
///
/// Two choices make the basis accurate where a QR loses what the sketch holds weakly (at its
/// precision times the conditioning of the sketched environment): rows ordered with the output
/// bond first (as src-method does), and single-precision sketches factored in double precision
/// with η rounded back (a QR is a small share of the flops). The accuracy they give is held by
/// `tests/exactness.rs` and `tests/precisions.rs` (exact compressions to 1e-12 in double and
/// 1e-5 in single precision); the errors before them were measured on code no longer in the tree.
pub fn orthonormal_basis(
    backend: &dyn Backend,
    y: &DeviceTensor,
    max_rank: usize,
) -> Result<DeviceTensor> {
    let [cols, up, down, right] = y.dims()[..] else {
        return Err(Error::Invalid(format!(
            "a sketch has four axes, found {:?}",
            y.dims()
        )));
    };
    let rows = right * up * down;
    // Y as the column-major (OutRight·Up·Down) × Col matrix: [Col, OutRight, Up, Down].
    let a = backend
        .permute(y, &[0, 3, 1, 2])?
        .reshaped(vec![cols, rows]);
    let a = backend.cast(&a, y.dtype().double())?;
    let (q, r) = backend.thin_qr(&a)?;
    let q = if q.dims()[0] > max_rank {
        truncated_basis(backend, q, &r, max_rank)?
    } else {
        q
    };
    let rank = q.dims()[0];
    let q = backend.cast(&q, y.dtype())?;
    backend.permute(&q.reshaped(vec![rank, right, up, down]), &[0, 2, 3, 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::CpuBackend;
    use crate::tensor::{Tensor, C64};

    #[test]
    fn basis_rows_are_orthonormal_and_span_the_sketch() {
        let data = (0..2 * 3 * 4)
            .map(|i| C64::new((i as f64).sin(), (2.0 * i as f64).cos()))
            .collect();
        let y = Tensor::new(vec![4, 3, 1, 2], data).unwrap();
        let cpu = CpuBackend::new(1).unwrap();
        let on_cpu = cpu.upload(&y.clone().into()).unwrap();
        let eta = orthonormal_basis(&cpu, &on_cpu, usize::MAX).unwrap();
        let eta = cpu.download(eta).unwrap().to_c64();
        assert_eq!(eta.shape(), &[4, 3, 1, 2]);
        let m = 6;
        for a in 0..4 {
            for b in 0..4 {
                let dot: C64 = (0..m)
                    .map(|i| eta.data()[a * m + i].conj() * eta.data()[b * m + i])
                    .sum();
                let expected = if a == b { 1.0 } else { 0.0 };
                assert!((dot - expected).norm() < 1e-13);
            }
        }
        // every column of Y lies in the span: Y = ηᴴ (η Y)
        for a in 0..4 {
            let col = &y.data()[a * m..(a + 1) * m];
            let coeff: Vec<C64> = (0..4)
                .map(|r| (0..m).map(|i| eta.data()[r * m + i].conj() * col[i]).sum())
                .collect();
            for (i, &entry) in col.iter().enumerate() {
                let back: C64 = (0..4).map(|r| eta.data()[r * m + i] * coeff[r]).sum();
                assert!((back - entry).norm() < 1e-12);
            }
        }
    }
}
