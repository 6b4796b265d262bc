//! `ExchangeUse`: what one kind of exchange did on a rank, for the report.

use super::{Collective, Exchange};
use crate::sched::RunLog;
use serde::Serialize;
use srcflow_graph::graph::{DataId, Lane, SweepGraph};
use std::collections::{BTreeMap, HashMap};

/// What the exchanges of one kind (the same values, the same collective) did on this rank.
#[derive(Clone, Debug, Serialize)]
pub struct ExchangeUse {
    /// What they carry and how, e.g. "S parts (all-gather)".
    pub what: String,
    /// Exchanges of this kind.
    pub count: usize,
    /// Bytes of the values they carried, every rank's, each value counted once.
    pub bytes: u64,
    /// Seconds this rank spent inside them, waiting for other ranks included.
    pub seconds: f64,
}

impl ExchangeUse {
    /// The name of `exchange`'s kind: its values and its collective.
    pub fn kind_of(exchange: &Exchange) -> String {
        let values = match exchange.values[0].id {
            DataId::Part { .. } => "S parts",
            DataId::Sketch { .. } => "sketch blocks",
            DataId::Basis { .. } => "bases",
            _ => "other values",
        };
        let how = match exchange.collective {
            Collective::Broadcast { .. } => "broadcast",
            Collective::Gather { .. } => "gather",
            Collective::AllGather => "all-gather",
        };
        format!("{values} ({how})")
    }

    /// What each kind of `exchanges` did in a simulated run of several ranks (`log`, of the
    /// graph [`super::across_nodes`] made, `whole`): counts and bytes as a run reports them,
    /// and the seconds rank 0's network lane spent receiving their values (the model's
    /// messages, which wait for no other rank).
    pub fn simulated(exchanges: &[Exchange], whole: &SweepGraph, log: &RunLog) -> Vec<Self> {
        let mut kind_of_value: HashMap<DataId, String> = HashMap::new();
        let mut uses: BTreeMap<String, ExchangeUse> = BTreeMap::new();
        for exchange in exchanges {
            let what = Self::kind_of(exchange);
            let used = uses.entry(what.clone()).or_insert(ExchangeUse {
                what: what.clone(),
                count: 0,
                bytes: 0,
                seconds: 0.0,
            });
            used.count += 1;
            for value in &exchange.values {
                used.bytes += value.bytes;
                kind_of_value.insert(value.id, what.clone());
            }
        }
        let ran = log.graph_after.as_ref().unwrap_or(whole);
        for event in &log.events {
            let task = &ran[event.node];
            let kind = task.inputs.first().and_then(|id| kind_of_value.get(id));
            if let (Lane::Network, 0, Some(kind)) = (event.lane, event.rank, kind) {
                let used = uses.get_mut(kind).expect("a kind of the exchanges");
                used.seconds += event.end - event.start;
            }
        }
        uses.into_values().collect()
    }
}
