//! The checkpoint of a run of several ranks: one folder holding a checkpoint per rank
//! (`rank-R`), each written and read by its own rank alone.

use super::{made_if_missing, IDENTITY};
use srcflow_tensor::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The start of a rank's folder's name.
const RANK: &str = "rank-";

/// The folder of rank `rank`'s checkpoint in the checkpoint folder `dir` of a run of ranks.
pub fn rank_folder(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("{RANK}{rank}"))
}

/// Makes `dir`, the checkpoint folder of a run of `ranks` ranks, when missing (its parent must
/// exist): true when this call made it. Refuses a folder that holds anything but the folders
/// of these ranks: a checkpoint of one process, or of more ranks, or files of the user's.
pub fn made_for_ranks(dir: &Path, ranks: usize) -> Result<bool> {
    let made = match dir.exists() {
        true => false,
        false => match made_if_missing(dir) {
            Ok(()) => true,
            Err(_) if dir.is_dir() => false, // another rank made it meanwhile
            Err(e) => return Err(e),
        },
    };
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for name in entries.flatten().map(|e| e.file_name()) {
        let name = name.to_string_lossy();
        match rank_of(&name) {
            Some(rank) if rank < ranks => {}
            Some(rank) => {
                return Err(Error::Invalid(format!(
                "the checkpoint folder {} holds {name}, the checkpoint of a run of at least {} \
                 ranks, and this run has {ranks}: run it under mpirun with as many ranks to \
                 resume it, or remove it or give another folder to start afresh",
                dir.display(),
                rank + 1
            )))
            }
            None if name == IDENTITY => {
                return Err(Error::Invalid(format!(
                "the checkpoint folder {} holds the checkpoint of a run of one process, and this \
                 run has {ranks} ranks: run it as one process to resume it, or remove it or give \
                 another folder to start afresh",
                dir.display()
            )))
            }
            None => {
                return Err(Error::Invalid(format!(
                "the checkpoint folder {} holds {name}, which is not a rank's checkpoint: give an \
                 empty or missing folder",
                dir.display()
            )))
            }
        }
    }
    Ok(made)
}

/// True when `dir` holds the checkpoint of a run of several ranks (a rank's folder).
pub(super) fn holds_ranks(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        rank_of(&entry.file_name().to_string_lossy()).is_some() && entry.path().is_dir()
    })
}

/// The rank whose folder is named `name`, if it is a rank's folder's name.
fn rank_of(name: &str) -> Option<usize> {
    name.strip_prefix(RANK)?.parse().ok()
}

/// Removes rank `rank`'s checkpoint from `dir` (the checkpoint folder of a run of ranks), and
/// `dir` itself once no rank's is left in it.
pub fn remove_rank(dir: &Path, rank: usize) -> Result<()> {
    let folder = rank_folder(dir, rank);
    if folder.exists() {
        super::remove(&folder)?;
    }
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_ranks_is_made_once_and_refused_when_it_holds_more_ranks_or_other_files() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("ckpt");
        assert!(made_for_ranks(&dir, 2).unwrap());
        assert!(!holds_ranks(&dir));
        assert!(!made_for_ranks(&dir, 2).unwrap());
        std::fs::create_dir(rank_folder(&dir, 1)).unwrap();
        assert!(
            holds_ranks(&dir),
            "rank 1's part alone is a checkpoint of ranks"
        );
        std::fs::create_dir(rank_folder(&dir, 0)).unwrap();
        assert!(!made_for_ranks(&dir, 2).unwrap());
        let fewer = made_for_ranks(&dir, 1).unwrap_err().to_string();
        assert!(
            fewer.contains("rank-1") && fewer.contains("at least 2 ranks"),
            "{fewer}"
        );
        std::fs::write(dir.join(IDENTITY), "{}").unwrap();
        let one = made_for_ranks(&dir, 2).unwrap_err().to_string();
        assert!(one.contains("one process"), "{one}");
        std::fs::remove_file(dir.join(IDENTITY)).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let foreign = made_for_ranks(&dir, 2).unwrap_err().to_string();
        assert!(foreign.contains("notes.txt"), "{foreign}");
        let orphan = top.path().join("no-parent").join("ckpt");
        assert!(made_for_ranks(&orphan, 2).is_err());
    }

    #[test]
    fn removing_the_last_rank_removes_the_folder() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("ckpt");
        made_for_ranks(&dir, 2).unwrap();
        for rank in 0..2 {
            std::fs::create_dir(rank_folder(&dir, rank)).unwrap();
        }
        remove_rank(&dir, 0).unwrap();
        assert!(dir.exists() && !rank_folder(&dir, 0).exists());
        remove_rank(&dir, 1).unwrap();
        assert!(!dir.exists());
    }
}
