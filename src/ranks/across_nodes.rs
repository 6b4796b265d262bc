//! `across_nodes`: the whole sweep graph as several ranks (one per node) run it, in one graph
//! that the simulator replays. Each task runs on its device's rank, and each rank has io, disk
//! and network lanes of its own. A value that crosses ranks leaves through a send task on the
//! download lane of the device that makes it, and arrives as one message through a receive
//! task on the network lane of each rank that reads it. Every rank reads the input cores that
//! its tasks read.

use super::localize::{brings_input, crossings, moving_task};
use super::{Crossing, RankLayout};
use crate::error::{Error, Result};
use crate::graph::{Op, SweepGraph};
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef, IntoEdgeReferences};
use petgraph::Direction;
use std::collections::{BTreeMap, HashMap};

/// `graph` (the whole sweep, as every rank builds it) as `ranks` ranks run it, in one graph.
///
/// Its send and receive tasks and its ranks' copies of input reads are timing only: they read
/// the value (receives) or nothing (copies) rather than make it. The tasks after them read the
/// value that its maker wrote, and wait for the message or the copy.
pub fn across_nodes(graph: &SweepGraph, ranks: usize) -> Result<SweepGraph> {
    if ranks == 0 {
        return Err(Error::Invalid(
            "a run needs at least one rank, found 0".into(),
        ));
    }
    let layout = RankLayout::new(0, ranks, graph.devices)?;
    let owner = |node: NodeIndex| layout.owner(graph.graph[node].device, graph.devices);
    let mut whole = graph.clone();
    whole.ranks = ranks;
    for node in graph.graph.node_indices() {
        whole.graph[node].rank = owner(node);
    }
    let mut crossings: Vec<Crossing> = crossings(graph, &owner).into_values().collect();
    crossings.sort_by_key(|c| (c.step, c.maker.index()));
    for crossing in &crossings {
        add_messages(&mut whole, graph, crossing, &layout, &owner);
    }
    read_inputs_on_every_rank(&mut whole, graph, &owner);
    Ok(whole)
}

/// Adds `crossing`'s send task and a receive task on each rank that reads it, before that
/// rank's readers (in place of their edges from the value's makers).
fn add_messages(
    whole: &mut SweepGraph,
    graph: &SweepGraph,
    crossing: &Crossing,
    layout: &RankLayout,
    owner: &dyn Fn(NodeIndex) -> usize,
) {
    let id = crossing.id;
    let mut send = moving_task(crossing, Op::Send, crossing.device);
    send.rank = crossing.from;
    let send = whole.graph.add_node(send);
    for &maker in &crossing.makers {
        whole.graph.add_edge(maker, send, id);
    }
    for &to in &crossing.to {
        let mut receive = moving_task(
            crossing,
            Op::Receive,
            layout.devices_of(to, graph.devices).start,
        );
        (receive.inputs, receive.outputs, receive.rank) = (vec![id], vec![], to);
        let receive = whole.graph.add_node(receive);
        whole.graph.add_edge(send, receive, id);
        let from_makers = (&graph.graph)
            .edge_references()
            .filter(|e| *e.weight() == id && crossing.makers.contains(&e.source()));
        let edges: Vec<_> = from_makers.filter(|e| owner(e.target()) == to).collect();
        for edge in &edges {
            whole.graph.remove_edge(edge.id());
        }
        let mut readers: Vec<NodeIndex> = edges.iter().map(|e| e.target()).collect();
        readers.sort();
        readers.dedup();
        for reader in readers {
            whole.graph.add_edge(receive, reader, id);
        }
    }
}

/// Adds, for every input task ([`brings_input`]) whose value tasks of other ranks read, a copy
/// on each such rank (on the device of its first reader there) before those readers; a rank's
/// copy of a read also comes before its copies of the uploads that read it.
fn read_inputs_on_every_rank(
    whole: &mut SweepGraph,
    graph: &SweepGraph,
    owner: &dyn Fn(NodeIndex) -> usize,
) {
    let mut inputs: Vec<NodeIndex> = graph
        .graph
        .node_indices()
        .filter(|&n| brings_input(&graph.graph[n]))
        .collect();
    inputs.sort_by_key(|&n| (graph.graph[n].op != Op::UploadPart, n.index()));
    let mut copies: HashMap<(NodeIndex, usize), NodeIndex> = HashMap::new();
    for input in inputs {
        let home = owner(input);
        let mut readers: BTreeMap<usize, Vec<(NodeIndex, usize)>> = BTreeMap::new();
        for edge in graph.graph.edges_directed(input, Direction::Outgoing) {
            let reader = edge.target();
            if owner(reader) != home {
                let device = graph.graph[reader].device;
                readers
                    .entry(owner(reader))
                    .or_default()
                    .push((reader, device));
            }
            for (&(of, rank), &copy) in &copies {
                if of == reader {
                    let device = whole.graph[copy].device;
                    readers.entry(rank).or_default().push((copy, device));
                }
            }
        }
        for (rank, mut readers) in readers {
            readers.sort();
            readers.dedup();
            let source = if rank == home {
                input
            } else {
                let mut copy = graph.graph[input].clone();
                (copy.inputs, copy.outputs, copy.peak_bytes) = (vec![], vec![], 0);
                (copy.rank, copy.device) = (rank, readers[0].1);
                let copy = whole.graph.add_node(copy);
                copies.insert((input, rank), copy);
                copy
            };
            let id = graph.graph[input].outputs[0];
            for (reader, _) in readers {
                whole.graph.add_edge(source, reader, id);
            }
        }
    }
}
