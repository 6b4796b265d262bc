//! `srcflow run` under `mpirun`: the ranks `mpirun` started, MPI's transport between them, and
//! how every rank leaves after a failure (clean up, tell the others, exit non-zero).

use srcflow::ranks::Transport;
use srcflow::Result;
use std::sync::Arc;

/// Ranks `mpirun` (Open MPI's, or a PMI launcher's such as MPICH's or Slurm's) started, when it
/// started this process.
fn launched_ranks() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
}

/// Runs `run` as one rank of several when `mpirun` started this process with others, else
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

/// Runs `run` alone; an error when `mpirun` started this process with others, which a build
/// without MPI cannot join.
#[cfg(not(feature = "mpi"))]
pub fn run_ranked(run: impl FnOnce(Option<Arc<dyn Transport>>) -> Result<()>) -> Result<()> {
    match launched_ranks() {
        Some(ranks) if ranks > 1 => Err(srcflow::Error::Invalid(format!(
            "mpirun started {ranks} ranks, but this srcflow was built without MPI: build it \
             with `cargo build --release --features mpi` (tools/mpi_setup.sh installs what \
             that needs)"
        ))),
        _ => run(None),
    }
}
