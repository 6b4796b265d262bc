//! What a generated problem may ask for: positive sizes, parameters in their ranges, and cores
//! that fit in the memory this machine has now, checked from the sizes before anything is
//! allocated.

use super::{ProblemKind, ProblemSpec};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::ByteSize;

/// The longest time step the Trotter generators take: their gates' exponentials stay finite.
const LONGEST_STEP: f64 = 100.0;
/// The largest perturbation of the identity problems.
const LARGEST_EPS: f64 = 1e6;
/// The most sites a generated chain may have.
const MOST_SITES: usize = 1_000_000;
/// Bond of the Trotter time-evolution MPOs (two gate layers of bond 2).
const TROTTER_BOND: usize = 4;
/// Bytes of a complex128 element.
const ELEMENT_BYTES: u64 = 16;
/// Bytes a core takes besides its elements (its array, shape and file), counted generously.
const CORE_BYTES: u64 = 256;

impl ProblemSpec {
    /// Checks the sizes and the parameters a `kind` problem uses, and that its cores fit in
    /// the memory available now; the error names the values at fault.
    pub fn check(&self, kind: ProblemKind) -> Result<()> {
        let s = self;
        if s.sites < 2 || s.phys == 0 || s.bond == 0 || s.mpo_bond == 0 || s.depth == 0 {
            return Err(Error::Invalid(format!(
                "problem sizes must be positive with at least 2 sites, found sites {}, phys {}, bond {}, mpo bond {}, depth {}",
                s.sites, s.phys, s.bond, s.mpo_bond, s.depth
            )));
        }
        if s.sites > MOST_SITES {
            return Err(Error::Invalid(format!(
                "a generated chain has at most {MOST_SITES} sites, found {}",
                s.sites
            )));
        }
        self.check_parameters(kind)?;
        let available = crate::plan::available_memory()?;
        let needed = self.bytes(kind);
        if needed > available {
            return Err(Error::Invalid(format!(
                "the problem's cores would take about {} (sites {}, phys {}, bond {}, mpo bond {}, depth {}), more than the {} of memory available",
                ByteSize(needed), s.sites, s.phys, s.bond, s.mpo_bond, s.depth, ByteSize(available)
            )));
        }
        Ok(())
    }

    /// Checks the parameters `kind` uses: `dt` and phys 2 for the spin chains, `decay` of the
    /// random cores, `eps` of the perturbed identities.
    fn check_parameters(&self, kind: ProblemKind) -> Result<()> {
        let chain = matches!(kind, ProblemKind::Ising | ProblemKind::Heisenberg);
        if chain && self.phys != 2 {
            return Err(Error::Invalid(format!(
                "spin-chain problems have phys 2, found {}",
                self.phys
            )));
        }
        if chain && !within(self.dt, LONGEST_STEP) {
            return Err(Error::Invalid(format!(
                "dt must be a finite time step of at most {LONGEST_STEP} in size, found {}",
                self.dt
            )));
        }
        if kind != ProblemKind::Identity && !(self.decay > 0.0 && self.decay <= 1.0) {
            return Err(Error::Invalid(format!(
                "decay is the ratio of the smallest to the largest bond weight, in (0, 1]; found {}",
                self.decay
            )));
        }
        if kind == ProblemKind::Identity && !within(self.eps, LARGEST_EPS) {
            return Err(Error::Invalid(format!(
                "eps must be finite and at most {LARGEST_EPS} in size, found {}",
                self.eps
            )));
        }
        Ok(())
    }

    /// The bytes of the problem's complex128 cores, layer by layer, with each core's overhead.
    fn bytes(&self, kind: ProblemKind) -> u64 {
        let (p, s) = (self.phys, self);
        let mpo = |bond| s.layer_bytes(p.saturating_mul(p), bond);
        let state = s.layer_bytes(p, s.bond);
        match kind {
            ProblemKind::Random => mpo(s.mpo_bond).saturating_add(state),
            ProblemKind::Identity => mpo(s.mpo_bond).saturating_add(mpo(s.bond)),
            ProblemKind::Ising | ProblemKind::Heisenberg => mpo(TROTTER_BOND)
                .saturating_mul(s.depth as u64)
                .saturating_add(state),
        }
    }

