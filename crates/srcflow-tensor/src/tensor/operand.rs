//! `Operand`: what a kernel contracts — real data, or shapes alone for planning.
//!
//! Kernels are written once, generic over [`Operand`]. Run on tensors of a backend
//! ([`crate::backend::BackendTensor`]) they compute; run on [`Labeled<Shape>`] they only count
//! flops and bytes, so the graph, the planner and the simulator read exactly the numbers the
//! kernels will spend.

use super::permute::keeps_layout;
use super::plan::ContractionPlan;
use super::{Leg, Meter, Work, C64};
use crate::error::Result;

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
    fn contract(&self, other: &Self, batch: &[Leg], meter: &mut Meter) -> Result<Self>;
    /// Reorders the axes to `order` (without copying when the elements stay in place).
    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Result<Self>;

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
pub(crate) fn permutation(legs: &[Leg], order: &[Leg]) -> Vec<usize> {
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

    fn contract(&self, other: &Self, batch: &[Leg], meter: &mut Meter) -> Result<Self> {
        let plan = ContractionPlan::new(&self.legs, &self.value, &other.legs, &other.value, batch);
        let work = plan.work(&self.value, &other.value);
        meter.record_step(work, plan.peak_bytes(&self.value, &other.value));
        Ok(Labeled {
            legs: plan.legs,
            value: plan.dims,
        })
    }

    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Result<Self> {
        let perm = permutation(&self.legs, order);
        let len: usize = self.value.iter().product();
        if !keeps_layout(&self.value, &perm) {
            let bytes = 2 * len * std::mem::size_of::<C64>();
            meter.record_step(Work::copy(len), bytes as u64);
        }
        Ok(Labeled {
            legs: order.to_vec(),
            value: perm.iter().map(|&p| self.value[p]).collect(),
        })
    }
}
