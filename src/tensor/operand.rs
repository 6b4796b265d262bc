//! `Operand`: what a kernel contracts — real data, or shapes alone for planning.
//!
//! Kernels are written once, generic over [`Operand`]. Run on [`Labeled<Tensor>`] they compute;
//! run on [`Labeled<Shape>`] they only count flops and bytes, so the graph, the planner and the
//! simulator read exactly the numbers the kernels will spend.

use super::permute::keeps_layout;
use super::plan::ContractionPlan;
use super::{Array, Leg, Meter, Scalar, C64};
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;
use std::sync::Arc;

/// Dimensions without data: the dry-run stand-in for a tensor.
pub type Shape = Vec<usize>;

/// A value whose axes carry names.
#[derive(Clone, Debug)]
pub struct Labeled<T> {
    /// Name of each axis, outermost first.
    pub legs: Vec<Leg>,
    /// The data (or just its dimensions).
    pub value: T,
}

/// Something a kernel can contract and rearrange by leg names.
pub trait Operand: Sized + Clone {
    /// Names of the axes.
    fn legs(&self) -> &[Leg];
    /// Sizes of the axes.
    fn dims(&self) -> &[usize];
    /// Contracts the shared legs (except `batch`, kept as leading axes).
    fn contract(&self, other: &Self, batch: &[Leg], meter: &mut Meter) -> Self;
    /// Reorders the axes to `order` (without copying when the elements stay in place).
    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Self;

    /// Size of the axis named `leg`.
    fn dim(&self, leg: Leg) -> usize {
        let i = self
            .legs()
            .iter()
            .position(|&l| l == leg)
            .expect("leg present");
        self.dims()[i]
    }
}

/// Positions of `order`'s legs in `legs`.
fn permutation(legs: &[Leg], order: &[Leg]) -> Vec<usize> {
    debug_assert_eq!(legs.len(), order.len());
    order
        .iter()
        .map(|l| legs.iter().position(|x| x == l).expect("leg present"))
        .collect()
}

impl Operand for Labeled<Shape> {
    fn legs(&self) -> &[Leg] {
        &self.legs
    }

    fn dims(&self) -> &[usize] {
        &self.value
    }

    fn contract(&self, other: &Self, batch: &[Leg], meter: &mut Meter) -> Self {
        let plan = ContractionPlan::new(&self.legs, &self.value, &other.legs, &other.value, batch);
        meter.record(plan.flops(), plan.peak_bytes(&self.value, &other.value));
        Labeled {
            legs: plan.legs,
            value: plan.dims,
        }
    }

    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Self {
        let perm = permutation(&self.legs, order);
        let len: usize = self.value.iter().product();
        if !keeps_layout(&self.value, &perm) {
            meter.record(0.0, (2 * len * std::mem::size_of::<C64>()) as u64);
        }
        Labeled {
            legs: order.to_vec(),
            value: perm.iter().map(|&p| self.value[p]).collect(),
        }
    }
}

impl<T: Scalar> Operand for Labeled<Arc<Array<T>>> {
    fn legs(&self) -> &[Leg] {
        &self.legs
    }

    fn dims(&self) -> &[usize] {
        self.value.shape()
    }

    fn contract(&self, other: &Self, batch: &[Leg], meter: &mut Meter) -> Self {
        let (a, b) = (&self.value, &other.value);
        let plan = ContractionPlan::new(&self.legs, a.shape(), &other.legs, b.shape(), batch);
        meter.record(plan.flops(), plan.peak_bytes(a.shape(), b.shape()));
        let a = permuted(a, &plan.perm_a);
        let b = permuted(b, &plan.perm_b);
        let mut out = Array::zeros(plan.dims.clone());
        batched_gemm(&plan, a.data(), b.data(), out.data_mut());
        Labeled {
            legs: plan.legs,
            value: Arc::new(out),
        }
    }

    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Self {
        let perm = permutation(&self.legs, order);
        let shape: Vec<usize> = perm.iter().map(|&p| self.value.shape()[p]).collect();
        let value = if keeps_layout(self.value.shape(), &perm) {
            Arc::new(Arc::unwrap_or_clone(self.value).reshape(shape))
        } else {
            meter.record(0.0, 2 * self.value.bytes());
            Arc::new(self.value.permute(&perm))
        };
        Labeled {
            legs: order.to_vec(),
            value,
        }
    }
}

