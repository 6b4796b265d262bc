//! `ShapeSummary`: a trace's GEMMs and factorizations summed per shape, with the rate each
//! shape ran at inside the run (`srcflow report`), to compare with the same shape alone
//! (`benches/kernel_rates_in_run.sh`).

use super::slices::Slice;
use serde::Serialize;
use srcflow_tensor::backend::{PrimitiveShape, ShapeTime};
use srcflow_tensor::tensor::DType;
use std::collections::HashMap;
use std::fmt;

/// Shapes the report lists, those that took longest.
const LISTED: usize = 12;

/// The calls of one primitive shape over a run.
#[derive(Clone, Debug, Serialize)]
pub struct ShapeSummary {
    /// The primitive and its shape.
    pub shape: PrimitiveShape,
    /// The elements' type.
    pub dtype: DType,
    /// Number of calls.
    pub calls: usize,
    /// Seconds they took.
    pub seconds: f64,
    /// Their flops over those seconds, in GFLOP/s.
    pub gflops_per_s: f64,
}

impl ShapeSummary {
    /// The shapes the compute tasks of `slices` ran, longest first.
    pub(super) fn of(slices: &[Slice]) -> Vec<ShapeSummary> {
        let mut summed: HashMap<(PrimitiveShape, DType), (usize, f64)> = HashMap::new();
        let calls = slices
            .iter()
            .filter(|s| s.is_compute_task())
            .flat_map(|s| &s.primitives.by_shape);
        for &ShapeTime {
            shape,
            dtype,
            calls,
            seconds,
        } in calls
        {
            let sum = summed.entry((shape, dtype)).or_default();
            *sum = (sum.0 + calls, sum.1 + seconds);
        }
        let mut shapes: Vec<ShapeSummary> = summed
            .into_iter()
            .map(|((shape, dtype), (calls, seconds))| ShapeSummary {
                shape,
                dtype,
                calls,
                seconds,
                gflops_per_s: calls as f64 * shape.flops(dtype) / seconds.max(1e-12) / 1e9,
            })
            .collect();
        shapes
            .sort_by(|a, b| (b.seconds.total_cmp(&a.seconds)).then_with(|| a.shape.cmp(&b.shape)));
        shapes
    }

    /// Writes the [`LISTED`] longest of `shapes` as a table (nothing when there are none).
    pub(super) fn write_table(shapes: &[ShapeSummary], f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if shapes.is_empty() {
            return Ok(());
        }
        let total: f64 = shapes.iter().map(|s| s.seconds).sum();
        writeln!(
            f,
            "GEMMs and factorizations by shape (both passes; the {} that took longest of {}):",
            LISTED.min(shapes.len()),
            shapes.len()
        )?;
        writeln!(
            f,
            "  {:<24} {:<10} {:>6} {:>8} {:>6} {:>8}",
            "shape", "dtype", "calls", "s", "share", "GFLOP/s"
        )?;
        for s in shapes.iter().take(LISTED) {
            writeln!(
                f,
                "  {:<24} {:<10} {:>6} {:>8.3} {:>5.0} % {:>8.1}",
                s.shape.label(),
                s.dtype.to_string(),
                s.calls,
                s.seconds,
                100.0 * s.seconds / total.max(1e-12),
                s.gflops_per_s
            )?;
        }
        Ok(())
    }
}
