//! `KernelSummary`: the compute tasks of a trace summed per kernel, with the shares of their
//! time spent in GEMMs, factorizations and copies, and the blocks they took from fresh
//! memory (`srcflow report`).

use super::slices::Slice;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// What one kernel's tasks did over a run.
#[derive(Clone, Debug, Serialize)]
pub struct KernelSummary {
    /// The kernel ("env", "fold", "sketch", "qr", "project", …).
    pub kernel: String,
    /// Number of its tasks.
    pub tasks: usize,
    /// Seconds its tasks ran.
    pub busy_s: f64,
    /// Flops over those seconds, in GFLOP/s.
    pub gflops_per_s: f64,
    /// Share of those seconds in batched GEMMs.
    pub gemm_share: f64,
    /// Share in QR and SVD factorizations.
    pub factorization_share: f64,
    /// Share in copies that move or convert elements (permutes, conjugations, casts, scalings,
    /// slices, joins, placements, zero fills).
    pub copy_share: f64,
    /// Blocks its tasks took from fresh memory, not reused (0 where the block cache was not
    /// the allocator).
    pub blocks_mapped: usize,
}

impl KernelSummary {
    /// The compute tasks of `slices` summed per kernel, longest first.
    pub(super) fn of(slices: &[Slice]) -> Vec<KernelSummary> {
        let mut by_kernel: BTreeMap<&str, Vec<&Slice>> = BTreeMap::new();
        for slice in slices.iter().filter(|s| s.is_compute_task()) {
            by_kernel.entry(&slice.kernel).or_default().push(slice);
        }
        let mut kernels: Vec<KernelSummary> = by_kernel
            .into_iter()
            .map(|(kernel, tasks)| KernelSummary::sum(kernel, &tasks))
            .collect();
        kernels.sort_by(|a, b| b.busy_s.total_cmp(&a.busy_s));
        kernels
    }

    /// The sums of one kernel's tasks.
    fn sum(kernel: &str, tasks: &[&Slice]) -> KernelSummary {
        let busy: f64 = tasks.iter().map(|s| s.seconds()).sum();
        let share = |part: f64| if busy > 0.0 { part / busy } else { 0.0 };
        let total = |pick: fn(&Slice) -> f64| tasks.iter().map(|s| pick(s)).sum::<f64>();
        KernelSummary {
            kernel: kernel.to_string(),
            tasks: tasks.len(),
            busy_s: busy,
            gflops_per_s: share(total(|s| s.flops)) / 1e9,
            gemm_share: share(total(|s| s.primitives.gemm_s)),
            factorization_share: share(total(|s| s.primitives.factorization_s)),
            copy_share: share(total(|s| s.primitives.copy_s)),
            blocks_mapped: tasks.iter().map(|s| s.primitives.blocks_mapped).sum(),
        }
    }

    /// Writes `kernels` as a table (nothing when there are none).
    pub(super) fn write_table(
        kernels: &[KernelSummary],
        f: &mut fmt::Formatter<'_>,
    ) -> fmt::Result {
        if kernels.is_empty() {
            return Ok(());
        }
        writeln!(
            f,
            "compute by kernel (both passes; shares of busy time in backend primitives; blocks \
             taken from fresh memory):"
        )?;
        writeln!(
            f,
            "  {:<10} {:>6} {:>8} {:>8} {:>7} {:>9} {:>8} {:>7} {:>13}",
            "kernel",
            "tasks",
            "busy s",
            "GFLOP/s",
            "GEMM",
            "QR/SVD",
            "copies",
            "other",
            "fresh blocks"
        )?;
        for k in kernels {
            let counted = k.gemm_share + k.factorization_share + k.copy_share;
            // A trace without primitive times (another backend's, or an older one) shows dashes.
            let percent = |share: f64| {
                if counted > 0.0 {
                    format!("{:.0} %", 100.0 * share)
                } else {
                    "—".to_string()
                }
            };
            let other = 1.0 - counted;
            writeln!(
                f,
                "  {:<10} {:>6} {:>8.3} {:>8.1} {:>7} {:>9} {:>8} {:>7} {:>13}",
                k.kernel,
                k.tasks,
                k.busy_s,
                k.gflops_per_s,
                percent(k.gemm_share),
                percent(k.factorization_share),
                percent(k.copy_share),
                percent(other.max(0.0)),
                k.blocks_mapped
            )?;
        }
        Ok(())
    }
}
