//! How an engine's run uses its checkpoint: the checkpoint opened for the run, the graph that
//! writes into it and resumes from it, and what the report says of both.

use super::{CoreSource, Engine};
use crate::checkpoint::{self, Checkpoint, KillFault, RunIdentity, SweepSize};
use serde::Serialize;
use srcflow_graph::graph::{DataId, Resumed, SweepGraph};
use srcflow_sched::ranks::{RankLayout, Transport};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::ByteSize;
use std::collections::HashSet;
use std::path::Path;

/// How many times one run starts again after finding a kept value damaged, before it stops
/// and leaves the rest to the next run.
const REMADE_AT_MOST: usize = 16;
use std::sync::Arc;

/// What a run did with its checkpoint: where it is, what it wrote there and what resuming
/// from it skipped.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CheckpointUse {
    /// The checkpoint folder.
    pub dir: String,
    /// Values the run wrote into it (environments spilled to disk included: their spill is
    /// their checkpoint write).
    pub values_written: usize,
    /// Their bytes.
    pub bytes_written: u64,
    /// Of those, bytes written only for the checkpoint (not spills the run makes anyway).
    pub extra_bytes_written: u64,
    /// What resuming skipped (all zero for a run that found nothing to resume from).
    pub resumed: Resumed,
}

impl CheckpointUse {
    /// The use of `checkpoint` by a run, which `resumed` says what it skipped of.
    pub fn of(checkpoint: &Checkpoint, resumed: Resumed) -> Self {
        let written = checkpoint.written();
        CheckpointUse {
            dir: checkpoint.dir().display().to_string(),
            values_written: written.values,
            bytes_written: written.bytes,
            extra_bytes_written: written.extra_bytes,
            resumed,
        }
    }
}

impl std::fmt::Display for CheckpointUse {
    /// One line of what the run wrote, and one of what it skipped when it resumed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "checkpoint     {}: wrote {} values, {} ({} of them for the checkpoint alone)",
            self.dir,
            self.values_written,
            ByteSize(self.bytes_written),
            ByteSize(self.extra_bytes_written)
        )?;
        let resumed = &self.resumed;
        if resumed.skipped_tasks > 0 {
            write!(
                f,
                "\nresumed        skipped {} tasks ({:.2} GFLOP); restored {} values, {}",
                resumed.skipped_tasks,
                resumed.skipped_flops / 1e9,
                resumed.restored,
                ByteSize(resumed.restored_bytes)
            )?;
        }
        Ok(())
    }
}

impl Engine {
    /// The checkpoint of this engine's run of `graph` (the whole sweep, as every rank builds
    /// it) on the problem `source` serves, opened (and the problem fingerprinted) when the
    /// engine keeps one: the folder itself, or this rank's folder in it when the run has
    /// several ranks, opened once every rank could open its own.
    pub(super) fn open_checkpoint(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
    ) -> Result<Option<Checkpoint>> {
        let Some(dir) = &self.checkpoint else {
            return Ok(None);
        };
        let ranks = self.ranks.as_ref().map(|(t, layout)| (&**t, *layout));
        let (count, rank) = ranks.map_or((1, 0), |(_, l)| (l.ranks, l.rank));
        let arithmetic = self.backend().arithmetic();
        let backend = (
            self.backend().name(),
            &arithmetic[..],
            &self.threads_per_device()[..],
        );
        let identity = RunIdentity::of_run(graph, source, self.options.seed, count, backend);
        let open = |folder: &Path| {
            let mut identity = identity?;
            if count > 1 {
                identity.set("rank", rank);
            }
            let kill = self.kill();
            let (size, disk) = (SweepSize::of(graph), &self.tiering.disk);
            let opened = Checkpoint::open(folder, &identity, size, disk, self.cancel.clone(), kill);
            opened.map(|checkpoint| checkpoint.paced(self.checkpoint_every))
        };
        match ranks {
            None => open(dir).map(Some),
            Some((transport, layout)) => open_on_every_rank(dir, transport, layout, open).map(Some),
        }
    }

    /// The graph a run of `graph` with `checkpoint` runs in its place: with a write after every
    /// value a checkpoint keeps (environments and projections of the sites `checkpoint_every`
    /// places writes at), less what the values already kept (by any rank) make unnecessary.
    pub(super) fn checkpointed(
        &self,
        graph: &SweepGraph,
        checkpoint: &Checkpoint,
    ) -> Result<(SweepGraph, Resumed)> {
        let kept = match &self.ranks {
            Some((transport, _)) => kept_by_every_rank(&**transport, checkpoint.kept())?,
            None => checkpoint.kept(),
        };
        let every = self.checkpoint_every.sites();
        Ok(graph.with_checkpoint_writes(every).resumed(&kept))
    }

