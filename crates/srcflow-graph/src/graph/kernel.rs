//! What each compute task computes, written once: which input is the environment, which the
//! cores, S or W, their legs, the site's edge cases and the sketch Ω. It runs over any
//! operand: over shapes it is the graph's cost model ([`SweepGraph::task_cost`]), over values
//! it is the task itself (a backend supplies the values through [`KernelValues`]).

use super::{Cols, Op, SweepGraph, Task};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::kernels::{self, legs, OrderChoice, OrderMemo, Orders, RoundStep};
use srcflow_tensor::tensor::{Labeled, Leg, Meter, Operand, Shape, Work};

/// What a task's kernel needs besides contracting its inputs: the operands it makes (ones at
/// the ends of the chain, the sketch Ω) and the steps that are not contractions (conjugation,
/// joining sketch blocks, the QR, the rounding SVD, the exact two-site SVD). Values implement
/// it by computing; shapes by counting what the computation would cost.
pub trait KernelValues<V> {
    /// A value of ones with dimensions `dims` (the environment left of site 0, S right of the
    /// last site).
    fn ones(&self, dims: Vec<usize>) -> Result<V>;
    /// The test matrix Ω `[Up, Down, Col]` of `site` over sketch columns `cols`.
    fn omega(&self, site: usize, up: usize, down: usize, cols: Cols) -> Result<V>;
    /// The complex conjugate of `value`.
    fn conj(&self, value: &V) -> Result<V>;
    /// Sketch blocks joined along their first (column) axis.
    fn join_cols(&self, blocks: &[V]) -> Result<V>;
    /// The orthonormal basis η `[r, Up, Down, OutRight]` of a sketch `[Col, Up, Down, OutRight]`,
    /// of at most `max_rank` leading directions ([`kernels::orthonormal_basis`]).
    fn orthonormal_basis(&self, y: &V, max_rank: usize, meter: &mut Meter) -> Result<V>;
    /// One rounding step ([`kernels::round`]): the rounded core, then the carry if any.
    fn round(
        &self,
        carry: Option<&V>,
        draft: &V,
        step: RoundStep,
        meter: &mut Meter,
    ) -> Result<Vec<V>>;
    /// The two output cores of a two-site product from its site products
    /// ([`kernels::exact_pair`]).
    fn exact_pair(
        &self,
        left: &V,
        right: &V,
        chi_out: usize,
        cutoff: f64,
        meter: &mut Meter,
    ) -> Result<Vec<V>>;
}

impl SweepGraph {
    /// Runs the kernel of compute task `task` on `inputs` (in the task's input order, cut to
    /// its rows for a half-batch node) in the contraction orders chosen when it was built, and
    /// returns its outputs, counting its work in `meter`.
    pub fn run_kernel<V, K>(
        &self,
        task: &Task,
        inputs: Vec<V>,
        values: &K,
        meter: &mut Meter,
    ) -> Result<Vec<V>>
    where
        Labeled<V>: Operand,
        K: KernelValues<V>,
    {
        let mut choice = OrderChoice::follow(&task.orders);
        self.kernel(task, inputs, values, &mut choice, meter)
    }

