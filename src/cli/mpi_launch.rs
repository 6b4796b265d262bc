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

/// How a launcher started this process: the rank it gave it, and how many ranks it started
/// when its variables say.
#[derive(Debug, PartialEq)]
struct Launch {
    rank: String,
    ranks: Option<usize>,
}

/// How a launcher ([`LAUNCHERS`]) started this process, when one did.
fn launch() -> Result<Option<Launch>> {
    launch_in(|name| std::env::var(name).ok())
}

/// The launch of the first launcher whose rank variable is set, reading variables with `var`;
/// an error naming the variable when its rank is not a number, its size not a positive
/// number, or the rank not below the size (values no launcher sets, which would otherwise
/// run as one process, or as the wrong one, without a word).
fn launch_in(var: impl Fn(&str) -> Option<String>) -> Result<Option<Launch>> {
    for (rank_name, size_name) in LAUNCHERS {
        let Some(rank) = var(rank_name) else {
            continue;
        };
        let index: usize = rank
            .trim()
            .parse()
            .map_err(|_| not_a_launch(rank_name, &rank, "a rank: 0, 1, 2, …"))?;
        let ranks = match var(size_name) {
            None => None,
            Some(size) => match size.trim().parse::<usize>() {
                Ok(ranks) if ranks > index => Some(ranks),
                Ok(_) => {
                    let what = format!("more ranks than rank {index} ({rank_name})");
                    return Err(not_a_launch(size_name, &size, &what));
                }
                Err(_) => return Err(not_a_launch(size_name, &size, "a number of ranks: 1, 2, …")),
            },
        };
        return Ok(Some(Launch { rank, ranks }));
    }
    Ok(None)
}

/// The error for the launcher variable `name`, whose value `value` is not `expected`.
fn not_a_launch(name: &str, value: &str, expected: &str) -> srcflow::Error {
    srcflow::Error::Invalid(format!(
        "the environment variable {name} is {value:?}, where a launcher (mpirun, srun) sets \
         {expected}: unset it to run as one process, or start srcflow with the launcher"
    ))
}

