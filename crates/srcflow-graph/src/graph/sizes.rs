//! Sizes of the values that flow along graph edges, from shapes alone.

use super::{DataId, Shared, SweepGraph};

impl SweepGraph {
    /// Bytes of the value `id`.
    pub fn value_bytes(&self, id: DataId) -> u64 {
        match id {
            DataId::Stored { .. } => 0,
            DataId::Replica { of, device } => self.shared_bytes(of, device, false),
            DataId::Part { of, device } => self.shared_bytes(of, device, true),
            _ => (self.value_dims(id).iter().product::<usize>() * self.dtype.bytes()) as u64,
        }
    }

    /// Dimensions of the value `id` as a kernel reads it: a replica of a basis holds its
    /// device's rows, a part of a value is its share of the elements, a draft kept by the sink
    /// has none on any tier.
    pub fn value_dims(&self, id: DataId) -> Vec<usize> {
        let bonds = |site: usize, side: usize| -> Vec<usize> {
            self.stack.site(site).iter().map(|s| s[side]).collect()
        };
        match id {
            DataId::Core { layer, site, .. } => self.stack.layers[layer].cores[site].to_vec(),
            DataId::Env { site, cols } | DataId::Spilled { site, cols, .. } => {
                [vec![cols.len()], bonds(site, 1)].concat()
            }
            DataId::Sketch { site, cols } => {
                let (up, down) = self.stack.output_phys(site);
                vec![cols.len(), up, down, self.out_bond_right(site)]
            }
            DataId::Basis { site } | DataId::Draft { site } => self.basis_dims(site),
            DataId::Rounded { site } => {
                let caps = self.bond_caps();
                let (up, down) = self.stack.output_phys(site);
                let left = site.checked_sub(1).map_or(1, |cut| caps[cut]);
                vec![left, up, down, caps.get(site).copied().unwrap_or(1)]
            }
            DataId::Carry { site } => vec![self.bond_caps()[site], self.out_bond_right(site)],
            DataId::Stored { .. } => vec![0],
            DataId::Replica {
                of: Shared::Basis { site },
                device,
            } => {
                let mut dims = self.basis_dims(site);
                dims[0] = self.device_rows(site, device).len();
                dims
            }
            DataId::Replica { of, .. } => self.value_dims(of.whole()),
            DataId::Part { .. } => {
                vec![(self.value_bytes(id) / self.dtype.bytes() as u64) as usize]
            }
            DataId::Folded { site } => {
                let (up, down) = self.stack.output_phys(site);
                [bonds(site, 0), vec![up, down, self.out_bond_right(site)]].concat()
            }
            DataId::Proj { site } => [vec![self.out_bond_left(site)], bonds(site, 0)].concat(),
        }
    }

    /// Dimensions of the basis of `site`: `[bond left, Up, Down, bond right]`.
    fn basis_dims(&self, site: usize) -> Vec<usize> {
        let (up, down) = self.stack.output_phys(site);
        vec![
            self.out_bond_left(site),
            up,
            down,
            self.out_bond_right(site),
        ]
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