    /// The bytes of one layer whose sites have `legs` elements per bond pair and bonds of at
    /// most `bond`, capped by the legs on each side of a cut.
    fn layer_bytes(&self, legs: usize, bond: usize) -> u64 {
        let n = self.sites;
        let at_cut = |cut: usize| {
            let to_end =
                u32::try_from(cut.min(n - 2 - cut)).map_or(u32::MAX, |k| k.saturating_add(1));
            legs.saturating_pow(to_end).min(bond) as u64
        };
        (0..n).fold(0u64, |sum, site| {
            let left = if site == 0 { 1 } else { at_cut(site - 1) };
            let right = if site + 1 == n { 1 } else { at_cut(site) };
            let elements = left.saturating_mul(right).saturating_mul(legs as u64);
            let core = elements
                .saturating_mul(ELEMENT_BYTES)
                .saturating_add(CORE_BYTES);
            sum.saturating_add(core)
        })
    }
}

/// True when `value` is finite and at most `most` in size.
fn within(value: f64, most: f64) -> bool {
    value.is_finite() && value.abs() <= most
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_the_machine_are_refused_before_anything_is_allocated() {
        let refused = |spec: ProblemSpec, kind| spec.check(kind).unwrap_err().to_string();
        let base = ProblemSpec::default();
        let sites = refused(
            ProblemSpec {
                sites: usize::MAX,
                ..base
            },
            ProblemKind::Random,
        );
        assert_eq!(
            sites,
            "a generated chain has at most 1000000 sites, found 18446744073709551615"
        );
        let depth = refused(
            ProblemSpec {
                depth: usize::MAX,
                ..base
            },
            ProblemKind::Ising,
        );
        assert!(
            depth.contains("depth 18446744073709551615") && depth.contains("more than the"),
            "{depth}"
        );
        let phys = refused(
            ProblemSpec {
                phys: 100_000,
                sites: 2,
                ..base
            },
            ProblemKind::Random,
        );
        assert!(phys.contains("phys 100000"), "{phys}");
        let chain = refused(
            ProblemSpec {
                phys: 100_000,
                ..base
            },
            ProblemKind::Ising,
        );
        assert_eq!(chain, "spin-chain problems have phys 2, found 100000");
        let dt = refused(
            ProblemSpec {
                dt: f64::NAN,
                ..base
            },
            ProblemKind::Ising,
        );
        assert!(dt.starts_with("dt must be a finite time step"), "{dt}");
        let decay = refused(
            ProblemSpec {
                decay: -1.0,
                ..base
            },
            ProblemKind::Random,
        );
        assert!(decay.contains("in (0, 1]; found -1"), "{decay}");
        let eps = refused(ProblemSpec { eps: 1e308, ..base }, ProblemKind::Identity);
        assert!(eps.starts_with("eps must be finite"), "{eps}");
        // parameters a kind does not use are not checked; a huge bond on 3 sites is capped
        let unused = ProblemSpec {
            dt: 1e300,
            eps: f64::NAN,
            ..base
        };
        assert!(unused.check(ProblemKind::Random).is_ok());
        let capped = ProblemSpec {
            sites: 3,
            bond: usize::MAX,
            ..base
        };
        assert!(capped.check(ProblemKind::Random).is_ok());
    }

    #[test]
    fn the_bytes_are_those_of_the_generated_cores() {
        use crate::gen::generate;
        for kind in ProblemKind::ALL.map(|(_, kind)| kind) {
            let spec = ProblemSpec {
                sites: 9,
                bond: 6,
                mpo_bond: 3,
                depth: 2,
                ..ProblemSpec::default()
            };
            let stack = generate(kind, &spec).unwrap();
            let cores: u64 = stack.layers().iter().map(|l| l.train.len() as u64).sum();
            let elements: u64 = stack
                .layers()
                .iter()
                .flat_map(|l| l.train.cores())
                .map(|c| c.bytes())
                .sum();
            assert_eq!(spec.bytes(kind), elements + cores * CORE_BYTES, "{kind:?}");
        }
    }
}
