//! srcflow's lowest layer: what every other layer computes with and reports in.
//!
//! Tensors and their element types ([`tensor`]), the block cache that serves large buffers
//! ([`alloc`]), a device's memory as a pool ([`device`]), the backends that run primitives on
//! the CPU or on CUDA devices ([`backend`]) and the kernels of SRC built on them ([`kernels`]);
//! with the error type, byte sizes and rates, cancellation and durable file writes that the
//! layers above share. Nothing here knows of a sweep graph.

#![warn(missing_docs)]

pub mod alloc;
pub mod backend;
pub mod cancel;
pub mod device;
pub mod error;
pub mod even_share;
pub mod fault_spec;
pub mod files;
pub mod kernels;
pub mod pool;
pub mod size;
pub mod tensor;
pub mod tier;

pub use cancel::{CancelToken, WATCH_EVERY};
pub use error::{Error, Result};
pub use size::{Bandwidth, ByteSize};
pub use tensor::{Tensor, C64};
pub use tier::Tier;