/// Runs `run` as one rank of several when a launcher started this process with others, else
/// alone. A rank that fails (or panics) prints its error, tells the others, waits for them to
/// clean up and exits here, without finalising MPI.
#[cfg(feature = "mpi")]
pub fn run_ranked(run: impl FnOnce(Option<Arc<dyn Transport>>) -> Result<()>) -> Result<()> {
    use srcflow::ranks::MpiRanks;
    /// How long a failed rank waits for the others to clean up before it exits.
    const CLEAN_UP_BOUND: std::time::Duration = std::time::Duration::from_secs(20);
    let said = match launch()? {
        None => return run(None),
        Some(Launch {
            ranks: Some(ranks), ..
        }) if ranks < 2 => return run(None),
        // A launcher that does not say how many ranks it started: MPI knows.
        Some(launch) => launch.ranks,
    };
    let (universe, ranks) = MpiRanks::start()?;
    if ranks.ranks() < 2 {
        drop(ranks);
        drop(universe);
        if let Some(said) = said {
            return Err(srcflow::Error::Invalid(format!(
                "the launcher's variables say {said} ranks, but MPI started this process alone: \
                 start srcflow with the launcher that set them, or unset them"
            )));
        }
        return run(None);
    }
    let ranks = Arc::new(ranks);
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(Some(ranks.clone()))));
    match ran {
        Ok(Ok(())) => {
            drop(ranks);
            drop(universe);
            Ok(())
        }
        Err(_) => {
            // The panic's message is printed already; the other ranks would wait for this one.
            ranks.abort("it panicked (a bug: please report it with the rank's message)");
            ranks.leave_after_failure(CLEAN_UP_BOUND);
            std::process::exit(101)
        }
        Ok(Err(error)) => {
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
    /// How to build srcflow that joins ranks.
    const BUILD: &str = "build it with `cargo build --release --features mpi` \
                         (tools/mpi_setup.sh installs what that needs)";
    match launch()? {
        Some(Launch {
            ranks: Some(ranks), ..
        }) if ranks > 1 => Err(srcflow::Error::Invalid(format!(
            "a launcher (mpirun or srun) started {ranks} ranks, but this srcflow was built \
             without MPI: {BUILD}"
        ))),
        // Rank 0 of a launch that does not say its size runs alone; the others refuse, so
        // that no two processes write the output.
        Some(Launch { rank, ranks: None }) if rank != "0" => Err(srcflow::Error::Invalid(format!(
            "a launcher started this process as rank {rank}, but this srcflow was built \
             without MPI: {BUILD}"
        ))),
        _ => run(None),
    }
}

#[cfg(test)]
mod tests {
    use super::{launch_in, Launch};
    use std::collections::HashMap;

    /// The launch in an environment of `vars`.
    fn launch(vars: &[(&str, &str)]) -> Option<Launch> {
        tried(vars).unwrap()
    }

    /// The launch in an environment of `vars`, or the refusal of its variables.
    fn tried(vars: &[(&str, &str)]) -> srcflow::Result<Option<Launch>> {
        let vars: HashMap<&str, &str> = vars.iter().copied().collect();
        launch_in(|name| vars.get(name).map(|v| v.to_string()))
    }

    /// A launch as rank `rank` of `ranks`.
    fn of(rank: &str, ranks: Option<usize>) -> Option<Launch> {
        let rank = rank.to_string();
        Some(Launch { rank, ranks })
    }

    #[test]
    fn each_launcher_is_recognised_by_its_rank_and_counted_by_its_size() {
        let mpirun = [("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "3")];
        assert_eq!(launch(&mpirun), of("1", Some(3)));
        let pmi = [("PMI_RANK", "0"), ("PMI_SIZE", "2")];
        assert_eq!(launch(&pmi), of("0", Some(2)));
        let srun = [
            ("PMIX_RANK", "5"),
            ("SLURM_STEP_NUM_TASKS", "8"),
            ("SLURM_NTASKS", "16"),
        ];
        assert_eq!(launch(&srun), of("5", Some(8)));
        // Open MPI 5's mpirun also names the rank in PMIx: its own variables come first.
        let mpirun_5 = [
            ("PMIX_RANK", "2"),
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ];
        assert_eq!(launch(&mpirun_5), of("2", Some(4)));
    }

    #[test]
    fn a_launch_without_its_size_is_still_a_launch_and_no_rank_is_none() {
        assert_eq!(launch(&[("PMIX_RANK", "3")]), of("3", None));
        // `srun` without an MPI plugin starts independent processes: each runs alone.
        assert_eq!(launch(&[("SLURM_STEP_NUM_TASKS", "4")]), None);
        assert_eq!(launch(&[]), None);
    }

    #[test]
    fn variables_no_launcher_sets_are_refused_naming_them() {
        for (vars, named) in [
            (&[("PMI_RANK", "0"), ("PMI_SIZE", "lots")][..], "PMI_SIZE"),
            (&[("PMI_RANK", "0"), ("PMI_SIZE", "0")][..], "PMI_SIZE"),
            (&[("PMI_RANK", "4"), ("PMI_SIZE", "2")][..], "PMI_SIZE"),
            (&[("PMI_RANK", "-1"), ("PMI_SIZE", "2")][..], "PMI_RANK"),
            (&[("OMPI_COMM_WORLD_RANK", "x")][..], "OMPI_COMM_WORLD_RANK"),
        ] {
            let said = tried(vars).unwrap_err().to_string();
            assert!(
                said.contains(named) && said.contains("unset it"),
                "{vars:?}: {said}"
            );
        }
        assert_eq!(
            launch(&[("PMI_RANK", "0"), ("PMI_SIZE", "1")]),
            of("0", Some(1))
        );
    }
}
