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
    /// (counted in complex128) below 2, below 8, below 32, and 32 or more. A GEMM's rate rises
    /// with its intensity (a roofline), so each class has its own rate in a model.
    pub gemm_flops: [f64; 4],
    /// Bytes the GEMMs read and write: both operands and the result, once.
    pub gemm_bytes: f64,
    /// Bytes permuting copies read and write (operands into GEMM order, results into a layout).
    pub copied_bytes: f64,
    /// Real flops of QR and SVD factorizations.
    pub factorization_flops: f64,
}

/// Upper ends of the intensity classes of [`Work::gemm_flops`] (flops per byte).
const INTENSITY_CLASSES: [f64; 3] = [2.0, 8.0, 32.0];

/// Bytes of a complex128 element, the type dry runs count in.
const C128_BYTES: f64 = 16.0;

impl Work {
    /// The work of one batched GEMM of `batch` products of an `m × k` by a `k × n` matrix, with
    /// `copied` elements permuted into GEMM order first.
    pub fn gemm(batch: usize, m: usize, n: usize, k: usize, copied: usize) -> Work {
        let (b, m, n, k) = (batch as f64, m as f64, n as f64, k as f64);
        let (flops, bytes) = (
            8.0 * b * m * n * k,
            C128_BYTES * b * (m * k + k * n + m * n),
        );
        let class = INTENSITY_CLASSES
            .iter()
            .take_while(|&&edge| flops >= edge * bytes)
            .count();
        let mut gemm_flops = [0.0; 4];
        gemm_flops[class] = flops;
        Work {
            contractions: 1.0,
            gemms: b,
            gemm_flops,
            gemm_bytes: bytes,
            copied_bytes: 2.0 * C128_BYTES * copied as f64,
            factorization_flops: 0.0,
        }
    }

    /// The work of permuting `elements` elements into another layout.
    pub fn copy(elements: usize) -> Work {
        Work {
            copied_bytes: 2.0 * C128_BYTES * elements as f64,
            ..Work::default()
        }
    }

    /// The work of a factorization of `flops` real flops.
    pub fn factorization(flops: f64) -> Work {
        Work {
            factorization_flops: flops,
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
            copied_bytes: self.copied_bytes * bytes,
            factorization_flops: self.factorization_flops * flops,
            ..self
        }
    }

    /// The features a performance model weighs, in [`Work::FEATURES`]' order.
    pub fn features(&self) -> [f64; 9] {
        let [low, mid, high, top] = self.gemm_flops;
        [
            self.contractions,
            self.gemms,
            low,
            mid,
            high,
            top,
            self.gemm_bytes,
            self.copied_bytes,
            self.factorization_flops,
        ]
    }

    /// Names of [`Work::features`].
    pub const FEATURES: [&'static str; 9] = [
        "contractions",
        "gemms",
        "gemm_flops_below_2_per_byte",
        "gemm_flops_below_8_per_byte",
        "gemm_flops_below_32_per_byte",
        "gemm_flops_from_32_per_byte",
        "gemm_bytes",
        "copied_bytes",
        "factorization_flops",
    ];

    /// Real flops of all its steps.
    pub fn flops(&self) -> f64 {
        self.gemm_flops.iter().sum::<f64>() + self.factorization_flops
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
            copied_bytes: self.copied_bytes + o.copied_bytes,
            factorization_flops: self.factorization_flops + o.factorization_flops,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gemm_counts_its_flops_bytes_and_copies_and_scales_to_a_dtype() {
        let w = Work::gemm(2, 3, 4, 5, 10);
        // 960 flops over 1504 bytes: the lowest intensity class
        assert_eq!(w.gemm_flops, [8.0 * 2.0 * 60.0, 0.0, 0.0, 0.0]);
        assert_eq!(
            Work::gemm(1, 64, 64, 64, 0).gemm_flops[2],
            8.0 * 64.0_f64.powi(3)
        );
        assert_eq!(w.gemm_bytes, 16.0 * 2.0 * (15.0 + 20.0 + 12.0));
        assert_eq!(w.copied_bytes, 320.0);
        let f32 = w.in_dtype(DType::Float32);
        assert_eq!(f32.gemm_flops[0], w.gemm_flops[0] / 4.0);
        assert_eq!(f32.gemm_bytes, w.gemm_bytes / 4.0);
        assert_eq!((f32.contractions, f32.gemms), (1.0, 2.0));
        let sum = w + Work::factorization(7.0);
        assert_eq!(sum.factorization_flops, 7.0);
        assert_eq!(sum.features()[0], 1.0);
    }
}
