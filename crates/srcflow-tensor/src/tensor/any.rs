//! `AnyTensor`: an array of whichever element type a run computes in, as values flow between
//! tasks, files and backends.

use super::{Array, DType, Scalar};
use crate::error::{Error, Result};
use num_complex::{Complex32, Complex64};
use std::sync::Arc;

/// A dense array of one of the four element types, shared (cloning it copies no element).
#[derive(Clone, Debug, PartialEq)]
pub enum AnyTensor {
    /// float32 elements.
    Float32(Arc<Array<f32>>),
    /// float64 elements.
    Float64(Arc<Array<f64>>),
    /// complex64 elements.
    Complex64(Arc<Array<Complex32>>),
    /// complex128 elements.
    Complex128(Arc<Array<Complex64>>),
}

/// Runs `$body` with `$a` bound to the typed array inside `$any`, whatever its type.
#[macro_export]
#[doc(hidden)]
macro_rules! with_array {
    ($any:expr, $a:ident => $body:expr) => {
        match $any {
            $crate::tensor::AnyTensor::Float32($a) => $body,
            $crate::tensor::AnyTensor::Float64($a) => $body,
            $crate::tensor::AnyTensor::Complex64($a) => $body,
            $crate::tensor::AnyTensor::Complex128($a) => $body,
        }
    };
}

/// Runs `$body` with `$a` bound to the typed array inside `$any`, rewrapping its array result.
macro_rules! map_array {
    ($any:expr, $a:ident => $body:expr) => {
        match $any {
            AnyTensor::Float32($a) => AnyTensor::Float32(Arc::new($body)),
            AnyTensor::Float64($a) => AnyTensor::Float64(Arc::new($body)),
            AnyTensor::Complex64($a) => AnyTensor::Complex64(Arc::new($body)),
            AnyTensor::Complex128($a) => AnyTensor::Complex128(Arc::new($body)),
        }
    };
}

/// An array type that converts to and from [`AnyTensor`].
pub trait Typed: Scalar {
    /// Wraps an array of this type.
    fn wrap(array: Array<Self>) -> AnyTensor;
    /// The shared array, if `any` holds this type.
    fn unwrap(any: &AnyTensor) -> Option<&Arc<Array<Self>>>;
    /// The shared array to change, if `any` holds this type.
    fn unwrap_mut(any: &mut AnyTensor) -> Option<&mut Arc<Array<Self>>>;
}

macro_rules! typed {
    ($t:ty, $variant:ident) => {
        impl Typed for $t {
            fn wrap(array: Array<Self>) -> AnyTensor {
                AnyTensor::$variant(Arc::new(array))
            }
            fn unwrap(any: &AnyTensor) -> Option<&Arc<Array<Self>>> {
                match any {
                    AnyTensor::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn unwrap_mut(any: &mut AnyTensor) -> Option<&mut Arc<Array<Self>>> {
                match any {
                    AnyTensor::$variant(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}

typed!(f32, Float32);
typed!(f64, Float64);
typed!(Complex32, Complex64);
typed!(Complex64, Complex128);

impl<T: Typed> From<Array<T>> for AnyTensor {
    fn from(array: Array<T>) -> Self {
        T::wrap(array)
    }
}

impl AnyTensor {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            AnyTensor::Float32(_) => DType::Float32,
            AnyTensor::Float64(_) => DType::Float64,
            AnyTensor::Complex64(_) => DType::Complex64,
            AnyTensor::Complex128(_) => DType::Complex128,
        }
    }

    /// The dimensions, outermost first.
    pub fn shape(&self) -> &[usize] {
        with_array!(self, a => a.shape())
    }

    /// Bytes held by the elements.
    pub fn bytes(&self) -> u64 {
        with_array!(self, a => a.bytes())
    }

    /// The shared typed array, or an error naming `what` when the element type differs.
    pub fn typed<T: Typed>(&self, what: &dyn std::fmt::Display) -> Result<Arc<Array<T>>> {
        T::unwrap(self).cloned().ok_or_else(|| {
            Error::Invalid(format!(
                "{what} computes in {} but got {} data",
                T::DTYPE,
                self.dtype()
            ))
        })
    }

    /// The typed array itself when nothing else shares it (a copy when something does), or an
    /// error naming `what` when the element type differs: how a caller takes back the memory
    /// it lent to a train (`Train::into_cores`, then this).
    pub fn into_array<T: Typed>(self, what: &dyn std::fmt::Display) -> Result<Array<T>> {
        let shared = self.typed::<T>(what)?;
        drop(self);
        Ok(Arc::unwrap_or_clone(shared))
    }

    /// The same elements as `dtype` (a real type keeps the real parts); no copy when the type
    /// is already `dtype`.
    pub fn cast(self, dtype: DType) -> AnyTensor {
        if self.dtype() == dtype {
            return self;
        }
        with_array!(&self, a => match dtype {
            DType::Float32 => f32::wrap(a.cast()),
            DType::Float64 => f64::wrap(a.cast()),
            DType::Complex64 => Complex32::wrap(a.cast()),
            DType::Complex128 => Complex64::wrap(a.cast()),
        })
    }

    /// The elements as complex128.
    pub fn to_c64(&self) -> Array<Complex64> {
        with_array!(self, a => a.cast())
    }

    /// The same elements seen with another shape of equal size.
    pub fn reshape(self, shape: Vec<usize>) -> Self {
        map_array!(self, a => Arc::unwrap_or_clone(a).reshape(shape))
    }

    /// A copy with axes reordered (see [`Array::permute`]).
    pub fn permute(&self, perm: &[usize]) -> Self {
        map_array!(self, a => a.permute(perm))
    }

    /// Element-wise complex conjugate.
    pub fn conj(&self) -> Self {
        map_array!(self, a => a.conj())
    }

    /// An array of zeros of `dtype`.
    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Self {
        match dtype {
            DType::Float32 => f32::wrap(Array::zeros(shape)),
            DType::Float64 => f64::wrap(Array::zeros(shape)),
            DType::Complex64 => Complex32::wrap(Array::zeros(shape)),
            DType::Complex128 => Complex64::wrap(Array::zeros(shape)),
        }
    }

    /// A copy of rows `rows` of the leading axis.
    pub fn leading_rows(&self, rows: std::ops::Range<usize>) -> Self {
        map_array!(self, a => a.leading_rows(rows))
    }

    /// Position of the first element that is NaN or infinite, if any.
    pub fn first_non_finite(&self) -> Option<usize> {
        with_array!(self, a => a.first_non_finite())
    }
}