    /// The kernel of `task` on `inputs`, its contraction orders chosen or followed as `choice`
    /// says.
    fn kernel<V, K>(
        &self,
        task: &Task,
        inputs: Vec<V>,
        values: &K,
        choice: &mut OrderChoice,
        meter: &mut Meter,
    ) -> Result<Vec<V>>
    where
        Labeled<V>: Operand,
        K: KernelValues<V>,
    {
        let call = Call {
            graph: self,
            site: task.site,
            values,
        };
        let mut inputs = inputs.into_iter();
        let result = match task.op {
            Op::Env => {
                let cols = task.cols.expect("env tasks have columns");
                let c_prev = call.env_in(&mut inputs, cols)?;
                let cores = call.cores(&mut inputs);
                let (up, down) = self.stack.output_phys(task.site);
                let omega = call.label(legs::omega(), values.omega(task.site, up, down, cols)?);
                kernels::env(&c_prev, &cores, &omega, choice, meter)?
            }
            Op::Fold => {
                let cores = call.cores(&mut inputs);
                let s_next = call.s_next(&mut inputs)?;
                kernels::fold_right(&cores, &s_next, choice, meter)?
            }
            Op::Sketch if task.reads_folded() => {
                let c_prev = call.label(legs::env_in(call.layers()), next(&mut inputs));
                let folded = call.label(legs::folded(call.layers()), next(&mut inputs));
                kernels::sketch_folded(&c_prev, &folded, meter)?
            }
            Op::Sketch => {
                let c_prev = call.label(legs::env_in(call.layers()), next(&mut inputs));
                let cores = call.cores(&mut inputs);
                let s_next = call.s_next(&mut inputs)?;
                kernels::sketch(&c_prev, &cores, &s_next, choice, meter)?
            }
            Op::First => {
                let unit_env = call.label(legs::env_in(call.layers()), call.units()?);
                let cores = call.cores(&mut inputs);
                let s_next = call.s_next(&mut inputs)?;
                kernels::sketch(&unit_env, &cores, &s_next, choice, meter)?
            }
            Op::Project if task.reads_folded() => {
                let eta_conj = call.label(legs::basis(), values.conj(&next(&mut inputs))?);
                let folded = call.label(legs::folded(call.layers()), next(&mut inputs));
                kernels::project_folded(&eta_conj, &folded, meter)?
            }
            Op::Project => {
                let eta_conj = call.label(legs::basis(), values.conj(&next(&mut inputs))?);
                let cores = call.cores(&mut inputs);
                let s_next = call.s_next(&mut inputs)?;
                kernels::project(&eta_conj, &cores, &s_next, choice, meter)?
            }
            Op::Qr => {
                let y = values.join_cols(&inputs.collect::<Vec<_>>())?;
                let rank = self.out_bond_left(task.site);
                let basis = values.orthonormal_basis(&y, rank, meter)?;
                return Ok(vec![basis]);
            }
            Op::Round => {
                let inputs: Vec<V> = inputs.collect();
                let (carry, draft) = match &inputs[..] {
                    [draft] => (None, draft),
                    [carry, draft] => (Some(carry), draft),
                    _ => return Err(Error::Invalid(format!("task {task} needs 1 or 2 inputs"))),
                };
                let step = RoundStep {
                    cap: self.chi_out,
                    cutoff: self.cutoff,
                    last: task.site + 1 == self.sites(),
                };
                return values.round(carry, draft, step, meter);
            }
            Op::Exact => {
                let left = kernels::site_product(&call.cores(&mut inputs), meter)?;
                let right = kernels::site_product(&call.cores(&mut inputs), meter)?;
                let (chi_out, cutoff) = (self.chi_out, self.cutoff);
                return values.exact_pair(&left.value, &right.value, chi_out, cutoff, meter);
            }
            _ => return Err(Error::Invalid(format!("task {task} is not a compute task"))),
        };
        Ok(vec![result.value])
    }

    /// Dry-run cost of compute task `task` in the graph's element type: its kernel run on the
    /// shapes of its inputs, in the orders chosen when it was built.
    pub fn task_cost(&self, task: &Task) -> Meter {
        let mut choice = OrderChoice::follow(&task.orders);
        self.dry_run(task, &mut choice)
    }

    /// The contraction orders of compute task `task`'s kernel, chosen on the shapes of its
    /// inputs (with those chosen before in `memo`), and its dry-run cost in those orders.
    pub fn choose_orders(&self, task: &Task, memo: &mut OrderMemo) -> (Orders, Meter) {
        let mut choice = OrderChoice::choose(memo);
        let cost = self.dry_run(task, &mut choice);
        (choice.into_made(), cost)
    }

    /// Task `task`'s kernel run on the shapes of its inputs, its orders as `choice` says.
    fn dry_run(&self, task: &Task, choice: &mut OrderChoice) -> Meter {
        let inputs = task
            .inputs
            .iter()
            .map(|&id| {
                let mut dims = self.value_dims(id);
                if let (Some(cols), true) = (task.cols, task.slices_input(&id)) {
                    dims[0] = cols.len();
                }
                dims
            })
            .collect();
        let mut meter = Meter::default();
        self.kernel(task, inputs, &Shapes, choice, &mut meter)
            .expect("a compute task's kernel runs on its input shapes");
        meter.in_dtype(self.dtype)
    }
}

/// The next input of a task, which the graph guarantees is there.
fn next<V>(inputs: &mut impl Iterator<Item = V>) -> V {
    inputs
        .next()
        .expect("the graph gives each kernel its inputs")
}

/// One kernel call: labels the task's inputs by their role at its site.
struct Call<'a, K> {
    graph: &'a SweepGraph,
    site: usize,
    values: &'a K,
}

