//! `ContractionPlan`: how two labelled arrays are contracted as one batched GEMM.

use super::permute::keeps_layout;
use super::{Leg, Work};

/// Axis permutations and GEMM sizes for contracting two labelled arrays.
///
/// Legs present in both and named in `batch` stay as batch axes; the other shared legs are
/// summed. The result's legs are `batch ++ free(a) ++ free(b)`.
pub(crate) struct ContractionPlan {
    /// Axis order of `a` as fed to the GEMM: batch, free, summed.
    pub perm_a: Vec<usize>,
    /// Axis order of `b` as fed to the GEMM: batch, summed, free.
    pub perm_b: Vec<usize>,
    /// Axis order of `a` stored as the transpose of its GEMM operand: batch, summed, free.
    pub perm_a_transposed: Vec<usize>,
    /// Axis order of `b` stored as the transpose of its GEMM operand: batch, free, summed.
    pub perm_b_transposed: Vec<usize>,
    /// Legs of the result.
    pub legs: Vec<Leg>,
    /// Dimensions of the result.
    pub dims: Vec<usize>,
    /// Number of independent GEMMs.
    pub batch: usize,
    /// GEMM rows (free part of `a`).
    pub m: usize,
    /// GEMM columns (free part of `b`).
    pub n: usize,
    /// GEMM depth (summed part).
    pub k: usize,
}

impl ContractionPlan {
    /// Plans `a · b` summing over the shared legs that are not in `batch`.
    pub fn new(
        legs_a: &[Leg],
        dims_a: &[usize],
        legs_b: &[Leg],
        dims_b: &[usize],
        batch: &[Leg],
    ) -> Self {
        let pos = |legs: &[Leg], leg: Leg| legs.iter().position(|&l| l == leg);
        let batch_a: Vec<usize> = batch
            .iter()
            .map(|&l| pos(legs_a, l).expect("batch leg in a"))
            .collect();
        let batch_b: Vec<usize> = batch
            .iter()
            .map(|&l| pos(legs_b, l).expect("batch leg in b"))
            .collect();
        let mut sum_a = Vec::new();
        let mut sum_b = Vec::new();
        let mut free_a = Vec::new();
        for (i, &leg) in legs_a.iter().enumerate() {
            if batch.contains(&leg) {
                continue;
            }
            match pos(legs_b, leg) {
                Some(j) => {
                    debug_assert_eq!(dims_a[i], dims_b[j], "leg {leg:?} sizes differ");
                    sum_a.push(i);
                    sum_b.push(j);
                }
                None => free_a.push(i),
            }
        }
        let free_b: Vec<usize> = (0..legs_b.len())
            .filter(|&j| !batch.contains(&legs_b[j]) && pos(legs_a, legs_b[j]).is_none())
            .collect();
        let size =
            |dims: &[usize], axes: &[usize]| axes.iter().map(|&i| dims[i]).product::<usize>();
        let legs = batch_a
            .iter()
            .chain(&free_a)
            .map(|&i| legs_a[i])
            .chain(free_b.iter().map(|&j| legs_b[j]))
            .collect();
        let dims = batch_a
            .iter()
            .chain(&free_a)
            .map(|&i| dims_a[i])
            .chain(free_b.iter().map(|&j| dims_b[j]))
            .collect();
        ContractionPlan {
            batch: size(dims_a, &batch_a),
            m: size(dims_a, &free_a),
            n: size(dims_b, &free_b),
            k: size(dims_a, &sum_a),
            perm_a: [&batch_a[..], &free_a, &sum_a].concat(),
            perm_b: [&batch_b[..], &sum_b, &free_b].concat(),
            perm_a_transposed: [batch_a, sum_a, free_a].concat(),
            perm_b_transposed: [batch_b, free_b, sum_b].concat(),
            legs,
            dims,
        }
    }

    /// The work of the contraction of `a` of `dims_a` by `b` of `dims_b`: its GEMMs and the
    /// copies into GEMM order.
    pub fn work(&self, dims_a: &[usize], dims_b: &[usize]) -> Work {
        let copied = self.copied_elements(dims_a, dims_b);
        let transposed_a = self.layout_a(dims_a) == OperandLayout::Transposed;
        Work::gemm(self.batch, self.m, self.n, self.k, copied, transposed_a)
    }

    /// How `a` of `dims` enters the GEMM.
    pub fn layout_a(&self, dims: &[usize]) -> OperandLayout {
        OperandLayout::of(dims, &self.perm_a, &self.perm_a_transposed)
    }

    /// How `b` of `dims` enters the GEMM.
    pub fn layout_b(&self, dims: &[usize]) -> OperandLayout {
        OperandLayout::of(dims, &self.perm_b, &self.perm_b_transposed)
    }

    /// Elements of the inputs (of `dims_a` and `dims_b`) that must be copied into GEMM order.
    pub fn copied_elements(&self, dims_a: &[usize], dims_b: &[usize]) -> usize {
        let len = |dims: &[usize]| dims.iter().product::<usize>();
        let copied = |layout: OperandLayout, dims: &[usize]| match layout {
            OperandLayout::Copied => len(dims),
            OperandLayout::AsStored | OperandLayout::Transposed => 0,
        };
        copied(self.layout_a(dims_a), dims_a) + copied(self.layout_b(dims_b), dims_b)
    }

    /// Bytes alive at the peak: both inputs, their permuted copies where needed, and the result.
    pub fn peak_bytes(&self, dims_a: &[usize], dims_b: &[usize]) -> u64 {
        let len = |dims: &[usize]| dims.iter().product::<usize>();
        let elements = len(dims_a)
            + len(dims_b)
            + self.copied_elements(dims_a, dims_b)
            + self.batch * self.m * self.n;
        (elements * std::mem::size_of::<super::C64>()) as u64
    }
}

/// How an operand enters a GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OperandLayout {
    /// As stored: its axes are already in GEMM order.
    AsStored,
    /// Stored as the transpose of the GEMM's operand, which the GEMM reads without a copy.
    Transposed,
    /// Only after a permuting copy into GEMM order.
    Copied,
}

impl OperandLayout {
    /// The layout of an operand of `dims` whose GEMM order is `perm`, or `transposed` for its
    /// transpose.
    fn of(dims: &[usize], perm: &[usize], transposed: &[usize]) -> Self {
        if keeps_layout(dims, perm) {
            OperandLayout::AsStored
        } else if keeps_layout(dims, transposed) {
            OperandLayout::Transposed
        } else {
            OperandLayout::Copied
        }
    }
}
