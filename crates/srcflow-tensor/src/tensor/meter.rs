//! `Meter`: counts the floating-point work and peak memory of a kernel.

use super::{DType, Work};

/// Work and memory counted while a kernel runs (or is dry-run on shapes).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Meter {
    /// Real floating-point operations (a complex multiply-add counts 8).
    pub flops: f64,
    /// Largest number of bytes alive at once inside the kernel, inputs included.
    pub peak_bytes: u64,
    /// The work by kind of step, for performance models.
    pub work: Work,
}

impl Meter {
    /// This count, made in complex128, for `dtype`: flops scale with the multiply-add's cost,
    /// bytes with the element's size.
    pub fn in_dtype(self, dtype: DType) -> Meter {
        Meter {
            flops: self.flops * dtype.flops_per_fma() / 8.0,
            peak_bytes: self.peak_bytes * dtype.bytes() as u64 / 16,
            work: self.work.in_dtype(dtype),
        }
    }

    /// Records one step that does `flops` of work with `bytes` alive.
    pub fn record(&mut self, flops: f64, bytes: u64) {
        self.flops += flops;
        self.peak_bytes = self.peak_bytes.max(bytes);
    }

    /// Records one step of kind `work` with `bytes` alive (its flops are the GEMM's and the
    /// factorization's).
    pub fn record_step(&mut self, work: Work, bytes: u64) {
        self.record(work.flops(), bytes);
        self.work = self.work + work;
    }
}
