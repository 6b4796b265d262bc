//! `Value`: what flows along a graph edge — a tensor in memory or a spilled file.

use super::SpillFile;
use crate::device::Block;
use crate::error::{Error, Result};
use crate::tensor::AnyTensor;
use std::sync::Arc;

/// A value held by the store: a tensor (device or host memory) or a file on the scratch disk.
#[derive(Clone, Debug)]
pub enum Value {
    /// A tensor in memory, with the device block it holds when it lives on the device.
    Memory(AnyTensor, Option<Arc<Block>>),
    /// A tensor written to a scratch file (removed when the last handle drops).
    File(Arc<SpillFile>),
    /// A value of a simulated run: only its size (and its device block, if on the device).
    Modelled(u64, Option<Arc<Block>>),
    /// A receipt: the value was handed to the output sink, which gives it back on request.
    InSink,
}

impl Value {
    /// Wraps a tensor in host memory.
    pub fn tensor(tensor: AnyTensor) -> Self {
        Value::Memory(tensor, None)
    }

    /// Wraps a tensor on the device, holding its block until the last handle drops.
    pub fn on_device(tensor: AnyTensor, block: Block) -> Self {
        Value::Memory(tensor, Some(Arc::new(block)))
    }

    /// A simulated value of `bytes`, holding `block` if it lives on the device.
    pub fn modelled(bytes: u64, block: Option<Block>) -> Self {
        Value::Modelled(bytes, block.map(Arc::new))
    }

    /// Bytes it occupies on its tier.
    pub fn bytes(&self) -> u64 {
        match self {
            Value::Memory(t, _) => t.bytes(),
            Value::File(f) => f.bytes(),
            Value::Modelled(bytes, _) => *bytes,
            Value::InSink => 0,
        }
    }

    /// The tensor, or an error naming `what` if it is still on disk.
    pub fn in_memory(&self, what: &dyn std::fmt::Display) -> Result<AnyTensor> {
        match self {
            Value::Memory(t, _) => Ok(t.clone()),
            Value::File(f) => Err(Error::Invalid(format!(
                "{what} needs {} in memory, found it on disk",
                f.path().display()
            ))),
            Value::Modelled(..) => Err(modelled(what)),
            Value::InSink => Err(in_sink(what)),
        }
    }

    /// The spilled file, or an error naming `what` if the value is in memory.
    pub fn on_disk(&self, what: &dyn std::fmt::Display) -> Result<Arc<SpillFile>> {
        match self {
            Value::File(f) => Ok(Arc::clone(f)),
            Value::Memory(..) => Err(Error::Invalid(format!(
                "{what} reads a spilled file, found a tensor in memory"
            ))),
            Value::Modelled(..) => Err(modelled(what)),
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
