//! `Journal`: the checkpoint's record of the files it makes, one JSON line each: a value about
//! to be written, and a value kept (its file durable under its final name, with its checksum).
//! A file is only ever named after its value ([`file_name`]), so the journal cannot make srcflow
//! read or remove a file it did not write.

use super::file_name;
use serde::{Deserialize, Serialize};
use srcflow_graph::graph::DataId;
use srcflow_sched::store::SpillFile;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::files::durable;
use srcflow_tensor::tensor::DType;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One value the checkpoint holds: its name, file and what the file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The value, by content ([`DataId::content`]).
    pub value: DataId,
    /// Its file, in the checkpoint directory: always [`file_name`] of the value.
    pub file: String,
    /// The element type of the tensor in the file.
    pub dtype: DType,
    /// Its shape.
    pub shape: Vec<usize>,
    /// The checksum of the tensor written ([`SpillFile::checksum`]).
    pub checksum: u64,
}

impl Entry {
    /// Bytes of the tensor the file holds (the file may be longer: padded for direct I/O), or
    /// `None` for a shape no file can hold.
    pub fn bytes(&self) -> Option<u64> {
        let elements = self
            .shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d as u64));
        elements?.checked_mul(self.dtype.bytes() as u64)
    }

    /// A handle to its file in the checkpoint folder `dir`.
    pub fn file_in(&self, dir: &Path) -> SpillFile {
        let path = dir.join(file_name(self.value));
        SpillFile::kept(path, self.shape.clone(), self.dtype, self.checksum)
    }
}

/// One line of the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Line {
    /// The value's file is about to be written: until a `Kept` line follows, the file is not
    /// to be trusted, but it is srcflow's to remove.
    Writing(DataId),
    /// The value's file is whole under its final name.
    Kept(Entry),
}

/// How long the journal's records may wait to be flushed to the disk while records come.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// The journal file, open for appending.
pub(crate) struct Journal {
    path: PathBuf,
    file: File,
    /// When its records were last flushed to the disk.
    flushed: Instant,
}

impl Journal {
    /// The entries of the journal in `dir` whose files are there whole, after removing the
    /// files it names that are not (a write a kill cut short, and their temporaries) and
    /// rewriting it with those entries alone; the journal is then open for appending. A line
    /// cut short by a kill, or damaged, is dropped (its value is made again). Refuses a
    /// journal that names a file other than its value's.
    pub fn recover(dir: &Path) -> Result<(Journal, HashMap<DataId, Entry>)> {
        let path = dir.join(super::JOURNAL);
        let lines = read_lines(&path)?;
        if let Some(entry) = lines.iter().find_map(foreign_file) {
            return Err(names_a_foreign_file(&path, entry));
        }
        let (mut kept, made) = replay(lines);
        kept.retain(|_, entry| whole(dir, entry));
        for value in &made {
            let file = dir.join(file_name(*value));
            if !kept.contains_key(value) {
                durable::remove_if_there(&file)?;
            }
            durable::remove_if_there(&durable::temporary_of(&file))?;
        }
        let mut entries: Vec<&Entry> = kept.values().collect();
        entries.sort_by(|a, b| a.file.cmp(&b.file));
        let lines: String = entries
            .iter()
            .map(|e| line_of(&Line::Kept((*e).clone())))
            .collect();
        durable::write_whole(&path, lines.as_bytes())?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let journal = Journal {
            path,
            file,
            flushed: Instant::now(),
        };
        Ok((journal, kept))
    }

    /// Records that the file of `value` is about to be written, so that whatever a kill leaves
    /// of it is known to be srcflow's.
    pub fn writing(&mut self, value: DataId) -> Result<()> {
        self.append(&Line::Writing(value))
    }

    /// Records `entry`, whose file's data is on the disk under its final name. The record
    /// survives a kill of the process at once. It reaches the disk (with the records before
    /// it) when a record comes [`FLUSH_EVERY`] or more after the last flush, before the
    /// checkpoint removes a value ([`Journal::flush`]) and when the journal closes; what a
    /// power loss forgets of it, a resumed run makes again.
    pub fn record(&mut self, entry: &Entry) -> Result<()> {
        self.append(&Line::Kept(entry.clone()))?;
        if self.flushed.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends `line`.
    fn append(&mut self, line: &Line) -> Result<()> {
        self.file
            .write_all(line_of(line).as_bytes())
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Flushes its records to the disk.
    pub fn flush(&mut self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| Error::io(&self.path, e))?;
        self.flushed = Instant::now();
        Ok(())
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        let _ = self.file.sync_data();
    }
}

/// Every value whose file the journal in `dir` names, kept or being written (none when there is
/// no journal): the files srcflow may remove there.
pub(crate) fn named(dir: &Path) -> Result<HashSet<DataId>> {
    let (_, made) = replay(read_lines(&dir.join(super::JOURNAL))?);
    Ok(made)
}

/// The lines of the journal at `path` that read as lines of a journal (none when there is no
/// journal): a line cut short or damaged is left out.
fn read_lines(path: &Path) -> Result<Vec<Line>> {
    let bytes = match srcflow_tensor::files::read_regular(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(Error::io(path, e)),
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// The values `lines` keep (the last record of each, unless a write of it began after), and
/// every value they name.
fn replay(lines: Vec<Line>) -> (HashMap<DataId, Entry>, HashSet<DataId>) {
    let mut kept = HashMap::new();
    let mut made = HashSet::new();
    for line in lines {
        match line {
            Line::Writing(value) => {
                kept.remove(&value);
                made.insert(value);
            }
            Line::Kept(entry) => {
                made.insert(entry.value);
                kept.insert(entry.value, entry);
            }
        }
    }
    (kept, made)
}

/// The entry of `line` when it names a file other than its value's.
fn foreign_file(line: &Line) -> Option<&Entry> {
    match line {
        Line::Kept(entry) if entry.file != file_name(entry.value) => Some(entry),
        _ => None,
    }
}

/// The refusal of the journal at `path`, whose `entry` names a file other than its value's.
fn names_a_foreign_file(path: &Path, entry: &Entry) -> Error {
    Error::Invalid(format!(
        "{} names the file {:?} for {}, whose file srcflow names {:?}: the journal was edited \
         or is not srcflow's, so srcflow refuses this checkpoint (it reads and removes only \
         files it wrote); remove the checkpoint folder or give another to start afresh",
        path.display(),
        entry.file,
        entry.value,
        file_name(entry.value)
    ))
}

/// True when the file of `entry` in `dir` is long enough for the tensor it names.
fn whole(dir: &Path, entry: &Entry) -> bool {
    let Some(bytes) = entry.bytes().filter(|&b| b <= u64::MAX / 2) else {
        return false;
    };
    let length = SpillFile::length_holding(bytes);
    let file = dir.join(file_name(entry.value));
    std::fs::symlink_metadata(file).is_ok_and(|m| m.is_file() && m.len() >= length)
}

/// The journal line of `line`, with its end.
fn line_of(line: &Line) -> String {
    serde_json::to_string(line).expect("a journal line is plain data") + "\n"
}
