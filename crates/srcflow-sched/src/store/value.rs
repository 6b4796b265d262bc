//! `Value`: what flows along a graph edge — a tensor in host or device memory, or a spilled file.

use super::SpillFile;
use srcflow_tensor::backend::DeviceTensor;
use srcflow_tensor::device::Block;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::AnyTensor;
use std::sync::Arc;

/// A value held by the store, owned by the tier that holds it.
#[derive(Clone, Debug)]
pub enum Value {
    /// A tensor in host memory.
    Host(AnyTensor),
    /// A tensor in one device's memory, in the form its backend made it.
    Device(DeviceValue),
    /// A tensor written to a scratch file (removed when the last handle drops).
    File(Arc<SpillFile>),
    /// A value of a simulated run: only its size, holding its device block if on the device.
    Modelled {
        /// Bytes it would occupy.
        bytes: u64,
        /// Held, never read: dropping the last handle gives the block back.
        _block: Option<Arc<Block>>,
    },
    /// A receipt: the value was handed to the output sink, which gives it back on request.
    InSink,
}

/// A tensor on a device, holding the block of the device's pool that accounts for its memory
/// (see [`DeviceTensor::leasing`]).
#[derive(Clone, Debug)]
pub struct DeviceValue {
    /// The device whose backend holds the tensor.
    pub device: usize,
    /// The tensor, in that backend's memory.
    pub tensor: DeviceTensor,
}

/// Where a value in memory is: what a task reads before it computes or copies.
pub enum InMemory<'a> {
    /// In host memory.
    Host(&'a AnyTensor),
    /// On a device.
    Device(&'a DeviceValue),
}

impl Value {
    /// `tensor` on `device`, holding `block` until the last handle to its memory drops.
    pub fn on_device(device: usize, tensor: DeviceTensor, block: Block) -> Self {
        Value::Device(DeviceValue {
            device,
            tensor: tensor.leasing(block),
        })
    }

    /// A simulated value of `bytes`, holding `block` if it lives on the device.
    pub fn modelled(bytes: u64, block: Option<Block>) -> Self {
        Value::Modelled {
            bytes,
            _block: block.map(Arc::new),
        }
    }

    /// Bytes it occupies on its tier.
    pub fn bytes(&self) -> u64 {
        match self {
            Value::Host(t) => t.bytes(),
            Value::Device(v) => v.tensor.bytes(),
            Value::File(f) => f.bytes(),
            Value::Modelled { bytes, .. } => *bytes,
            Value::InSink => 0,
        }
    }

    /// The tensor, in host or device memory, or an error naming `what` if it is elsewhere.
    pub fn in_memory(&self, what: &dyn std::fmt::Display) -> Result<InMemory<'_>> {
        match self {
            Value::Host(t) => Ok(InMemory::Host(t)),
            Value::Device(v) => Ok(InMemory::Device(v)),
            Value::File(f) => Err(Error::Invalid(format!(
                "{what} needs {} in memory, found it on disk",
                f.path().display()
            ))),
            Value::Modelled { .. } => Err(modelled(what)),
            Value::InSink => Err(in_sink(what)),
        }
    }

    /// The spilled file, or an error naming `what` if the value is in memory.
    pub fn on_disk(&self, what: &dyn std::fmt::Display) -> Result<Arc<SpillFile>> {
        match self {
            Value::File(f) => Ok(Arc::clone(f)),
            Value::Host(..) | Value::Device(..) => Err(Error::Invalid(format!(
                "{what} reads a spilled file, found a tensor in memory"
            ))),
            Value::Modelled { .. } => Err(modelled(what)),
            Value::InSink => Err(in_sink(what)),
        }
    }
}

/// The error for data asked of a receipt for a value the sink holds.
fn in_sink(what: &dyn std::fmt::Display) -> Error {
    Error::Invalid(format!(
        "{what} needs data, found a receipt for a value the output sink holds"
    ))
}

/// The error for data asked of a value that a simulation only modelled.
fn modelled(what: &dyn std::fmt::Display) -> Error {
    Error::Invalid(format!("{what} needs data, found a simulated value"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use srcflow_tensor::backend::{Backend, CpuBackend};
    use srcflow_tensor::device::{MemoryPool, PoolConfig, SimulatedPool};
    use srcflow_tensor::tensor::DType;

    #[test]
    fn the_block_goes_back_when_the_last_handle_to_the_memory_drops() {
        let pool = SimulatedPool::new(PoolConfig::default()).unwrap();
        let backend = CpuBackend::new(1).unwrap();
        let zeros = AnyTensor::zeros(DType::Float64, vec![8]);
        let value = Value::on_device(
            0,
            backend.upload(&zeros).unwrap(),
            pool.allocate(64).unwrap(),
        );
        let Ok(InMemory::Device(on_device)) = value.in_memory(&"the test") else {
            panic!("a device value is in memory, on the device");
        };
        let kept = on_device.tensor.clone().reshaped(vec![2, 4]);
        assert_eq!(kept.lease().map(Block::bytes), Some(512));
        drop(value);
        assert_eq!(
            pool.usage().allocated,
            512,
            "a handle still holds the memory"
        );
        drop(kept);
        assert_eq!(pool.usage().allocated, 0);
    }
}
