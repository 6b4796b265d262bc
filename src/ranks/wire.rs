//! How tensors travel between ranks: a header of element type and shapes, then the elements'
//! bytes as they lie in memory (the ranks of a run share one machine type).

use crate::error::{Error, Result};
use crate::tensor::{AnyTensor, Array, DType, Scalar};
use bytemuck::Pod;
use std::sync::Arc;

/// The bytes of `tensors`: their count, then for each its type, rank, dimensions and elements.
pub fn encode_tensors(tensors: &[AnyTensor]) -> Vec<u8> {
    let mut bytes = Vec::new();
    encode_tensors_into(tensors, &mut bytes);
    bytes
}

/// Writes the bytes of `tensors` ([`encode_tensors`]) over `bytes`, whose memory it reuses.
pub fn encode_tensors_into(tensors: &[AnyTensor], bytes: &mut Vec<u8>) {
    let len = encoded_len(tensors);
    match bytes.capacity() < len {
        // A new buffer: growing the old one would copy what it held.
        true => *bytes = Vec::with_capacity(len),
        false => bytes.clear(),
    }
    push_u64(bytes, tensors.len() as u64);
    for tensor in tensors {
        push_u64(bytes, type_code(tensor.dtype()));
        push_u64(bytes, tensor.shape().len() as u64);
        for &dim in tensor.shape() {
            push_u64(bytes, dim as u64);
        }
        crate::with_array!(tensor, a => bytes.extend_from_slice(bytemuck::cast_slice(a.data())));
    }
}

/// How many bytes [`encode_tensors`] writes for `tensors`.
fn encoded_len(tensors: &[AnyTensor]) -> usize {
    let header = |t: &AnyTensor| 8 * (2 + t.shape().len());
    8 + tensors
        .iter()
        .map(|t| header(t) + t.bytes() as usize)
        .sum::<usize>()
}

/// The tensors `encode_tensors` wrote into `bytes`; an error naming `what` when they are
/// cut short or malformed.
pub fn decode_tensors(bytes: &[u8], what: &str) -> Result<Vec<AnyTensor>> {
    let mut reader = Reader { bytes, at: 0, what };
    let count = reader.u64()? as usize;
    (0..count).map(|_| reader.tensor()).collect()
}

/// The code of `dtype` on the wire.
fn type_code(dtype: DType) -> u64 {
    match dtype {
        DType::Float32 => 0,
        DType::Float64 => 1,
        DType::Complex64 => 2,
        DType::Complex128 => 3,
    }
}

fn push_u64(bytes: &mut Vec<u8>, value: u64) {
    bytes.extend_from_slice(&value.to_le_bytes());
}

/// Reads encoded tensors from the front of `bytes`.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    what: &'a str,
}

impl Reader<'_> {
    /// The next `len` bytes.
    fn take(&mut self, len: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(len).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| {
            Error::Invalid(format!(
                "{}: {} bytes arrived, more were expected at byte {}",
                self.what,
                self.bytes.len(),
                self.at
            ))
        })?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u64(&mut self) -> Result<u64> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// The next tensor.
    fn tensor(&mut self) -> Result<AnyTensor> {
        let code = self.u64()?;
        let rank = self.u64()? as usize;
        let shape = (0..rank)
            .map(|_| self.u64().map(|d| d as usize))
            .collect::<Result<Vec<_>>>()?;
        let len = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| {
                Error::Invalid(format!("{}: a shape {shape:?} past memory", self.what))
            })?;
        Ok(match code {
            0 => AnyTensor::Float32(Arc::new(self.array(shape, len)?)),
            1 => AnyTensor::Float64(Arc::new(self.array(shape, len)?)),
            2 => AnyTensor::Complex64(Arc::new(self.array(shape, len)?)),
            3 => AnyTensor::Complex128(Arc::new(self.array(shape, len)?)),
            other => {
                return Err(Error::Invalid(format!(
                    "{}: element type code {other} is not one of 0-3",
                    self.what
                )))
            }
        })
    }

    /// An array of `shape` (`len` elements) from the next bytes.
    fn array<T: Pod + Scalar>(&mut self, shape: Vec<usize>, len: usize) -> Result<Array<T>> {
        let size = len.saturating_mul(std::mem::size_of::<T>());
        let data: Vec<T> = bytemuck::pod_collect_to_vec(self.take(size)?);
        Array::new(shape, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;

    #[test]
    fn tensors_round_trip_and_short_input_is_an_error() {
        let a = Array::new(vec![2, 3], (0..6).map(|i| i as f32).collect()).unwrap();
        let b = Array::new(
            vec![2],
            vec![Complex64::new(1.0, -2.0), Complex64::new(0.5, 3.0)],
        )
        .unwrap();
        let tensors = vec![AnyTensor::from(a), AnyTensor::from(b)];
        let bytes = encode_tensors(&tensors);
        let back = decode_tensors(&bytes, "test").unwrap();
        assert_eq!(back.len(), 2);
        for (x, y) in tensors.iter().zip(&back) {
            assert_eq!(x.shape(), y.shape());
            assert_eq!(x.to_c64().data(), y.to_c64().data());
        }
        let err = decode_tensors(&bytes[..bytes.len() - 1], "the test's values")
            .unwrap_err()
            .to_string();
        assert!(err.contains("the test's values"), "{err}");
    }
}
