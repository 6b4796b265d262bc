//! Backend conformance: every primitive and every compute operation of a sweep, in all four
//! element types, on every backend this machine has, against plain references computed here
//! with naive loops in complex128: to 1e-12 in double precision, 1e-5 in single.
//!
//! Each check is two tests: `cpu::…`, and `cuda::…` on CUDA device 0, ignored unless asked
//! for (`-- --include-ignored`, as `tools/gpu_check.sh` runs them on a GPU machine, where a
//! missing device fails them).

use srcflow::backend::{
    Backend, BackendTensor, CpuBackend, CudaBackend, DeviceTensor, Gemm, Stream,
};
use srcflow::device::PoolConfig;
use srcflow::engine::BackendValues;
use srcflow::gen::{random_mpo, random_mps};
use srcflow::graph::{GraphOptions, Op, SweepGraph, Task};
use srcflow::tensor::{AnyTensor, Array, DType, Leg, Meter, C64};
use srcflow::Stack;
use srcflow_tensor::kernels::legs;
use std::collections::HashMap;

/// The CPU backend the `cpu` tests hold to the references.
fn cpu() -> Box<dyn Backend> {
    Box::new(CpuBackend::new(2).unwrap())
}

/// CUDA device 0, which the `cuda` tests hold to the references (a failure where there is none).
fn cuda() -> Box<dyn Backend> {
    assert!(
        CudaBackend::device_count() > 0,
        "no CUDA device on this machine: the cuda tests need one"
    );
    Box::new(CudaBackend::new(0).unwrap_or_else(|e| panic!("{e}")))
}

/// Every check below as a test on the CPU and an ignored one on CUDA.
macro_rules! on_each_backend {
    ($($check:ident),* $(,)?) => {
        mod cpu {
            $(#[test]
            fn $check() {
                super::$check(super::cpu().as_ref())
            })*
        }
        mod cuda {
            $(#[test]
            #[ignore = "needs a CUDA device: tools/gpu_check.sh runs it with --include-ignored"]
            fn $check() {
                super::$check(super::cuda().as_ref())
            })*
        }
    };
}

on_each_backend!(
    batched_gemm_matches_the_plain_product_small_and_large_with_every_conjugation,
    batched_gemm_reads_operands_stored_transposed,
    batched_gemm_reads_large_left_operands_stored_transposed,
    permute_conj_cast_and_scale_move_and_change_the_right_elements,
    operands_that_do_not_fit_are_refused_by_name,
    slices_and_joins_along_every_axis_undo_each_other,
    slices_placed_into_zeros_rebuild_the_tensor_along_every_axis,
    the_memory_pool_keeps_to_its_capacity_and_frees_what_is_dropped,
    thin_qr_and_svd_factor_tall_and_wide_matrices,
    upload_and_download_keep_every_element,
    env_tasks_match_the_plain_contraction_at_the_first_and_an_inner_site,
    env_of_a_wide_operator_on_an_mpo_and_an_mps_matches_the_plain_contraction,
    sketch_fold_project_and_first_match_the_plain_contraction,
    qr_tasks_give_an_orthonormal_basis_of_the_joined_sketch_blocks,
    round_and_exact_tasks_reproduce_what_they_truncate_when_nothing_is_cut,
);

const DTYPES: [DType; 4] = [
    DType::Float32,
    DType::Float64,
    DType::Complex64,
    DType::Complex128,
];

/// Relative tolerance for results computed in `dtype`.
fn tolerance(dtype: DType) -> f64 {
    if dtype.is_double() {
        1e-12
    } else {
        1e-5
    }
}

/// A reference value: complex128 elements, row-major.
#[derive(Clone, Debug)]
struct Dense {
    dims: Vec<usize>,
    data: Vec<C64>,
}

impl Dense {
    /// The element-wise complex conjugate where `conj`, else a copy.
    fn conjugated(&self, conj: bool) -> Dense {
        Dense {
            dims: self.dims.clone(),
            data: self
                .data
                .iter()
                .map(|z| if conj { z.conj() } else { *z })
                .collect(),
        }
    }

    /// Pseudo-random entries in [-1, 1] (real for real types), rounded to `dtype`.
    fn random(dims: &[usize], seed: u64, dtype: DType) -> Dense {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let len = dims.iter().product();
        let data = (0..len)
            .map(|_| {
                let re = next();
                let im = if dtype.is_complex() { next() } else { 0.0 };
                C64::new(re, im)
            })
            .collect();
        Dense {
            dims: dims.to_vec(),
            data,
        }
        .rounded(dtype)
    }

