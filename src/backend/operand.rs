//! `BackendTensor`: a tensor on a backend as a kernel's [`Operand`]: each contraction is one
//! batched GEMM of the backend, after the permutes that bring the operands into GEMM order.

use super::{Backend, DeviceTensor, Gemm};
use crate::error::Result;
use crate::tensor::{keeps_layout, permutation, ContractionPlan, Labeled, Leg, Meter, Operand};

/// A tensor held by `backend`, which runs what a kernel asks of it; the value is the complex
/// conjugate of the elements held when `conjugated` (a conjugation waits for the GEMM that
/// reads it, which takes it as a flag, instead of copying every element).
#[derive(Clone)]
pub struct BackendTensor<'b> {
    /// The backend that holds the tensor and runs the primitives.
    pub backend: &'b dyn Backend,
    /// The elements held.
    pub tensor: DeviceTensor,
    /// True when the value is the conjugate of the elements held.
    pub conjugated: bool,
}

impl<'b> BackendTensor<'b> {
    /// `tensor` on `backend`, as it is.
    pub fn new(backend: &'b dyn Backend, tensor: DeviceTensor) -> Self {
        BackendTensor {
            backend,
            tensor,
            conjugated: false,
        }
    }

    /// The complex conjugate, without a copy.
    pub fn conjugate(self) -> Self {
        BackendTensor {
            conjugated: !self.conjugated,
            ..self
        }
    }

    /// The value's elements as a tensor: the ones held, conjugated by the backend if the
    /// value is their conjugate.
    pub fn materialized(&self) -> Result<DeviceTensor> {
        if self.conjugated {
            self.backend.conj(&self.tensor)
        } else {
            Ok(self.tensor.clone())
        }
    }

    /// The held elements with axes reordered by `perm`, without a copy when no element moves
    /// (a reordering keeps a pending conjugation pending).
    fn permuted(&self, perm: &[usize]) -> Result<DeviceTensor> {
        let dims: Vec<usize> = perm.iter().map(|&p| self.tensor.dims()[p]).collect();
        if keeps_layout(self.tensor.dims(), perm) {
            Ok(self.tensor.clone().reshaped(dims))
        } else {
            self.backend.permute(&self.tensor, perm)
        }
    }

    /// The same backend holding `tensor`, conjugated if `conjugated`.
    fn with(&self, tensor: DeviceTensor, conjugated: bool) -> Self {
        BackendTensor {
            backend: self.backend,
            tensor,
            conjugated,
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
            conj_a: a.conjugated,
            conj_b: b.conjugated,
            ..Gemm::new(plan.batch, plan.m, plan.n, plan.k)
        };
        let (pa, pb) = (a.permuted(&plan.perm_a)?, b.permuted(&plan.perm_b)?);
        let out = a.backend.batched_gemm(&pa, &pb, gemm, plan.dims)?;
        Ok(Labeled {
            legs: plan.legs,
            value: a.with(out, false),
        })
    }

    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Result<Self> {
        let perm = permutation(&self.legs, order);
        if !keeps_layout(self.value.tensor.dims(), &perm) {
            meter.record(0.0, 2 * self.value.tensor.bytes());
        }
        let value = self
            .value
            .with(self.value.permuted(&perm)?, self.value.conjugated);
        Ok(Labeled {
            legs: order.to_vec(),
            value,
        })
    }
}
