//! `Scalar`: the four element types as one trait, so kernels are written once.

use super::DType;
use faer::traits::ComplexField;
use num_complex::{Complex32, Complex64};
use std::fmt::Debug;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul, MulAssign};

/// An element type kernels compute in: `f32`, `f64`, `Complex32` or `Complex64`.
pub trait Scalar:
    ComplexField
    + Copy
    + Debug
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + AddAssign
    + Mul<Output = Self>
    + MulAssign
    + Sum
    + npyz::Serialize
    + npyz::Deserialize
    + npyz::AutoSerialize
    + bytemuck::Pod
{
    /// Its [`DType`].
    const DTYPE: DType;
    /// The double-precision type of the same kind (itself for a double type).
    type Double: Scalar;
    /// The value nearest to `z` (a real type keeps the real part).
    fn from_c64(z: Complex64) -> Self;
    /// The value as complex128.
    fn to_c64(self) -> Complex64;
    /// Zero.
    fn zero() -> Self {
        Self::from_c64(Complex64::new(0.0, 0.0))
    }
    /// One.
    fn one() -> Self {
        Self::from_c64(Complex64::new(1.0, 0.0))
    }
    /// The complex conjugate (itself for a real type).
    fn conj(self) -> Self;
    /// `|z|²` in double precision.
    fn abs2(self) -> f64 {
        self.to_c64().norm_sqr()
    }
    /// True when no part is NaN or infinite.
    fn is_finite(self) -> bool {
        let z = self.to_c64();
        z.re.is_finite() && z.im.is_finite()
    }
}

impl Scalar for f32 {
    const DTYPE: DType = DType::Float32;
    type Double = f64;
    fn from_c64(z: Complex64) -> Self {
        z.re as f32
    }
    fn to_c64(self) -> Complex64 {
        Complex64::new(self.into(), 0.0)
    }
    fn conj(self) -> Self {
        self
    }
}

impl Scalar for f64 {
    const DTYPE: DType = DType::Float64;
    type Double = f64;
    fn from_c64(z: Complex64) -> Self {
        z.re
    }
    fn to_c64(self) -> Complex64 {
        Complex64::new(self, 0.0)
    }
    fn conj(self) -> Self {
        self
    }
}

impl Scalar for Complex32 {
    const DTYPE: DType = DType::Complex64;
    type Double = Complex64;
    fn from_c64(z: Complex64) -> Self {
        Complex32::new(z.re as f32, z.im as f32)
    }
    fn to_c64(self) -> Complex64 {
        Complex64::new(self.re.into(), self.im.into())
    }
    fn conj(self) -> Self {
        Complex32::conj(&self)
    }
}

impl Scalar for Complex64 {
    const DTYPE: DType = DType::Complex128;
    type Double = Complex64;
    fn from_c64(z: Complex64) -> Self {
        z
    }
    fn to_c64(self) -> Complex64 {
        self
    }
    fn conj(self) -> Self {
        Complex64::conj(&self)
    }
}