    /// The same values after a trip through `dtype`.
    fn rounded(self, dtype: DType) -> Dense {
        let any = self.any(dtype);
        Dense {
            dims: self.dims,
            data: any.to_c64().into_data(),
        }
    }

    /// The values as a host array of `dtype`.
    fn any(&self, dtype: DType) -> AnyTensor {
        AnyTensor::from(Array::new(self.dims.clone(), self.data.clone()).unwrap()).cast(dtype)
    }

    /// The values uploaded to `backend` as `dtype`.
    fn on(&self, backend: &dyn Backend, dtype: DType) -> DeviceTensor {
        backend.upload(&self.any(dtype)).unwrap()
    }

    /// The values of `tensor`, downloaded from `backend`.
    fn of(backend: &dyn Backend, tensor: DeviceTensor) -> Dense {
        let host = backend.download(tensor).unwrap();
        Dense {
            dims: host.shape().to_vec(),
            data: host.to_c64().into_data(),
        }
    }

    /// The element at multi-index `index`.
    fn at(&self, index: &[usize]) -> C64 {
        let flat = index
            .iter()
            .zip(&self.dims)
            .fold(0, |flat, (&i, &d)| flat * d + i);
        self.data[flat]
    }

    /// The transpose of a matrix (a row-major matrix as the backends' column-major one, and
    /// back).
    fn transpose(&self) -> Dense {
        let [m, n] = self.dims[..] else {
            panic!("a matrix")
        };
        let data = (0..n * m).map(|f| self.data[(f % m) * n + f / m]).collect();
        Dense {
            dims: vec![n, m],
            data,
        }
    }

    /// The conjugate transpose of a matrix.
    fn adjoint(&self) -> Dense {
        let mut t = self.transpose();
        t.data.iter_mut().for_each(|z| *z = z.conj());
        t
    }
}

/// `a · b` for matrices.
fn matmul(a: &Dense, b: &Dense) -> Dense {
    let (&[m, k], &[k2, n]) = (&a.dims[..], &b.dims[..]) else {
        panic!("matrices")
    };
    assert_eq!(k, k2);
    let data = (0..m * n)
        .map(|f| {
            (0..k)
                .map(|l| a.data[f / n * k + l] * b.data[l * n + f % n])
                .sum()
        })
        .collect();
    Dense {
        dims: vec![m, n],
        data,
    }
}

/// Matrices of equal dimensions stacked along a new first axis.
fn stacked(matrices: &[Dense]) -> Dense {
    let mut dims = vec![matrices.len()];
    dims.extend(&matrices[0].dims);
    let data = matrices
        .iter()
        .flat_map(|d| d.data.iter().copied())
        .collect();
    Dense { dims, data }
}

/// The identity matrix of size `n`.
fn identity(n: usize) -> Dense {
    let data = (0..n * n)
        .map(|f| C64::new(if f / n == f % n { 1.0 } else { 0.0 }, 0.0))
        .collect();
    Dense {
        dims: vec![n, n],
        data,
    }
}

/// Σ over every leg not in `out` of the product of `operands` (legs named per operand): a
/// brute-force einsum, the reference for every contraction.
fn einsum(operands: &[(Vec<Leg>, &Dense)], out: &[Leg]) -> Dense {
    let mut sizes: HashMap<Leg, usize> = HashMap::new();
    let mut all: Vec<Leg> = Vec::new();
    for (legs, value) in operands {
        assert_eq!(legs.len(), value.dims.len(), "one leg per axis");
        for (&leg, &dim) in legs.iter().zip(&value.dims) {
            if !all.contains(&leg) {
                all.push(leg);
            }
            assert_eq!(*sizes.entry(leg).or_insert(dim), dim, "{leg:?} sizes agree");
        }
    }
    let dims: Vec<usize> = out.iter().map(|l| sizes[l]).collect();
    let mut data = vec![C64::new(0.0, 0.0); dims.iter().product()];
    let total: usize = all.iter().map(|l| sizes[l]).product();
    for flat in 0..total {
        let mut rest = flat;
        let mut value: HashMap<Leg, usize> = HashMap::new();
        for leg in all.iter().rev() {
            value.insert(*leg, rest % sizes[leg]);
            rest /= sizes[leg];
        }
        let term: C64 = operands
            .iter()
            .map(|(legs, t)| t.at(&legs.iter().map(|l| value[l]).collect::<Vec<_>>()))
            .product();
        let at = out.iter().fold(0, |f, l| f * sizes[l] + value[l]);
        data[at] += term;
    }
    Dense { dims, data }
}

