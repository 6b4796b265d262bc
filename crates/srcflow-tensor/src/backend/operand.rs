//! `BackendTensor`: a tensor on a backend as a kernel's [`Operand`]: each contraction is one
//! batched GEMM of the backend, after the permutes that bring the operands into GEMM order
//! (none for an operand stored as the transpose of its GEMM operand: the GEMM reads it so).

use super::{Backend, DeviceTensor, Gemm};
use crate::error::Result;
use crate::tensor::{
    keeps_layout, permutation, ContractionPlan, Labeled, Leg, Meter, Operand, OperandLayout, Work,
};

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
        if keeps_layout(self.tensor.dims(), perm) {
            Ok(self.reshaped(perm))
        } else {
            self.backend.permute(&self.tensor, perm)
        }
    }

    /// The held elements as a GEMM operand in `layout`, whose GEMM order is `perm` (or
    /// `transposed` for its transpose); and whether the GEMM reads it transposed.
    fn gemm_operand(
        &self,
        layout: OperandLayout,
        perm: &[usize],
        transposed: &[usize],
    ) -> Result<(DeviceTensor, bool)> {
        match layout {
            OperandLayout::Transposed => Ok((self.reshaped(transposed), true)),
            OperandLayout::AsStored => Ok((self.reshaped(perm), false)),
            OperandLayout::Copied => Ok((self.backend.permute(&self.tensor, perm)?, false)),
        }
    }

    /// The held elements viewed with axes reordered by `perm`, which must leave them in place.
    fn reshaped(&self, perm: &[usize]) -> DeviceTensor {
        let dims = perm.iter().map(|&p| self.tensor.dims()[p]).collect();
        self.tensor.clone().reshaped(dims)
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
        meter.record_step(plan.work(da, db), plan.peak_bytes(da, db));
        let (pb, transpose_b) =
            b.gemm_operand(plan.layout_b(db), &plan.perm_b, &plan.perm_b_transposed)?;
        let gemm = Gemm {
            conj_a: a.conjugated,
            conj_b: b.conjugated,
            transpose_b,
            ..Gemm::new(plan.batch, plan.m, plan.n, plan.k)
        };
        let out = if plan.layout_a(da) == OperandLayout::Copied {
            let backend = a.backend;
            backend.batched_gemm_permuted(&a.tensor, &plan.perm_a, &pb, gemm, plan.dims)?
        } else {
            let (pa, transpose_a) =
                a.gemm_operand(plan.layout_a(da), &plan.perm_a, &plan.perm_a_transposed)?;
            let gemm = Gemm {
                transpose_a,
                ..gemm
            };
            a.backend.batched_gemm(&pa, &pb, gemm, plan.dims)?
        };
        Ok(Labeled {
            legs: plan.legs,
            value: a.with(out, false),
        })
    }

    fn arrange(self, order: &[Leg], meter: &mut Meter) -> Result<Self> {
        let perm = permutation(&self.legs, order);
        if !keeps_layout(self.value.tensor.dims(), &perm) {
            let elements = self.value.tensor.dims().iter().product();
            meter.record_step(Work::copy(elements), 2 * self.value.tensor.bytes());
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
