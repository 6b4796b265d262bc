//! The time a task spends in each kind of backend primitive, counted by the thread that runs
//! them: how much of a kernel is GEMM, factorization, or moving elements (permutes, casts,
//! slices, joins), and in each shape of GEMM and factorization, for the trace and `srcflow
//! report`.
//!
//! A count is wall time on the calling thread, so it includes whatever that thread did while a
//! primitive ran: a rayon worker waiting inside a parallel GEMM may run a job another lane
//! injected into the same pool (a copy task's permute), and a copy lane's primitive may wait for
//! a free worker. On the CPU backend, where each device's kernels run one task at a time, these
//! are small next to the kernels' own time.

use super::primitive_shape::{PrimitiveShape, ShapeTime};
use crate::tensor::DType;
use std::cell::Cell;
use std::ops::Add;
use std::time::Instant;

/// The kinds of primitive a task's time is split into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Primitive {
    /// Batched GEMMs.
    Gemm,
    /// QR and SVD factorizations.
    Factorization,
    /// Copies that move or convert elements: permutes, conjugations, casts, scalings, slices,
    /// joins, placements, zero fills.
    Copy,
}

/// Seconds spent in each kind of primitive, and in each shape of GEMM and factorization.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrimitiveTimes {
    /// Seconds in batched GEMMs.
    pub gemm_s: f64,
    /// Seconds in QR and SVD factorizations.
    pub factorization_s: f64,
    /// Seconds in copies.
    pub copy_s: f64,
    /// The GEMMs and factorizations by shape and dtype (empty where the backend does not
    /// record shapes).
    pub by_shape: Vec<ShapeTime>,
    /// Blocks taken from fresh memory (pages faulted in anew) while the task ran, where
    /// srcflow's block cache is the global allocator (the binary, the Python extension):
    /// memory the task did not reuse.
    pub blocks_mapped: usize,
}

impl PrimitiveTimes {
    /// True when no time was counted (a task that ran no primitive, or a backend that does
    /// not count).
    pub fn is_zero(&self) -> bool {
        *self == PrimitiveTimes::default()
    }

    /// `seconds` more of `kind`.
    fn plus(mut self, kind: Primitive, seconds: f64) -> Self {
        match kind {
            Primitive::Gemm => self.gemm_s += seconds,
            Primitive::Factorization => self.factorization_s += seconds,
            Primitive::Copy => self.copy_s += seconds,
        }
        self
    }

    /// `calls` more of `shape` on `dtype`, taking `seconds`.
    fn plus_shape(
        mut self,
        shape: PrimitiveShape,
        dtype: DType,
        calls: usize,
        seconds: f64,
    ) -> Self {
        match self
            .by_shape
            .iter_mut()
            .find(|s| s.shape == shape && s.dtype == dtype)
        {
            Some(known) => {
                known.calls += calls;
                known.seconds += seconds;
            }
            None => self.by_shape.push(ShapeTime {
                shape,
                dtype,
                calls,
                seconds,
            }),
        }
        self
    }
}

impl Add for PrimitiveTimes {
    type Output = PrimitiveTimes;
    fn add(self, other: PrimitiveTimes) -> PrimitiveTimes {
        let sum = PrimitiveTimes {
            gemm_s: self.gemm_s + other.gemm_s,
            factorization_s: self.factorization_s + other.factorization_s,
            copy_s: self.copy_s + other.copy_s,
            by_shape: self.by_shape,
            blocks_mapped: self.blocks_mapped + other.blocks_mapped,
        };
        other.by_shape.into_iter().fold(sum, |sum, s| {
            sum.plus_shape(s.shape, s.dtype, s.calls, s.seconds)
        })
    }
}