/// Fails unless `got` matches `want` to the tolerance of `dtype`, relative to `want`'s largest
/// entry.
fn assert_close(got: &Dense, want: &Dense, dtype: DType, what: &str) {
    assert_eq!(got.dims, want.dims, "{what} in {dtype}: dimensions");
    let scale = want.data.iter().map(|z| z.norm()).fold(1.0, f64::max);
    let worst = got
        .data
        .iter()
        .zip(&want.data)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(
        worst <= tolerance(dtype) * scale,
        "{what} in {dtype}: off by {worst:e} (scale {scale:e})"
    );
}

/// Runs `check` on every backend in every element type.
/// `check` on `backend` in every element type.
fn every_dtype(backend: &dyn Backend, check: impl Fn(&dyn Backend, DType)) {
    for dtype in DTYPES {
        check(backend, dtype);
    }
}

fn batched_gemm_matches_the_plain_product_small_and_large_with_every_conjugation(
    backend: &dyn Backend,
) {
    every_dtype(backend, |backend, dtype| {
        for (batch, m, n, k) in [(3, 2, 5, 4), (1, 1, 1, 1), (2, 70, 66, 72)] {
            let a = Dense::random(&[batch, m, k], 1, dtype);
            let b = Dense::random(&[batch, k, n], 2, dtype);
            for (conj_a, conj_b) in [(false, false), (true, false), (false, true), (true, true)] {
                let gemm = Gemm {
                    conj_a,
                    conj_b,
                    ..Gemm::new(batch, m, n, k)
                };
                let dims = vec![batch, m, n];
                let out = backend
                    .batched_gemm(&a.on(backend, dtype), &b.on(backend, dtype), gemm, dims)
                    .unwrap();
                let (op_a, op_b) = (a.conjugated(conj_a), b.conjugated(conj_b));
                let want = einsum(
                    &[
                        (vec![Leg::Col, Leg::Up, Leg::Join(0)], &op_a),
                        (vec![Leg::Col, Leg::Join(0), Leg::Down], &op_b),
                    ],
                    &[Leg::Col, Leg::Up, Leg::Down],
                );
                let what = format!("batched GEMM conj {conj_a} {conj_b}");
                assert_close(&Dense::of(backend, out), &want, dtype, &what);
            }
        }
    });
}

fn batched_gemm_reads_operands_stored_transposed(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        for (batch, m, n, k) in [(3, 2, 5, 4), (2, 70, 66, 72)] {
            let a = Dense::random(&[batch, m, k], 4, dtype);
            let b = Dense::random(&[batch, k, n], 5, dtype);
            let [a_legs, b_legs] = [
                [Leg::Col, Leg::Up, Leg::Join(0)],
                [Leg::Col, Leg::Join(0), Leg::Down],
            ];
            let stored = |d: &Dense, legs: [Leg; 3], transposed: bool| {
                let order = if transposed {
                    [legs[0], legs[2], legs[1]]
                } else {
                    legs
                };
                einsum(&[(legs.to_vec(), d)], &order).on(backend, dtype)
            };
            for (transpose_a, transpose_b) in [(true, false), (false, true), (true, true)] {
                let gemm = Gemm {
                    transpose_a,
                    transpose_b,
                    conj_a: transpose_b,
                    conj_b: transpose_a,
                    ..Gemm::new(batch, m, n, k)
                };
                let out = backend
                    .batched_gemm(
                        &stored(&a, a_legs, transpose_a),
                        &stored(&b, b_legs, transpose_b),
                        gemm,
                        vec![batch, m, n],
                    )
                    .unwrap();
                let want = einsum(
                    &[
                        (a_legs.to_vec(), &a.conjugated(gemm.conj_a)),
                        (b_legs.to_vec(), &b.conjugated(gemm.conj_b)),
                    ],
                    &[Leg::Col, Leg::Up, Leg::Down],
                );
                let what = format!("batched GEMM transposed {transpose_a} {transpose_b}");
                assert_close(&Dense::of(backend, out), &want, dtype, &what);
            }
        }
    });
}

