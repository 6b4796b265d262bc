//! Axis permutation of a dense tensor (a strided copy, parallel over rows).

use super::plan::is_identity;
use super::{Array, Scalar};
use rayon::prelude::*;

/// Rows of the output copied by one rayon task.
const ROWS_PER_TASK: usize = 1024;

/// A last axis shorter than this is copied together with the axis before it.
const SHORT_ROW: usize = 64;

impl<T: Scalar> Array<T> {
    /// A copy with axes reordered: axis `i` of the result is axis `perm[i]` of `self`.
    pub fn permute(&self, perm: &[usize]) -> Array<T> {
        let out_shape: Vec<usize> = perm.iter().map(|&p| self.shape()[p]).collect();
        let (shape, simple) = simplify(self.shape(), perm);
        if is_identity(&simple) {
            return self.clone().reshape(out_shape);
        }
        let data = permuted_data(self.data(), &shape, &simple);
        Array::new(out_shape, data).expect("same number of elements")
    }
}

/// The elements of the row-major array `data` of `shape` with axes reordered by `perm`
/// (axis `i` of the result is axis `perm[i]`).
pub(crate) fn permute_elements<T: Scalar>(data: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    debug_assert_eq!(perm.len(), shape.len());
    let (shape, perm) = simplify(shape, perm);
    if is_identity(&perm) {
        return data.to_vec();
    }
    permuted_data(data, &shape, &perm)
}

/// True when permuting `shape` by `perm` leaves every element where it is (only unit axes move).
pub(crate) fn keeps_layout(shape: &[usize], perm: &[usize]) -> bool {
    is_identity(&simplify(shape, perm).1)
}

/// The same permutation with unit axes dropped and axes that stay neighbours merged.
fn simplify(shape: &[usize], perm: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let kept: Vec<usize> = perm.iter().copied().filter(|&p| shape[p] != 1).collect();
    // groups of output-consecutive axes that are also input-consecutive
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &p in &kept {
        match groups.last_mut() {
            Some(g) if next_kept(shape, *g.last().unwrap()) == Some(p) => g.push(p),
            _ => groups.push(vec![p]),
        }
    }
    let mut by_input: Vec<usize> = (0..groups.len()).collect();
    by_input.sort_by_key(|&g| groups[g][0]);
    let new_shape = by_input
        .iter()
        .map(|&g| groups[g].iter().map(|&p| shape[p]).product())
        .collect();
    let mut new_perm = vec![0; groups.len()];
    for (position, &g) in by_input.iter().enumerate() {
        new_perm[g] = position;
    }
    (new_shape, new_perm)
}

/// The next input axis after `axis` whose size is not 1.
fn next_kept(shape: &[usize], axis: usize) -> Option<usize> {
    (axis + 1..shape.len()).find(|&a| shape[a] != 1)
}

/// Elements of a row-major array of `shape` in the order of axes `perm`.
///
/// The output is written in rows of its last axis; when that axis is short, a row spans the last
/// two axes so the inner loops stay long enough to pay for stepping the outer index.
fn permuted_data<T: Scalar>(src: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let strides = row_major_strides(shape);
    let src_strides: Vec<usize> = perm.iter().map(|&p| strides[p]).collect();
    let rank = out_shape.len();
    let row_axes = if rank >= 2 && out_shape[rank - 1] < SHORT_ROW {
        2
    } else {
        1
    };
    let (outer_shape, row_shape) = out_shape.split_at(rank - row_axes);
    let (outer_strides, row_strides) = src_strides.split_at(rank - row_axes);
    let (n_hi, s_hi) = if row_axes == 2 {
        (row_shape[0], row_strides[0])
    } else {
        (1, 0)
    };
    let (n_lo, s_lo) = (row_shape[row_axes - 1], row_strides[row_axes - 1]);
    let row = n_hi * n_lo;
    let mut out: Vec<T> = Vec::with_capacity(src.len());
    out.spare_capacity_mut()[..src.len()]
        .par_chunks_mut(row * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(task, chunk)| {
            let mut index = unravel(task * ROWS_PER_TASK, outer_shape);
            let mut offset: usize = index.iter().zip(outer_strides).map(|(i, s)| i * s).sum();
            for block in chunk.chunks_mut(row) {
                for (hi, line) in block.chunks_mut(n_lo).enumerate() {
                    let base = offset + hi * s_hi;
                    for (lo, value) in line.iter_mut().enumerate() {
                        value.write(src[base + lo * s_lo]);
                    }
                }
                offset = advance(&mut index, outer_shape, outer_strides, offset);
            }
        });
    // SAFETY: the chunks above cover all `src.len()` slots and every slot was written.
    unsafe { out.set_len(src.len()) };
    out
}

/// Row-major strides (in elements) of an array of `shape`.
pub(crate) fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// Multi-index of the `flat`-th element of an array of `shape` (row-major).
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for i in (0..shape.len()).rev() {
        index[i] = flat % shape[i];
        flat /= shape[i];
    }
    index
}

/// Steps `index` to the next row (odometer order) and returns the new source offset.
fn advance(index: &mut [usize], shape: &[usize], strides: &[usize], mut offset: usize) -> usize {
    for i in (0..index.len()).rev() {
        index[i] += 1;
        offset += strides[i];
        if index[i] < shape[i] {
            return offset;
        }
        offset -= strides[i] * index[i];
        index[i] = 0;
    }
    offset
}

#[cfg(test)]
mod tests {
    use crate::tensor::{Tensor, C64};

    #[test]
    fn permute_moves_every_element_to_its_transposed_place() {
        let data = (0..24).map(|x| C64::new(x as f64, 0.0)).collect();
        let t = Tensor::new(vec![2, 3, 4], data).unwrap();
        let p = t.permute(&[2, 0, 1]);
        assert_eq!(p.shape(), &[4, 2, 3]);
        let q = Tensor::new(vec![2, 1, 3, 4], t.data().to_vec())
            .unwrap()
            .permute(&[1, 2, 3, 0]);
        assert_eq!(q.shape(), &[1, 3, 4, 2]);
        for i in 0..2 {
            for jk in 0..12 {
                assert_eq!(q.data()[jk * 2 + i], t.data()[i * 12 + jk]);
            }
        }
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    assert_eq!(p.data()[k * 6 + i * 3 + j], t.data()[i * 12 + j * 4 + k]);
                }
            }
        }
    }
}
