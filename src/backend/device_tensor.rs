//! `DeviceTensor`: a dense row-major tensor held by a backend, in memory only that backend
//! reads (host memory for the CPU backend, a device allocation for a GPU backend).

use crate::tensor::DType;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A tensor on a backend: its dimensions and element type, and the backend's memory behind
/// them. Cloning shares the memory; primitives never write into a tensor they were given.
#[derive(Clone)]
pub struct DeviceTensor {
    dims: Vec<usize>,
    dtype: DType,
    memory: Arc<dyn Any + Send + Sync>,
}

impl DeviceTensor {
    /// A tensor of `dims` and `dtype` over `memory`, which the backend that made it reads.
    pub fn new(dims: Vec<usize>, dtype: DType, memory: Arc<dyn Any + Send + Sync>) -> Self {
        DeviceTensor {
            dims,
            dtype,
            memory,
        }
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
