//! How tensors travel between ranks: a header of element type and shapes, then the elements'
//! bytes as they lie in memory (the ranks of a run share one machine type).

use super::Payload;
use bytemuck::Pod;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, Array, DType, Scalar};
use std::sync::Arc;

/// Tensors as the payload of a collective: their count, then for each its type, rank,
/// dimensions and elements.
pub struct Encoded<'a>(pub &'a [AnyTensor]);

impl Payload for Encoded<'_> {
    fn byte_len(&self) -> usize {
        let header = |t: &AnyTensor| 8 * (2 + t.shape().len());
        8 + self
            .0
            .iter()
            .map(|t| header(t) + t.bytes() as usize)
            .sum::<usize>()
    }

    fn write_to(&self, out: &mut [u8]) {
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&(self.0.len() as u64).to_le_bytes());
        for tensor in self.0 {
            put(&type_code(tensor.dtype()).to_le_bytes());
            put(&(tensor.shape().len() as u64).to_le_bytes());
            for &dim in tensor.shape() {
                put(&(dim as u64).to_le_bytes());
            }
            srcflow_tensor::with_array!(tensor, a => put(bytemuck::cast_slice(a.data())));
        }
        debug_assert_eq!(at, out.len(), "the length written is the length told");
    }
}

/// The tensors [`Encoded`] wrote into `bytes`; an error naming `what` when they are
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

    /// An array of `shape` (`len` elements) from the next bytes: one copy where they lie
    /// aligned for `T` (they do in a collective's buffer of words), else a zeroed vector then
    /// a copy.
    fn array<T: Pod + Scalar>(&mut self, shape: Vec<usize>, len: usize) -> Result<Array<T>> {
        let size = len.saturating_mul(std::mem::size_of::<T>());
        let bytes = self.take(size)?;
        let data: Vec<T> = match bytemuck::try_cast_slice(bytes) {
            Ok(elements) => elements.to_vec(),
            Err(_) => bytemuck::pod_collect_to_vec(bytes),
        };
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
        let bytes = Encoded(&tensors).to_bytes();
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

    #[test]
    fn elements_decode_alike_whether_or_not_they_lie_aligned() {
        let values: Vec<Complex64> = (0..5).map(|i| Complex64::new(i as f64, -0.5)).collect();
        let tensors = vec![AnyTensor::from(
            Array::new(vec![5], values.clone()).unwrap(),
        )];
        let len = Encoded(&tensors).byte_len();
        let mut words = vec![0u64; len.div_ceil(8) + 1];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        Encoded(&tensors).write_to(&mut bytes[..len]);
        let aligned = decode_tensors(&bytes[..len], "aligned").unwrap();
        bytes.copy_within(0..len, 1);
        let shifted = &bytes[1..len + 1];
        assert!(bytemuck::try_cast_slice::<u8, Complex64>(&shifted[32..]).is_err());
        let unaligned = decode_tensors(shifted, "unaligned").unwrap();
        for back in [aligned, unaligned] {
            assert_eq!(back[0].to_c64().data(), &values[..]);
        }
    }
}
