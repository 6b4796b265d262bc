//! Axis permutation of a dense tensor (a strided copy, parallel over rows in the calling
//! thread's pool: [`crate::pool`]).

use super::{Array, Scalar};
use crate::pool::{for_each_chunk, for_each_index};

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
    let len: usize = shape.iter().product();
    assert_eq!(
        data.len(),
        len,
        "{} elements for a shape {shape:?}",
        data.len()
    );
    let (shape, perm) = simplify(shape, perm);
    if is_identity(&perm) {
        return data.to_vec();
    }
    permuted_data(data, &shape, &perm)
}

/// True when permuting `shape` by `perm` leaves every element where it is (only unit axes move):
/// the axes longer than 1 keep their order. Allocates nothing (kernels ask this of every
/// operand).
pub(crate) fn keeps_layout(shape: &[usize], perm: &[usize]) -> bool {
    let mut kept = perm.iter().copied().filter(|&p| shape[p] != 1);
    let Some(mut last) = kept.next() else {
        return true;
    };
    kept.all(|axis| {
        let ordered = axis > last;
        last = axis;
        ordered
    })
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
/// two axes so the inner loops stay long enough to pay for stepping the outer index. When the
/// output's last axis is long and comes from another input axis than the last, and the input's
/// trailing axes before it hold runs of [`SHORTEST_RUN`] elements or more, the copy goes by
/// tiles ([`tiled_data`]).
fn permuted_data<T: Scalar>(src: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let last = shape.len() - 1;
    // Axes the tiles permute, and elements each moves together (a last axis that stays last).
    let (axes, block) = match perm[last] == last {
        true => (last, shape[last]),
        false => (last + 1, 1),
    };
    let tiled = axes >= 2 && perm[axes - 1] != axes - 1 && block < SHORT_ROW;
    let large = src.len() >= TILED_FROM && shape[perm[axes - 1]] >= TILE;
    if tiled && large && run_axes(&shape[..axes], perm[axes - 1]).1 >= SHORTEST_RUN {
        return tiled_data(src, &shape[..axes], &perm[..axes], block);
    }
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
    let slots = &mut out.spare_capacity_mut()[..src.len()];
    for_each_chunk(slots, row * ROWS_PER_TASK, |task, chunk| {
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

/// Side of the square tiles [`tiled_data`] copies, in blocks (16 KB of complex128 each way).
const TILE: usize = 32;

/// Elements from which a permute goes by tiles (1 MB of complex128): smaller arrays stay in
/// cache, where the row copy is as fast.
const TILED_FROM: usize = 1 << 16;

/// Fewest contiguous input elements (of the input's trailing axes) that a tiled copy reads at a
/// time; shorter runs go by rows.
const SHORTEST_RUN: usize = 8;

/// The first of the input's trailing axes (of `shape`) that a tile reads as one contiguous run,
/// and the run's length: from the last axis towards the first, up to the output's last axis
/// `column` (not included) or until the run spans [`TILE`].
fn run_axes(shape: &[usize], column: usize) -> (usize, usize) {
    let (mut first, mut run) = (shape.len(), 1);
    while first > 0 && first - 1 != column && run < TILE {
        first -= 1;
        run *= shape[first];
    }
    (first, run)
}

/// [`permuted_data`] by tiles, where the output's last axis is not the input's: the arrays
/// are `shape` of blocks of `block` contiguous elements, permuted by `perm`. Tiles of `TILE` ×
/// `TILE` blocks, over the input's trailing axes read as one run ([`run_axes`]) and the
/// output's last axis, are read in the input's runs and written in the output's rows, so both
/// sides stay in cache; tasks are rows of tiles, for each index of the other axes.
fn tiled_data<T: Scalar>(src: &[T], shape: &[usize], perm: &[usize], block: usize) -> Vec<T> {
    let last = shape.len() - 1;
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let (in_strides, out_strides) = (row_major_strides(shape), row_major_strides(&out_shape));
    let (first_run_axis, _) = run_axes(shape, perm[last]);
    let position = |axis: usize| perm.iter().position(|&p| p == axis).expect("a permutation");
    // Where each element of a run goes in the output, from the run's first.
    let run_axes = (first_run_axis..shape.len()).map(|a| (shape[a], out_strides[position(a)]));
    let run_offsets = offsets_of(run_axes);
    let others: Vec<usize> = (0..last).filter(|&a| perm[a] < first_run_axis).collect();
    let other_shape: Vec<usize> = others.iter().map(|&a| out_shape[a]).collect();
    let offset = |index: &[usize], stride: &dyn Fn(usize) -> usize| -> usize {
        index.iter().zip(&others).map(|(i, &a)| i * stride(a)).sum()
    };
    let (rows, columns) = (run_offsets.len(), out_shape[last]);
    let column_stride = in_strides[perm[last]];
    let tile_rows = rows.div_ceil(TILE);
    let tasks = other_shape.iter().product::<usize>() * tile_rows;
    let mut out: Vec<T> = Vec::with_capacity(src.len());
    let dst = OutPtr(out.as_mut_ptr());
    for_each_index(tasks, |task| {
        let index = unravel(task / tile_rows, &other_shape);
        let from = offset(&index, &|a| in_strides[perm[a]]);
        let to = offset(&index, &|a| out_strides[a]);
        let first = task % tile_rows * TILE;
        let tile = first..(first + TILE).min(rows);
        for start in (0..columns).step_by(TILE) {
            for row in tile.clone() {
                let to = to + run_offsets[row];
                let columns = start..(start + TILE).min(columns);
                if block == 1 {
                    let from = &src[from + row..];
                    for column in columns {
                        // SAFETY: as below, for blocks of one element.
                        unsafe { dst.write_one(to + column, from[column * column_stride]) };
                    }
                    continue;
                }
                for column in columns {
                    let at = (from + row + column * column_stride) * block;
                    let values = &src[at..at + block];
                    // SAFETY: the block `to + column` lies in the output (an index of its
                    // shape), and each task writes the rows `tile` of its own index of the
                    // other axes: no two tasks write one element.
                    unsafe { dst.write((to + column) * block, values) };
                }
            }
        }
    });
    // SAFETY: the tasks above wrote every element of the output's shape, `src.len()` of them.
    unsafe { out.set_len(src.len()) };
    out
}

/// The output buffer of [`tiled_data`], shared by its tasks, which write disjoint elements.
struct OutPtr<T>(*mut T);

// SAFETY: the tasks that share it write disjoint elements (see `tiled_data`).
unsafe impl<T: Send> Sync for OutPtr<T> {}

impl<T: Copy> OutPtr<T> {
    /// Writes `value` at element `at`.
    ///
    /// # Safety
    /// `at` lies in the buffer, and no other thread writes there.
    unsafe fn write_one(&self, at: usize, value: T) {
        // SAFETY: the caller's contract.
        unsafe { self.0.add(at).write(value) }
    }

    /// Writes `values` from element `at` on.
    ///
    /// # Safety
    /// `at..at + values.len()` lies in the buffer, and no other thread writes there.
    unsafe fn write(&self, at: usize, values: &[T]) {
        match values {
            // SAFETY: the caller's contract.
            [one] => unsafe { self.0.add(at).write(*one) },
            // SAFETY: as above; `values` is a slice of the input, never of this buffer.
            _ => unsafe {
                std::ptr::copy_nonoverlapping(values.as_ptr(), self.0.add(at), values.len())
            },
        }
    }
}

/// The offset of every element of the axes `axes` (size and stride each), in row-major order of
/// those axes, from the first.
pub(crate) fn offsets_of(axes: impl IntoIterator<Item = (usize, usize)>) -> Vec<usize> {
    let mut offsets = vec![0];
    for (size, stride) in axes {
        offsets = offsets
            .iter()
            .flat_map(|&o| (0..size).map(move |i| o + i * stride))
            .collect();
    }
    offsets
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
pub(crate) fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for i in (0..shape.len()).rev() {
        index[i] = flat % shape[i];
        flat /= shape[i];
    }
    index
}

/// Steps `index` to the next row (odometer order) and returns the new source offset.
pub(crate) fn advance(
    index: &mut [usize],
    shape: &[usize],
    strides: &[usize],
    mut offset: usize,
) -> usize {
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

/// True when `perm` leaves every axis in place.
pub(crate) fn is_identity(perm: &[usize]) -> bool {
    perm.iter().enumerate().all(|(i, &p)| i == p)
}

#[cfg(test)]
mod tests {
    use super::{is_identity, keeps_layout, simplify};
    use crate::tensor::{Tensor, C64};

    /// Every permutation of `0..n`.
    fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut all = Vec::new();
        for shorter in permutations(n - 1) {
            for at in 0..n {
                let mut perm = shorter.clone();
                perm.insert(at, n - 1);
                all.push(perm);
            }
        }
        all
    }

    #[test]
    fn keeps_layout_is_an_identity_once_simplified() {
        for shape in [
            [1, 1, 1, 1],
            [2, 1, 3, 1],
            [1, 4, 1, 5],
            [2, 3, 4, 5],
            [1, 2, 2, 1],
        ] {
            for perm in permutations(4) {
                let simplified = is_identity(&simplify(&shape, &perm).1);
                assert_eq!(
                    keeps_layout(&shape, &perm),
                    simplified,
                    "{shape:?} {perm:?}"
                );
            }
        }
    }

    #[test]
    fn tiled_and_row_copies_agree_on_every_permutation() {
        let shape = [40, 3, 70, 33, 2];
        let len = shape.iter().product();
        let data: Vec<C64> = (0..len).map(|x| C64::new(x as f64, -(x as f64))).collect();
        let t = Tensor::new(shape.to_vec(), data).unwrap();
        let perms = [
            [0, 2, 1, 3, 4],
            [3, 1, 2, 0, 4],
            [2, 3, 0, 1, 4],
            [0, 1, 3, 2, 4],
            [1, 3, 0, 2, 4],
            [4, 1, 2, 0, 3],
            [2, 0, 1, 4, 3],
            // The output's last axis from the first, the input's last short (runs of 33 × 2
            // and 70 × 33 × 2 read at once).
            [3, 1, 4, 2, 0],
            [4, 2, 3, 1, 0],
            [1, 4, 3, 2, 0],
            [4, 0, 3, 2, 1],
        ];
        for perm in perms {
            let p = t.permute(&perm);
            let out_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
            let strides = super::row_major_strides(&shape);
            for (flat, value) in p.data().iter().enumerate() {
                let index = super::unravel(flat, &out_shape);
                let from: usize = index.iter().zip(perm).map(|(i, a)| i * strides[a]).sum();
                assert_eq!(*value, t.data()[from], "{perm:?} at {index:?}");
            }
        }
    }

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