fn batched_gemm_reads_large_left_operands_stored_transposed(backend: &dyn Backend) {
    // Sizes at which the CPU backend copies such an operand into row-major order first.
    let (m, n, k) = (256, 256, 257);
    every_dtype(backend, |backend, dtype| {
        let stored_a: Vec<Dense> = (0..2)
            .map(|i| Dense::random(&[k, m], 6 + i, dtype))
            .collect();
        let b: Vec<Dense> = (0..2)
            .map(|i| Dense::random(&[k, n], 8 + i, dtype))
            .collect();
        let gemm = Gemm {
            transpose_a: true,
            conj_a: true,
            ..Gemm::new(2, m, n, k)
        };
        let out = backend
            .batched_gemm(
                &stacked(&stored_a).on(backend, dtype),
                &stacked(&b).on(backend, dtype),
                gemm,
                vec![2, m, n],
            )
            .unwrap();
        let want = stacked(&[0, 1].map(|i| matmul(&stored_a[i].adjoint(), &b[i])));
        let what = "large batched GEMM, left operand transposed";
        assert_close(&Dense::of(backend, out), &want, dtype, what);
    });
}

fn permute_conj_cast_and_scale_move_and_change_the_right_elements(backend: &dyn Backend) {
    let legs = [Leg::Up, Leg::Down, Leg::Col, Leg::OutLeft];
    every_dtype(backend, |backend, dtype| {
        let x = Dense::random(&[3, 4, 5, 2], 3, dtype);
        let on = x.on(backend, dtype);
        let perm = [2, 0, 3, 1];
        let want = einsum(
            &[(legs.to_vec(), &x)],
            &perm.iter().map(|&p| legs[p]).collect::<Vec<_>>(),
        );
        let permuted = backend.permute(&on, &perm).unwrap();
        assert_close(&Dense::of(backend, permuted), &want, dtype, "permute");

        let conj = Dense::of(backend, backend.conj(&on).unwrap());
        let want = x.conjugated(true);
        assert_close(&conj, &want, dtype, "conj");

        for to in DTYPES {
            let cast = Dense::of(backend, backend.cast(&on, to).unwrap());
            let want = x.clone().rounded(to);
            assert_close(&cast, &want, to, &format!("cast from {dtype}"));
        }

        let factors = [0.5, -2.0, 3.0, 0.25, 1.5];
        let scaled = Dense::of(backend, backend.scale(&on, 2, &factors).unwrap());
        let want = Dense {
            dims: x.dims.clone(),
            data: (0..x.data.len())
                .map(|f| x.data[f] * factors[(f / 2) % 5])
                .collect(),
        };
        assert_close(&scaled, &want, dtype, "scale");
    });
}

fn operands_that_do_not_fit_are_refused_by_name(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        let (batch, m, n, k) = (3, 2, 5, 4);
        let gemm = Gemm::new(batch, m, n, k);
        let a = Dense::random(&[batch, m, k], 1, dtype).on(backend, dtype);
        let b = Dense::random(&[batch, k, n], 2, dtype).on(backend, dtype);
        let short = Dense::random(&[batch - 1, m, k], 1, dtype).on(backend, dtype);
        let other = if dtype == DType::Float64 {
            DType::Float32
        } else {
            DType::Float64
        };
        let b_other = Dense::random(&[batch, k, n], 2, other).on(backend, other);
        let refused = |result: srcflow::Result<_>, what: &str, names: &str| {
            let error = result
                .err()
                .unwrap_or_else(|| panic!("{what} was taken"))
                .to_string();
            assert!(error.contains(names), "{what}: {error}");
        };
        let product = vec![batch, m, n];
        let gemm_of = |a, b, dims| backend.batched_gemm(a, b, gemm, dims);
        refused(
            gemm_of(&short, &b, product.clone()),
            "a left operand of 2 of 3 blocks",
            "batched GEMM",
        );
        refused(
            gemm_of(&b, &a, product.clone()),
            "operands swapped",
            "batched GEMM",
        );
        refused(
            gemm_of(&a, &b, vec![batch, m, n + 1]),
            "a product of the wrong size",
            "batched GEMM",
        );
        refused(
            gemm_of(&a, &b_other, product.clone()),
            "operands of two types",
            "batched GEMM",
        );
        let permuted = backend.batched_gemm_permuted(&a, &[0, 0, 1], &b, gemm, product.clone());
        refused(
            permuted,
            "an axis order naming an axis twice",
            "not an order of the axes",
        );
        let permuted = backend.batched_gemm_permuted(&short, &[0, 1, 2], &b, gemm, product);
        refused(
            permuted,
            "a permuted left operand of 2 of 3 blocks",
            "batched GEMM",
        );

        refused(
            backend.scale(&a, 2, &[1.0; 3]),
            "3 factors for 4 entries",
            "cannot scale axis 2",
        );
        refused(
            backend.scale(&a, 3, &[1.0; 4]),
            "an axis past the last",
            "cannot scale axis 3",
        );
    });
}