impl<K> Call<'_, K> {
    /// Number of layers.
    fn layers(&self) -> usize {
        self.graph.stack.layers.len()
    }

    /// `value` with axes named `legs`.
    fn label<V>(&self, legs: Vec<Leg>, value: V) -> Labeled<V> {
        Labeled { legs, value }
    }

    /// The cores of every layer at the site, next in `inputs`.
    fn cores<V>(&self, inputs: &mut impl Iterator<Item = V>) -> Vec<Labeled<V>> {
        let k = self.layers();
        (0..k)
            .map(|i| self.label(legs::core(i, k), next(inputs)))
            .collect()
    }

    /// The environment entering the site over `cols`: the next input, or ones at site 0.
    fn env_in<V>(&self, inputs: &mut impl Iterator<Item = V>, cols: Cols) -> Result<Labeled<V>>
    where
        K: KernelValues<V>,
    {
        let k = self.layers();
        let value = if self.site > 0 {
            next(inputs)
        } else {
            let dims = std::iter::once(cols.len()).chain(vec![1; k]).collect();
            self.values.ones(dims)?
        };
        Ok(self.label(legs::env_in(k), value))
    }

    /// S entering the site from the right: the next input, or ones right of the last site.
    fn s_next<V>(&self, inputs: &mut impl Iterator<Item = V>) -> Result<Labeled<V>>
    where
        K: KernelValues<V>,
    {
        let value = if self.site + 1 < self.graph.sites() {
            next(inputs)
        } else {
            self.units()?
        };
        Ok(self.label(legs::proj_in(self.layers()), value))
    }

    /// Ones with a unit axis per layer and one more (a unit environment or S).
    fn units<V>(&self) -> Result<V>
    where
        K: KernelValues<V>,
    {
        self.values.ones(vec![1; self.layers() + 1])
    }
}

/// Bytes of a complex128 element: dry-run costs are counted in complex128 and scaled to the
/// graph's element type in one place ([`Meter::in_dtype`]).
const C128_BYTES: usize = 16;

/// The cost model's values: shapes, whose factorizations count the work they would do.
struct Shapes;

impl KernelValues<Shape> for Shapes {
    fn ones(&self, dims: Vec<usize>) -> Result<Shape> {
        Ok(dims)
    }

    fn omega(&self, _site: usize, up: usize, down: usize, cols: Cols) -> Result<Shape> {
        Ok(vec![up, down, cols.len()])
    }

    fn conj(&self, value: &Shape) -> Result<Shape> {
        Ok(value.clone())
    }

    fn join_cols(&self, blocks: &[Shape]) -> Result<Shape> {
        let mut dims = blocks[0].clone();
        dims[0] = blocks.iter().map(|b| b[0]).sum();
        Ok(dims)
    }

    /// Y permuted into the `(Up·Down·OutRight) × Col` matrix, its thin QR, and Q permuted back,
    /// both held twice; where the rank is capped, an SVD of R and Q times its leading vectors.
    fn orthonormal_basis(&self, y: &Shape, max_rank: usize, meter: &mut Meter) -> Result<Shape> {
        let cols = y[0];
        let rows: usize = y[1..].iter().product();
        let rank = cols.min(rows);
        let bytes = (rows * cols + rows * rank) * C128_BYTES;
        let qr = kernels::qr_work(rows, cols, rank.min(max_rank));
        meter.record_step(qr, 2 * bytes as u64);
        if rank <= max_rank {
            return Ok([&[rank], &y[1..]].concat());
        }
        let svd = Work::factorization(kernels::svd_flops(rank, rank), rank * rank);
        meter.record_step(svd + Work::gemm(1, rows, max_rank, rank, 0, false), 0);
        Ok([&[max_rank], &y[1..]].concat())
    }

