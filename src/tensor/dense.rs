//! `Tensor`: a dense complex128 array in row-major (C) order.

use crate::error::{Error, Result};

/// The element type of every computation: complex128.
pub type C64 = num_complex::Complex64;

/// A dense complex array in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    shape: Vec<usize>,
    data: Vec<C64>,
}

impl Tensor {
    /// Wraps `data` as an array of `shape`; fails when the lengths disagree.
    pub fn new(shape: Vec<usize>, data: Vec<C64>) -> Result<Self> {
        let expected: usize = shape.iter().product();
        if expected != data.len() {
            return Err(Error::Shape(format!(
                "array of shape {shape:?} needs {expected} elements, found {}",
                data.len()
            )));
        }
        Ok(Tensor { shape, data })
    }

    /// An array of zeros.
    pub fn zeros(shape: Vec<usize>) -> Self {
        let len = shape.iter().product();
        Tensor {
            shape,
            data: vec![C64::new(0.0, 0.0); len],
        }
    }

    /// An array of ones.
    pub fn ones(shape: Vec<usize>) -> Self {
        let len = shape.iter().product();
        Tensor {
            shape,
            data: vec![C64::new(1.0, 0.0); len],
        }
    }

    /// The dimensions, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements in row-major order.
    pub fn data(&self) -> &[C64] {
        &self.data
    }

    /// The elements in row-major order, writable.
    pub fn data_mut(&mut self) -> &mut [C64] {
        &mut self.data
    }

    /// Gives up the elements.
    pub fn into_data(self) -> Vec<C64> {
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
        (self.data.len() * std::mem::size_of::<C64>()) as u64
    }

    /// The same elements seen with another shape of equal size.
    pub fn reshape(self, shape: Vec<usize>) -> Self {
        debug_assert_eq!(shape.iter().product::<usize>(), self.data.len());
        Tensor {
            shape,
            data: self.data,
        }
    }

    /// Element-wise complex conjugate.
    pub fn conj(&self) -> Self {
        Tensor {
            shape: self.shape.clone(),
            data: self.data.iter().map(|z| z.conj()).collect(),
        }
    }

    /// Multiplies every element by `factor`.
    pub fn scale(&mut self, factor: C64) {
        self.data.iter_mut().for_each(|z| *z *= factor);
    }

    /// Frobenius norm.
    pub fn norm(&self) -> f64 {
        self.data.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
    }

    /// A copy of rows `rows` of the leading axis (the batch of sketch columns, for batched values).
    pub fn leading_rows(&self, rows: std::ops::Range<usize>) -> Tensor {
        let row: usize = self.shape[1..].iter().product();
        let mut shape = self.shape.clone();
        shape[0] = rows.len();
        let data = self.data[rows.start * row..rows.end * row].to_vec();
        Tensor { shape, data }
    }

    /// Overwrites the rows of the leading axis from `start` on with `rows` (same trailing shape).
    pub fn put_leading_rows(&mut self, start: usize, rows: &Tensor) {
        debug_assert_eq!(self.shape[1..], rows.shape[1..]);
        let row: usize = self.shape[1..].iter().product();
        self.data[start * row..start * row + rows.data.len()].copy_from_slice(&rows.data);
    }

    /// Overwrites the entries of the last axis from `start` on with `columns` (same leading
    /// shape).
    pub fn put_trailing_columns(&mut self, start: usize, columns: &Tensor) {
        let last = self.shape.len() - 1;
        debug_assert_eq!(self.shape[..last], columns.shape[..last]);
        let (total, width) = (self.shape[last], columns.shape[last]);
        for (row, part) in columns.data.chunks_exact(width).enumerate() {
            let at = row * total + start;
            self.data[at..at + width].copy_from_slice(part);
        }
    }

    /// Position of the first element that is NaN or infinite, if any.
    pub fn first_non_finite(&self) -> Option<usize> {
        self.data
            .iter()
            .position(|z| !(z.re.is_finite() && z.im.is_finite()))
    }
}
