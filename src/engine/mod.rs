//! `Engine`: builds the sweep graph of a stack, runs it on a backend, and reports.

mod executor;
mod report;
mod sink;
mod source;

pub use report::Report;
pub use sink::{CoreSink, MemorySink};
pub use source::{CoreSource, MemorySource};

use crate::backend::{Backend, CpuBackend};
use crate::error::{Error, Result};
use crate::graph::{GraphOptions, SweepGraph};
use crate::sched::{self, SchedOptions};
use crate::train::{Stack, Train};
use executor::TaskRouter;
use std::time::Instant;

/// What a user chooses for one SRC run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Output bond cap χ̄ (also the sketch size).
    pub chi_out: usize,
    /// Seed of the random test matrices.
    pub seed: u64,
    /// Worker threads for kernels (0: one per core).
    pub threads: usize,
    /// Sketch columns per env/sketch task (`None`: all in one).
    pub batch_cols: Option<usize>,
}

impl Options {
    /// Options with output bond `chi_out` and defaults for the rest (seed 0, all cores).
    pub fn new(chi_out: usize) -> Self {
        Options {
            chi_out,
            seed: 0,
            threads: 0,
            batch_cols: None,
        }
    }

    /// The graph-shaping part of the options.
    pub fn graph(&self) -> GraphOptions {
        GraphOptions {
            chi_out: self.chi_out,
            batch_cols: self.batch_cols,
        }
    }
}

/// Runs SRC sweeps with one backend.
pub struct Engine {
    options: Options,
    backend: Box<dyn Backend>,
}

impl Engine {
    /// An engine on the CPU backend.
    pub fn new(options: Options) -> Result<Self> {
        if options.chi_out == 0 {
            return Err(Error::Invalid(
                "--chi-out must be at least 1, found 0".into(),
            ));
        }
        let backend = Box::new(CpuBackend::new(options.threads, options.seed)?);
        Ok(Engine { options, backend })
    }

    /// The options this engine runs with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The graph this engine would run for `stack`.
    pub fn graph(&self, stack: &Stack) -> Result<SweepGraph> {
        SweepGraph::build(&stack.shape(), &self.options.graph())
    }

    /// Computes the compressed product of an in-memory stack.
    pub fn run(&self, stack: &Stack) -> Result<(Train, Report)> {
        let graph = self.graph(stack)?;
        let sink = MemorySink::new(graph.output_kind(), graph.sites());
        let report = self.run_graph(&graph, &MemorySource::new(stack), &sink)?;
        Ok((sink.into_train()?, report))
    }

    /// Runs `graph`, reading cores from `source` and handing output cores to `sink`.
    pub fn run_graph(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
        sink: &dyn CoreSink,
    ) -> Result<Report> {
        let router = TaskRouter {
            graph,
            backend: self.backend.as_ref(),
            source,
            sink,
        };
        let start = Instant::now();
        let log = sched::run(graph, &router, SchedOptions::default())?;
        Ok(Report::new(
            graph,
            &log,
            start.elapsed().as_secs_f64(),
            self.backend.as_ref(),
        ))
    }
}
