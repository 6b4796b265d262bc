//! `Work`: a kernel's work split by the kind of step that does it — what a performance model
//! times (`srcflow simulate`), where flops alone would rate a skinny GEMM like a square one.

use super::DType;
use serde::{Deserialize, Serialize};
use std::ops::Add;

/// The steps of a kernel, summed by kind. Counted in complex128 by the kernels' dry runs and
/// scaled to the run's element type by [`Work::in_dtype`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// Batched GEMM calls (one per contraction).
    pub contractions: f64,
    /// Single GEMMs inside them (each contraction's batch size).
    pub gemms: f64,
    /// Real flops of the GEMMs, by arithmetic intensity: flops per byte of operands and result
    /// (counted in complex128) below 2, below 8, below 32, below 64, and 64 or more. A GEMM's
    /// rate rises with its intensity (a roofline), so each class has its own rate in a model.
    pub gemm_flops: [f64; 5],
    /// Bytes the GEMMs read and write: both operands and the result, once.
    pub gemm_bytes: f64,
    /// Bytes of the GEMMs' results: memory each GEMM takes fresh and writes.
    pub gemm_output_bytes: f64,
    /// Real flops of the GEMMs whose left operand is stored transposed (on the CPU, read at
    /// a slower rate or copied first), counted again here so a model can charge them extra.
    pub transposed_flops: f64,
    /// Bytes permuting copies read and write (operands into GEMM order, results into a layout).
    pub copied_bytes: f64,
    /// Real flops of QR and SVD factorizations, by intensity: flops per byte of the factored
    /// matrix (counted in complex128, about its short side) below 64, below 128, below 256,
    /// and 256 or more. A blocked factorization's rate rises with its short side.
    pub factorization_flops: [f64; 4],
}

/// Upper ends of the intensity classes of [`Work::gemm_flops`] (flops per byte).
const GEMM_CLASSES: [f64; 4] = [2.0, 8.0, 32.0, 64.0];

/// Upper ends of the intensity classes of [`Work::factorization_flops`] (flops per byte).
const FACTORIZATION_CLASSES: [f64; 3] = [64.0, 128.0, 256.0];

/// The index of the class of `flops` over `bytes` among classes ending at `edges`.
fn class_of(flops: f64, bytes: f64, edges: &[f64]) -> usize {
    edges
        .iter()
        .take_while(|&&edge| flops >= edge * bytes)
        .count()
}

/// Bytes of a complex128 element, the type dry runs count in.
const C128_BYTES: f64 = 16.0;

impl Work {
    /// The work of one batched GEMM of `batch` products of an `m × k` by a `k × n` matrix, with
    /// `copied` elements permuted into GEMM order first; `transposed_a` where the left operand
    /// is read as the transpose of how it is stored.
    pub fn gemm(
        batch: usize,
        m: usize,
        n: usize,
        k: usize,
        copied: usize,
        transposed_a: bool,
    ) -> Work {
        let (b, m, n, k) = (batch as f64, m as f64, n as f64, k as f64);
        let (flops, bytes) = (
            8.0 * b * m * n * k,
            C128_BYTES * b * (m * k + k * n + m * n),
        );
        let mut gemm_flops = [0.0; 5];
        gemm_flops[class_of(flops, bytes, &GEMM_CLASSES)] = flops;
        Work {
            contractions: 1.0,
            gemms: b,
            gemm_flops,
            gemm_bytes: bytes,
            gemm_output_bytes: C128_BYTES * b * m * n,
            transposed_flops: if transposed_a { flops } else { 0.0 },
            copied_bytes: 2.0 * C128_BYTES * copied as f64,
            factorization_flops: [0.0; 4],
        }
    }

    /// The work of permuting `elements` elements into another layout.
    pub fn copy(elements: usize) -> Work {
        Work {
            copied_bytes: 2.0 * C128_BYTES * elements as f64,
            ..Work::default()
        }
    }

    /// The work of a factorization of `flops` real flops of a matrix of `elements` elements.
    pub fn factorization(flops: f64, elements: usize) -> Work {
        let bytes = C128_BYTES * elements as f64;
        let mut factorization_flops = [0.0; 4];
        factorization_flops[class_of(flops, bytes, &FACTORIZATION_CLASSES)] = flops;
        Work {
            factorization_flops,
            ..Work::default()
        }
    }

