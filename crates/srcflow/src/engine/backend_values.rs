//! `BackendValues`: tensors on a backend as the values a task's kernel computes with: the
//! sketch Ω drawn on the host and uploaded, factorizations by the backend's primitives.

use srcflow_graph::graph::{Cols, KernelValues};
use srcflow_graph::test_matrix::test_matrix;
use srcflow_tensor::backend::{Backend, BackendTensor, DeviceTensor};
use srcflow_tensor::error::Result;
use srcflow_tensor::kernels::{self, RoundStep};
use srcflow_tensor::tensor::{AnyTensor, Array, DType, Meter, C64};

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
        BackendTensor::new(self.backend, tensor)
    }

    /// The complex128 `array` cast to the run's type and uploaded.
    fn uploaded(&self, array: Array<C64>) -> Result<BackendTensor<'b>> {
        let host = AnyTensor::from(array).cast(self.dtype);
        Ok(self.on_backend(self.backend.upload(&host)?))
    }

    /// Each result in `tensors` held by the backend.
    fn all_on_backend(&self, tensors: Vec<DeviceTensor>) -> Vec<BackendTensor<'b>> {
        tensors.into_iter().map(|t| self.on_backend(t)).collect()
    }
}

impl<'b> KernelValues<BackendTensor<'b>> for BackendValues<'b> {
    fn ones(&self, dims: Vec<usize>) -> Result<BackendTensor<'b>> {
        self.uploaded(Array::<C64>::ones(dims))
    }

    /// Ω is drawn in complex128 and cast to the run's type, as [`test_matrix`] casts each draw.
    fn omega(&self, site: usize, up: usize, down: usize, cols: Cols) -> Result<BackendTensor<'b>> {
        self.uploaded(test_matrix::<C64>(self.seed, site, up, down, cols))
    }

    /// Pending until a GEMM reads it (see [`BackendTensor::conjugate`]).
    fn conj(&self, value: &BackendTensor<'b>) -> Result<BackendTensor<'b>> {
        Ok(value.clone().conjugate())
    }

    fn join_cols(&self, blocks: &[BackendTensor<'b>]) -> Result<BackendTensor<'b>> {
        if let [only] = blocks {
            return Ok(only.clone());
        }
        let tensors = blocks
            .iter()
            .map(BackendTensor::materialized)
            .collect::<Result<Vec<_>>>()?;
        Ok(self.on_backend(self.backend.join(&tensors, 0)?))
    }

    fn orthonormal_basis(
        &self,
        y: &BackendTensor<'b>,
        max_rank: usize,
        _meter: &mut Meter,
    ) -> Result<BackendTensor<'b>> {
        let y = y.materialized()?;
        let basis = kernels::orthonormal_basis(self.backend, &y, max_rank)?;
        Ok(self.on_backend(basis))
    }

    fn round(
        &self,
        carry: Option<&BackendTensor<'b>>,
        draft: &BackendTensor<'b>,
        step: RoundStep,
        _meter: &mut Meter,
    ) -> Result<Vec<BackendTensor<'b>>> {
        let carry = carry.map(BackendTensor::materialized).transpose()?;
        let draft = draft.materialized()?;
        let rounded = kernels::round(self.backend, carry.as_ref(), &draft, step)?;
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
        let (left, right) = (left.materialized()?, right.materialized()?);
        let pair = kernels::exact_pair(self.backend, &left, &right, chi_out, cutoff)?;
        Ok(self.all_on_backend(pair))
    }
}
