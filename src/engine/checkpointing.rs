//! How an engine's run uses its checkpoint: the checkpoint opened for the run, the graph that
//! writes into it and resumes from it, and what the report says of both.

use super::{CoreSource, Engine};
use crate::checkpoint::{Checkpoint, RunIdentity, SweepSize};
use crate::error::{Error, Result};
use crate::graph::{Op, Resumed, SweepGraph};
use crate::{ByteSize, Tier};
use serde::Serialize;

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
    /// The use of the checkpoint in `dir` by a run of `graph` (checkpoint writes and restores
    /// in), which `resumed` says what it skipped of.
    pub fn of(dir: &std::path::Path, graph: &SweepGraph, resumed: Resumed) -> Self {
        let writes = graph
            .graph
            .node_weights()
            .filter(|t| matches!(t.op, Op::Checkpoint | Op::Spill { to: Tier::Disk }));
        let (mut values_written, mut bytes_written, mut extra_bytes_written) = (0, 0, 0);
        for task in writes {
            values_written += 1;
            bytes_written += task.moved_bytes;
            if task.op == Op::Checkpoint {
                extra_bytes_written += task.moved_bytes;
            }
        }
        CheckpointUse {
            dir: dir.display().to_string(),
            values_written,
            bytes_written,
            extra_bytes_written,
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
    /// The checkpoint of this engine's run of `graph` on the problem `source` serves, opened
    /// (and the problem fingerprinted) when the engine keeps one.
    pub(super) fn open_checkpoint(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
    ) -> Result<Option<Checkpoint>> {
        let Some(dir) = &self.checkpoint else {
            return Ok(None);
        };
        if self.ranks.is_some() {
            return Err(Error::Invalid(
                "a checkpoint is kept by runs of one rank only, for now: run without \
                 `EngineBuilder::checkpoint` under mpirun, or as one process"
                    .into(),
            ));
        }
        let backend = (self.backend().name(), &self.threads_per_device()[..]);
        let identity = RunIdentity::of_run(graph, source, self.options.seed, 1, backend)?;
        let kill = self.tiering.kill.clone();
        let rates = self.tiering.disk_rates;
        let size = SweepSize::of(graph);
        Checkpoint::open(dir, &identity, size, rates, self.cancel.clone(), kill).map(Some)
    }

    /// Removes the checkpoint this engine keeps, if any: a run of [`Engine::run_graph`] leaves
    /// it for the caller to remove once the output its sink took is safe.
    pub fn remove_checkpoint(&self) -> Result<()> {
        match &self.checkpoint {
            Some(dir) if dir.exists() => crate::checkpoint::remove(dir),
            _ => Ok(()),
        }
    }
}

/// The graph a run with `checkpoint` runs in place of `graph`: with a write after every value
/// a checkpoint keeps (environments and projections of every `every`-th site), less what the
/// values already kept make unnecessary.
pub(super) fn checkpointed(
    graph: &SweepGraph,
    checkpoint: &Checkpoint,
    every: usize,
) -> (SweepGraph, Resumed) {
    graph
        .with_checkpoint_writes(every)
        .resumed(&checkpoint.kept())
}
