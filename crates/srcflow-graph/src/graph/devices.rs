//! How a sweep is shared between the devices of a node: each device owns a contiguous block
//! of sketch columns (its env and sketch tasks) and of basis rows (its project tasks).

use super::{Cols, DataId, Pass, Shared, SweepGraph};
use srcflow_tensor::even_share::even_share;
use srcflow_tensor::Tier;
use std::ops::Range;

/// The columns of `part` of `total` cut into `parts` (see [`even_share`]).
pub fn share(total: usize, parts: usize, part: usize) -> Cols {
    let Range { start, end } = even_share(total, parts, part);
    Cols { start, end }
}

impl SweepGraph {
    /// The device that runs the QR of every site (and the first core and the rounding sweep).
    pub const QR_DEVICE: usize = 0;

    /// Devices with sketch columns of their own (more devices than columns leave some idle).
    pub fn active_devices(&self) -> usize {
        self.devices.min(self.sketch).max(1)
    }

    /// The devices that read the cores of `site` for `pass`, from device 0 on: every active
    /// device, except for the last read of site 0, which only the first core (on the QR's
    /// device) needs.
    pub fn core_readers(&self, site: usize, pass: Pass) -> usize {
        if site == 0 && pass == Pass::RightToLeft {
            1
        } else {
            self.active_devices()
        }
    }

    /// The sketch columns device `device` owns.
    pub fn device_cols(&self, device: usize) -> Cols {
        share(self.sketch, self.active_devices(), device)
    }

    /// The rows of the basis of `site` that device `device` projects.
    pub fn device_rows(&self, site: usize, device: usize) -> Cols {
        share(self.out_bond_left(site), self.active_devices(), device)
    }

    /// The tier value `id` lives on: input cores read for several devices stay in host memory,
    /// whence each device uploads its part.
    pub fn tier_of(&self, id: DataId) -> Tier {
        match id {
            DataId::Core { .. } => self.cores_tier(),
            _ => id.tier(),
        }
    }

    /// Where input cores are read to: host memory when several devices upload their parts,
    /// else straight to the device.
    pub fn cores_tier(&self) -> Tier {
        if self.devices > 1 {
            Tier::Host
        } else {
            Tier::Device
        }
    }

    /// Bytes of a part (`part`) or replica of the shared value `of` on `device`: a replica of a
    /// basis holds the device's rows only.
    pub(super) fn shared_bytes(&self, of: Shared, device: usize, part: bool) -> u64 {
        let whole = self.value_bytes(of.whole());
        match (of, part) {
            (Shared::Core { site, pass, .. }, true) => {
                let elements = whole as usize / self.dtype.bytes();
                let readers = self.core_readers(site, pass);
                (share(elements, readers, device).len() * self.dtype.bytes()) as u64
            }
            (Shared::Proj { site }, true) | (Shared::Basis { site }, _) => {
                let rows = self.out_bond_left(site).max(1) as u64;
                whole / rows * self.device_rows(site, device).len() as u64
            }
            _ => whole,
        }
    }
}
