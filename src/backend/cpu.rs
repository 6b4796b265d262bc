//! `CpuBackend`: the kernels on the host, GEMM and QR by faer, parallel with a rayon pool.

use super::Backend;
use crate::error::{Error, Result};
use crate::graph::{Op, SweepGraph, Task};
use crate::kernels::{self, legs};
use crate::plan::Tier;
use crate::tensor::{AnyTensor, Array, DType, Labeled, Leg, Meter, Typed};
use crate::test_matrix::test_matrix;
use num_complex::{Complex32, Complex64};
use std::sync::Arc;

/// Runs kernels on the CPU with a dedicated thread pool.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
    seed: u64,
}

/// A labelled operand over shared data.
type Operand<T> = Labeled<Arc<Array<T>>>;

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
    let outputs = run_task(graph, task, inputs, seed)?;
    Ok(outputs.into_iter().map(T::wrap).collect())
}

/// Dispatches one task to its kernel.
fn run_task<T: Typed>(
    graph: &SweepGraph,
    task: &Task,
    inputs: Vec<Arc<Array<T>>>,
    seed: u64,
) -> Result<Vec<Array<T>>> {
    let k = graph.stack.layers.len();
    let n = graph.sites();
    let site = task.site;
    let mut meter = Meter::default();
    let label = |legs: Vec<Leg>, value: Arc<Array<T>>| Labeled { legs, value };
    let cores = |tensors: &[Arc<Array<T>>]| -> Vec<Operand<T>> {
        tensors
            .iter()
            .enumerate()
            .map(|(i, t)| label(legs::core(i, k), Arc::clone(t)))
            .collect()
    };
    let ones = |shape: Vec<usize>| Arc::new(Array::<T>::ones(shape));
    let unit_env = || label(legs::env_in(k), ones(vec![1; k + 1]));
    let unit_proj = || label(legs::proj_in(k), ones(vec![1; k + 1]));
    let result = match task.op {
        Op::Env => {
            let cols = task.cols.expect("env has columns");
            let (c_prev, rest) = if site > 0 {
                (label(legs::env_in(k), Arc::clone(&inputs[0])), &inputs[1..])
            } else {
                (
                    label(
                        legs::env_in(k),
                        ones(std::iter::once(cols.len()).chain(vec![1; k]).collect()),
                    ),
                    &inputs[..],
                )
            };
            let (up, down) = graph.stack.output_phys(site);
            let omega = label(
                legs::omega(),
                Arc::new(test_matrix(seed, site, up, down, cols)),
            );
            kernels::env(&c_prev, &cores(rest), &omega, &mut meter)
        }
        Op::Fold => {
            let s_next = if site + 1 < n {
                label(legs::proj_in(k), Arc::clone(&inputs[k]))
            } else {
                unit_proj()
            };
            kernels::fold_right(&cores(&inputs[..k]), &s_next, &mut meter)
        }
        Op::Sketch if task.reads_folded() => {
            let c_prev = label(legs::env_in(k), Arc::clone(&inputs[0]));
            let folded = label(legs::folded(k), Arc::clone(&inputs[1]));
            kernels::sketch_folded(&c_prev, &folded, &mut meter)
        }
        Op::Sketch => {
            let c_prev = label(legs::env_in(k), Arc::clone(&inputs[0]));
            let s_next = if site + 1 < n {
                label(legs::proj_in(k), Arc::clone(&inputs[k + 1]))
            } else {
                unit_proj()
            };
            kernels::sketch(&c_prev, &cores(&inputs[1..=k]), &s_next, &mut meter)
        }
        Op::First => kernels::sketch(
            &unit_env(),
            &cores(&inputs[..k]),
            &label(legs::proj_in(k), Arc::clone(&inputs[k])),
            &mut meter,
        ),
        Op::Qr => {
            let basis = kernels::orthonormal_basis(&gather_rows(&inputs), graph.qr_cutoff())?;
            return Ok(vec![basis]);
        }
        Op::Round => {
            let (carry, draft) = match &inputs[..] {
                [draft] => (None, draft),
                [carry, draft] => (Some(&**carry), draft),
                _ => return Err(Error::Invalid(format!("task {task} needs 1 or 2 inputs"))),
            };
            let rounded = kernels::round(carry, draft, graph.chi_out, graph.cutoff)?;
            return Ok(std::iter::once(rounded.core).chain(rounded.carry).collect());
        }
        Op::Project if task.reads_folded() => {
            let eta_conj = label(legs::basis(), Arc::new(inputs[0].conj()));
            let folded = label(legs::folded(k), Arc::clone(&inputs[1]));
            kernels::project_folded(&eta_conj, &folded, &mut meter)
        }
        Op::Project => {
            let eta_conj = label(legs::basis(), Arc::new(inputs[0].conj()));
            let s_next = if site + 1 < n {
                label(legs::proj_in(k), Arc::clone(&inputs[k + 1]))
            } else {
                unit_proj()
            };
            kernels::project(&eta_conj, &cores(&inputs[1..=k]), &s_next, &mut meter)
        }
        Op::Exact => {
            let left = kernels::site_product(&cores(&inputs[..k]), &mut meter);
            let right = kernels::site_product(&cores(&inputs[k..]), &mut meter);
            let (a, b) =
                kernels::exact_pair(&left.value, &right.value, graph.chi_out, graph.cutoff)?;
            return Ok(vec![a, b]);
        }
        Op::ReadSite { .. }
        | Op::WriteSite
        | Op::StoreDraft
        | Op::LoadDraft
        | Op::Spill { .. }
        | Op::Fetch { .. }
        | Op::UploadPart
        | Op::AllGather
        | Op::Gather
        | Op::Scatter => {
            return Err(Error::Invalid(format!("task {task} is not a compute task")));
        }
    };
    Ok(vec![Arc::unwrap_or_clone(result.value)])
}

/// Concatenates sketch blocks along their column axis (the gather before the QR).
fn gather_rows<T: Typed>(blocks: &[Arc<Array<T>>]) -> std::borrow::Cow<'_, Array<T>> {
    if let [only] = blocks {
        return std::borrow::Cow::Borrowed(only);
    }
    let mut shape = blocks[0].shape().to_vec();
    shape[0] = blocks.iter().map(|b| b.shape()[0]).sum();
    let data = blocks
        .iter()
        .flat_map(|b| b.data().iter().copied())
        .collect();
    std::borrow::Cow::Owned(Array::new(shape, data).expect("blocks agree"))
}
