//! `across_nodes`: the whole sweep graph as several ranks (one per node) run it, in one graph
//! that the simulator replays. Each task runs on its device's rank, and each rank has io, disk
//! and network lanes of its own. A value that crosses ranks leaves through a send task on the
//! download lane of the device that makes it, and arrives as one message through a receive
//! task on the network lane of each rank that reads it; the exchanges run one after another,
//! in the order every rank derives. Every rank reads the input cores that its tasks read.

use super::exchange_plan::exchanges;
use super::localize::{brings_input, crossings, moving_task};
use super::{Crossing, Exchange, RankLayout};
use srcflow_graph::graph::{DataId, Dependency, Op, SweepGraph, Task, TaskId};
use srcflow_tensor::error::Result;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The run of several ranks as one graph, with the exchanges a run of as many ranks makes.
#[derive(Clone, Debug)]
pub struct AcrossNodes {
    /// The whole sweep with every task on its rank, the messages between ranks, and each
    /// rank's copies of the input tasks its tasks read.
    pub graph: SweepGraph,
    /// Every exchange of the run, in the order the ranks run them.
    pub exchanges: Vec<Exchange>,
}

/// `graph` (the whole sweep, as every rank builds it) as `ranks` ranks run it, in one graph.
///
/// Its send and receive tasks and its ranks' copies of input tasks are timing only: they read
/// the value (sends and receives) or nothing (copies) rather than make it. The tasks after them
/// read the value that its maker wrote, and wait for the message or the copy (and, for a
/// copy, for the maker too).
pub fn across_nodes(graph: &SweepGraph, ranks: usize) -> Result<AcrossNodes> {
    let layout = RankLayout::new(0, ranks, graph.devices)?;
    let owner = |node: TaskId| layout.owner(graph[node].device, graph.devices);
    let mut whole = graph.clone();
    whole.ranks = ranks;
    for node in graph.task_ids() {
        Arc::make_mut(&mut whole[node]).rank = owner(node);
    }
    let exchanges = exchanges(graph, &crossings(graph, &owner));
    let by_value = edges_by_value(graph);
    let mut receives = Vec::new();
    for exchange in &exchanges {
        let messages = exchange.values.iter().flat_map(|crossing| {
            add_messages(&mut whole, &by_value[&crossing.id], crossing, &owner)
        });
        receives.push(messages.collect());
    }
    chain_exchanges(&mut whole, &receives);
    read_inputs_on_every_rank(&mut whole, graph, &owner);
    Ok(AcrossNodes {
        graph: whole,
        exchanges,
    })
}

/// The edges of `graph` by the value they carry.
fn edges_by_value(graph: &SweepGraph) -> HashMap<DataId, Vec<Dependency>> {
    let mut edges: HashMap<DataId, Vec<Dependency>> = HashMap::new();
    for edge in graph.dependencies() {
        edges.entry(edge.data).or_default().push(edge);
    }
    edges
}

/// Adds `crossing`'s send task and a receive task on each rank that reads it, before that
/// rank's readers (in place of their `edges` from the value's makers); returns the receives.
fn add_messages(
    whole: &mut SweepGraph,
    edges: &[Dependency],
    crossing: &Crossing,
    owner: &dyn Fn(TaskId) -> usize,
) -> Vec<TaskId> {
    let id = crossing.id;
    let from_makers: Vec<Dependency> = edges
        .iter()
        .filter(|edge| crossing.makers.contains(&edge.from))
        .copied()
        .collect();
    let mut send = moving_task(crossing, Op::Send, crossing.device);
    send.rank = crossing.from;
    let send = whole.add_task(Arc::new(send));
    for &maker in &crossing.makers {
        whole.add_dependency(maker, send, id);
    }
    let mut receives = vec![];
    for &to in &crossing.to {
        let mut readers: Vec<TaskId> = vec![];
        for &edge in from_makers.iter().filter(|edge| owner(edge.to) == to) {
            whole.remove_dependency(edge);
            readers.push(edge.to);
        }
        readers.sort();
        readers.dedup();
        let mut receive = moving_task(crossing, Op::Receive, whole[readers[0]].device);
        (receive.inputs, receive.outputs, receive.rank) = (vec![id], vec![], to);
        let receive = whole.add_task(Arc::new(receive));
        whole.add_dependency(send, receive, id);
        for reader in readers {
            whole.add_dependency(receive, reader, id);
        }
        receives.push(receive);
    }
    receives
}

/// Makes every receive of each exchange wait for every receive of the exchange before it: the
/// ranks run their collectives one after another, in one order.
fn chain_exchanges(whole: &mut SweepGraph, receives: &[Vec<TaskId>]) {
    for pair in receives.windows(2) {
        for &before in &pair[0] {
            let id = whole[before].inputs[0];
            for &after in &pair[1] {
                whole.add_dependency(before, after, id);
            }
        }
    }
}

/// Adds, for every input task ([`brings_input`]) whose value tasks of other ranks read, a copy
/// on each such rank (on the device of its first reader there) before those readers; a rank's
/// copy of a read also comes before its copies of the uploads that read it.
fn read_inputs_on_every_rank(
    whole: &mut SweepGraph,
    graph: &SweepGraph,
    owner: &dyn Fn(TaskId) -> usize,
) {
    let mut inputs: Vec<TaskId> = graph
        .task_ids()
        .filter(|&n| brings_input(&graph[n]))
        .collect();
    inputs.sort_by_key(|&n| (graph[n].op != Op::UploadPart, n.index()));
    let mut copies: HashMap<TaskId, Vec<(usize, TaskId)>> = HashMap::new();
    for input in inputs {
        let id = graph[input].outputs[0];
        for (rank, readers) in readers_by_rank(graph, input, owner, &copies) {
            let source = if rank == owner(input) {
                input
            } else {
                let mut copy = Task::clone(&graph[input]);
                (copy.inputs, copy.outputs, copy.peak_bytes) = (vec![], vec![], 0);
                (copy.rank, copy.device) = (rank, whole[readers[0]].device);
                let copy = whole.add_task(Arc::new(copy));
                copies.entry(input).or_default().push((rank, copy));
                copy
            };
            for reader in readers {
                whole.add_dependency(source, reader, id);
            }
        }
    }
}

/// The tasks that read `input`'s value on each rank but its own, and the copies of those
/// tasks that each rank has (in `copies`, by the task copied), in node order.
fn readers_by_rank(
    graph: &SweepGraph,
    input: TaskId,
    owner: &dyn Fn(TaskId) -> usize,
    copies: &HashMap<TaskId, Vec<(usize, TaskId)>>,
) -> BTreeMap<usize, Vec<TaskId>> {
    let mut readers: BTreeMap<usize, Vec<TaskId>> = BTreeMap::new();
    for reader in graph.successors(input) {
        if owner(reader) != owner(input) {
            readers.entry(owner(reader)).or_default().push(reader);
        }
        for &(rank, copy) in copies.get(&reader).into_iter().flatten() {
            readers.entry(rank).or_default().push(copy);
        }
    }
    for nodes in readers.values_mut() {
        nodes.sort();
        nodes.dedup();
    }
    readers
}
