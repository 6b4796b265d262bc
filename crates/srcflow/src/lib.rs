//! srcflow: compressed products of tensor trains (MPO·MPS, MPO·MPO, MPO^k·MPS) with Successive
//! Randomized Compression, run as a dataflow graph of tasks.
//!
//! Quick use: [`apply`], [`compress`] and [`src`] on in-memory [`Train`]s; for the graph itself,
//! [`SweepGraph::build`] and [`Engine::run_graph`].
//!
//! This crate is the top of the library: the engine that wires a run together ([`engine`]),
//! checkpoints ([`checkpoint`]), problem and output directories ([`io`]), traces ([`trace`])
//! and the calls above. The layers below are crates of their own; what a user of the library
//! needs from them is here under their module names: from `srcflow-tensor` [`tensor`],
//! [`backend`] (to write a backend of your own), [`device`] (memory pools and injected
//! faults) and the allocator ([`alloc`]); from `srcflow-graph` [`train`], [`graph`], [`plan`],
//! [`gen`] and [`ops`]; from `srcflow-sched` [`ranks`], [`sim`] and the choices of [`sched`] and
//! [`store`]. The rest of those crates (kernels, durable files, the scheduler's loop, spill
//! files) is the engine's own: reach it through the crates themselves when you build on them,
//! as the `srcflow` command does.

#![warn(missing_docs)]

pub mod checkpoint;
pub mod engine;
pub mod io;
pub mod setting_names;
pub mod trace;

mod api;

pub use srcflow_graph::{gen, graph, ops, plan, train};
pub use srcflow_sched::{ranks, sim};
pub use srcflow_tensor::{backend, device, tensor};

/// The block-cache allocator the `srcflow` command and the Python package install as their
/// global allocator (`#[global_allocator] static A: srcflow::alloc::BlockCache = BlockCache;`),
/// and what it holds.
pub mod alloc {
    pub use srcflow_tensor::alloc::{stats, BlockCache, CacheStats};
}

/// How a run is scheduled and what it logs: prefetch policies, pacing, progress, the run log
/// and its memory events and stalls.
pub mod sched {
    pub use srcflow_sched::sched::{
        progress_message, FetchView, GovernorLog, MemoryEvent, MemoryEventKind, MemorySample,
        Pacing, Prefetch, PrefetchPolicy, Progress, RunLog, StallCause, Stalls, TaskEvent,
    };
}

/// The scratch disk as a run uses it: caps on the disk lanes, injected disk faults and the
/// bytes kept in each tier.
pub mod store {
    pub use srcflow_sched::store::{
        DirectIo, DiskFault, DiskIo, DiskRates, DiskRequests, TierBytes, DEFAULT_IO_DEPTH,
        MOST_IO_DEPTH,
    };
}

pub use api::{apply, compress, src};
pub use engine::{Engine, EngineBuilder, Options, Report, Run};
pub use srcflow_graph::{Kind, Layer, Stack, SweepGraph, Train};
pub use srcflow_tensor::WATCH_EVERY;
pub use srcflow_tensor::{Bandwidth, ByteSize, CancelToken, Error, Result, Tensor, Tier, C64};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
