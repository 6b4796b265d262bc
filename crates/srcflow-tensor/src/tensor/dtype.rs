//! `DType`: the element types srcflow reads, computes in and writes, with NumPy's promotion.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An element type: real or complex, single or double precision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// Real, single precision.
    Float32,
    /// Real, double precision.
    Float64,
    /// Complex, single precision.
    Complex64,
    /// Complex, double precision.
    #[default]
    Complex128,
}

impl DType {
    /// Every type, in NumPy's order.
    pub const ALL: [DType; 4] = [
        DType::Float32,
        DType::Float64,
        DType::Complex64,
        DType::Complex128,
    ];

    /// NumPy's name (`float32`, …, `complex128`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            DType::Float32 => 4,
            DType::Float64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// True for the complex types.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// True for the double-precision types.
    pub fn is_double(self) -> bool {
        matches!(self, DType::Float64 | DType::Complex128)
    }

    /// The double-precision type of the same kind (itself for a double type).
    pub fn double(self) -> DType {
        match self {
            DType::Float32 => DType::Float64,
            DType::Complex64 => DType::Complex128,
            double => double,
        }
    }

    /// The type NumPy gives a result of `self` and `other` (`float32` and `complex64` give
    /// `complex64`, `float64` and `complex64` give `complex128`).
    pub fn promote(self, other: DType) -> DType {
        let complex = self.is_complex() || other.is_complex();
        let double = self.is_double() || other.is_double();
        match (complex, double) {
            (false, false) => DType::Float32,
            (false, true) => DType::Float64,
            (true, false) => DType::Complex64,
            (true, true) => DType::Complex128,
        }
    }

    /// Real flops per multiply-add: 8 for complex, 2 for real.
    pub fn flops_per_fma(self) -> f64 {
        if self.is_complex() {
            8.0
        } else {
            2.0
        }
    }

    /// The type of a NumPy type string (`<c16`, `>f4`, …), if srcflow reads it.
    pub fn from_descr(descr: &str) -> Option<DType> {
        match descr.get(1..)? {
            "f4" => Some(DType::Float32),
            "f8" => Some(DType::Float64),
            "c8" => Some(DType::Complex64),
            "c16" => Some(DType::Complex128),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                format!("unknown dtype '{s}'; expected float32, float64, complex64 or complex128")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_numpy() {
        use DType::*;
        assert_eq!(Float32.promote(Float32), Float32);
        assert_eq!(Float32.promote(Float64), Float64);
        assert_eq!(Float32.promote(Complex64), Complex64);
        assert_eq!(Float64.promote(Complex64), Complex128);
        assert_eq!(Complex64.promote(Complex128), Complex128);
        assert_eq!("complex64".parse::<DType>(), Ok(Complex64));
        assert!("int8".parse::<DType>().is_err());
        assert_eq!(DType::from_descr("<c8"), Some(Complex64));
        assert_eq!(DType::from_descr(">f8"), Some(Float64));
    }
}
