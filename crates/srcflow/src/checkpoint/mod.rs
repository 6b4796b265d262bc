//! `Checkpoint`: the folder where a run keeps what it needs to go on after a kill (what it is,
//! the values it finished and a journal of them), and from which the same run resumes.
//!
//! Every value is written under a temporary name, flushed, renamed and then recorded in the
//! journal, so that a kill at any moment leaves values that are whole or absent, never torn.
//! The rename is not flushed on its own: a record whose file lost its name to a power loss
//! is dropped when the checkpoint is opened again (the journal is trusted only for files that
//! are there, whole).

mod build_id;
mod every;
mod identity;
mod journal;
mod kill;
mod pacing;
mod rank_folders;
mod retire;

pub use every::CheckpointEvery;
pub use identity::RunIdentity;
pub use kill::{KillFault, KILLABLE};
pub use rank_folders::{made_for_ranks, rank_folder, remove_rank};
pub use retire::SweepSize;

use journal::{Entry, Journal};
use pacing::SitePacing;
use srcflow_graph::graph::{DataId, Op, Shared};
use srcflow_sched::store::{try_lock, DiskAccess, DiskIo, SpillFile};
use srcflow_tensor::cancel::CancelToken;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::files::durable;
use srcflow_tensor::tensor::AnyTensor;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The file that says which run the checkpoint is of.
const IDENTITY: &str = "identity.json";
/// The journal of the values held.
const JOURNAL: &str = "journal.jsonl";
/// The lock file the run using the checkpoint holds.
const LOCK: &str = ".lock";
/// Suffix of a value's file.
const VALUE: &str = ".bin";

/// A run's checkpoint folder, open and locked for the run.
pub struct Checkpoint {
    dir: PathBuf,
    _lock: File,
    journal: Mutex<Journal>,
    kept: Mutex<HashMap<DataId, Entry>>,
    /// The sweep's sites and devices: which kept values a resume can no longer read.
    size: SweepSize,
    writes: DiskAccess,
    reads: DiskAccess,
    cancel: CancelToken,
    kill: Option<Arc<KillFault>>,
    /// Which sites a checkpoint kept by time keeps (`None`: every site it is asked to).
    pacing: Option<SitePacing>,
    /// What the run wrote into it.
    written: Mutex<Written>,
}

/// What a run wrote into its checkpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Written {
    /// Values written (environments spilled to disk included: their spill is their write).
    pub values: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Of those, bytes written for the checkpoint alone (not spills the run makes anyway).
    pub extra_bytes: u64,
}

impl Checkpoint {
    /// Opens the checkpoint of the run `identity` (a sweep of `size`) in `dir`, made (with its
    /// identity) if missing or empty; refuses one of another run, saying what differs. What a
    /// kill left half written is dropped. Transfers move bytes as `disk` says and stop once
    /// `cancel` is cancelled; `kill` (tests) kills the process in the middle of a write.
    pub fn open(
        dir: &Path,
        identity: &RunIdentity,
        size: SweepSize,
        disk: &DiskIo,
        cancel: CancelToken,
        kill: Option<Arc<KillFault>>,
    ) -> Result<Self> {
        made_if_missing(dir)?;
        disk.direct.check(dir)?;
        if read_identity(dir)?.is_none() {
            only_our_files(dir)?;
        }
        let lock = locked(dir)?;
        match read_identity(dir)? {
            Some(there) => same_run(dir, &there, identity)?,
            None => {
                only_our_files(dir)?;
                let text = serde_json::to_string_pretty(identity).expect("plain data");
                durable::write_whole(&dir.join(IDENTITY), text.as_bytes())?;
            }
        }
        let (journal, kept) = Journal::recover(dir)?;
        let (reads, writes) = disk.accesses();
        Ok(Checkpoint {
            dir: dir.to_path_buf(),
            _lock: lock,
            journal: Mutex::new(journal),
            kept: Mutex::new(kept),
            size,
            writes,
            reads,
            cancel,
            kill,
            pacing: None,
            written: Mutex::new(Written::default()),
        })
    }

    /// The checkpoint, keeping the environments and S of the sites `every` says: by time, it
    /// decides site by site as the run goes; by sites, the sweep graph holds
    /// only the writes of those sites already.
    pub fn paced(mut self, every: CheckpointEvery) -> Self {
        self.pacing = match every {
            CheckpointEvery::Interval(interval) => Some(SitePacing::new(interval)),
            CheckpointEvery::Sites(_) => None,
        };
        self
    }

