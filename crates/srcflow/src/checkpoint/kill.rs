//! `KillFault`: kills the process at a chosen task, as a node failure or a job's time limit
//! would (tests of resuming from a checkpoint).

use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::fault_spec::head_and_nth;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The kinds of task a kill may strike, by the name reports and traces give them.
pub const KILLABLE: [&str; 9] = [
    "env",
    "fold",
    "sketch",
    "qr",
    "project",
    "first",
    "write",
    "spill-disk",
    "checkpoint",
];

/// Sends SIGKILL to this process in the middle of the `nth` task of kind `op`: a task that
/// writes a file to the checkpoint (`checkpoint`, `spill-disk`) after its data is written and
/// before the file takes its name; any other after its work and before the scheduler hears
/// of it. Under mpirun, only in the rank it names (every rank when it names none).
#[derive(Debug)]
pub struct KillFault {
    op: String,
    nth: usize,
    rank: Option<usize>,
    seen: AtomicUsize,
}

impl KillFault {
    /// True when the kill strikes in rank `rank` of a run of several ranks.
    pub fn strikes_rank(&self, rank: usize) -> bool {
        self.rank.is_none_or(|r| r == rank)
    }

    /// Refuses a kill in a rank the run does not have, which would never strike.
    pub fn check_ranks(&self, ranks: usize) -> Result<()> {
        match self.rank {
            Some(rank) if rank >= ranks => Err(Error::Invalid(format!(
                "`Tiering::kill` strikes in rank {rank}, but the run has {ranks} rank(s), \
                 numbered from 0"
            ))),
            _ => Ok(()),
        }
    }

    /// Counts one more task of kind `op` and kills the process if it is the chosen one.
    pub fn strike(&self, op: &str) {
        if op != self.op || self.seen.fetch_add(1, Ordering::SeqCst) + 1 != self.nth {
            return;
        }
        // SAFETY: getpid and kill have no preconditions; SIGKILL cannot be caught.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        loop {
            std::thread::park();
        }
    }
}

impl Clone for KillFault {
    fn clone(&self) -> Self {
        KillFault {
            op: self.op.clone(),
            nth: self.nth,
            rank: self.rank,
            seen: AtomicUsize::new(self.seen.load(Ordering::SeqCst)),
        }
    }
}

impl FromStr for KillFault {
    type Err = Error;

    /// `OP[:N][@RANK]`: the `N`th (first by default) task of kind `OP`, one of [`KILLABLE`],
    /// in rank `RANK` only (under mpirun; every rank by default).
    fn from_str(text: &str) -> Result<Self> {
        let (task, rank) = match text.split_once('@') {
            Some((task, rank)) => (task, rank.parse().ok().map(Some)),
            None => (text, Some(None)),
        };
        match (head_and_nth(task), rank) {
            (Some((op, nth)), Some(rank)) if KILLABLE.contains(&op) => Ok(KillFault {
                op: op.to_string(),
                nth,
                rank,
                seen: AtomicUsize::new(0),
            }),
            _ => Err(Error::Invalid(format!(
                "a kill is OP[:N][@RANK] with OP one of {} and N >= 1, found '{text}'",
                KILLABLE.join(", ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kill_names_a_kind_of_task_and_which_of_them() {
        let kill: KillFault = "checkpoint:3".parse().unwrap();
        assert_eq!((kill.op.as_str(), kill.nth), ("checkpoint", 3));
        kill.strike("checkpoint");
        kill.strike("env");
        kill.strike("checkpoint");
        assert_eq!(kill.seen.load(Ordering::SeqCst), 2);
        let refused = "sleep:2".parse::<KillFault>().unwrap_err().to_string();
        assert!(refused.contains("'sleep:2'") && refused.contains("spill-disk"));
        assert!("env:0".parse::<KillFault>().is_err());
        assert!(kill.strikes_rank(0) && kill.strikes_rank(1));
        let in_rank: KillFault = "env:2@1".parse().unwrap();
        assert_eq!((in_rank.nth, in_rank.rank), (2, Some(1)));
        assert!(in_rank.strikes_rank(1) && !in_rank.strikes_rank(0));
        assert!("env@x".parse::<KillFault>().is_err());
    }

    #[test]
    fn a_kill_in_a_rank_past_the_last_is_refused() {
        let in_rank: KillFault = "env@2".parse().unwrap();
        assert!(in_rank.check_ranks(3).is_ok());
        let refused = in_rank.check_ranks(2).unwrap_err().to_string();
        assert!(
            refused.contains("rank 2") && refused.contains("2 rank(s)"),
            "{refused}"
        );
        let anywhere: KillFault = "env".parse().unwrap();
        assert!(anywhere.check_ranks(1).is_ok());
    }
}
