//! srcflow: compressed products of tensor trains (MPO·MPS, MPO·MPO, MPO^k·MPS) with Successive
//! Randomized Compression, run as a dataflow graph of tasks.
//!
//! Quick use: [`apply`], [`compress`] and [`src`] on in-memory [`Train`]s; for the graph itself,
//! [`SweepGraph::build`] and [`Engine::run_graph`].
//!
//! This crate is the top of the library: the engine that wires a run together ([`engine`]),
//! checkpoints ([`checkpoint`]), problem and output directories ([`io`]), traces ([`trace`])
//! and the calls above. The layers below are crates of their own, re-exported here under their
//! module names: `srcflow-tensor` (tensors, backends, kernels), `srcflow-graph` (trains, the
//! sweep graph, the planner) and `srcflow-sched` (store, scheduler, ranks, simulator).

#![warn(missing_docs)]

pub mod checkpoint;
pub mod engine;
pub mod io;
pub mod trace;

mod api;

pub use srcflow_graph::{gen, graph, ops, plan, test_matrix, train};
pub use srcflow_sched::{ranks, sched, sim, store};
pub use srcflow_tensor::{alloc, backend, device, error, files, kernels, tensor};

pub use api::{apply, compress, src};
pub use engine::{Engine, EngineBuilder, Options, Report, Run};
pub use srcflow_graph::{Kind, Layer, Stack, SweepGraph, Train};
pub use srcflow_tensor::WATCH_EVERY;
pub use srcflow_tensor::{Bandwidth, ByteSize, CancelToken, Error, Result, Tensor, Tier, C64};

// The layers below, under the names their modules have there.
use srcflow_sched::liveness;
use srcflow_tensor::{cancel, fault_spec, with_array};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
