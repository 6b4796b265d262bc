//! Ranks: one sweep graph run by several processes (MPI ranks), each owning a contiguous share
//! of the devices.
//!
//! Every rank builds the same graph from the same shapes and keeps the tasks of its own devices
//! ([`RankGraph`]). A value that a task of another rank reads leaves its rank through a send
//! task (on the producing device's download lane) and arrives through a receive task (on the
//! rank's network lane). The ranks exchange such values in collectives ([`Exchange`]), in one
//! order that every rank derives from the graph, so no rank can wait on a collective that
//! another rank has not reached for a value it has not made. A half-batch rewrite stays inside
//! its rank: it splits a node of one device, and its halves still make the one value that the
//! collective carries.
//!
//! The simulator replays the whole run of several ranks as one graph ([`across_nodes`]), with
//! the values that cross ranks as messages on each node's network lane.

mod across_nodes;
mod exchange_plan;
mod exchange_use;
mod in_process;
mod layout;
mod localize;
#[cfg(any(feature = "mpi", test))]
mod mpi_buffers;
#[cfg(feature = "mpi")]
mod mpi_ranks;
mod network;
mod transport;
mod wire;

pub use across_nodes::{across_nodes, AcrossNodes};
pub use exchange_plan::{Collective, Crossing, Exchange};
pub use exchange_use::ExchangeUse;
pub use in_process::InProcessRanks;
pub use layout::RankLayout;
pub use localize::RankGraph;
#[cfg(feature = "mpi")]
pub use mpi_ranks::MpiRanks;
pub use network::{ExchangeLane, Post};
pub use transport::{Payload, Take, Transport};
pub use wire::{decode_tensors, Encoded};
