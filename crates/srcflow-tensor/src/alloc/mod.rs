//! Memory for large buffers: a caching allocator that keeps the process's resident memory
//! where the planner put it.
//!
//! The sweep allocates and frees buffers of megabytes to gigabytes in every task. The system
//! allocator either maps fresh pages for each (which the kernel zero-fills on first touch, on every
//! task) or keeps freed buffers in its heap, where buffers of other sizes cannot reuse the holes
//! (so resident memory grows past the plan when environments spill). [`BlockCache`] carves large
//! buffers from chunks of address space it maps once, keeps freed ranges (merged with free
//! neighbours) for the next buffer of any size they hold, and gives pages back to the system
//! only when fresh memory would take the process past the cap of the runs under way (each holds
//! a [`CapLease`]); when no run is under way it gives every free page back and unmaps the chunks
//! no buffer uses, so a process that runs srcflow among other work (a Python session) holds no
//! cached memory between runs. The binary and the Python extension install it as the global
//! allocator; the library works with any allocator.

mod block_cache;
mod cap_lease;
mod fork_guard;
mod leases;
mod page_size;
mod resident;

pub use block_cache::{stats, take_mapped_here, BlockCache, CacheStats};
pub use cap_lease::{release_cached_if_idle, CapLease};
pub use resident::resident_bytes;
