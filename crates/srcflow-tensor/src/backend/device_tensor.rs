//! `DeviceTensor`: a dense row-major tensor held by a backend, in memory only that backend
//! reads (host memory for the CPU backend, a device allocation for a GPU backend).

use crate::device::Block;
use crate::tensor::DType;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A tensor on a backend: its dimensions and element type, and the backend's memory behind
/// them. Cloning shares the memory; primitives never write into a tensor they were given,
/// except [`Backend::place`](super::Backend::place) into one no other handle shares.
/// A tensor the device keeps between tasks holds the block of the device's pool that accounts
/// for its memory, so the lease goes back when the last handle to the memory drops.
#[derive(Clone)]
pub struct DeviceTensor {
    dims: Vec<usize>,
    dtype: DType,
    memory: Arc<dyn Any + Send + Sync>,
    lease: Option<Arc<Block>>,
}

impl DeviceTensor {
    /// A tensor of `dims` and `dtype` over `memory`, which the backend that made it reads.
    pub fn new(dims: Vec<usize>, dtype: DType, memory: Arc<dyn Any + Send + Sync>) -> Self {
        DeviceTensor {
            dims,
            dtype,
            memory,
            lease: None,
        }
    }

    /// The same tensor holding `block`, the lease on the device memory it occupies.
    pub fn leasing(self, block: Block) -> Self {
        DeviceTensor {
            lease: Some(Arc::new(block)),
            ..self
        }
    }

    /// The block of the device's pool it holds, if it holds one.
    pub fn lease(&self) -> Option<&Block> {
        self.lease.as_deref()
    }

    /// The dimensions, outermost first.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// True when it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of its elements.
    pub fn bytes(&self) -> u64 {
        (self.len() * self.dtype.bytes()) as u64
    }

    /// The same elements seen with other dimensions of equal size (no copy).
    pub fn reshaped(self, dims: Vec<usize>) -> Self {
        debug_assert_eq!(dims.iter().product::<usize>(), self.len());
        DeviceTensor { dims, ..self }
    }

    /// The backend's memory, for the backend that made it.
    pub fn memory(&self) -> &Arc<dyn Any + Send + Sync> {
        &self.memory
    }

    /// The backend's memory to write into, when no other handle shares it.
    pub fn memory_mut(&mut self) -> Option<&mut (dyn Any + Send + Sync)> {
        Arc::get_mut(&mut self.memory)
    }
}

impl fmt::Debug for DeviceTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceTensor({} {:?})", self.dtype, self.dims)
    }
}