    /// The carry times the draft, then an SVD of the `(kept·Up·Down) × R` result.
    fn round(
        &self,
        carry: Option<&Shape>,
        draft: &Shape,
        step: RoundStep,
        meter: &mut Meter,
    ) -> Result<Vec<Shape>> {
        let [left, up, down, right] = draft[..] else {
            unreachable!("a basis has four legs")
        };
        let kept = carry.map_or(left, |c| c[0]);
        let rows = kept * up * down;
        let product = Work::gemm(1, kept, up * down * right, left, 0, false);
        if step.last {
            let bytes = (kept * left + left * up * down * right + rows * right) * C128_BYTES;
            meter.record_step(product, bytes as u64);
            return Ok(vec![vec![kept, up, down, right]]);
        }
        let bytes = (kept * left + left * up * down * right + 2 * rows * right + right * right)
            * C128_BYTES;
        let svd = Work::factorization(kernels::svd_flops(rows, right), rows * right);
        meter.record_step(product + svd, bytes as u64);
        let bond = step.cap.min(rows).min(right);
        Ok(vec![vec![kept, up, down, bond], vec![bond, right]])
    }

    /// The product of the two site products, then an SVD of the `p0 × p1` matrix.
    fn exact_pair(
        &self,
        left: &Shape,
        right: &Shape,
        chi_out: usize,
        _cutoff: f64,
        meter: &mut Meter,
    ) -> Result<Vec<Shape>> {
        let phys = |dims: &Shape| (dims[dims.len() - 2], dims[dims.len() - 1]);
        let ((lu, ld), (ru, rd)) = (phys(left), phys(right));
        let (p0, p1) = (lu * ld, ru * rd);
        let bond = left.iter().product::<usize>() / p0;
        let small = p0.min(p1) as f64;
        let svd = Work::factorization(8.0 * 4.0 * (p0 * p1) as f64 * small, p0 * p1);
        meter.record_step(Work::gemm(1, p0, p1, bond, 0, false) + svd, 0);
        let rank = chi_out.min(p0).min(p1);
        Ok(vec![vec![1, lu, ld, rank], vec![rank, ru, rd, 1]])
    }
}

#[cfg(test)]
mod tests {
    use super::super::{GraphOptions, Op, SweepGraph, Task};
    use super::Shapes;
    use crate::train::{LayerShape, StackShape};
    use crate::Kind;
    use srcflow_tensor::kernels::Orders;
    use srcflow_tensor::tensor::Meter;

    /// A layer of `sites` sites of inner bond `bond`, physical legs 2 (`down` outputs).
    fn layer(kind: Kind, sites: usize, bond: usize, down: usize) -> LayerShape {
        let bond_at = |cut: bool| if cut { 1 } else { bond };
        LayerShape {
            name: format!("{kind:?}"),
            kind,
            cores: (0..sites)
                .map(|i| [bond_at(i == 0), bond_at(i + 1 == sites), 2, down])
                .collect(),
            dtype: Default::default(),
        }
    }

    /// The dry run of `task` on the shapes of its inputs, in the orders it holds.
    fn dry_run(graph: &SweepGraph, task: &Task) -> srcflow_tensor::error::Result<Meter> {
        let inputs = task.inputs.iter().map(|&id| graph.value_dims(id)).collect();
        let mut meter = Meter::default();
        graph.run_kernel(task, inputs, &Shapes, &mut meter)?;
        Ok(meter)
    }

    #[test]
    fn a_task_runs_in_the_contraction_orders_chosen_when_its_graph_was_built() {
        // A wide MPO over a narrow one: a sketch absorbs the wide one first.
        let stack = StackShape {
            layers: vec![layer(Kind::Mpo, 6, 64, 2), layer(Kind::Mpo, 6, 2, 2)],
        };
        let graph = SweepGraph::build(&stack, &GraphOptions::new(4).with_fold(false)).unwrap();
        let sketch = graph
            .tasks()
            .find(|t| t.op == Op::Sketch && t.site == 3)
            .expect("a sketch of site 3");
        let chosen: Vec<Vec<usize>> =
            serde_json::from_value(serde_json::json!(sketch.orders)).unwrap();
        assert_eq!(
            chosen,
            vec![vec![1, 0]],
            "the wide MPO (second bottom first) first"
        );
        assert_eq!(dry_run(&graph, sketch).unwrap().flops, sketch.flops);

        let mut given_order = (**sketch).clone();
        given_order.orders = serde_json::from_str::<Orders>("[[0, 1]]").unwrap();
        let flops = dry_run(&graph, &given_order).unwrap().flops;
        assert!(
            flops > 1.25 * sketch.flops,
            "{flops} against {}",
            sketch.flops
        );

        let mut built_for_others = (**sketch).clone();
        built_for_others.orders = Orders::default();
        let error = dry_run(&graph, &built_for_others).unwrap_err().to_string();
        assert!(error.contains("built for other inputs"), "{error}");
    }
}