    /// This work, counted in complex128, for `dtype`: flops scale with the multiply-add's cost,
    /// bytes with the element's size, counts stay.
    pub fn in_dtype(self, dtype: DType) -> Work {
        let flops = dtype.flops_per_fma() / 8.0;
        let bytes = dtype.bytes() as f64 / C128_BYTES;
        Work {
            gemm_flops: self.gemm_flops.map(|f| f * flops),
            gemm_bytes: self.gemm_bytes * bytes,
            gemm_output_bytes: self.gemm_output_bytes * bytes,
            transposed_flops: self.transposed_flops * flops,
            copied_bytes: self.copied_bytes * bytes,
            factorization_flops: self.factorization_flops.map(|f| f * flops),
            ..self
        }
    }

    /// The features a performance model weighs, in [`Work::FEATURES`]' order.
    pub fn features(&self) -> [f64; 14] {
        let [g0, g1, g2, g3, g4] = self.gemm_flops;
        let [f0, f1, f2, f3] = self.factorization_flops;
        [
            self.contractions,
            self.gemms,
            g0,
            g1,
            g2,
            g3,
            g4,
            self.gemm_output_bytes,
            self.transposed_flops,
            self.copied_bytes,
            f0,
            f1,
            f2,
            f3,
        ]
    }

    /// Names of [`Work::features`].
    pub const FEATURES: [&'static str; 14] = [
        "contractions",
        "gemms",
        "gemm_flops_below_2_per_byte",
        "gemm_flops_below_8_per_byte",
        "gemm_flops_below_32_per_byte",
        "gemm_flops_below_64_per_byte",
        "gemm_flops_from_64_per_byte",
        "gemm_output_bytes",
        "transposed_flops",
        "copied_bytes",
        "factorization_flops_below_64_per_byte",
        "factorization_flops_below_128_per_byte",
        "factorization_flops_below_256_per_byte",
        "factorization_flops_from_256_per_byte",
    ];

    /// Real flops of all its steps.
    pub fn flops(&self) -> f64 {
        self.gemm_flops.iter().sum::<f64>() + self.factorization_flops.iter().sum::<f64>()
    }

    /// Flops per byte the GEMMs do (their arithmetic intensity; 0 without GEMMs).
    pub fn gemm_intensity(&self) -> f64 {
        if self.gemm_bytes > 0.0 {
            self.gemm_flops.iter().sum::<f64>() / self.gemm_bytes
        } else {
            0.0
        }
    }
}

impl Add for Work {
    type Output = Work;
    fn add(self, o: Work) -> Work {
        Work {
            contractions: self.contractions + o.contractions,
            gemms: self.gemms + o.gemms,
            gemm_flops: std::array::from_fn(|i| self.gemm_flops[i] + o.gemm_flops[i]),
            gemm_bytes: self.gemm_bytes + o.gemm_bytes,
            gemm_output_bytes: self.gemm_output_bytes + o.gemm_output_bytes,
            transposed_flops: self.transposed_flops + o.transposed_flops,
            copied_bytes: self.copied_bytes + o.copied_bytes,
            factorization_flops: std::array::from_fn(|i| {
                self.factorization_flops[i] + o.factorization_flops[i]
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gemm_counts_its_flops_bytes_and_copies_and_scales_to_a_dtype() {
        let w = Work::gemm(2, 3, 4, 5, 10, true);
        // 960 flops over 1504 bytes: the lowest intensity class
        assert_eq!(w.gemm_flops, [8.0 * 2.0 * 60.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(
            Work::gemm(1, 64, 64, 64, 0, false).gemm_flops[2],
            8.0 * 64.0_f64.powi(3)
        );
        assert_eq!(w.gemm_bytes, 16.0 * 2.0 * (15.0 + 20.0 + 12.0));
        assert_eq!(w.gemm_output_bytes, 16.0 * 2.0 * 12.0);
        assert_eq!(w.transposed_flops, w.flops());
        assert_eq!(w.copied_bytes, 320.0);
        let f32 = w.in_dtype(DType::Float32);
        assert_eq!(f32.gemm_flops[0], w.gemm_flops[0] / 4.0);
        assert_eq!(f32.gemm_bytes, w.gemm_bytes / 4.0);
        assert_eq!((f32.contractions, f32.gemms), (1.0, 2.0));
        let sum = w + Work::factorization(7.0, 1);
        assert_eq!(sum.factorization_flops, [7.0, 0.0, 0.0, 0.0]);
        // a QR of a 1024 × 256 matrix: about 240 flops per byte
        let qr = Work::factorization(
            16.0 * (1024.0 * 256.0 * 256.0 - 256.0_f64.powi(3) / 3.0),
            1024 * 256,
        );
        assert_eq!(qr.factorization_flops[2], qr.flops());
        assert_eq!(sum.features()[0], 1.0);
    }
}
