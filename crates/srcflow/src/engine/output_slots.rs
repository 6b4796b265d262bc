//! `OutputSlots`: the outputs half-batch nodes write their slices into, allocated once by the
//! first slice so that joining the slices allocates nothing.

use srcflow_graph::graph::DataId;
use srcflow_sched::store::Value;
use srcflow_tensor::backend::{Backend, DeviceTensor};
use srcflow_tensor::device::Block;
use srcflow_tensor::error::Result;
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
    tensor: Option<DeviceTensor>,
    written: usize,
}

/// Where a slice goes in the output of its half-batch node.
pub(super) struct SlicePlace {
    /// The device the output lives on.
    pub device: usize,
    /// The slice's first entry along the output's first axis.
    pub start: usize,
    /// Entries of the whole output along that axis.
    pub total: usize,
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

    /// Writes `part` into the output `id` where `place` says, with `backend` (which holds
    /// both); returns the whole output once every entry is in.
    pub fn write(
        &self,
        id: DataId,
        place: SlicePlace,
        part: &DeviceTensor,
        backend: &dyn Backend,
    ) -> Result<Option<Value>> {
        let mut slots = self.lock();
        let slot = slots.get_mut(&id).expect("the slice opened its output");
        let tensor = match &mut slot.tensor {
            Some(tensor) => tensor,
            empty => {
                let mut dims = part.dims().to_vec();
                dims[0] = place.total;
                empty.insert(backend.zeros(dims, part.dtype())?)
            }
        };
        backend.place(tensor, 0, place.start, part)?;
        slot.written += part.dims()[0];
        if slot.written < place.total {
            return Ok(None);
        }
        let slot = slots.remove(&id).expect("present");
        let tensor = slot.tensor.expect("written");
        Ok(Some(Value::on_device(place.device, tensor, slot.block)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<DataId, Slot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}