thread_local! {
    /// What the current thread counted since it was last taken.
    static COUNTED: Cell<PrimitiveTimes> = Cell::new(PrimitiveTimes::default());
    /// How many timed primitives the current thread is inside.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Runs `primitive`, counting its wall time as `kind` on the current thread; a primitive that
/// another timed primitive calls is counted once, as the outer one.
pub(crate) fn timed<R>(kind: Primitive, primitive: impl FnOnce() -> R) -> R {
    counted(kind, None, primitive)
}

/// Like [`timed`], counting the time also under `shape` on `dtype`.
pub(crate) fn timed_shape<R>(
    kind: Primitive,
    shape: PrimitiveShape,
    dtype: DType,
    primitive: impl FnOnce() -> R,
) -> R {
    counted(kind, Some((shape, dtype)), primitive)
}

/// Runs `primitive`, counting its wall time as `kind`, and under `shape` where given.
fn counted<R>(
    kind: Primitive,
    shape: Option<(PrimitiveShape, DType)>,
    primitive: impl FnOnce() -> R,
) -> R {
    let outermost = DEPTH.with(|depth| depth.replace(depth.get() + 1)) == 0;
    let start = Instant::now();
    let result = primitive();
    let seconds = start.elapsed().as_secs_f64();
    DEPTH.with(|depth| depth.set(depth.get() - 1));
    if outermost {
        // Counted into the thread's own tally: a shape seen before in the task costs no
        // allocation.
        COUNTED.with(|counted| {
            let mut times = counted.take().plus(kind, seconds);
            if let Some((shape, dtype)) = shape {
                times = times.plus_shape(shape, dtype, 1, seconds);
            }
            counted.set(times);
        });
    }
    result
}

/// What the current thread counted since the last call, with the blocks it mapped; the count
/// starts again from zero.
pub fn take() -> PrimitiveTimes {
    let mut counted = COUNTED.with(|counted| counted.take());
    counted.blocks_mapped += crate::alloc::take_mapped_here();
    counted
}

/// Adds `times` to the current thread's count (how a count moves from the thread that ran a
/// task's primitives to the thread that reports the task).
pub fn add(times: PrimitiveTimes) {
    COUNTED.with(|counted| counted.set(counted.take() + times));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_counts_apart_and_taking_starts_again_from_zero() {
        take();
        timed(Primitive::Gemm, || {
            std::thread::sleep(std::time::Duration::from_millis(2))
        });
        timed(Primitive::Copy, || ());
        let counted = take();
        assert!(counted.gemm_s >= 0.002, "{counted:?}");
        assert_eq!(counted.factorization_s, 0.0);
        assert!(counted.copy_s < counted.gemm_s);
        assert!(take().is_zero());
        timed(Primitive::Gemm, || timed(Primitive::Copy, || ()));
        let nested = take();
        assert!(nested.gemm_s > 0.0 && nested.copy_s == 0.0, "{nested:?}");
    }

    #[test]
    fn calls_of_one_shape_add_up_and_other_shapes_list_apart() {
        take();
        let qr = PrimitiveShape::Qr { rows: 4, cols: 2 };
        let svd = PrimitiveShape::Svd { rows: 4, cols: 2 };
        for shape in [qr, qr, svd] {
            timed_shape(Primitive::Factorization, shape, DType::Complex128, || ());
        }
        timed_shape(Primitive::Factorization, qr, DType::Float64, || ());
        let counted = take();
        let calls: Vec<_> = counted
            .by_shape
            .iter()
            .map(|s| (s.shape, s.dtype, s.calls))
            .collect();
        assert_eq!(
            calls,
            [
                (qr, DType::Complex128, 2),
                (svd, DType::Complex128, 1),
                (qr, DType::Float64, 1)
            ]
        );
        let listed: f64 = counted.by_shape.iter().map(|s| s.seconds).sum();
        assert!((listed - counted.factorization_s).abs() < 1e-12);
        let twice = counted.clone() + counted;
        assert_eq!(twice.by_shape.len(), 3);
        assert!(twice.by_shape.iter().all(|s| s.calls % 2 == 0));
    }
}