    /// True when a checkpoint task of site `site` is to keep `value` ([`Checkpoint::paced`]):
    /// always for output cores, and for the rest unless kept by time and not due.
    pub fn due(&self, value: DataId, site: usize) -> bool {
        match (&self.pacing, value) {
            (_, DataId::Basis { .. }) | (None, _) => true,
            (Some(pacing), value) => pacing.due(value, site),
        }
    }

    /// What the run wrote into it so far.
    pub fn written(&self) -> Written {
        *self.written.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The values it holds, by content ([`DataId::content`]).
    pub fn kept(&self) -> HashSet<DataId> {
        self.lock_kept().keys().copied().collect()
    }

    /// Keeps `tensor` as the value `value` (by content), for a task of kind `op`: written,
    /// flushed, renamed and recorded in the journal. Returns a handle to its file, which stays when the
    /// handle drops. `fault` (tests) replaces the outcome of the write with an injected error.
    pub fn keep(
        &self,
        op: Op,
        value: DataId,
        tensor: &AnyTensor,
        fault: Option<std::io::Error>,
    ) -> Result<SpillFile> {
        let name = file_name(value);
        let path = self.dir.join(&name);
        let temporary = durable::temporary_of(&path);
        self.lock_journal().writing(value)?;
        durable::remove_if_there(&temporary)?; // a kill's, which a torn journal forgot
        let written =
            SpillFile::write(temporary.clone(), tensor, &self.writes, fault, &self.cancel)?;
        if let Some(kill) = &self.kill {
            kill.strike(op.name());
        }
        durable::flush_and_rename(&temporary, &path)?;
        let entry = Entry {
            value,
            file: name,
            dtype: tensor.dtype(),
            shape: tensor.shape().to_vec(),
            checksum: written.checksum(),
        };
        drop(written);
        self.lock_journal().record(&entry)?;
        let file = entry.file_in(&self.dir);
        self.lock_kept().insert(value, entry);
        self.count_written(op, tensor.bytes());
        if matches!(value, DataId::Basis { .. }) || value.is_projection() {
            self.retire_superseded()?;
        }
        Ok(file)
    }

    /// Removes the kept values that no resume can read any more, now that the right-to-left
    /// pass has kept a later point to resume from ([`retire`]); the journal that names that
    /// point is flushed to the disk first.
    fn retire_superseded(&self) -> Result<()> {
        let mut kept = self.lock_kept();
        let Some(site) = self.size.resume_site(&kept) else {
            return Ok(());
        };
        let dead = retire::superseded(&kept, site);
        if dead.is_empty() {
            return Ok(());
        }
        self.lock_journal().flush()?;
        for value in dead {
            kept.remove(&value);
            let path = self.dir.join(file_name(value));
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
        Ok(())
    }

    /// Counts one more value of `bytes` written by a task of kind `op`.
    fn count_written(&self, op: Op, bytes: u64) {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        written.values += 1;
        written.bytes += bytes;
        if op.profile().checkpoint {
            written.extra_bytes += bytes;
        }
    }

    fn lock_journal(&self) -> MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A handle to the file of the kept value `value` (by content).
    pub fn file(&self, value: DataId) -> Result<SpillFile> {
        let kept = self.lock_kept();
        let entry = kept.get(&value).ok_or_else(|| {
            Error::Invalid(format!(
                "the checkpoint {} holds no {value} to resume from",
                self.dir.display()
            ))
        })?;
        Ok(entry.file_in(&self.dir))
    }

    /// Reads the kept value `value` (by content) back.
    pub fn read(&self, value: DataId) -> Result<AnyTensor> {
        self.file(value)?.read(&self.reads, &self.cancel)
    }

    fn lock_kept(&self) -> MutexGuard<'_, HashMap<DataId, Entry>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The seed of the run whose checkpoint is in `dir`, if there is one: what a caller that left
/// the seed to chance runs with again, to resume rather than be refused.
pub fn seed_of(dir: &Path) -> Option<u64> {
    read_identity(dir).ok().flatten()?.seed()
}

/// The sketch columns per task of the run whose checkpoint is in `dir` (or, for a run of ranks,
/// in its first rank's folder), if there is one: what a run resuming it plans with.
pub fn batch_of(dir: &Path) -> Option<usize> {
    let identity = match read_identity(dir) {
        Ok(Some(identity)) => identity,
        _ => read_identity(&rank_folder(dir, 0)).ok().flatten()?,
    };
    identity.batch_columns()
}

/// Removes the checkpoint in `dir` (a run that finished needs it no more), under its lock (a
/// run resuming it meanwhile is refused, and refuses this): the files its journal names, then
/// the journal, the identity and the lock, then the folder if nothing else is left in it (a
/// file of the user's stays, with the folder). A kill in the middle leaves a checkpoint that
/// resumes or starts afresh.
pub fn remove(dir: &Path) -> Result<()> {
    let _lock = locked(dir)?;
    for value in journal::named(dir)? {
        let file = dir.join(file_name(value));
        durable::remove_if_there(&file)?;
        durable::remove_if_there(&durable::temporary_of(&file))?;
    }
    for name in [JOURNAL, IDENTITY] {
        durable::remove_if_there(&durable::temporary_of(&dir.join(name)))?;
    }
    for name in [JOURNAL, IDENTITY, LOCK] {
        durable::remove_if_there(&dir.join(name))?;
    }
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

/// Removes the file `damaged` of a value the checkpoint in `dir` kept, found no longer to hold
/// what was written ([`Error::Damaged`]), so that a run opening the checkpoint again makes the
/// value anew: true when it was such a file and is gone.
pub fn remove_damaged(dir: &Path, damaged: &Path) -> bool {
    let named = journal::named(dir).unwrap_or_default();
    let ours = named
        .into_iter()
        .any(|value| dir.join(file_name(value)) == damaged);
    ours && std::fs::remove_file(damaged).is_ok()
}

/// The file name of the value `value` in a checkpoint.
fn file_name(value: DataId) -> String {
    let stem = match value {
        DataId::Env { site, cols } => format!("env-{site:05}-{}-{}", cols.start, cols.end),
        DataId::Proj { site } => format!("proj-{site:05}"),
        DataId::Part {
            of: Shared::Proj { site },
            device,
        } => format!("proj-{site:05}-part{device}"),
        DataId::Basis { site } => format!("core-{site:05}"),
        other => format!(
            "value-{}",
            other.to_string().replace(['[', ']', '.', '@', '/'], "_")
        ),
    };
    stem + VALUE
}

/// Makes `dir` when it is missing (its parent must exist).
fn made_if_missing(dir: &Path) -> Result<()> {
    if dir.exists() {
        return srcflow_tensor::files::existing_folder(dir, "checkpoint folder");
    }
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    srcflow_tensor::files::existing_folder(
        parent.unwrap_or(Path::new(".")),
        "checkpoint folder's parent",
    )?;
    std::fs::create_dir(dir).map_err(|e| Error::io(dir, e))?;
    durable::sync_folder_of(dir)
}

/// The lock of `dir`, taken; refused while another run holds it.
fn locked(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK);
    let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
    match try_lock(&file) {
        Ok(true) => Ok(file),
        Ok(false) => Err(Error::Invalid(format!(
            "the checkpoint folder {} is in use by another srcflow run (it holds {LOCK})",
            dir.display()
        ))),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// The identity of the checkpoint in `dir`, if it has one.
fn read_identity(dir: &Path) -> Result<Option<RunIdentity>> {
    let path = dir.join(IDENTITY);
    let text = match srcflow_tensor::files::read_regular_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::Invalid(format!(
            "{} is not a srcflow checkpoint identity ({e}); remove the folder or give another",
            path.display()
        ))
    })
}

/// Refuses to resume a checkpoint made for `there` in a run of `here`, saying what differs.
fn same_run(dir: &Path, there: &RunIdentity, here: &RunIdentity) -> Result<()> {
    let differences = there.differences(here);
    if differences.is_empty() {
        return Ok(());
    }
    Err(Error::CheckpointMismatch {
        dir: dir.to_path_buf(),
        differences,
    })
}

/// Refuses a folder without an identity that holds files other than a checkpoint's lock and
/// the identity a kill left half written: it is not a checkpoint, and nothing of the user's
/// may be mixed in or removed.
fn only_our_files(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let identity_written = durable::temporary_of(Path::new(IDENTITY));
    let foreign = entries
        .flatten()
        .map(|e| e.file_name())
        .find(|name| name != LOCK && Path::new(name) != identity_written);
    match foreign {
        None => Ok(()),
        Some(_) if rank_folders::holds_ranks(dir) => Err(Error::Invalid(format!(
            "the checkpoint folder {} holds the checkpoint of a run of several ranks (rank-R \
             folders, one per rank): run it under mpirun with as many ranks to resume it, or \
             remove it or give another folder to start afresh",
            dir.display()
        ))),
        Some(name) => Err(Error::Invalid(format!(
            "the checkpoint folder {} holds {} but no srcflow checkpoint ({IDENTITY}): give an \
             empty or missing folder",
            dir.display(),
            name.to_string_lossy()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use srcflow_graph::graph::Cols;
    use srcflow_tensor::tensor::DType;

    fn identity(seed: u64) -> RunIdentity {
        let mut identity = RunIdentity::default();
        identity.set("seed", seed);
        identity
    }

    fn open(dir: &Path, seed: u64) -> Result<Checkpoint> {
        let disk = DiskIo::default();
        let size = SweepSize {
            sites: 8,
            parts: vec![vec![]; 8],
        };
        Checkpoint::open(dir, &identity(seed), size, &disk, CancelToken::new(), None)
    }

    const ENV: DataId = DataId::Env {
        site: 3,
        cols: Cols { start: 0, end: 4 },
    };

    fn tensor() -> AnyTensor {
        AnyTensor::zeros(DType::Complex128, vec![4, 5, 6]).cast(DType::Float32)
    }

    #[test]
    fn a_kept_value_is_there_whole_when_the_checkpoint_is_opened_again() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("ckpt");
        let checkpoint = open(&dir, 1).unwrap();
        checkpoint
            .keep(Op::Checkpoint, ENV, &tensor(), None)
            .unwrap();
        assert!(open(&dir, 1).is_err(), "the lock keeps a second run out");
        assert!(remove(&dir).is_err(), "and a removal");
        drop(checkpoint);
        let again = open(&dir, 1).unwrap();
        assert_eq!(again.kept(), HashSet::from([ENV]));
        assert_eq!(again.read(ENV).unwrap(), tensor());
        drop(again);
        remove(&dir).unwrap();
        assert!(!dir.exists());
    }

    #[test]
    fn values_a_resume_can_no_longer_read_are_removed_as_the_sweep_passes_them() {
        let parent = tempfile::tempdir().unwrap();
        let checkpoint = open(&parent.path().join("ckpt"), 1).unwrap();
        let env = |site| DataId::Env {
            site,
            cols: Cols { start: 0, end: 4 },
        };
        for site in 0..7 {
            checkpoint
                .keep(Op::Checkpoint, env(site), &tensor(), None)
                .unwrap();
        }
        checkpoint
            .keep(Op::Checkpoint, DataId::Proj { site: 7 }, &tensor(), None)
            .unwrap();
        for site in [7, 6] {
            checkpoint
                .keep(Op::Checkpoint, DataId::Basis { site }, &tensor(), None)
                .unwrap();
        }
        assert_eq!(checkpoint.kept().len(), 9, "S7 and η7 leave C6 unread");
        checkpoint
            .keep(Op::Checkpoint, DataId::Proj { site: 6 }, &tensor(), None)
            .unwrap();
        let mut kept: Vec<String> = checkpoint.kept().iter().map(DataId::to_string).collect();
        kept.sort();
        assert_eq!(
            kept,
            ["C0[0..4]", "C1[0..4]", "C2[0..4]", "C3[0..4]", "C4[0..4]", "S6", "η6", "η7"]
        );
        let files = std::fs::read_dir(checkpoint.dir()).unwrap();
        let values = files
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().ends_with(VALUE));
        assert_eq!(values.count(), kept.len(), "a retired value's file stays");
    }

    #[test]
    fn another_runs_checkpoint_is_refused_saying_what_differs() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("ckpt");
        drop(open(&dir, 1).unwrap());
        match open(&dir, 2) {
            Err(Error::CheckpointMismatch {
                dir: refused,
                differences,
            }) => {
                assert_eq!(refused, dir);
                assert_eq!(differences, ["seed 1 there, 2 here"]);
            }
            other => panic!("not refused as another run's: {:?}", other.err()),
        }
        std::fs::remove_file(dir.join(IDENTITY)).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let refused = open(&dir, 1).err().unwrap().to_string();
        assert!(refused.contains("notes.txt"), "{refused}");
        assert!(dir.join("notes.txt").exists());
    }

    #[test]
    fn what_a_kill_left_half_done_is_dropped() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("ckpt");
        let checkpoint = open(&dir, 1).unwrap();
        checkpoint
            .keep(Op::Checkpoint, ENV, &tensor(), None)
            .unwrap();
        let proj = DataId::Proj { site: 2 };
        checkpoint
            .keep(Op::Checkpoint, proj, &tensor(), None)
            .unwrap();
        let (torn_value, short_value) = (env(4), env(5));
        checkpoint.lock_journal().writing(torn_value).unwrap();
        drop(checkpoint);
        let torn = durable::temporary_of(&dir.join(file_name(torn_value)));
        std::fs::write(&torn, [0u8; 10]).unwrap();
        std::fs::remove_file(dir.join(file_name(proj))).unwrap();
        let mut journal = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(JOURNAL))
            .unwrap();
        std::io::Write::write_all(&mut journal, b"{\"Kept\":{\"value\":{\"Proj\":{\"si").unwrap();
        let short = dir.join(file_name(short_value));
        std::fs::write(&short, [0u8; 1000]).unwrap();
        let cut = format!(
            "\n{{\"Kept\":{{\"value\":{},\"file\":\"{}\",\"dtype\":\"float32\",\
             \"shape\":[4,5,6],\"checksum\":1}}}}\n",
            serde_json::to_string(&short_value).unwrap(),
            file_name(short_value)
        );
        std::io::Write::write_all(&mut journal, cut.as_bytes()).unwrap();
        std::io::Write::write_all(&mut journal, &[0xff, b'\n']).unwrap();
        let again = open(&dir, 1).unwrap();
        assert_eq!(
            again.kept(),
            HashSet::from([ENV]),
            "a file cut short is not kept"
        );
        assert!(!torn.exists(), "what a kill left of a write is removed");
        assert!(
            !short.exists(),
            "a file the journal names but cannot hold its value is removed"
        );
        again.keep(Op::Checkpoint, proj, &tensor(), None).unwrap();
        drop(again);
        assert_eq!(open(&dir, 1).unwrap().kept(), HashSet::from([ENV, proj]));
    }

    fn env(site: usize) -> DataId {
        DataId::Env {
            site,
            cols: Cols { start: 0, end: 4 },
        }
    }

    #[test]
    fn a_journal_naming_a_file_other_than_its_values_is_refused_and_nothing_removed() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("ckpt");
        let victim = parent.path().join("victim.bin");
        std::fs::write(&victim, "the user's").unwrap();
        let checkpoint = open(&dir, 1).unwrap();
        checkpoint
            .keep(Op::Checkpoint, ENV, &tensor(), None)
            .unwrap();
        drop(checkpoint);
        let journal = dir.join(JOURNAL);
        let text = std::fs::read_to_string(&journal).unwrap();
        for name in [victim.display().to_string(), "../victim.bin".into()] {
            let edited = text.replace(&file_name(ENV), &name);
            std::fs::write(&journal, edited).unwrap();
            let refused = open(&dir, 1).err().unwrap().to_string();
            assert!(refused.contains(&format!("{name:?}")), "{refused}");
            assert!(refused.contains("journal.jsonl"), "{refused}");
            remove(&dir).unwrap();
            assert!(
                victim.exists(),
                "{name}: a file outside the checkpoint was removed"
            );
            drop(open(&dir, 1).unwrap());
            let again = open(&dir, 1).unwrap();
            again.keep(Op::Checkpoint, ENV, &tensor(), None).unwrap();
        }
    }

    #[test]
    fn a_removed_checkpoint_leaves_the_users_files_and_their_folder() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("ckpt");
        let checkpoint = open(&dir, 1).unwrap();
        checkpoint
            .keep(Op::Checkpoint, ENV, &tensor(), None)
            .unwrap();
        std::fs::write(dir.join("notes.bin"), "mine").unwrap();
        drop(checkpoint);
        remove(&dir).unwrap();
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["notes.bin"]);
    }
}
