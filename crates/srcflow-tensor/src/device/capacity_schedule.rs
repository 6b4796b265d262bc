//! `CapacitySchedule`: a device that loses (or regains) memory at given sweep steps
//! (`--shrink-device SIZE@STEP,…`), as when another job shares the GPU.

use crate::error::{Error, Result};
use crate::ByteSize;
use std::str::FromStr;

/// Capacities to apply when the sweep reaches each step, in step order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapacitySchedule {
    changes: Vec<(usize, u64)>,
}

impl CapacitySchedule {
    /// The capacity to apply once compute has reached `step`, if one falls due; each change is
    /// handed out once.
    pub fn due(&mut self, step: usize) -> Option<u64> {
        let due = self
            .changes
            .iter()
            .take_while(|(at, _)| *at <= step)
            .count();
        let last = self.changes.drain(..due).next_back();
        last.map(|(_, bytes)| bytes)
    }
}

impl FromStr for CapacitySchedule {
    type Err = Error;

    /// Parses `SIZE@STEP[,SIZE@STEP…]`, for example `48MiB@10,32MiB@40`.
    fn from_str(text: &str) -> Result<Self> {
        let mut changes = Vec::new();
        for item in text.split(',') {
            let bad = |why: &str| {
                Error::Invalid(format!(
                    "cannot read device capacity change '{item}' in '{text}': {why} (expected SIZE@STEP, e.g. 32MiB@10)"
                ))
            };
            let (size, step) = item.split_once('@').ok_or_else(|| bad("no '@'"))?;
            let size: ByteSize = size.trim().parse().map_err(|_| bad("bad size"))?;
            let step: usize = step.trim().parse().map_err(|_| bad("bad step"))?;
            changes.push((step, size.0));
        }
        changes.sort_by_key(|&(step, _)| step);
        Ok(CapacitySchedule { changes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_fall_due_once_in_step_order() {
        let mut schedule: CapacitySchedule = "2MiB@9,4MiB@3".parse().unwrap();
        assert_eq!(schedule.due(2), None);
        assert_eq!(schedule.due(5), Some(4 << 20));
        assert_eq!(schedule.due(5), None);
        assert_eq!(schedule.due(100), Some(2 << 20));
        assert!("4MiB".parse::<CapacitySchedule>().is_err());
        assert!("4MiB@x".parse::<CapacitySchedule>().is_err());
    }
}
