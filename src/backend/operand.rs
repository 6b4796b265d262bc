//! `BackendTensor`: a tensor on a backend as a kernel's [`Operand`]: each contraction is one
//! batched GEMM of the backend, after the permutes that bring the operands into GEMM order.

use super::{Backend, DeviceTensor, Gemm};
use crate::error::Result;
use crate::tensor::{keeps_layout, permutation, ContractionPlan, Labeled, Leg, Meter, Operand};

/// A tensor held by `backend`, which runs what a kernel asks of it.
#[derive(Clone)]
pub struct BackendTensor<'b> {
    /// The backend that holds the tensor and runs the primitives.
    pub backend: &'b dyn Backend,
    /// The tensor.
    pub tensor: DeviceTensor,
}

impl<'b> BackendTensor<'b> {
    /// `tensor` with axes reordered by `perm`, without a copy when no element moves.
    fn permuted(&self, perm: &[usize]) -> Result<DeviceTensor> {
        let dims: Vec<usize> = perm.iter().map(|&p| self.tensor.dims()[p]).collect();
        if keeps_layout(self.tensor.dims(), perm) {
            Ok(self.tensor.clone().reshaped(dims))
        } else {
            self.backend.permute(&self.tensor, perm)
        }
    }

    /// The same backend holding `tensor`.
    fn with(&self, tensor: DeviceTensor) -> Self {
        BackendTensor {
            backend: self.backend,
            tensor,
        }
    }
}

impl Operand for Labeled<BackendTensor<'_>> {
    fn legs(&self) -> &[Leg] {
        &self.legs
    }

    fn dims(&self) -> &[usize] {
        self.value.tensor.dims()
    }

    fn contract(&self, other: &Self, batch: &[Leg], meter: &mut Meter) -> Result<Self> {
        let (a, b) = (&self.value, &other.value);
        let (da, db) = (a.tensor.dims(), b.tensor.dims());
        let plan = ContractionPlan::new(&self.legs, da, &other.legs, db, batch);
        meter.record(plan.flops(), plan.peak_bytes(da, db));
        let gemm = Gemm {
            batch: plan.batch,
            m: plan.m,
            n: plan.n,
            k: plan.k,
        };
        let (pa, pb) = (a.permuted(&plan.perm_a)?, b.permuted(&plan.perm_b)?);
        let out = a.backend.batched_gemm(&pa, &pb, gemm, plan.dims)?;
        Ok(Labeled {
            legs: plan.legs,
            value: a.with(out),
        })
    }

    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Result<Self> {
        let perm = permutation(&self.legs, order);
        if !keeps_layout(self.value.tensor.dims(), &perm) {
            meter.record(0.0, 2 * self.value.tensor.bytes());
        }
        let value = self.value.with(self.value.permuted(&perm)?);
        Ok(Labeled {
            legs: order.to_vec(),
            value,
        })
    }
}