    /// Removes the file that `damaged` ([`Error::Damaged`]) names from this run's checkpoint,
    /// so that the next run of its graph makes the value anew: `Ok` when this run may start
    /// again at once (one process, after fewer than [`REMADE_AT_MOST`] starts again, `remade`).
    /// Otherwise, or when the file is not one the checkpoint kept (a scratch file), the
    /// error, saying whether it was removed.
    pub(super) fn forget_damaged(&self, damaged: Error, remade: usize) -> Result<()> {
        let (Error::Damaged { path, .. }, Some(dir)) = (&damaged, &self.checkpoint) else {
            return Err(damaged);
        };
        let folder = match &self.ranks {
            Some((_, layout)) => checkpoint::rank_folder(dir, layout.rank),
            None => dir.clone(),
        };
        if !checkpoint::remove_damaged(&folder, path) {
            return Err(damaged);
        }
        if self.ranks.is_some() || remade >= REMADE_AT_MOST {
            return Err(Error::Invalid(format!(
                "{damaged}; srcflow removed it from the checkpoint {}: run again to make it anew",
                dir.display()
            )));
        }
        tracing::warn!("{damaged}; srcflow removed it from the checkpoint and makes it anew");
        Ok(())
    }

    /// The injected kill (tests of resuming), when it strikes this rank.
    pub(super) fn kill(&self) -> Option<Arc<KillFault>> {
        let rank = self.ranks.as_ref().map_or(0, |(_, layout)| layout.rank);
        self.tiering.kill.clone().filter(|k| k.strikes_rank(rank))
    }

    /// Removes the checkpoint this engine keeps, if any (under mpirun, this rank's part, and the
    /// folder once no rank's part is left): a run of [`Engine::run_graph`] leaves it for the
    /// caller to remove once the output its sink took is safe.
    pub fn remove_checkpoint(&self) -> Result<()> {
        match (&self.checkpoint, &self.ranks) {
            (Some(dir), Some((_, layout))) => checkpoint::remove_rank(dir, layout.rank),
            (Some(dir), None) if dir.exists() => checkpoint::remove(dir),
            _ => Ok(()),
        }
    }
}

/// Opens this rank's checkpoint (its folder in `dir`) with `open` once every rank of
/// `transport` could open its own. When any could not (or a rank failed before it could say),
/// every rank fails with the first one's reason, and leaves nothing behind: a rank that made
/// its folder for this run removes it, and the rank that made `dir` removes it once every rank
/// is done.
fn open_on_every_rank(
    dir: &Path,
    transport: &dyn Transport,
    layout: RankLayout,
    open: impl FnOnce(&Path) -> Result<Checkpoint>,
) -> Result<Checkpoint> {
    let folder = checkpoint::rank_folder(dir, layout.rank);
    let fresh = !folder.exists();
    let (made, opened) = match checkpoint::made_for_ranks(dir, layout.ranks) {
        Ok(made) => (made, open(&folder)),
        Err(error) => (false, Err(error)),
    };
    let said = opened
        .as_ref()
        .err()
        .map_or_else(Vec::new, |e| e.to_string().into_bytes());
    let refusal = match transport.all_gather_bytes(&said) {
        Ok(statuses) => first_refusal(&statuses, dir),
        Err(error) => Some(error),
    };
    let Some(refusal) = refusal else {
        return opened;
    };
    drop(opened);
    if fresh && folder.exists() {
        let _ = checkpoint::remove(&folder);
    }
    let _ = transport.all_gather_bytes(&[]); // every rank has removed what it made
    if made {
        let _ = std::fs::remove_dir(dir);
    }
    Err(refusal)
}

/// The first rank's reason not to open its checkpoint among every rank's `statuses` (empty
/// for one that could), naming the whole folder `dir` as what to remove to start afresh.
fn first_refusal(statuses: &[Vec<u8>], dir: &Path) -> Option<Error> {
    let (rank, why) = statuses.iter().enumerate().find(|(_, s)| !s.is_empty())?;
    Some(Error::Invalid(format!(
        "rank {rank} could not open its checkpoint: {} (the ranks' checkpoint is the whole \
         folder {}: remove it all to start afresh)",
        String::from_utf8_lossy(why),
        dir.display()
    )))
}

/// The values kept by the checkpoints of every rank of `transport`, this one's `mine` among
/// them: every rank resumes the whole sweep from the same values, so that the values each
/// sends are those the others wait for.
fn kept_by_every_rank(transport: &dyn Transport, mine: HashSet<DataId>) -> Result<HashSet<DataId>> {
    let listed: Vec<DataId> = mine.into_iter().collect();
    let bytes = serde_json::to_vec(&listed).expect("value names are plain data");
    let mut kept = HashSet::new();
    for (rank, theirs) in transport.all_gather_bytes(&bytes)?.iter().enumerate() {
        let theirs: Vec<DataId> = serde_json::from_slice(theirs).map_err(|e| {
            Error::Invalid(format!("the values rank {rank} kept came garbled: {e}"))
        })?;
        kept.extend(theirs);
    }
    Ok(kept)
}
