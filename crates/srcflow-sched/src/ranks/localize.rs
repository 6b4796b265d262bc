//! `RankGraph`: the part of the sweep graph one rank runs, with the send and receive tasks
//! that carry values across ranks, and the exchanges that move them. Input cores never cross:
//! every rank reads the cores its tasks need and cuts the parts its devices all-gather itself.

use super::exchange_plan::{exchanges, Collective, Crossing, Exchange};
use super::RankLayout;
use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{DataId, Lane, Op, SweepGraph, Task};
use srcflow_tensor::tensor::Work;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What one rank runs of a sweep graph.
#[derive(Clone, Debug)]
pub struct RankGraph {
    /// The tasks of the rank's devices, with a send task after each value another rank reads
    /// and a receive task before the tasks that read a value another rank makes (after this
    /// rank's own part, for a gather to it; for an S gathered in place, one receive task makes
    /// the replicas its devices' all-gathers made); and its own copies of the reads and core
    /// uploads of other ranks whose values its tasks read.
    pub graph: SweepGraph,
    /// Every exchange of the run, in the order all ranks run them.
    pub exchanges: Vec<Exchange>,
    /// Which rank this is.
    pub layout: RankLayout,
}

impl RankGraph {
    /// The part of `graph` (the whole sweep, as every rank builds it) that `layout`'s rank runs.
    /// With `shared_memory` (devices that compute in host memory, as the CPU backend's), the
    /// S all-gathers that can are gathered in place ([`Exchange::in_place`]); a GPU would upload
    /// the whole S for every task that reads it, so its ranks all-gather the parts on the
    /// device, as one process does.
    pub fn of(graph: &SweepGraph, layout: RankLayout, shared_memory: bool) -> Self {
        let owner = |node: TaskId| layout.owner(graph[node].device, graph.devices);
        let crossings = crossings(graph, &owner);
        let mut exchanges = exchanges(graph, &crossings);
        if !shared_memory {
            exchanges.iter_mut().for_each(|e| e.in_place = None);
        }
        let mut local = graph.clone();
        let readers = local_readers(graph, &owner, layout.rank);
        let copies = copied_inputs(graph, &owner, layout.rank);
        let remote: Vec<TaskId> = graph
            .task_ids()
            .filter(|&n| owner(n) != layout.rank && !copies.contains_key(&n))
            .collect();
        for node in remote {
            local.remove_task(node);
        }
        for (node, device) in copies {
            Arc::make_mut(&mut local[node]).device = device;
        }
        let gathered_here = gathered_to(&exchanges, layout.rank);
        let in_place_values = in_place_values(&exchanges);
        let mut gathers = Vec::new();
        for crossing in crossings.values() {
            let in_place = in_place_values.contains(&crossing.id);
            if crossing.to.contains(&layout.rank) && !in_place {
                let receive = add_receive(&mut local, crossing, &readers[&crossing.id]);
                if gathered_here.contains(&crossing.id) {
                    gathers.push(receive);
                }
            }
            if crossing.from == layout.rank {
                add_send(&mut local, crossing);
            }
        }
        let mut position = positions(&exchanges);
        for (at, exchange) in exchanges.iter().enumerate() {
            if exchange.in_place.is_some() && exchange.readers().contains(&layout.rank) {
                let replicas = add_in_place_receive(&mut local, exchange, layout.rank);
                position.extend(replicas.into_iter().map(|id| (id, at)));
            }
        }
        let waits_for = latest_exchanges(&local, &position);
        for receive in gathers {
            after_own_parts(&mut local, receive, &waits_for);
        }
        RankGraph {
            graph: local,
            exchanges,
            layout,
        }
    }
}

/// True for the tasks that bring input cores in (reads, and the uploads of a device's part),
/// which a rank runs itself rather than receive their values.
pub(super) fn brings_input(task: &Task) -> bool {
    matches!(task.op, Op::ReadSite { .. } | Op::UploadPart)
}

/// The input tasks of other ranks' devices ([`brings_input`]) whose values tasks of `rank`
/// read, with the device of `rank` each runs on here: that of its first reader.
fn copied_inputs(
    graph: &SweepGraph,
    owner: &dyn Fn(TaskId) -> usize,
    rank: usize,
) -> HashMap<TaskId, usize> {
    let mut copies: HashMap<TaskId, usize> = HashMap::new();
    let is_upload = |t: &Task| t.op == Op::UploadPart;
    let is_read = |t: &Task| matches!(t.op, Op::ReadSite { .. });
    for wanted in [&is_upload as &dyn Fn(&Task) -> bool, &is_read] {
        let remote = graph
            .task_ids()
            .filter(|&n| owner(n) != rank && wanted(&graph[n]));
        for node in remote.collect::<Vec<_>>() {
            let reader = graph
                .successors(node)
                .find(|&r| owner(r) == rank || copies.contains_key(&r));
            if let Some(reader) = reader {
                let device = copies.get(&reader).copied().unwrap_or(graph[reader].device);
                copies.insert(node, device);
            }
        }
    }
    copies
}