fn slices_and_joins_along_every_axis_undo_each_other(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        let x = Dense::random(&[4, 3, 5], 4, dtype);
        let on = x.on(backend, dtype);
        for axis in 0..3 {
            let size = x.dims[axis];
            let cut = size / 2;
            let parts = [
                backend.slice(&on, axis, 0..cut).unwrap(),
                backend.slice(&on, axis, cut..size).unwrap(),
            ];
            let middle = Dense::of(backend, backend.slice(&on, axis, 1..size - 1).unwrap());
            for (f, &z) in middle.data.iter().enumerate() {
                let mut index = vec![0; 3];
                let mut rest = f;
                for a in (0..3).rev() {
                    index[a] = rest % middle.dims[a];
                    rest /= middle.dims[a];
                }
                index[axis] += 1;
                assert_eq!(z, x.at(&index), "slice along axis {axis} in {dtype}");
            }
            let joined = Dense::of(backend, backend.join(&parts, axis).unwrap());
            assert_close(&joined, &x, dtype, &format!("join along axis {axis}"));
        }
    });
}

fn slices_placed_into_zeros_rebuild_the_tensor_along_every_axis(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        let x = Dense::random(&[4, 3, 5], 5, dtype);
        let on = x.on(backend, dtype);
        for axis in 0..3 {
            let size = x.dims[axis];
            let mut whole = backend.zeros(x.dims.clone(), dtype).unwrap();
            let empty = Dense::of(backend, whole.clone());
            assert!(
                empty.data.iter().all(|z| z.norm() == 0.0),
                "zeros in {dtype}"
            );
            for start in (0..size).rev() {
                let part = backend.slice(&on, axis, start..start + 1).unwrap();
                backend.place(&mut whole, axis, start, &part).unwrap();
            }
            let rebuilt = Dense::of(backend, whole);
            assert_close(&rebuilt, &x, dtype, &format!("place along axis {axis}"));
            let mut small = backend.zeros(vec![2, 3, 5], dtype).unwrap();
            let too_far = backend.place(&mut small, 0, 1, &backend.slice(&on, 0, 0..2).unwrap());
            assert!(
                too_far.is_err(),
                "a part placed past the end is refused in {dtype}"
            );
        }
        let misshapen = backend.zeros(vec![3, 4, 1], dtype).unwrap();
        let mut whole = backend.zeros(vec![4, 3, 5], dtype).unwrap();
        let refused = backend.place(&mut whole, 2, 0, &misshapen);
        assert!(
            refused.is_err(),
            "a part of another shape is refused in {dtype}"
        );
        let past_the_axes = backend.place(&mut whole, 3, 0, &misshapen);
        assert!(
            past_the_axes.is_err(),
            "an axis past the last is refused in {dtype}"
        );
    });
}

fn the_memory_pool_keeps_to_its_capacity_and_frees_what_is_dropped(backend: &dyn Backend) {
    let config = PoolConfig {
        capacity: Some(1 << 20),
        fragment: None,
    };
    let pool = backend.memory_pool(config).unwrap();
    let block = pool.allocate(600 << 10).unwrap();
    assert!(block.bytes() >= 600 << 10);
    assert!(
        !pool.fits(&[600 << 10]),
        "{} has no room left",
        backend.name()
    );
    assert!(pool.allocate(600 << 10).is_err());
    drop(block);
    assert_eq!(pool.usage().allocated, 0);
    assert!(pool.fits(&[600 << 10]), "a dropped block is free again");
}

fn thin_qr_and_svd_factor_tall_and_wide_matrices(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        for (m, n) in [(9, 4), (4, 9), (6, 6)] {
            let a = Dense::random(&[m, n], 5, dtype);
            let column_major = a.transpose().on(backend, dtype);
            let r_dims = m.min(n);
            let (q, r) = backend.thin_qr(&column_major).unwrap();
            let (q, r) = (
                Dense::of(backend, q).transpose(),
                Dense::of(backend, r).transpose(),
            );
            assert_eq!(
                (q.dims.clone(), r.dims.clone()),
                (vec![m, r_dims], vec![r_dims, n])
            );
            assert_close(&matmul(&q, &r), &a, dtype, "Q·R");
            assert_close(&matmul(&q.adjoint(), &q), &identity(r_dims), dtype, "QᴴQ");
            for i in 0..r_dims {
                for j in 0..i.min(n) {
                    assert!(
                        r.data[i * n + j].norm() <= tolerance(dtype),
                        "R is triangular"
                    );
                }
            }

            let (u, s, vh) = backend.thin_svd(&column_major).unwrap();
            let (u, vh) = (
                Dense::of(backend, u).transpose(),
                Dense::of(backend, vh).transpose(),
            );
            assert_eq!(
                (u.dims.clone(), vh.dims.clone()),
                (vec![m, r_dims], vec![r_dims, n])
            );
            assert!(s.windows(2).all(|w| w[0] >= w[1]) && s[r_dims - 1] >= 0.0);
            assert_close(&matmul(&u.adjoint(), &u), &identity(r_dims), dtype, "UᴴU");
            assert_close(&matmul(&vh, &vh.adjoint()), &identity(r_dims), dtype, "VᴴV");
            let mut us = u.clone();
            for (f, z) in us.data.iter_mut().enumerate() {
                *z *= s[f % r_dims];
            }
            assert_close(&matmul(&us, &vh), &a, dtype, "U·S·Vᴴ");
        }
    });
}

