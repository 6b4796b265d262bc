//! `CpuBackend`: the kernels on the host, GEMM and QR by faer, parallel with a rayon pool.

use super::Backend;
use crate::error::{Error, Result};
use crate::graph::{Cols, KernelValues, SweepGraph, Task};
use crate::kernels;
use crate::plan::Tier;
use crate::tensor::{AnyTensor, Array, DType, Meter, Typed};
use crate::test_matrix::test_matrix;
use num_complex::{Complex32, Complex64};
use std::sync::Arc;

/// Runs kernels on the CPU with a dedicated thread pool.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    seed: u64,
}

impl CpuBackend {
    /// A backend with `threads` workers (0: one per core) drawing sketches from `seed`.
    pub fn new(threads: usize, seed: u64) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("srcflow-cpu-{i}"))
            .build()
            .map_err(|e| Error::Invalid(format!("cannot start {threads} threads: {e}")))?;
        faer::set_global_parallelism(faer::Par::rayon(pool.current_num_threads()));
        Ok(CpuBackend { pool, seed })
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn compute(
        &self,
        graph: &SweepGraph,
        task: &Task,
        inputs: Vec<AnyTensor>,
    ) -> Result<Vec<AnyTensor>> {
        self.pool.install(|| match graph.dtype {
            DType::Float32 => run_typed::<f32>(graph, task, inputs, self.seed),
            DType::Float64 => run_typed::<f64>(graph, task, inputs, self.seed),
            DType::Complex64 => run_typed::<Complex32>(graph, task, inputs, self.seed),
            DType::Complex128 => run_typed::<Complex64>(graph, task, inputs, self.seed),
        })
    }

    /// The CPU's device is an arena of host memory, so a copy either way is a memcpy.
    fn copy(&self, tensor: &AnyTensor, _to: Tier) -> Result<AnyTensor> {
        Ok(crate::with_array!(tensor, a => Array::clone(a).into()))
    }

    fn shares_host_memory(&self) -> bool {
        true
    }
}

/// Runs `task` in the element type `T` the graph computes in.
fn run_typed<T: Typed>(
    graph: &SweepGraph,
    task: &Task,
    inputs: Vec<AnyTensor>,
    seed: u64,
) -> Result<Vec<AnyTensor>> {
    let inputs = inputs
        .iter()
        .map(|input| input.typed::<T>(task))
        .collect::<Result<Vec<_>>>()?;
    let outputs = graph.run_kernel(task, inputs, &HostValues { seed }, &mut Meter::default())?;
    Ok(outputs
        .into_iter()
        .map(|value| T::wrap(Arc::unwrap_or_clone(value)))
        .collect())
}

/// Host arrays as a kernel's values: the sketch drawn from `seed`, factorizations by faer.
struct HostValues {
    seed: u64,
}

impl<T: Typed> KernelValues<Arc<Array<T>>> for HostValues {
    fn ones(&self, dims: Vec<usize>) -> Arc<Array<T>> {
        Arc::new(Array::ones(dims))
    }

    fn omega(&self, site: usize, up: usize, down: usize, cols: Cols) -> Arc<Array<T>> {
        Arc::new(test_matrix(self.seed, site, up, down, cols))
    }

    fn conj(&self, value: &Arc<Array<T>>) -> Arc<Array<T>> {
        Arc::new(value.conj())
    }

    fn join_cols(&self, blocks: &[Arc<Array<T>>]) -> Arc<Array<T>> {
        if let [only] = blocks {
            return Arc::clone(only);
        }
        let mut shape = blocks[0].shape().to_vec();
        shape[0] = blocks.iter().map(|b| b.shape()[0]).sum();
        let data = blocks
            .iter()
            .flat_map(|b| b.data().iter().copied())
            .collect();
        Arc::new(Array::new(shape, data).expect("blocks agree"))
    }

    fn orthonormal_basis(
        &self,
        y: &Arc<Array<T>>,
        cutoff: f64,
        _meter: &mut Meter,
    ) -> Result<Arc<Array<T>>> {
        Ok(Arc::new(kernels::orthonormal_basis(y, cutoff)?))
    }

    fn round(
        &self,
        carry: Option<&Arc<Array<T>>>,
        draft: &Arc<Array<T>>,
        cap: usize,
        cutoff: f64,
        _meter: &mut Meter,
    ) -> Result<Vec<Arc<Array<T>>>> {
        let rounded = kernels::round(carry.map(|c| &**c), draft, cap, cutoff)?;
        Ok(std::iter::once(rounded.core)
            .chain(rounded.carry)
            .map(Arc::new)
            .collect())
    }

    fn exact_pair(
        &self,
        left: &Arc<Array<T>>,
        right: &Arc<Array<T>>,
        chi_out: usize,
        cutoff: f64,
        _meter: &mut Meter,
    ) -> Result<Vec<Arc<Array<T>>>> {
        let (a, b) = kernels::exact_pair(left, right, chi_out, cutoff)?;
        Ok(vec![Arc::new(a), Arc::new(b)])
    }
}
