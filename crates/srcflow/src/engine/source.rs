//! `CoreSource`: where read-site tasks get input cores (memory, or a problem directory).

use srcflow_graph::train::Stack;
use srcflow_tensor::error::Result;
use srcflow_tensor::tensor::AnyTensor;

/// Hands out input cores one at a time, in `[l, r, u, d]` form.
pub trait CoreSource: Sync {
    /// The core of `layer` (0 = top) at `site`, in the element type it is stored in.
    fn read(&self, layer: usize, site: usize) -> Result<AnyTensor>;

    /// True when it hands out the MPS of a bra stack conjugated (a checkpoint names the
    /// choice, beside the contents' fingerprint it changes).
    fn conjugates_bra(&self) -> bool {
        false
    }
}

/// Cores of a stack already in memory.
pub struct MemorySource<'a> {
    stack: &'a Stack,
}

impl<'a> MemorySource<'a> {
    /// Serves the cores of `stack`.
    pub fn new(stack: &'a Stack) -> Self {
        MemorySource { stack }
    }
}

impl CoreSource for MemorySource<'_> {
    fn read(&self, layer: usize, site: usize) -> Result<AnyTensor> {
        Ok(self.stack.layers()[layer].train.core(site).clone())
    }
}
