//! Printing the sweep graph as Graphviz DOT or JSON, and loading JSON back.

use super::SweepGraph;
use petgraph::dot::{Config, Dot};
use srcflow_tensor::error::{Error, Result};
use std::path::Path;

impl SweepGraph {
    /// The graph in Graphviz DOT form (tasks labelled with op, site and columns).
    pub fn to_dot(&self) -> String {
        format!(
            "{}",
            Dot::with_config(&self.graph, &[Config::GraphContentOnly])
        )
        .lines()
        .map(|l| format!("    {}\n", l.trim()))
        .fold("digraph sweep {\n".to_string(), |acc, l| acc + &l)
            + "}\n"
    }

    /// The graph as JSON (every task with its inputs, outputs, flops and bytes).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("graph serialises")
    }

    /// Loads a graph written by [`SweepGraph::to_json`].
    pub fn from_json(text: &str, origin: &Path) -> Result<SweepGraph> {
        serde_json::from_str(text).map_err(|e| Error::Manifest {
            path: origin.to_path_buf(),
            message: format!("not a srcflow sweep graph: {e}"),
        })
    }
}
