//! Sizes of the values that flow along graph edges, from shapes alone.

use super::{DataId, SweepGraph};

impl SweepGraph {
    /// Bytes of the value `id`.
    pub fn value_bytes(&self, id: DataId) -> u64 {
        let elements = match id {
            DataId::Core { layer, site, .. } => {
                self.stack.layers[layer].cores[site].iter().product()
            }
            DataId::Env { site, cols } | DataId::Spilled { site, cols, .. } => {
                return self.env_bytes(site, cols)
            }
            DataId::Sketch { site, cols } => {
                cols.len() * self.phys(site) * self.out_bond_right(site)
            }
            DataId::Basis { site } | DataId::Draft { site } => {
                self.out_bond_left(site) * self.phys(site) * self.out_bond_right(site)
            }
            DataId::Rounded { site } => {
                let caps = self.bond_caps();
                let left = site.checked_sub(1).map_or(1, |cut| caps[cut]);
                left * self.phys(site) * caps.get(site).copied().unwrap_or(1)
            }
            DataId::Carry { site } => self.bond_caps()[site] * self.out_bond_right(site),
            DataId::Stored { .. } => 0,
            DataId::Replica { of, device } => return self.shared_bytes(of, device, false),
            DataId::Part { of, device } => return self.shared_bytes(of, device, true),
            DataId::Folded { site } => {
                let bonds: usize = self.stack.site(site).iter().map(|s| s[0]).product();
                bonds * self.phys(site) * self.out_bond_right(site)
            }
            DataId::Proj { site } => {
                let bonds: usize = self.stack.site(site).iter().map(|s| s[0]).product();
                bonds * self.out_bond_left(site)
            }
        };
        (elements * self.dtype.bytes()) as u64
    }

    /// Product of the output's physical legs at `site`.
    fn phys(&self, site: usize) -> usize {
        let (up, down) = self.stack.output_phys(site);
        up * down
    }

    /// Output bond left of `site` (1 at the left end).
    pub(super) fn out_bond_left(&self, site: usize) -> usize {
        site.checked_sub(1).map_or(1, |cut| self.out_bonds[cut])
    }

    /// Output bond right of `site` (1 at the right end).
    pub(super) fn out_bond_right(&self, site: usize) -> usize {
        self.out_bonds.get(site).copied().unwrap_or(1)
    }
}
