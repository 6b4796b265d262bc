//! A batched GEMM whose left operand is read through an axis permutation: its rows are
//! gathered a tile at a time into a buffer that stays in cache and each tile is multiplied
//! there, so a large operand whose summed axes are not contiguous is never copied whole. The
//! CPU backend takes it for products with a short sum and a small right operand, such as the
//! bottom layer's cores in MPO·MPO (131072 × 8 × 8), where the copy and the fresh memory it
//! writes cost more than the GEMM (`benches/kernel_shapes.rs`, "gathered").

use super::cpu::one_product;
use super::Gemm;
use crate::pool::in_pool;
use crate::tensor::{advance, offsets_of, row_major_strides, unravel, Scalar};
use faer::Par;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Rows gathered and multiplied at once: 128 × 32 complex128 (64 KB) at most.
const TILE_ROWS: usize = 128;

/// The longest sum that is gathered. faer computes each element of such a product bit for bit
/// the same whatever the number of rows (its small-matrix and blocked kernels agree up to here,
/// and not at a sum of 512), so a tile, a half-batch and a whole batch give the same bits.
const LONGEST_SUM: usize = 32;

/// Most elements of one right operand (`k × n`) with which the left is gathered; beyond it the
/// GEMM's own packing of a contiguous copy pays for that copy.
const LARGEST_RIGHT: usize = 4096;

/// True when the left operand of `gemm` (as the GEMM's `m × k`, not transposed) is gathered
/// rather than copied into GEMM order first.
pub(super) fn gathers(gemm: &Gemm) -> bool {
    !gemm.transpose_a && gemm.k <= LONGEST_SUM && gemm.k * gemm.n <= LARGEST_RIGHT
}

/// Where the rows of the left operand lie in its stored elements.
struct Gather {
    /// Sizes of the row axes, batch axes first, in the GEMM's order.
    row_dims: Vec<usize>,
    /// Strides of the row axes in the stored tensor.
    row_strides: Vec<usize>,
    /// Offset of each summed element from its row's first, in summation order.
    summed: Vec<usize>,
}

impl Gather {
    /// For a row-major tensor of `dims` read with its axes in the order `perm`, whose trailing
    /// axes, spanning `k` elements, are summed.
    fn new(dims: &[usize], perm: &[usize], k: usize) -> Self {
        let strides = row_major_strides(dims);
        let (mut split, mut span) = (perm.len(), 1);
        while span < k {
            split -= 1;
            span *= dims[perm[split]];
        }
        debug_assert_eq!(span, k, "the trailing axes of {perm:?} span the sum");
        let (rows, summed) = perm.split_at(split);
        let offsets = offsets_of(summed.iter().map(|&axis| (dims[axis], strides[axis])));
        Gather {
            row_dims: rows.iter().map(|&p| dims[p]).collect(),
            row_strides: rows.iter().map(|&p| strides[p]).collect(),
            summed: offsets,
        }
    }

    /// Replaces `tile` with `rows` rows of the operand `a` from row `first` on, one row of `k`
    /// after another.
    fn rows_into<T: Scalar>(&self, a: &[T], first: usize, rows: usize, tile: &mut Vec<T>) {
        tile.clear();
        let mut index = unravel(first, &self.row_dims);
        let mut offset: usize = index
            .iter()
            .zip(&self.row_strides)
            .map(|(i, s)| i * s)
            .sum();
        for _ in 0..rows {
            tile.extend(self.summed.iter().map(|&at| a[offset + at]));
            offset = advance(&mut index, &self.row_dims, &self.row_strides, offset);
        }
    }
}

/// Batches from which [`gathered_gemm`] runs batches in parallel (each one's tiles in turn);
/// fewer run one after another, each one's tiles in parallel.
const PARALLEL_BATCHES: usize = 16;