/// Every value a task of one rank makes and a task of another reads, by name.
pub(super) fn crossings(
    graph: &SweepGraph,
    owner: &dyn Fn(TaskId) -> usize,
) -> HashMap<DataId, Crossing> {
    let makers = makers(graph);
    let mut crossings: HashMap<DataId, Crossing> = HashMap::new();
    for edge in graph.dependencies() {
        let (from, to) = (owner(edge.from), owner(edge.to));
        if from == to || brings_input(&graph[edge.from]) {
            continue;
        }
        let id = edge.data;
        let crossing = crossings.entry(id).or_insert_with(|| {
            let makers = makers[&id].clone();
            let maker = *makers
                .iter()
                .max_by_key(|n| (graph[**n].step, n.index()))
                .expect("a value has a maker");
            let task = &graph[maker];
            Crossing {
                id,
                from,
                device: task.device,
                step: task.step,
                site: task.site,
                bytes: graph.value_bytes(id),
                maker,
                makers,
                to: Default::default(),
            }
        });
        crossing.to.insert(to);
    }
    crossings
}

/// The tasks that write each value (several where column blocks each write a slice of it).
fn makers(graph: &SweepGraph) -> HashMap<DataId, Vec<TaskId>> {
    let mut makers: HashMap<DataId, Vec<TaskId>> = HashMap::new();
    for node in graph.task_ids() {
        for &id in &graph[node].outputs {
            makers.entry(id).or_default().push(node);
        }
    }
    makers
}

/// The tasks of `rank` that read each value made on another rank.
fn local_readers(
    graph: &SweepGraph,
    owner: &dyn Fn(TaskId) -> usize,
    rank: usize,
) -> HashMap<DataId, Vec<TaskId>> {
    let mut readers: HashMap<DataId, Vec<TaskId>> = HashMap::new();
    for edge in graph.dependencies() {
        let crosses = owner(edge.from) != rank && !brings_input(&graph[edge.from]);
        if owner(edge.to) == rank && crosses {
            readers.entry(edge.data).or_default().push(edge.to);
        }
    }
    readers
}

/// A task of the rank's graph that moves `crossing`'s value: no flops, no device memory.
pub(super) fn moving_task(crossing: &Crossing, op: Op, device: usize) -> Task {
    let (inputs, outputs) = match op {
        Op::Send => (vec![crossing.id], vec![]),
        _ => (vec![], vec![crossing.id]),
    };
    Task {
        op,
        site: crossing.site,
        cols: None,
        within: None,
        inputs,
        outputs,
        flops: 0.0,
        work: Work::default(),
        orders: Default::default(),
        peak_bytes: 0,
        moved_bytes: crossing.bytes,
        lane: op.lane(),
        device,
        rank: 0,
        step: crossing.step,
    }
}

/// Adds the receive task of `crossing` before its `readers` (on the device of the first).
fn add_receive(local: &mut SweepGraph, crossing: &Crossing, readers: &[TaskId]) -> TaskId {
    let device = local[readers[0]].device;
    let receive = local.add_task(Arc::new(moving_task(crossing, Op::Receive, device)));
    for &reader in readers {
        local.add_dependency(receive, reader, crossing.id);
    }
    debug_assert_eq!(local[receive].lane, Lane::Network);
    receive
}

/// The values of the exchanges gathered in place ([`Exchange::in_place`]).
fn in_place_values(exchanges: &[Exchange]) -> HashSet<DataId> {
    exchanges
        .iter()
        .filter(|e| e.in_place.is_some())
        .flat_map(|e| e.values.iter().map(|c| c.id))
        .collect()
}

