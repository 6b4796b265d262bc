//! `srcflow run` under a launcher (`mpirun`, `srun`): the ranks it started, MPI's transport
//! between them, and how every rank leaves after a failure (clean up, tell the others, exit
//! non-zero).

use srcflow::ranks::Transport;
use srcflow::Result;
use std::sync::Arc;

/// What a launcher tells each process it starts: the variable of its rank, and the one of how
/// many ranks it started. Open MPI's `mpirun`; a PMI launcher's (MPICH's `mpiexec`, Slurm's
/// `srun --mpi=pmi2`); Slurm's `srun --mpi=pmix`, which names the ranks in PMIx and counts
/// them in Slurm's own variable.
const LAUNCHERS: [(&str, &str); 3] = [
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
    ("PMIX_RANK", "SLURM_STEP_NUM_TASKS"),
];

/// Ranks a launcher ([`LAUNCHERS`]) started, when one started this process.
fn launched_ranks() -> Option<usize> {
    ranks_in(|name| std::env::var(name).ok())
}

/// Ranks the first launcher whose rank variable is set says it started, reading variables
/// with `var`.
fn ranks_in(var: impl Fn(&str) -> Option<String>) -> Option<usize> {
    LAUNCHERS
        .iter()
        .filter(|(rank, _)| var(rank).is_some())
        .find_map(|(_, size)| var(size)?.parse().ok())
}

/// Runs `run` as one rank of several when a launcher started this process with others, else
/// alone. A rank that fails prints its error, tells the others, waits for them to clean up and
/// exits here, without finalising MPI.
#[cfg(feature = "mpi")]
pub fn run_ranked(run: impl FnOnce(Option<Arc<dyn Transport>>) -> Result<()>) -> Result<()> {
    use srcflow::ranks::MpiRanks;
    /// How long a failed rank waits for the others to clean up before it exits.
    const CLEAN_UP_BOUND: std::time::Duration = std::time::Duration::from_secs(20);
    if launched_ranks().is_none_or(|ranks| ranks < 2) {
        return run(None);
    }
    let (universe, ranks) = MpiRanks::start()?;
    let ranks = Arc::new(ranks);
    match run(Some(ranks.clone())) {
        Ok(()) => {
            drop(ranks);
            drop(universe);
            Ok(())
        }
        Err(error) => {
            ranks.abort(&error.to_string());
            super::report_error(&error);
            ranks.leave_after_failure(CLEAN_UP_BOUND);
            // Collectives may still be pending: finalising MPI could wait for them forever.
            std::process::exit(super::exit_status(&error).into())
        }
    }
}

/// Runs `run` alone; an error when a launcher started this process with others, which a build
/// without MPI cannot join.
#[cfg(not(feature = "mpi"))]
pub fn run_ranked(run: impl FnOnce(Option<Arc<dyn Transport>>) -> Result<()>) -> Result<()> {
    match launched_ranks() {
        Some(ranks) if ranks > 1 => Err(srcflow::Error::Invalid(format!(
            "a launcher (mpirun or srun) started {ranks} ranks, but this srcflow was built \
             without MPI: build it with `cargo build --release --features mpi` \
             (tools/mpi_setup.sh installs what that needs)"
        ))),
        _ => run(None),
    }
}

#[cfg(test)]
mod tests {
    use super::ranks_in;
    use std::collections::HashMap;

    /// Ranks in an environment of `vars`.
    fn ranks(vars: &[(&str, &str)]) -> Option<usize> {
        let vars: HashMap<&str, &str> = vars.iter().copied().collect();
        ranks_in(|name| vars.get(name).map(|v| v.to_string()))
    }

    #[test]
    fn each_launcher_is_recognised_by_its_rank_and_counted_by_its_size() {
        let mpirun = [("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "3")];
        assert_eq!(ranks(&mpirun), Some(3));
        assert_eq!(ranks(&[("PMI_RANK", "0"), ("PMI_SIZE", "2")]), Some(2));
        let srun = [
            ("PMIX_RANK", "5"),
            ("SLURM_STEP_NUM_TASKS", "8"),
            ("SLURM_NTASKS", "16"),
        ];
        assert_eq!(ranks(&srun), Some(8));
    }

    #[test]
    fn slurm_without_an_mpi_launch_is_no_launch() {
        // `srun` without `--mpi` starts independent processes: each runs alone.
        assert_eq!(ranks(&[("SLURM_STEP_NUM_TASKS", "4")]), None);
        assert_eq!(ranks(&[]), None);
        assert_eq!(ranks(&[("PMIX_RANK", "0")]), None);
    }
}
