//! `Array`: a dense array in row-major (C) order, of any [`Scalar`] element type.

use super::Scalar;
use crate::error::{Error, Result};

/// complex128, the element type of trains held in memory.
pub type C64 = num_complex::Complex64;

/// A dense complex128 array: the cores of in-memory trains.
pub type Tensor = Array<C64>;

/// A dense array in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct Array<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T: Scalar> Array<T> {
    /// Wraps `data` as an array of `shape`; fails when the lengths disagree.
    pub fn new(shape: Vec<usize>, data: Vec<T>) -> Result<Self> {
        let expected: usize = shape.iter().product();
        if expected != data.len() {
            return Err(Error::Shape(format!(
                "array of shape {shape:?} needs {expected} elements, found {}",
                data.len()
            )));
        }
        Ok(Array { shape, data })
    }

    /// An array of zeros.
    pub fn zeros(shape: Vec<usize>) -> Self {
        let len = shape.iter().product();
        Array {
            shape,
            data: vec![T::zero(); len],
        }
    }

    /// An array of ones.
    pub fn ones(shape: Vec<usize>) -> Self {
        let len = shape.iter().product();
        Array {
            shape,
            data: vec![T::one(); len],
        }
    }

    /// The dimensions, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements in row-major order.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// The elements in row-major order, writable.
    pub fn data_mut(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// Gives up the elements.
    pub fn into_data(self) -> Vec<T> {
        self.data
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the array holds no element.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Bytes held by the elements.
    pub fn bytes(&self) -> u64 {
        (self.data.len() * std::mem::size_of::<T>()) as u64
    }

    /// The same elements seen with another shape of equal size.
    pub fn reshape(self, shape: Vec<usize>) -> Self {
        debug_assert_eq!(shape.iter().product::<usize>(), self.data.len());
        Array {
            shape,
            data: self.data,
        }
    }

    /// Element-wise complex conjugate.
    pub fn conj(&self) -> Self {
        Array {
            shape: self.shape.clone(),
            data: self.data.iter().map(|&z| Scalar::conj(z)).collect(),
        }
    }

    /// Multiplies every element by `factor`.
    pub fn scale(&mut self, factor: T) {
        self.data.iter_mut().for_each(|z| *z *= factor);
    }

    /// Frobenius norm.
    pub fn norm(&self) -> f64 {
        self.data.iter().map(|&z| z.abs2()).sum::<f64>().sqrt()
    }

    /// The same elements converted to `U` (a real type keeps the real parts).
    pub fn cast<U: Scalar>(&self) -> Array<U> {
        Array {
            shape: self.shape.clone(),
            data: self.data.iter().map(|&z| U::from_c64(z.to_c64())).collect(),
        }
    }

    /// A copy of rows `rows` of the leading axis (the batch of sketch columns, for batched values).
    pub fn leading_rows(&self, rows: std::ops::Range<usize>) -> Array<T> {
        let row: usize = self.shape[1..].iter().product();
        let mut shape = self.shape.clone();
        shape[0] = rows.len();
        let data = self.data[rows.start * row..rows.end * row].to_vec();
        Array { shape, data }
    }

    /// Position of the first element that is NaN or infinite, if any.
    pub fn first_non_finite(&self) -> Option<usize> {
        self.data.iter().position(|z| !z.is_finite())
    }
}
