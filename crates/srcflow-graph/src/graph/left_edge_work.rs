//! The work of the left-edge trim (`LeftEdgeSink` in the engine), which the write of site 0
//! does once every core of the left edge is written: a QR sweep to the right over the cores
//! `0..=last` and an LQ sweep back, on the output's shapes. The graph charges it to that write
//! so that the simulator times it.

use super::{Op, SweepGraph};
use srcflow_tensor::kernels::qr_work;
use srcflow_tensor::tensor::Work;
use std::sync::Arc;

impl SweepGraph {
    /// The work of trimming the output's left edge ([`SweepGraph::left_edge`]; none without
    /// a trim), counted as the trim runs it on each core `[left, phys, right]`.
    pub fn left_edge_work(&self) -> Work {
        let Some(last) = self.left_edge() else {
            return Work::default();
        };
        let bond = |cut: usize| self.out_bonds.get(cut).copied().unwrap_or(1);
        let mut work = Work::default();
        // The QR sweep: the carry (`carry × left`) times the core, then a QR of all but the
        // right leg, whose R is the next carry. `shapes` keeps each Q's `[carry, phys, kept]`.
        let mut carry = 1;
        let mut shapes = Vec::with_capacity(last);
        for site in 0..=last {
            let (left, phys, right) = (
                site.checked_sub(1).map_or(1, bond),
                self.stack.phys(site),
                bond(site),
            );
            work = work + Work::gemm(1, carry, phys * right, left, 0, false);
            if site < last {
                work = work + qr_work(carry * phys, right, right.min(carry * phys));
                shapes.push((carry, phys, right.min(carry * phys)));
                carry = right.min(carry * phys);
            }
        }
        // The LQ sweep back: an LQ of the core (its adjoint's QR), then the core on its left
        // times L.
        let mut core = (carry, self.stack.phys(last), bond(last));
        while let Some((left, phys, right)) = shapes.pop() {
            let kept = core.0.min(core.1 * core.2);
            work = work + qr_work(core.1 * core.2, core.0, kept);
            work = work + Work::gemm(1, left * phys, kept, right, 0, false);
            core = (left, phys, kept);
        }
        work
    }

    /// Bytes the trim reads back and writes again: the cores of sites `0..=last`, held as
    /// drafts until it runs (none without a trim).
    pub fn left_edge_bytes(&self) -> u64 {
        let Some(last) = self.left_edge() else {
            return 0;
        };
        let bond = |cut: usize| self.out_bonds.get(cut).copied().unwrap_or(1);
        let left = |site: usize| site.checked_sub(1).map_or(1, bond);
        let elements: usize = (0..=last)
            .map(|site| left(site) * self.stack.phys(site) * bond(site))
            .sum();
        2 * (elements * self.dtype.bytes()) as u64
    }

    /// Charges the left-edge trim's work and bytes to the write of site 0 (the last core the
    /// trim waits for: the right-to-left pass makes it last).
    pub(super) fn charge_left_edge(&mut self) {
        let (work, bytes) = (self.left_edge_work(), self.left_edge_bytes());
        let writes = self.graph.node_weights_mut();
        let last = writes
            .into_iter()
            .find(|t| t.op == Op::WriteSite && t.site == 0);
        if let Some(write) = last.map(Arc::make_mut) {
            write.work = work;
            write.moved_bytes += bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_shapes, GraphOptions, Lane};
    use super::*;

    /// The tasks off the compute lanes that carry work, as (op, site).
    fn charged(graph: &SweepGraph) -> Vec<(Op, usize)> {
        let off_compute = graph
            .graph
            .node_weights()
            .filter(|t| t.lane != Lane::Compute);
        off_compute
            .filter(|t| t.work != Work::default())
            .map(|t| (t.op, t.site))
            .collect()
    }

    #[test]
    fn the_write_of_site_0_carries_the_trim_of_a_left_edge_wider_than_its_legs() {
        // Bond 16 on 2-dimensional legs: cuts 0 to 2 hold more than the legs to their left.
        let graph =
            SweepGraph::build(&test_shapes::mps(10, 16, 2), &GraphOptions::new(16)).unwrap();
        assert_eq!(graph.left_edge(), Some(3));
        let work = graph.left_edge_work();
        assert!(
            work.factorization_flops.iter().sum::<f64>() > 0.0,
            "{work:?}"
        );
        // A QR per site left of the last and an LQ per site right of the first: 6 in all,
        // each with its copies; a product per site of each sweep.
        assert_eq!(work.contractions, 7.0);
        assert!(work.copied_bytes > 0.0);
        assert_eq!(charged(&graph), vec![(Op::WriteSite, 0)]);
        let write = graph
            .graph
            .node_weights()
            .find(|t| t.op == Op::WriteSite && t.site == 0);
        assert_eq!(write.unwrap().work, work);
    }

    #[test]
    fn the_trim_of_a_small_chain_counts_what_it_computes() {
        // 4 sites of bond 4 and legs 2: bonds 4, 4, 2, so only cut 0 (4 > 2) is trimmed.
        let graph = SweepGraph::build(&test_shapes::mps(4, 4, 2), &GraphOptions::new(4)).unwrap();
        assert_eq!(
            (graph.out_bonds.clone(), graph.left_edge()),
            (vec![4, 4, 2], Some(1))
        );
        let work = graph.left_edge_work();
        // QR sweep: 1×1 by 1×8, a QR of 2 × 4 (rank 2), then 2×4 by 4×8; LQ sweep: a QR of
        // 8 × 2 (the adjoint of the 2 × 8 core), then 2×2 by 2×2.
        let gemm_flops = 8.0 * (8.0 + 2.0 * 8.0 * 4.0 + 2.0 * 2.0 * 2.0);
        assert_eq!(work.gemm_flops.iter().sum::<f64>(), gemm_flops);
        let qr = |m: f64, r: f64| 16.0 * (m * r * r - r * r * r / 3.0);
        let factorizations = work.factorization_flops.iter().sum::<f64>();
        assert!((factorizations - qr(2.0, 2.0) - qr(8.0, 2.0)).abs() < 1e-9);
        // Each QR's matrix in, and its Q out: 8 + 4, then 16 + 16 elements.
        assert_eq!(work.copied_bytes, 2.0 * 16.0 * (12.0 + 32.0));
        // Cores [1, 2, 4] and [4, 2, 4] read back and written again, in complex128.
        assert_eq!(graph.left_edge_bytes(), 2 * 16 * (8 + 32));
    }

    #[test]
    fn no_task_off_the_compute_lanes_carries_work_without_a_trim() {
        let graph = SweepGraph::build(&test_shapes::mps(10, 2, 2), &GraphOptions::new(2)).unwrap();
        assert_eq!(graph.left_edge(), None);
        assert_eq!(graph.left_edge_work(), Work::default());
        assert_eq!(graph.left_edge_bytes(), 0);
        assert!(charged(&graph).is_empty());
    }
}
