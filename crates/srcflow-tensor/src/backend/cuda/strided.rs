//! `Strided`: where the elements of a contiguous block sit in another tensor, as the gather and
//! scatter kernels of `kernels/strided_copy.cu` take it.

use crate::error::{Error, Result};
use crate::tensor::row_major_strides;
use cudarc::driver::DeviceRepr;
use std::ops::Range;

/// The most axes a strided copy takes (`MAX_RANK` in `kernels/types.cuh`).
const MAX_RANK: usize = 8;

/// Element `(i_0, …)` of a contiguous block of `dims` sits at `offset + Σ i_d · strides[d]` of
/// another tensor. Laid out as the `Strided` struct of `kernels/types.cuh`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Strided {
    rank: i32,
    offset: i64,
    dims: [i64; MAX_RANK],
    strides: [i64; MAX_RANK],
}

// SAFETY: `#[repr(C)]` plain integers, as the kernels declare the struct.
unsafe impl DeviceRepr for Strided {}

impl Strided {
    /// A block of `dims` at `offset` with `strides`, or an error past [`MAX_RANK`] axes.
    fn new(dims: &[usize], strides: &[usize], offset: usize) -> Result<Self> {
        if dims.len() > MAX_RANK {
            return Err(Error::Invalid(format!(
                "the CUDA backend copies tensors of at most {MAX_RANK} axes, found {dims:?}"
            )));
        }
        let mut layout = Strided {
            rank: dims.len() as i32,
            offset: offset as i64,
            dims: [1; MAX_RANK],
            strides: [0; MAX_RANK],
        };
        for (d, (&dim, &stride)) in dims.iter().zip(strides).enumerate() {
            layout.dims[d] = dim as i64;
            layout.strides[d] = stride as i64;
        }
        Ok(layout)
    }

    /// Axis `i` of the block is axis `perm[i]` of a tensor of `dims`: a permute as a gather.
    pub fn permuted(dims: &[usize], perm: &[usize]) -> Result<Self> {
        let strides = row_major_strides(dims);
        let block: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
        let block_strides: Vec<usize> = perm.iter().map(|&p| strides[p]).collect();
        Strided::new(&block, &block_strides, 0)
    }

    /// The entries `range` along `axis` of a tensor of `dims`: a slice as a gather, or where a
    /// part goes in a whole as a scatter.
    pub fn along(dims: &[usize], axis: usize, range: Range<usize>) -> Result<Self> {
        let strides = row_major_strides(dims);
        let mut block = dims.to_vec();
        block[axis] = range.len();
        Strided::new(&block, &strides, range.start * strides[axis])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The positions a kernel reads for each element of the block, in order.
    fn positions(layout: &Strided) -> Vec<i64> {
        let n: i64 = layout.dims[..layout.rank as usize].iter().product();
        (0..n)
            .map(|mut i| {
                let mut position = layout.offset;
                for d in (0..layout.rank as usize).rev() {
                    position += (i % layout.dims[d]) * layout.strides[d];
                    i /= layout.dims[d];
                }
                position
            })
            .collect()
    }

    #[test]
    fn a_permute_reads_the_transposed_order() {
        let layout = Strided::permuted(&[2, 3], &[1, 0]).unwrap();
        assert_eq!(positions(&layout), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn a_slice_reads_its_range_of_every_outer_block() {
        let layout = Strided::along(&[2, 4, 3], 1, 1..3).unwrap();
        let expected: Vec<i64> = [3, 4, 5, 6, 7, 8, 15, 16, 17, 18, 19, 20].to_vec();
        assert_eq!(positions(&layout), expected);
    }

    #[test]
    fn too_many_axes_are_refused_by_name() {
        let error = Strided::permuted(&[1; 9], &[0, 1, 2, 3, 4, 5, 6, 7, 8]).unwrap_err();
        assert!(error.to_string().contains("at most 8 axes"));
    }
}