fn upload_and_download_keep_every_element(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        let x = Dense::random(&[2, 3, 4], 6, dtype);
        let back = Dense::of(backend, x.on(backend, dtype));
        assert_eq!(
            back.data,
            x.data,
            "{} round trip in {dtype}",
            backend.name()
        );
    });
}

/// A sweep graph of a random MPO · MPS on `sites` sites (phys 2, bonds 3 and 2), with `options`.
fn graph(sites: usize, options: GraphOptions) -> SweepGraph {
    let mpo = random_mpo(sites, 2, 2, 2, 0.5, 1);
    let mps = random_mps(sites, 2, 3, 0.5, 2);
    let mut shape = Stack::of_trains(&[&mpo, &mps]).unwrap().shape();
    for layer in &mut shape.layers {
        layer.dtype = options.dtype.expect("the tests name the element type");
    }
    SweepGraph::build(&shape, &options).unwrap()
}

/// The first task of `graph` that `pick` accepts.
fn task_where(graph: &SweepGraph, pick: impl Fn(&Task) -> bool) -> Task {
    graph
        .nodes_in_order()
        .into_iter()
        .map(|n| Task::clone(&graph[n]))
        .find(|t| pick(t))
        .expect("the graph has such a task")
}

/// Random inputs of `task`, with the dimensions the graph gives them.
fn inputs_of(graph: &SweepGraph, task: &Task, dtype: DType) -> Vec<Dense> {
    task.inputs
        .iter()
        .enumerate()
        .map(|(i, &id)| Dense::random(&graph.value_dims(id), 10 + i as u64, dtype))
        .collect()
}

/// Runs `task` of `graph` on `backend` with `inputs`, on its compute stream; its outputs.
fn run(backend: &dyn Backend, graph: &SweepGraph, task: &Task, inputs: &[Dense]) -> Vec<Dense> {
    let dtype = graph.dtype;
    let values = BackendValues {
        backend,
        dtype,
        seed: 7,
    };
    let mut outputs = vec![];
    let mut work = || {
        let operands = inputs
            .iter()
            .map(|d| BackendTensor::new(backend, d.on(backend, dtype)))
            .collect();
        outputs = graph
            .run_kernel(task, operands, &values, &mut Meter::default())
            .unwrap()
            .into_iter()
            .map(|out| Dense::of(backend, out.materialized().unwrap()))
            .collect();
    };
    backend.within(Stream::Compute, &mut work);
    outputs
}

/// A graph of 4 sites computing in `dtype`, folding or not.
fn sweep(dtype: DType, fold: bool) -> SweepGraph {
    graph(4, GraphOptions::new(4).with_dtype(dtype).with_fold(fold))
}

/// Core legs of both layers, top first.
fn core_legs() -> Vec<Vec<Leg>> {
    (0..2).map(|i| legs::core(i, 2)).collect()
}

/// Ω of `site` over `cols` columns as the runs draw it.
fn omega(graph: &SweepGraph, site: usize, cols: srcflow::graph::Cols) -> Dense {
    let (up, down) = graph.stack.output_phys(site);
    let omega = srcflow_graph::test_matrix::test_matrix::<C64>(7, site, up, down, cols);
    Dense {
        dims: omega.shape().to_vec(),
        data: omega.into_data(),
    }
    .rounded(graph.dtype)
}

