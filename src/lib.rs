//! srcflow: compressed products of tensor trains (MPO·MPS, MPO·MPO, MPO^k·MPS) with Successive
//! Randomized Compression, run as a dataflow graph of tasks.
//!
//! Quick use: [`apply`], [`compress`] and [`src`] on in-memory [`Train`]s; for the graph itself,
//! [`SweepGraph::build`] and [`Engine::run_graph`].

pub mod alloc;
pub mod backend;
mod cancel;
pub mod checkpoint;
pub mod device;
pub mod engine;
pub mod error;
pub mod even_share;
mod fault_spec;
pub mod files;
pub mod graph;
pub mod io;
pub mod kernels;
mod liveness;
pub mod ops;
pub mod plan;
pub mod ranks;
pub mod sched;
pub mod sim;
mod size;
pub mod store;
pub mod tensor;
pub mod test_matrix;
mod tier;
pub mod trace;
pub mod train;

mod api;
pub mod gen;

pub use api::{apply, compress, src};
pub use cancel::{CancelToken, WATCH_EVERY};
pub use engine::{Engine, EngineBuilder, Options, Report, Run};
pub use error::{Error, Result};
pub use graph::SweepGraph;
pub use size::{Bandwidth, ByteSize};
pub use tensor::{Tensor, C64};
pub use tier::Tier;
pub use train::{Kind, Layer, Stack, Train};

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
