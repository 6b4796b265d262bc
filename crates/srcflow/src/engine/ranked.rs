//! What a run of several ranks adds at its end: the ranks agree on whether it succeeded,
//! rank 0, which wrote the output, shares it, and rank 0 joins the ranks' traces.

use super::MemorySink;
use crate::trace::{join_rank_traces, rank_trace};
use srcflow_graph::graph::SweepGraph;
use srcflow_graph::train::Train;
use srcflow_sched::ranks::{
    decode_tensors, Encoded, Exchange, ExchangeLane, RankLayout, Transport,
};
use srcflow_sched::sched::RunLog;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::AnyTensor;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// The run's result on this rank, once every rank has said how its part went: this rank's
/// error, the network lane's, or else the first other rank's (so every rank fails together).
pub(super) fn agree(
    transport: &dyn Transport,
    lane: &ExchangeLane,
    local: Result<RunLog>,
) -> Result<RunLog> {
    let local = match (local, lane.take_failure()) {
        (Ok(_), Some(error)) => Err(error),
        (local, _) => local,
    };
    let said = match &local {
        Ok(_) => Vec::new(),
        Err(error) => error.to_string().into_bytes(),
    };
    let statuses = match transport.all_gather_bytes(&said) {
        Ok(statuses) => statuses,
        Err(error) => return local.and(Err(error)),
    };
    let log = local?;
    match statuses.iter().enumerate().find(|(_, s)| !s.is_empty()) {
        Some((rank, why)) => Err(Error::Invalid(format!(
            "rank {rank} failed: {}",
            String::from_utf8_lossy(why)
        ))),
        None => Ok(log),
    }
}

/// Checks that every rank plans the same exchanges as rank 0 (they built their graphs from
/// the same shapes and options), so that their collectives match.
pub(super) fn agree_on_exchanges(transport: &dyn Transport, exchanges: &[Exchange]) -> Result<()> {
    let mut hasher = DefaultHasher::new();
    for exchange in exchanges {
        format!("{:?}", exchange.collective).hash(&mut hasher);
        exchange.in_place.hash(&mut hasher);
        for value in &exchange.values {
            (value.id.to_string(), value.from, &value.to, value.bytes).hash(&mut hasher);
        }
    }
    let mine = hasher.finish().to_le_bytes();
    let all = transport.all_gather_bytes(&mine)?;
    match all.iter().position(|plan| plan != &all[0]) {
        Some(rank) => Err(Error::Invalid(format!(
            "rank {rank} planned other exchanges than rank 0: give every rank the same problem, \
             options and budgets"
        ))),
        None => Ok(()),
    }
}

/// The trace of the whole run on rank 0: every rank's own ([`rank_trace`] of its `log`, of
/// `graph`), gathered and joined; `None` on the other ranks.
pub(super) fn join_traces(
    transport: &dyn Transport,
    layout: RankLayout,
    graph: &SweepGraph,
    log: &RunLog,
) -> Result<Option<serde_json::Value>> {
    let mine = rank_trace(graph, log, layout).to_string().into_bytes();
    let mut traces = Vec::with_capacity(layout.ranks);
    transport.gather(0, &mine.as_slice(), &mut |rank, bytes| {
        let trace = serde_json::from_slice(bytes)
            .map_err(|e| Error::Invalid(format!("the trace rank {rank} sent is not JSON: {e}")))?;
        traces.push(trace);
        Ok(())
    })?;
    if layout.rank != 0 {
        return Ok(None);
    }
    join_rank_traces(traces).map(Some).map_err(Error::Invalid)
}

/// The product on every rank: rank 0's `sink` holds it and broadcasts it.
pub(super) fn share_output(
    transport: &dyn Transport,
    graph: &SweepGraph,
    sink: MemorySink,
) -> Result<Train> {
    let mine: Vec<AnyTensor> = if transport.rank() == 0 {
        let train = sink
            .into_train()
            .inspect_err(|e| transport.abort(&e.to_string()))?;
        train.into_cores()
    } else {
        Vec::new()
    };
    let mut cores = Vec::new();
    transport.broadcast(0, &Encoded(&mine), &mut |_, shared| {
        let shared = decode_tensors(shared, "the product rank 0 sent")?;
        cores = shared;
        Ok(())
    })?;
    Train::of_any(graph.output_kind(), cores)
}
