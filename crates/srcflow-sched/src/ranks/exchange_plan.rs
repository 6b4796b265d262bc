//! The exchanges of a run: which values cross ranks, grouped into collectives, in the one
//! order every rank runs them.

use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{DataId, Shared, SweepGraph};
use srcflow_tensor::tensor::DType;
use std::collections::{BTreeSet, HashMap};

/// A value that a task of one rank makes and tasks of other ranks read.
#[derive(Clone, Debug)]
pub struct Crossing {
    /// The value.
    pub id: DataId,
    /// The rank that makes it.
    pub from: usize,
    /// The ranks that read it.
    pub to: BTreeSet<usize>,
    /// The device that makes it.
    pub device: usize,
    /// The sweep step of the task that makes it.
    pub step: usize,
    /// The site of the task that makes it.
    pub site: usize,
    /// Its bytes.
    pub bytes: u64,
    /// The task that makes it in the whole graph: of several (column blocks each writing a
    /// slice of it), the one of the latest step, then of the highest index.
    pub maker: TaskId,
    /// Every task that writes it, in the whole graph.
    pub makers: Vec<TaskId>,
}

/// The MPI collective an exchange runs as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// One value, from the rank that makes it to all others.
    Broadcast {
        /// The rank that makes it.
        root: usize,
    },
    /// Values of several ranks to the one rank that reads them all.
    Gather {
        /// The rank that reads them.
        root: usize,
    },
    /// Values of several ranks to every rank.
    AllGather,
}

/// Values that cross ranks together, in one collective.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// How they move.
    pub collective: Collective,
    /// The values, in the order each rank packs its own.
    pub values: Vec<Crossing>,
    /// The dimensions of the value whose row blocks the values are, when the ranks that read
    /// them receive them whole and in place: the all-gathers of S in complex128, each row
    /// block crossing to every reading rank but its maker's (`None` for every other exchange,
    /// and where the devices have memory of their own, [`super::RankGraph::of`]). A rank that
    /// reads none takes part and keeps nothing.
    pub in_place: Option<Vec<usize>>,
}

impl Exchange {
    /// The value whose parts the exchange carries, if it carries parts.
    pub fn parts_of(&self) -> Option<Shared> {
        match Group::of(self.values[0].id) {
            Group::Parts(of) => Some(of),
            _ => None,
        }
    }

    /// The ranks that read its values, in rank order, each once.
    pub fn readers(&self) -> BTreeSet<usize> {
        self.values
            .iter()
            .flat_map(|c| c.to.iter().copied())
            .collect()
    }

    /// The values `rank` makes, in packing order.
    pub fn made_by(&self, rank: usize) -> impl Iterator<Item = &Crossing> {
        self.values.iter().filter(move |c| c.from == rank)
    }
}

/// What moves together: the parts of one shared value (an all-gather), the sketch blocks of
/// one site (a gather to the QR), or a value alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Group {
    Parts(Shared),
    Sketches(usize),
    Alone(DataId),
}

impl Group {
    fn of(id: DataId) -> Self {
        match id {
            DataId::Part { of, .. } => Group::Parts(of),
            DataId::Sketch { site, .. } => Group::Sketches(site),
            other => Group::Alone(other),
        }
    }
}

/// The exchanges of `crossings` in `graph`, ordered by the sweep step of the last task that
/// makes one of their values, then by its place in one topological order of the whole graph
/// (the same on every rank), then by the value's name. Steps never fall along an edge, so every
/// value an exchange's makers depend on has crossed in an earlier exchange; and the scheduler,
/// which paces reads by step, makes the values of each exchange before those of later steps.
pub fn exchanges(graph: &SweepGraph, crossings: &HashMap<DataId, Crossing>) -> Vec<Exchange> {
    let order = graph
        .topological_order()
        .expect("a sweep graph has no cycle");
    let position: HashMap<TaskId, usize> = order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let mut groups: HashMap<Group, Vec<Crossing>> = HashMap::new();
    for crossing in crossings.values() {
        groups
            .entry(Group::of(crossing.id))
            .or_default()
            .push(crossing.clone());
    }
    let mut exchanges: Vec<((usize, usize, String), Exchange)> = groups
        .into_values()
        .map(|mut values| {
            values.sort_by_key(|c| (c.step, position[&c.maker]));
            let last = values.last().expect("a group has a value");
            let last = (last.step, position[&last.maker], format!("{:?}", last.id));
            let mut exchange = Exchange {
                collective: collective_of(&values),
                values,
                in_place: None,
            };
            exchange.in_place = lands_in_place(graph, &exchange).then(|| {
                let of = exchange.parts_of().expect("S's row blocks are its parts");
                graph.value_dims(of.whole())
            });
            (last, exchange)
        })
        .collect();
    exchanges.sort_by(|(a, _), (b, _)| a.cmp(b));
    exchanges.into_iter().map(|(_, e)| e).collect()
}

/// True when `exchange` carries the row blocks of one S in complex128, one per device that
/// has rows, all of them crossing, each to every reader but its maker (every maker reads the
/// others'): every reading rank then holds the whole S once the exchange is done, each block
/// where it lands (the blocks lie in device order, which is rank order).
fn lands_in_place(graph: &SweepGraph, exchange: &Exchange) -> bool {
    let Some(of @ Shared::Proj { .. }) = exchange.parts_of() else {
        return false;
    };
    let readers = exchange.readers();
    let everyone_else = exchange.values.iter().all(|c| {
        let mut readers_and_maker = c.to.clone();
        readers_and_maker.insert(c.from);
        readers_and_maker == readers && !c.to.contains(&c.from)
    });
    let bytes: u64 = exchange.values.iter().map(|c| c.bytes).sum();
    graph.dtype == DType::Complex128 && everyone_else && bytes == graph.value_bytes(of.whole())
}

/// A gather when one rank reads every value, else a broadcast for a value alone, else an
/// all-gather.
fn collective_of(values: &[Crossing]) -> Collective {
    let first = &values[0].to;
    match (first.iter().next(), values) {
        (Some(&root), _) if first.len() == 1 && values.iter().all(|c| c.to == *first) => {
            Collective::Gather { root }
        }
        (_, [one]) => Collective::Broadcast { root: one.from },
        _ => Collective::AllGather,
    }
}
