//! The shapes of the primitives whose rate depends on their shape (GEMMs and factorizations),
//! and the time a task spent in each: how a run's GEMMs and QRs are compared with the same
//! shapes alone (`srcflow report`, `benches/kernel_rates_in_run.sh`).

use super::Gemm;
use crate::tensor::DType;
use serde::{Deserialize, Serialize};

/// A GEMM's or a factorization's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrimitiveShape {
    /// A batched GEMM: `batch` products of `m × k` by `k × n`, each operand read as stored or
    /// transposed (see [`Gemm`]).
    Gemm {
        /// Number of products.
        batch: usize,
        /// Rows of each product.
        m: usize,
        /// Columns of each product.
        n: usize,
        /// Summed dimension of each product.
        k: usize,
        /// The left operand is stored as its transpose.
        transpose_a: bool,
        /// The right operand is stored as its transpose.
        transpose_b: bool,
    },
    /// A thin QR of a `rows × cols` matrix, Q formed.
    Qr {
        /// Rows of the matrix.
        rows: usize,
        /// Columns of the matrix.
        cols: usize,
    },
    /// A thin SVD of a `rows × cols` matrix, both factors formed.
    Svd {
        /// Rows of the matrix.
        rows: usize,
        /// Columns of the matrix.
        cols: usize,
    },
}

impl PrimitiveShape {
    /// The shape of `gemm`.
    pub fn of_gemm(gemm: &Gemm) -> Self {
        PrimitiveShape::Gemm {
            batch: gemm.batch,
            m: gemm.m,
            n: gemm.n,
            k: gemm.k,
            transpose_a: gemm.transpose_a,
            transpose_b: gemm.transpose_b,
        }
    }

    /// Real flops of the primitive on elements of `dtype` (a factorization's an estimate; a
    /// complex multiply-add counts 8, a real one 2).
    pub fn flops(&self, dtype: DType) -> f64 {
        let complex_share = if dtype.is_complex() { 1.0 } else { 0.25 };
        (match *self {
            PrimitiveShape::Gemm { batch, m, n, k, .. } => 8.0 * (batch * m * n * k) as f64,
            PrimitiveShape::Qr { rows, cols } => qr_flops(rows, cols),
            PrimitiveShape::Svd { rows, cols } => svd_flops(rows, cols),
        }) * complex_share
    }

    /// The shape as `srcflow report` and `benches/kernel_rates_in_run.rs` write it: `gemm
    /// 1×1536×192×96` (batch, m, n, k) followed by `ᵀ·` or `·ᵀ` where the left or the right
    /// operand is read transposed, `qr 192×96` (rows, columns).
    pub fn label(&self) -> String {
        match *self {
            PrimitiveShape::Gemm {
                batch,
                m,
                n,
                k,
                transpose_a,
                transpose_b,
            } => {
                let read = match (transpose_a, transpose_b) {
                    (false, false) => "",
                    (true, false) => " ᵀ·",
                    (false, true) => " ·ᵀ",
                    (true, true) => " ᵀ·ᵀ",
                };
                format!("gemm {batch}×{m}×{n}×{k}{read}")
            }
            PrimitiveShape::Qr { rows, cols } => format!("qr {rows}×{cols}"),
            PrimitiveShape::Svd { rows, cols } => format!("svd {rows}×{cols}"),
        }
    }
}

/// The calls a task made of one shape on one dtype, and the seconds they took.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeTime {
    /// The primitive and its shape.
    pub shape: PrimitiveShape,
    /// The elements' type.
    pub dtype: DType,
    /// Number of calls.
    pub calls: usize,
    /// Seconds they took, wall time on the calling thread.
    pub seconds: f64,
}

/// Real flops of a thin QR of an `m × n` complex matrix plus forming its thin Q (estimate).
pub fn qr_flops(m: usize, n: usize) -> f64 {
    let rank = n.min(m) as f64;
    2.0 * 8.0 * (m as f64 * rank * rank - rank * rank * rank / 3.0)
}

/// Real flops of a thin SVD of an `m × n` complex matrix with both factors (estimate:
/// Golub–Kahan bidiagonalisation and QR iteration, 4× the real count for complex).
pub fn svd_flops(m: usize, n: usize) -> f64 {
    let (long, short) = (m.max(n) as f64, m.min(n) as f64);
    4.0 * (6.0 * long * short * short + 11.0 * short * short * short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_gemm_counts_two_flops_per_multiply_add_and_a_complex_one_eight() {
        let shape = PrimitiveShape::of_gemm(&Gemm::new(2, 3, 4, 5));
        assert_eq!(shape.flops(DType::Complex128), 8.0 * 120.0);
        assert_eq!(shape.flops(DType::Float32), 2.0 * 120.0);
        assert_eq!(shape.label(), "gemm 2×3×4×5");
        let transposed = Gemm {
            transpose_b: true,
            ..Gemm::new(2, 3, 4, 5)
        };
        assert_eq!(
            PrimitiveShape::of_gemm(&transposed).label(),
            "gemm 2×3×4×5 ·ᵀ"
        );
    }
}