/// `out = op(a) · op(b)` as [`Gemm`] says, where `a` is a row-major tensor of `dims` whose GEMM
/// operand is its axes in the order `perm` (batch, rows, then summed axes); `gemm.k` and
/// `gemm.m · gemm.n` must not be 0. Every element of `out` is written.
pub(super) fn gathered_gemm<T: Scalar>(
    gemm: Gemm,
    a: &[T],
    dims: &[usize],
    perm: &[usize],
    b: &[T],
    out: &mut [MaybeUninit<T>],
) {
    let Gemm { m, n, k, .. } = gemm;
    let gather = Gather::new(dims, perm, k);
    // The product of tile `tile` of batch `batch` (its right operand `b`) into `out`, gathered
    // into `buffer`.
    let tile_product = |buffer: &mut Vec<T>, batch: usize, tile: usize, b: &[T], out: &mut _| {
        let rows = <[MaybeUninit<T>]>::len(out) / n;
        gather.rows_into(a, batch * m + tile * TILE_ROWS, rows, buffer);
        one_product(Gemm { m: rows, ..gemm }, buffer, b, out, Par::Seq);
    };
    if gemm.batch >= PARALLEL_BATCHES && in_pool() {
        let batches = out
            .par_chunks_mut(m * n)
            .zip(b.par_chunks(k * n))
            .enumerate();
        batches.for_each_init(Vec::new, |buffer, (batch, (out, b))| {
            for (tile, out) in out.chunks_mut(TILE_ROWS * n).enumerate() {
                tile_product(buffer, batch, tile, b, out);
            }
        });
    } else {
        for (batch, (out, b)) in out.chunks_mut(m * n).zip(b.chunks(k * n)).enumerate() {
            if in_pool() {
                let tiles = out.par_chunks_mut(TILE_ROWS * n).enumerate();
                tiles.for_each_init(Vec::new, |buffer, (tile, out)| {
                    tile_product(buffer, batch, tile, b, out)
                });
            } else {
                let mut buffer = Vec::new();
                for (tile, out) in out.chunks_mut(TILE_ROWS * n).enumerate() {
                    tile_product(&mut buffer, batch, tile, b, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{permute_elements, C64};

    /// The gathered product and the product of the permuted copy, bit for bit, for operands of
    /// `dims` read in the order `perm` (batch axes, rows, summed axes), for `gemm`.
    fn both(dims: &[usize], perm: &[usize], gemm: Gemm) -> (Vec<C64>, Vec<C64>) {
        let len: usize = dims.iter().product();
        let a: Vec<C64> = (0..len)
            .map(|i| {
                C64::new(
                    (i * 7919 % 1000) as f64 / 997.0,
                    (i * 104729 % 1000) as f64 / 991.0,
                )
            })
            .collect();
        let b: Vec<C64> = (0..gemm.batch * gemm.k * gemm.n)
            .map(|i| C64::new((i * 31 % 17) as f64 / 13.0, 0.3))
            .collect();
        let size = gemm.batch * gemm.m * gemm.n;
        let mut gathered = Vec::with_capacity(size);
        gathered_gemm(
            gemm,
            &a,
            dims,
            perm,
            &b,
            &mut gathered.spare_capacity_mut()[..size],
        );
        unsafe { gathered.set_len(size) };
        let copy = permute_elements(&a, dims, perm);
        let mut copied = Vec::with_capacity(size);
        for ((a, b), out) in copy
            .chunks(gemm.m * gemm.k)
            .zip(b.chunks(gemm.k * gemm.n))
            .zip(copied.spare_capacity_mut()[..size].chunks_mut(gemm.m * gemm.n))
        {
            one_product(gemm, a, b, out, Par::rayon(2));
        }
        unsafe { copied.set_len(size) };
        (gathered, copied)
    }

    #[test]
    fn a_gathered_product_is_the_product_of_the_copy_bit_for_bit() {
        // MPO·MPO's bottom core: [OutRight, Right(1), Left(0), Up, Join(0)] summed over
        // Right(1) and Join(0). 540 rows: the last tile of 28 is small enough for faer's
        // small-matrix kernel, the others and the copy's product take its blocked one.
        let (gathered, copied) = both(
            &[3, 4, 100, 2, 2],
            &[0, 2, 3, 1, 4],
            Gemm::new(1, 540, 8, 8),
        );
        assert_eq!(gathered, copied);
        // MPO·MPS's environment: batched over Col, summed over Left(0) and Join(0); 131 rows
        // (a last tile of 3).
        let (gathered, copied) = both(&[5, 16, 131, 2], &[0, 2, 1, 3], Gemm::new(5, 131, 16, 32));
        assert_eq!(gathered, copied);
        let conjugated = Gemm {
            conj_a: true,
            transpose_b: true,
            ..Gemm::new(1, 540, 8, 8)
        };
        let (gathered, copied) = both(&[3, 4, 90, 2, 2], &[0, 2, 3, 1, 4], conjugated);
        assert_eq!(gathered, copied);
    }
}