fn env_tasks_match_the_plain_contraction_at_the_first_and_an_inner_site(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        let g = sweep(dtype, true);
        for site in [0, 1] {
            let task = task_where(&g, |t| t.op == Op::Env && t.site == site);
            let inputs = inputs_of(&g, &task, dtype);
            let got = run(backend, &g, &task, &inputs);
            let cols = task.cols.unwrap();
            let omega = omega(&g, site, cols);
            let mut operands: Vec<(Vec<Leg>, &Dense)> = vec![(legs::omega(), &omega)];
            let cores = if site == 0 { &inputs[..] } else { &inputs[1..] };
            if site > 0 {
                operands.push((legs::env_in(2), &inputs[0]));
            }
            operands.extend(core_legs().into_iter().zip(cores));
            let want = einsum(&operands, &legs::env_out(2));
            assert_close(&got[0], &want, dtype, &format!("env at site {site}"));
        }
    });
}

fn env_of_a_wide_operator_on_an_mpo_and_an_mps_matches_the_plain_contraction(
    backend: &dyn Backend,
) {
    // A top layer of bond 12 over a bottom of bond 2: on an MPO the kernel weights the bottom
    // core with Ω first, on an MPS it absorbs both layers and contracts Ω last (the orders of
    // srcflow_tensor::kernels::env, unit-tested there); MPO·MPS of the test above weights the top core.
    every_dtype(backend, |backend, dtype| {
        let top = random_mpo(6, 2, 2, 12, 0.5, 1);
        let bottoms = [
            ("an MPO", random_mpo(6, 2, 2, 2, 0.5, 2)),
            ("an MPS", random_mps(6, 2, 2, 0.5, 2)),
        ];
        for (what, bottom) in bottoms {
            let mut shape = Stack::of_trains(&[&top, &bottom]).unwrap().shape();
            for layer in &mut shape.layers {
                layer.dtype = dtype;
            }
            let options = GraphOptions::new(4).with_dtype(dtype);
            let g = SweepGraph::build(&shape, &options).unwrap();
            let task = task_where(&g, |t| t.op == Op::Env && t.site == 2);
            let inputs = inputs_of(&g, &task, dtype);
            assert_eq!(inputs[1].dims, [12, 12, 2, 2], "the top core of bond 12");
            let got = run(backend, &g, &task, &inputs);
            let omega = omega(&g, 2, task.cols.unwrap());
            let mut operands: Vec<(Vec<Leg>, &Dense)> = vec![(legs::omega(), &omega)];
            operands.push((legs::env_in(2), &inputs[0]));
            operands.extend(core_legs().into_iter().zip(&inputs[1..]));
            let want = einsum(&operands, &legs::env_out(2));
            assert_close(
                &got[0],
                &want,
                dtype,
                &format!("env of a wide operator on {what}"),
            );
        }
    });
}

fn sketch_fold_project_and_first_match_the_plain_contraction(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        for fold in [false, true] {
            let g = sweep(dtype, fold);
            let ops = [Op::Sketch, Op::Project, Op::First, Op::Fold];
            for op in ops.into_iter().filter(|&op| fold || op != Op::Fold) {
                for site in [1, g.sites() - 1] {
                    let site = if op == Op::First { 0 } else { site };
                    let Some(task) = find_task(&g, op, site) else {
                        continue;
                    };
                    let inputs = inputs_of(&g, &task, dtype);
                    let got = run(backend, &g, &task, &inputs);
                    let want = reference(&task, &inputs);
                    assert_close(&got[0], &want, dtype, &format!("{task} (fold {fold})"));
                }
            }
        }
    });
}

/// The first task of `graph` doing `op` at `site`, if any.
fn find_task(graph: &SweepGraph, op: Op, site: usize) -> Option<Task> {
    graph
        .tasks()
        .find(|t| t.op == op && t.site == site)
        .map(|t| Task::clone(t))
}

/// What `task` (a sketch, project, first or fold task of a 2-layer stack) computes from
/// `inputs`, by brute force.
fn reference(task: &Task, inputs: &[Dense]) -> Dense {
    let cores = core_legs();
    let eta_conj = inputs[0].conjugated(true);
    let mut operands: Vec<(Vec<Leg>, &Dense)> = Vec::new();
    let (site_inputs, out) = match task.op {
        Op::Sketch => {
            operands.push((legs::env_in(2), &inputs[0]));
            (&inputs[1..], legs::sketch())
        }
        Op::Project => {
            operands.push((legs::basis(), &eta_conj));
            (&inputs[1..], legs::proj_out(2))
        }
        Op::First => {
            let mut out = legs::sketch();
            out[0] = Leg::OutLeft;
            (inputs, out)
        }
        Op::Fold => (inputs, legs::folded(2)),
        op => panic!("no reference for {op:?}"),
    };
    let ones = Dense {
        dims: vec![1; 3],
        data: vec![C64::new(1.0, 0.0)],
    };
    if task.reads_folded() {
        operands.push((legs::folded(2), &site_inputs[0]));
    } else {
        operands.extend(cores.into_iter().zip(&site_inputs[..2]));
        operands.push((legs::proj_in(2), site_inputs.get(2).unwrap_or(&ones)));
    }
    if task.op == Op::First {
        let sketch = einsum(&operands, &legs::sketch()[1..]);
        return Dense {
            dims: [vec![1], sketch.dims].concat(),
            data: sketch.data,
        };
    }
    einsum(&operands, &out)
}

