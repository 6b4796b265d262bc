//! Reading and rewriting a sweep graph's tasks and the data they pass, by [`TaskId`].

use super::{DataId, SweepGraph, Task, TaskId};
use petgraph::visit::{EdgeRef, IntoEdgeReferences};
use petgraph::Direction;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

/// Data passed from one task to another: `to` reads `data`, which `from` wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dependency {
    /// The task that writes the data.
    pub from: TaskId,
    /// The task that reads it.
    pub to: TaskId,
    /// The data passed.
    pub data: DataId,
}

impl SweepGraph {
    /// Number of tasks.
    #[inline]
    pub fn task_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Number of dependencies (data passed from one task to another).
    #[inline]
    pub fn dependency_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// A bound above every task's [`TaskId::index`], for tables indexed by task.
    #[inline]
    pub fn id_bound(&self) -> usize {
        petgraph::visit::NodeIndexable::node_bound(&self.graph)
    }

    /// The ids of all tasks, in id order.
    #[inline]
    pub fn task_ids(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.graph.node_indices().map(TaskId)
    }

    /// All tasks, in id order.
    #[inline]
    pub fn tasks(&self) -> impl Iterator<Item = &Arc<Task>> + '_ {
        self.graph.node_weights()
    }

    /// All tasks, to rewrite in place.
    #[inline]
    pub fn tasks_mut(&mut self) -> impl Iterator<Item = &mut Arc<Task>> + '_ {
        self.graph.node_weights_mut()
    }

    /// The task `id`, if the graph has it.
    #[inline]
    pub fn task(&self, id: TaskId) -> Option<&Arc<Task>> {
        self.graph.node_weight(id.0)
    }

    /// The tasks whose outputs `id` reads (one entry per dependency).
    #[inline]
    pub fn predecessors(&self, id: TaskId) -> impl Iterator<Item = TaskId> + '_ {
        self.graph
            .neighbors_directed(id.0, Direction::Incoming)
            .map(TaskId)
    }

    /// The tasks that read what `id` writes (one entry per dependency).
    #[inline]
    pub fn successors(&self, id: TaskId) -> impl Iterator<Item = TaskId> + '_ {
        self.graph
            .neighbors_directed(id.0, Direction::Outgoing)
            .map(TaskId)
    }

    /// The dependencies `id` reads through.
    #[inline]
    pub fn incoming(&self, id: TaskId) -> impl Iterator<Item = Dependency> + '_ {
        self.graph
            .edges_directed(id.0, Direction::Incoming)
            .map(dependency)
    }

    /// The dependencies through which others read what `id` writes.
    #[inline]
    pub fn outgoing(&self, id: TaskId) -> impl Iterator<Item = Dependency> + '_ {
        self.graph
            .edges_directed(id.0, Direction::Outgoing)
            .map(dependency)
    }

    /// Every dependency of the graph.
    #[inline]
    pub fn dependencies(&self) -> impl Iterator<Item = Dependency> + '_ {
        self.graph.edge_references().map(dependency)
    }

    /// Adds `task`, with no dependencies yet.
    #[inline]
    pub fn add_task(&mut self, task: Arc<Task>) -> TaskId {
        TaskId(self.graph.add_node(task))
    }

    /// Makes `to` read `data` from `from`.
    #[inline]
    pub fn add_dependency(&mut self, from: TaskId, to: TaskId, data: DataId) {
        self.graph.add_edge(from.0, to.0, data);
    }

    /// Removes task `id` and its dependencies; the other tasks keep their ids.
    #[inline]
    pub fn remove_task(&mut self, id: TaskId) -> Option<Arc<Task>> {
        self.graph.remove_node(id.0)
    }

    /// Removes `dependency` (one edge where the graph has several the same).
    #[inline]
    pub fn remove_dependency(&mut self, dependency: Dependency) {
        let edge = self
            .graph
            .edges_connecting(dependency.from.0, dependency.to.0)
            .find(|e| *e.weight() == dependency.data)
            .map(|e| e.id());
        if let Some(edge) = edge {
            self.graph.remove_edge(edge);
        }
    }

    /// The tasks in an order where each comes after those it reads from, or `None` when the
    /// graph has a cycle.
    #[inline]
    pub fn topological_order(&self) -> Option<Vec<TaskId>> {
        let order = petgraph::algo::toposort(&self.graph, None).ok()?;
        Some(order.into_iter().map(TaskId).collect())
    }
}

/// An edge of the petgraph as a [`Dependency`].
#[inline]
fn dependency<E: EdgeRef<NodeId = petgraph::stable_graph::NodeIndex, Weight = DataId>>(
    edge: E,
) -> Dependency {
    Dependency {
        from: TaskId(edge.source()),
        to: TaskId(edge.target()),
        data: *edge.weight(),
    }
}

impl Index<TaskId> for SweepGraph {
    type Output = Arc<Task>;

    #[inline]
    fn index(&self, id: TaskId) -> &Arc<Task> {
        &self.graph[id.0]
    }
}

impl IndexMut<TaskId> for SweepGraph {
    #[inline]
    fn index_mut(&mut self, id: TaskId) -> &mut Arc<Task> {
        &mut self.graph[id.0]
    }
}
