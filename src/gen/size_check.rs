//! What a generated problem may ask for: positive sizes, finite parameters, and cores that fit
//! in the memory this machine has now, checked from the sizes before anything is allocated.

use super::{ProblemKind, ProblemSpec};
use crate::error::{Error, Result};
use crate::ByteSize;

/// The longest time step the Trotter generators take: their gates' exponentials stay finite.
const LONGEST_STEP: f64 = 100.0;

/// Bytes of a complex128 element.
const ELEMENT_BYTES: u64 = 16;

impl ProblemSpec {
    /// Checks the sizes and parameters of a `kind` problem, and that its cores fit in the
    /// memory available now; the error names the values at fault.
    pub fn check(&self, kind: ProblemKind) -> Result<()> {
        let s = self;
        if s.sites < 2 || s.phys == 0 || s.bond == 0 || s.mpo_bond == 0 || s.depth == 0 {
            return Err(Error::Invalid(format!(
                "problem sizes must be positive with at least 2 sites, found sites {}, phys {}, bond {}, mpo bond {}, depth {}",
                s.sites, s.phys, s.bond, s.mpo_bond, s.depth
            )));
        }
        for (name, value) in [("dt", s.dt), ("decay", s.decay), ("eps", s.eps)] {
            if !value.is_finite() {
                return Err(Error::Invalid(format!(
                    "{name} must be finite, found {value}"
                )));
            }
        }
        if s.dt.abs() > LONGEST_STEP {
            return Err(Error::Invalid(format!(
                "dt must be at most {LONGEST_STEP} in size (a Trotter step, in units of the coupling), found {}",
                s.dt
            )));
        }
        let available = crate::plan::available_memory()?;
        let needed = self.upper_bytes(kind, available);
        if needed > available {
            return Err(Error::Invalid(format!(
                "the problem's cores would take up to {} (sites {}, phys {}, bond {}, mpo bond {}, depth {}), more than the {} of memory available",
                ByteSize(needed), s.sites, s.phys, s.bond, s.mpo_bond, s.depth, ByteSize(available)
            )));
        }
        Ok(())
    }

    /// An upper bound on the bytes of the problem's cores: every layer with bonds of
    /// `max(bond, mpo bond)`, capped at each cut by the physical dimensions to its nearer end
    /// (or a lower bound above `limit`, when one site per layer already passes it).
    fn upper_bytes(&self, kind: ProblemKind, limit: u64) -> u64 {
        let layers = match kind {
            ProblemKind::Ising | ProblemKind::Heisenberg => self.depth.saturating_add(1),
            ProblemKind::Random | ProblemKind::Identity => 2,
        } as u64;
        let legs = (self.phys as u64).saturating_mul(self.phys as u64);
        let least = (self.sites as u64)
            .saturating_mul(legs)
            .saturating_mul(layers);
        let least = least.saturating_mul(ELEMENT_BYTES);
        if least > limit {
            return least;
        }
        let widest = self.bond.max(self.mpo_bond) as u64;
        let bond_at = |cut: usize| {
            let to_end = cut.min(self.sites - 2 - cut) as u32 + 1;
            legs.saturating_pow(to_end).min(widest)
        };
        let per_layer = (0..self.sites).fold(0u64, |sum, site| {
            let left = if site == 0 { 1 } else { bond_at(site - 1) };
            let right = if site + 1 == self.sites {
                1
            } else {
                bond_at(site)
            };
            let core = left.saturating_mul(right).saturating_mul(legs);
            sum.saturating_add(core)
        });
        per_layer
            .saturating_mul(layers)
            .saturating_mul(ELEMENT_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_beyond_the_machine_are_refused_before_anything_is_allocated() {
        let huge = |spec: ProblemSpec, kind| spec.check(kind).unwrap_err().to_string();
        let base = ProblemSpec::default();
        let sites = huge(
            ProblemSpec {
                sites: usize::MAX,
                ..base
            },
            ProblemKind::Random,
        );
        assert!(
            sites.contains("more than the") && sites.contains("sites 18446744073709551615"),
            "{sites}"
        );
        let depth = huge(
            ProblemSpec {
                depth: usize::MAX,
                ..base
            },
            ProblemKind::Ising,
        );
        assert!(depth.contains("depth 18446744073709551615"), "{depth}");
        let phys = huge(
            ProblemSpec {
                phys: 100_000,
                sites: 2,
                ..base
            },
            ProblemKind::Random,
        );
        assert!(phys.contains("phys 100000"), "{phys}");
        let dt = huge(
            ProblemSpec {
                dt: f64::NAN,
                ..base
            },
            ProblemKind::Ising,
        );
        assert_eq!(dt, "dt must be finite, found NaN");
        // a huge bond on 3 sites is capped by the physical dimensions: 2 cuts of at most 4
        let capped = ProblemSpec {
            sites: 3,
            bond: usize::MAX,
            ..base
        };
        assert!(capped.check(ProblemKind::Random).is_ok());
        assert!(base.check(ProblemKind::Identity).is_ok());
    }
}