fn qr_tasks_give_an_orthonormal_basis_of_the_joined_sketch_blocks(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        let g = graph(4, GraphOptions::new(4).with_dtype(dtype).with_batch_cols(2));
        let task = task_where(&g, |t| t.op == Op::Qr && t.inputs.len() > 1);
        let inputs = inputs_of(&g, &task, dtype);
        let eta = &run(backend, &g, &task, &inputs)[0];
        let rank = eta.dims[0];
        let row: usize = eta.dims[1..].iter().product();
        let rows = Dense {
            dims: vec![rank, row],
            data: eta.data.clone(),
        };
        assert_close(
            &matmul(&rows, &rows.adjoint()),
            &identity(rank),
            dtype,
            "η ηᴴ",
        );
        for block in &inputs {
            // Y's rows [Col, Up, Down, OutRight] lie in the span of η's rows.
            let y = Dense {
                dims: vec![block.dims[0], row],
                data: block.data.clone(),
            };
            let back = matmul(&matmul(&y, &rows.adjoint()), &rows);
            assert_close(&back, &y, dtype, "Y projected on η");
        }
    });
}

fn round_and_exact_tasks_reproduce_what_they_truncate_when_nothing_is_cut(backend: &dyn Backend) {
    every_dtype(backend, |backend, dtype| {
        // Six sites: the product's ranks reach 6, so the sketch of 8 columns is cut to 6 and
        // still rounded to 4.
        let g = graph(
            6,
            GraphOptions::new(4).with_dtype(dtype).with_oversample(2.0),
        );
        let task = task_where(&g, |t| {
            t.op == Op::Round && t.site > 0 && t.site + 1 < g.sites() && {
                g.value_dims(t.inputs[1])[3] <= g.chi_out
            }
        });
        let inputs = inputs_of(&g, &task, dtype);
        let got = run(backend, &g, &task, &inputs);
        let [l, u, d, r] = inputs[1].dims[..] else {
            panic!()
        };
        let k = inputs[0].dims[0];
        let flat = |t: &Dense, rows: usize| Dense {
            dims: vec![rows, t.data.len() / rows],
            data: t.data.clone(),
        };
        let want = matmul(&inputs[0], &flat(&inputs[1], l));
        let kept = got[0].dims[3];
        let core = flat(&got[0], k * u * d);
        let rebuilt = matmul(&core, &got[1]);
        let want = flat(&want, k * u * d);
        assert_eq!(got[1].dims, vec![kept, r]);
        assert_close(&rebuilt, &want, dtype, "rounded core · carry");

        let g = graph(2, GraphOptions::new(16).with_dtype(dtype));
        let task = task_where(&g, |t| t.op == Op::Exact);
        let inputs = inputs_of(&g, &task, dtype);
        let got = run(backend, &g, &task, &inputs);
        let mut right_legs = core_legs();
        for legs in &mut right_legs {
            for leg in legs.iter_mut() {
                *leg = match *leg {
                    Leg::Left(i) => Leg::Right(i),
                    Leg::Right(i) => Leg::Left(i + 2),
                    Leg::Up => Leg::OutLeft,
                    Leg::Down => Leg::OutRight,
                    Leg::Join(i) => Leg::Join(i + 2),
                    other => other,
                };
            }
        }
        let mut operands: Vec<(Vec<Leg>, &Dense)> =
            core_legs().into_iter().zip(&inputs[..2]).collect();
        operands.extend(right_legs.into_iter().zip(&inputs[2..]));
        let out = [
            Leg::Left(0),
            Leg::Left(1),
            Leg::Up,
            Leg::Down,
            Leg::OutLeft,
            Leg::OutRight,
            Leg::Left(2),
            Leg::Left(3),
        ];
        let want = einsum(&operands, &out);
        let p0: usize = got[0].dims.iter().product::<usize>() / got[0].dims[3];
        let rebuilt = matmul(&flat(&got[0], p0), &flat(&got[1], got[1].dims[0]));
        let want = flat(&want, p0);
        assert_close(&rebuilt, &want, dtype, "exact pair");
    });
}
