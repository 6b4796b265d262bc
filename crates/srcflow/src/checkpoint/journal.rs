//! `Journal`: the checkpoint's record of the values it holds, one JSON line per value, appended
//! only after the value's file is durable under its final name.

use crate::error::{Error, Result};
use crate::graph::DataId;
use crate::tensor::DType;
use serde::{Deserialize, Serialize};
use srcflow_sched::store::SpillFile;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One value the checkpoint holds: its name, file and what the file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The value, by content ([`DataId::content`]).
    pub value: DataId,
    /// Its file, in the checkpoint directory.
    pub file: String,
    /// The element type of the tensor in the file.
    pub dtype: DType,
    /// Its shape.
    pub shape: Vec<usize>,
}

impl Entry {
    /// Bytes of the tensor the file holds (the file may be longer: padded for direct I/O).
    pub fn bytes(&self) -> u64 {
        (self.shape.iter().product::<usize>() * self.dtype.bytes()) as u64
    }
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
    /// The entries of the journal in `dir` whose files are there whole, after rewriting the
    /// journal with those alone (a line cut short by a kill, or one whose file is gone, is
    /// dropped); the journal is then open for appending.
    pub fn recover(dir: &Path) -> Result<(Journal, HashMap<DataId, Entry>)> {
        let path = dir.join(super::JOURNAL);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let whole = |entry: &Entry| {
            let file = dir.join(&entry.file);
            let length = SpillFile::length_holding(entry.bytes());
            std::fs::metadata(file).is_ok_and(|m| m.len() >= length)
        };
        let entries: HashMap<DataId, Entry> = text
            .lines()
            .filter_map(|line| serde_json::from_str::<Entry>(line).ok())
            .filter(whole)
            .map(|entry| (entry.value, entry))
            .collect();
        let lines: String = entries.values().map(|e| line_of(e) + "\n").collect();
        crate::files::durable::write_whole(&path, lines.as_bytes())?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        let journal = Journal {
            path,
            file,
            flushed: Instant::now(),
        };
        Ok((journal, entries))
    }

    /// Records `entry`, whose file's data is on the disk under its final name. The record
    /// survives a kill of the process at once. It reaches the disk (with the records before
    /// it) when a record comes [`FLUSH_EVERY`] or more after the last flush, before the
    /// checkpoint removes a value ([`Journal::flush`]) and when the journal closes; what a
    /// power loss forgets of it, a resumed run makes again.
    pub fn record(&mut self, entry: &Entry) -> Result<()> {
        let line = line_of(entry) + "\n";
        let fail = |e| Error::io(&self.path, e);
        self.file.write_all(line.as_bytes()).map_err(fail)?;
        if self.flushed.elapsed() >= FLUSH_EVERY {
            self.file.sync_data().map_err(fail)?;
            self.flushed = Instant::now();
        }
        Ok(())
    }
}

impl Journal {
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

/// The journal line of `entry`.
fn line_of(entry: &Entry) -> String {
    serde_json::to_string(entry).expect("an entry is plain data")
}
