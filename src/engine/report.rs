//! `Report`: what a run did — sizes, pass times, work and rate.

use crate::backend::Backend;
use crate::graph::{Lane, Op, SweepGraph};
use crate::sched::RunLog;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Summary of one run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Number of sites.
    pub sites: usize,
    /// Number of layers in the stack.
    pub layers: usize,
    /// Output bond cap.
    pub chi_out: usize,
    /// Output bonds, one per cut.
    pub out_bonds: Vec<usize>,
    /// Backend name.
    pub backend: String,
    /// Kernel threads.
    pub threads: usize,
    /// Seconds of the left-to-right pass (first env start to last env end).
    pub left_to_right_s: f64,
    /// Seconds of the right-to-left pass (first sketch start to the first core's end).
    pub right_to_left_s: f64,
    /// Seconds from start to finish of the whole run.
    pub wall_s: f64,
    /// Seconds the compute lane was busy.
    pub compute_busy_s: f64,
    /// Seconds the I/O lane was busy.
    pub io_busy_s: f64,
    /// Real flops of all tasks.
    pub flops: f64,
    /// Flops per second over the two passes.
    pub gflops_per_s: f64,
    /// Seconds spent in each kind of task (env, sketch, qr, …), summed over the run.
    pub busy_by_op: BTreeMap<String, f64>,
}

impl Report {
    /// Summarises `log`, the run of `graph` that took `wall_s` seconds.
    pub fn new(graph: &SweepGraph, log: &RunLog, wall_s: f64, backend: &dyn Backend) -> Self {
        let l2r = log.span(|e| e.op == Op::Env);
        let r2l = log.span(|e| {
            matches!(
                e.op,
                Op::Sketch | Op::Qr | Op::Project | Op::First | Op::Exact
            )
        });
        let flops = graph.total_flops();
        Report {
            sites: graph.sites(),
            layers: graph.stack.layers.len(),
            chi_out: graph.chi_out,
            out_bonds: graph.out_bonds.clone(),
            backend: backend.name().into(),
            threads: backend.threads(),
            left_to_right_s: l2r,
            right_to_left_s: r2l,
            wall_s,
            compute_busy_s: log.busy(|e| e.lane == Lane::Compute),
            io_busy_s: log.busy(|e| e.lane == Lane::Io),
            flops,
            gflops_per_s: flops / (l2r + r2l).max(1e-12) / 1e9,
            busy_by_op: log.events.iter().fold(BTreeMap::new(), |mut acc, e| {
                *acc.entry(op_name(e.op).to_string()).or_default() += e.end - e.start;
                acc
            }),
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let max_bond = self.out_bonds.iter().max().copied().unwrap_or(1);
        writeln!(
            f,
            "sites {}, layers {}, chi_out {}, max output bond {}",
            self.sites, self.layers, self.chi_out, max_bond
        )?;
        writeln!(
            f,
            "backend {} with {} thread(s)",
            self.backend, self.threads
        )?;
        writeln!(f, "left-to-right  {:8.3} s", self.left_to_right_s)?;
        writeln!(f, "right-to-left  {:8.3} s", self.right_to_left_s)?;
        writeln!(
            f,
            "wall           {:8.3} s  (compute busy {:.3} s, i/o busy {:.3} s)",
            self.wall_s, self.compute_busy_s, self.io_busy_s
        )?;
        writeln!(
            f,
            "work           {:8.2} GFLOP at {:.1} GFLOP/s",
            self.flops / 1e9,
            self.gflops_per_s
        )?;
        let ops: Vec<String> = self
            .busy_by_op
            .iter()
            .map(|(op, s)| format!("{op} {s:.3}"))
            .collect();
        write!(f, "busy (s)       {}", ops.join(", "))
    }
}

/// Short name of an operation for the report.
fn op_name(op: Op) -> &'static str {
    match op {
        Op::ReadSite { .. } => "read",
        Op::Env => "env",
        Op::Sketch => "sketch",
        Op::Qr => "qr",
        Op::Project => "project",
        Op::First => "first",
        Op::Exact => "exact",
        Op::WriteSite => "write",
    }
}
