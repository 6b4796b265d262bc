//! `OutputSlots`: the outputs half-batch nodes write their slices into, allocated once by the
//! first slice so that joining the slices allocates nothing.

use crate::device::Block;
use crate::graph::{DataId, SliceAxis};
use crate::store::Value;
use crate::tensor::AnyTensor;
use std::collections::HashMap;
use std::sync::Mutex;

/// Outputs being written slice by slice, by name.
#[derive(Default)]
pub(super) struct OutputSlots {
    slots: Mutex<HashMap<DataId, Slot>>,
}

/// One output: its device block, its rows so far and how many rows are in.
struct Slot {
    block: Block,
    tensor: Option<AnyTensor>,
    written: usize,
}

impl OutputSlots {
    /// True when a slice has already allocated the output `id`.
    pub fn is_open(&self, id: &DataId) -> bool {
        self.lock().contains_key(id)
    }

    /// Keeps `block`, the device memory of the whole output `id`.
    pub fn open(&self, id: DataId, block: Block) {
        let slot = Slot {
            block,
            tensor: None,
            written: 0,
        };
        self.lock().insert(id, slot);
    }

    /// Writes `part` into the output `id`, whose `axis` has `total` entries, from entry
    /// `start` on; returns the whole output once every entry is in.
    pub fn write(
        &self,
        id: DataId,
        axis: SliceAxis,
        start: usize,
        total: usize,
        part: &AnyTensor,
    ) -> Option<Value> {
        let mut slots = self.lock();
        let slot = slots.get_mut(&id).expect("the slice opened its output");
        let index = match axis {
            SliceAxis::Leading => 0,
            SliceAxis::Trailing => part.shape().len() - 1,
        };
        let tensor = slot.tensor.get_or_insert_with(|| {
            let mut shape = part.shape().to_vec();
            shape[index] = total;
            AnyTensor::zeros(part.dtype(), shape)
        });
        match axis {
            SliceAxis::Leading => tensor.put_leading_rows(start, part),
            SliceAxis::Trailing => tensor.put_trailing_columns(start, part),
        }
        slot.written += part.shape()[index];
        if slot.written < total {
            return None;
        }
        let slot = slots.remove(&id).expect("present");
        let tensor = slot.tensor.expect("written");
        Some(Value::on_device(tensor, slot.block))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<DataId, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}