/// Replaces the all-gathers of `rank`'s devices that join the row blocks of `exchange` (an S
/// every rank that reads it receives whole) by one receive task that makes all their
/// replicas, moving the other ranks' blocks: the network lane receives each block where it
/// lies in the whole S. Returns the replicas.
fn add_in_place_receive(local: &mut SweepGraph, exchange: &Exchange, rank: usize) -> Vec<DataId> {
    let of = exchange
        .parts_of()
        .expect("an exchange gathered in place carries parts");
    let mut gathers: Vec<(TaskId, DataId)> = local
        .task_ids()
        .filter(|&n| local[n].op == Op::AllGather)
        .filter_map(|n| match local[n].outputs[0] {
            id @ DataId::Replica { of: made, .. } if made == of => Some((n, id)),
            _ => None,
        })
        .collect();
    gathers.sort_by_key(|&(n, _)| local[n].device);
    let last = exchange.values.last().expect("an exchange has a value");
    let mut task = moving_task(last, Op::Receive, local[gathers[0].0].device);
    task.outputs = gathers.iter().map(|&(_, id)| id).collect();
    let others = exchange.values.iter().filter(|c| c.from != rank);
    task.moved_bytes = others.map(|c| c.bytes).sum();
    let receive = local.add_task(Arc::new(task));
    for &(gather, id) in &gathers {
        let readers: Vec<TaskId> = local.successors(gather).collect();
        local.remove_task(gather);
        for reader in readers {
            local.add_dependency(receive, reader, id);
        }
    }
    gathers.into_iter().map(|(_, id)| id).collect()
}

/// The values of the gathers whose root is `rank` (the exchanges it sends nothing in).
fn gathered_to(exchanges: &[Exchange], rank: usize) -> HashSet<DataId> {
    exchanges
        .iter()
        .filter(|e| e.collective == Collective::Gather { root: rank })
        .flat_map(|e| e.values.iter().map(|c| c.id))
        .collect()
}

/// The place in the run's order of the exchange that moves each value.
fn positions(exchanges: &[Exchange]) -> HashMap<DataId, usize> {
    let placed = exchanges.iter().enumerate();
    placed
        .flat_map(|(at, e)| e.values.iter().map(move |c| (c.id, at)))
        .collect()
}

/// Makes `receive` wait for this rank's own part of what it gathers: the compute tasks that
/// make the other inputs of the first compute tasks to read what it brings (the QR's own
/// sketch block). The network lane joins a gather it sends nothing in once a receive task of
/// it waits, so it does not poll MPI while this rank's devices compute their part (a thread
/// waking every millisecond slows a kernel on its core by several percent). A task that
/// itself waits for this exchange or a later one (`waits_for`, [`latest_exchanges`]) is left
/// out: the lane, which runs the exchanges in order, would never get to it.
fn after_own_parts(local: &mut SweepGraph, receive: TaskId, waits_for: &HashMap<TaskId, usize>) {
    let exchange = waits_for[&receive];
    let own: Vec<(TaskId, DataId)> = compute_readers(local, receive)
        .into_iter()
        .flat_map(|reader| local.incoming(reader))
        .filter(|edge| local[edge.from].lane == Lane::Compute)
        .filter(|edge| waits_for.get(&edge.from).is_none_or(|&e| e < exchange))
        .map(|edge| (edge.from, edge.data))
        .collect();
    for (maker, id) in own {
        local.add_dependency(maker, receive, id);
    }
}

/// For each task that needs, itself or through the tasks before it, a value another rank
/// sends: the latest place in the run's order (`position`) of an exchange that brings one.
fn latest_exchanges(
    graph: &SweepGraph,
    position: &HashMap<DataId, usize>,
) -> HashMap<TaskId, usize> {
    let order = graph
        .topological_order()
        .expect("a rank's graph has no cycle");
    let mut latest: HashMap<TaskId, usize> = HashMap::new();
    for node in order {
        let own = (graph[node].op == Op::Receive).then(|| position[&graph[node].outputs[0]]);
        let before = graph
            .predecessors(node)
            .filter_map(|n| latest.get(&n).copied());
        if let Some(at) = before.chain(own).max() {
            latest.insert(node, at);
        }
    }
    latest
}

/// The compute tasks that read what `node` makes, directly or through tasks that move it.
fn compute_readers(graph: &SweepGraph, node: TaskId) -> HashSet<TaskId> {
    let mut readers = HashSet::new();
    let mut next = vec![node];
    while let Some(from) = next.pop() {
        for reader in graph.successors(from) {
            if graph[reader].lane == Lane::Compute {
                readers.insert(reader);
            } else {
                next.push(reader);
            }
        }
    }
    readers
}

/// Adds the send task of `crossing` after the tasks that make it.
fn add_send(local: &mut SweepGraph, crossing: &Crossing) {
    let send = local.add_task(Arc::new(moving_task(crossing, Op::Send, crossing.device)));
    for &maker in &crossing.makers {
        local.add_dependency(maker, send, crossing.id);
    }
}
