//! `TaskId`: a task's place in its sweep graph.

use petgraph::stable_graph::NodeIndex;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A task's place in its sweep graph; it stays valid while other tasks are added or removed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct TaskId(pub(crate) NodeIndex);

impl TaskId {
    /// The task at `index` (as [`TaskId::index`] gives it).
    #[inline]
    pub fn new(index: usize) -> TaskId {
        TaskId(NodeIndex::new(index))
    }

    /// The id as a number below [`SweepGraph::id_bound`](super::SweepGraph::id_bound), for
    /// tables indexed by task.
    #[inline]
    pub fn index(self) -> usize {
        self.0.index()
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.index())
    }
}
