//! `Options`: what a user chooses for one SRC run.

use srcflow_graph::graph::GraphOptions;

/// What a user chooses for one SRC run: the graph's shape, the sketches' seed and the threads.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// The choices that shape the sweep graph: χ̄, batches, cutoff, oversampling, element
    /// type, devices, folding.
    pub graph: GraphOptions,
    /// Seed of the random test matrices.
    pub seed: u64,
    /// Worker threads for kernels (0: one per core), shared between the devices; on the CPU
    /// backend each device is a worker group with its share of the threads.
    pub threads: usize,
}

impl Options {
    /// Options with output bond `chi_out` and defaults for the rest (seed 0, all cores).
    pub fn new(chi_out: usize) -> Self {
        Options {
            graph: GraphOptions::new(chi_out),
            seed: 0,
            threads: 0,
        }
    }

    /// These options with the graph's choices `graph`.
    pub fn with_graph(self, graph: GraphOptions) -> Self {
        Options { graph, ..self }
    }

    /// These options with the test matrices' seed `seed`.
    pub fn with_seed(self, seed: u64) -> Self {
        Options { seed, ..self }
    }

    /// These options with `threads` worker threads (0: one per core).
    pub fn with_threads(self, threads: usize) -> Self {
        Options { threads, ..self }
    }
}