/// `t` with axes permuted, borrowing when no element moves.
fn permuted<'a, T: Scalar>(t: &'a Array<T>, perm: &[usize]) -> std::borrow::Cow<'a, Array<T>> {
    if keeps_layout(t.shape(), perm) {
        std::borrow::Cow::Borrowed(t)
    } else {
        std::borrow::Cow::Owned(t.permute(perm))
    }
}

/// GEMMs smaller than this (m·n·k) run one per rayon task; larger ones use all threads each.
const SMALL_GEMM: usize = 64 * 64 * 64;

/// `out[b] = a[b] · c[b]` for every batch index `b`, with faer's GEMM.
fn batched_gemm<T: Scalar>(plan: &ContractionPlan, a: &[T], b: &[T], out: &mut [T]) {
    let (m, n, k) = (plan.m, plan.n, plan.k);
    if m * n == 0 {
        return;
    }
    let one_gemm = |a: &[T], b: &[T], out: &mut [T], par: Par| {
        let lhs = MatRef::from_row_major_slice(a, m, k);
        let rhs = MatRef::from_row_major_slice(b, k, n);
        let dst = MatMut::from_row_major_slice_mut(out, m, n);
        faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, T::one(), par);
    };
    let a_blocks = a.chunks(m * k.max(1));
    let b_blocks = b.chunks(k.max(1) * n);
    if plan.batch > 1 && m * n * k < SMALL_GEMM {
        out.par_chunks_mut(m * n)
            .zip(a_blocks.collect::<Vec<_>>())
            .zip(b_blocks.collect::<Vec<_>>())
            .for_each(|((o, a), b)| one_gemm(a, b, o, Par::Seq));
    } else {
        let par = Par::rayon(0);
        out.chunks_mut(m * n)
            .zip(a_blocks)
            .zip(b_blocks)
            .for_each(|((o, a), b)| one_gemm(a, b, o, par));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Tensor;

    fn tensor(shape: Vec<usize>, seed: f64) -> Tensor {
        let len = shape.iter().product::<usize>();
        let data = (0..len)
            .map(|i| C64::new((i as f64 * seed).sin(), (i as f64 + seed).cos()))
            .collect();
        Tensor::new(shape, data).unwrap()
    }

    #[test]
    fn contraction_matches_a_direct_sum_and_the_dry_run_counts_the_same_flops() {
        let a = Labeled {
            legs: vec![Leg::Col, Leg::Left(0), Leg::Up],
            value: Arc::new(tensor(vec![3, 4, 2], 0.3)),
        };
        let b = Labeled {
            legs: vec![Leg::Up, Leg::Col, Leg::Right(0)],
            value: Arc::new(tensor(vec![2, 3, 5], 0.7)),
        };
        let mut meter = Meter::default();
        let c = a.contract(&b, &[Leg::Col], &mut meter);
        assert_eq!(c.legs, vec![Leg::Col, Leg::Left(0), Leg::Right(0)]);
        for col in 0..3 {
            for l in 0..4 {
                for r in 0..5 {
                    let direct: C64 = (0..2)
                        .map(|u| {
                            a.value.data()[col * 8 + l * 2 + u]
                                * b.value.data()[u * 15 + col * 5 + r]
                        })
                        .sum();
                    assert!((c.value.data()[col * 20 + l * 5 + r] - direct).norm() < 1e-14);
                }
            }
        }
        let shape = |t: &Labeled<Arc<Tensor>>| Labeled {
            legs: t.legs.clone(),
            value: t.value.shape().to_vec(),
        };
        let mut dry = Meter::default();
        let d = shape(&a).contract(&shape(&b), &[Leg::Col], &mut dry);
        assert_eq!(d.value, c.value.shape());
        assert_eq!(dry, meter);
        assert_eq!(meter.flops, 8.0 * 3.0 * 4.0 * 5.0 * 2.0);
    }
}
