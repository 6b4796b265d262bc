//! `BackendValues`: tensors on a backend as the values a task's kernel computes with: the
//! sketch Ω drawn on the host and uploaded, factorizations by the backend's primitives.

use crate::backend::{Backend, BackendTensor, DeviceTensor};
use crate::error::Result;
use crate::graph::{Cols, KernelValues};
use crate::kernels;
use crate::tensor::{AnyTensor, DType, Meter};
use crate::test_matrix::test_matrix;
use num_complex::{Complex32, Complex64};

/// The values of one run's kernels on `backend`, in `dtype`, with sketches drawn from `seed`.
pub struct BackendValues<'b> {
    /// The backend the kernels run on.
    pub backend: &'b dyn Backend,
    /// The element type of the run.
    pub dtype: DType,
    /// The seed of the test matrices.
    pub seed: u64,
}

impl<'b> BackendValues<'b> {
    /// `tensor` held by the backend.
    fn on_backend(&self, tensor: DeviceTensor) -> BackendTensor<'b> {
        BackendTensor {
            backend: self.backend,
            tensor,
        }
    }

    /// Each result in `tensors` held by the backend.
    fn all_on_backend(&self, tensors: Vec<DeviceTensor>) -> Vec<BackendTensor<'b>> {
        tensors.into_iter().map(|t| self.on_backend(t)).collect()
    }
}

impl<'b> KernelValues<BackendTensor<'b>> for BackendValues<'b> {
    fn ones(&self, dims: Vec<usize>) -> Result<BackendTensor<'b>> {
        let len = dims.iter().product();
        let ones = AnyTensor::from(crate::tensor::Array::new(
            dims,
            vec![Complex64::new(1.0, 0.0); len],
        )?);
        Ok(self.on_backend(self.backend.upload(&ones.cast(self.dtype))?))
    }

    fn omega(&self, site: usize, up: usize, down: usize, cols: Cols) -> Result<BackendTensor<'b>> {
        let omega: AnyTensor = match self.dtype {
            DType::Float32 => test_matrix::<f32>(self.seed, site, up, down, cols).into(),
            DType::Float64 => test_matrix::<f64>(self.seed, site, up, down, cols).into(),
            DType::Complex64 => test_matrix::<Complex32>(self.seed, site, up, down, cols).into(),
            DType::Complex128 => test_matrix::<Complex64>(self.seed, site, up, down, cols).into(),
        };
        Ok(self.on_backend(self.backend.upload(&omega)?))
    }

    fn conj(&self, value: &BackendTensor<'b>) -> Result<BackendTensor<'b>> {
        Ok(self.on_backend(self.backend.conj(&value.tensor)?))
    }

    fn join_cols(&self, blocks: &[BackendTensor<'b>]) -> Result<BackendTensor<'b>> {
        if let [only] = blocks {
            return Ok(only.clone());
        }
        let tensors: Vec<DeviceTensor> = blocks.iter().map(|b| b.tensor.clone()).collect();
        Ok(self.on_backend(self.backend.join(&tensors, 0)?))
    }

    fn orthonormal_basis(
        &self,
        y: &BackendTensor<'b>,
        cutoff: f64,
        _meter: &mut Meter,
    ) -> Result<BackendTensor<'b>> {
        let basis = kernels::orthonormal_basis(self.backend, &y.tensor, cutoff)?;
        Ok(self.on_backend(basis))
    }

    fn round(
        &self,
        carry: Option<&BackendTensor<'b>>,
        draft: &BackendTensor<'b>,
        cap: usize,
        cutoff: f64,
        _meter: &mut Meter,
    ) -> Result<Vec<BackendTensor<'b>>> {
        let carry = carry.map(|c| &c.tensor);
        let rounded = kernels::round(self.backend, carry, &draft.tensor, cap, cutoff)?;
        Ok(self.all_on_backend(rounded))
    }

    fn exact_pair(
        &self,
        left: &BackendTensor<'b>,
        right: &BackendTensor<'b>,
        chi_out: usize,
        cutoff: f64,
        _meter: &mut Meter,
    ) -> Result<Vec<BackendTensor<'b>>> {
        let pair = kernels::exact_pair(self.backend, &left.tensor, &right.tensor, chi_out, cutoff)?;
        Ok(self.all_on_backend(pair))
    }
}
