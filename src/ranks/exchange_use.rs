//! `ExchangeUse`: what one kind of exchange did on a rank, for the report.

use super::{Collective, Exchange};
use crate::graph::DataId;
use serde::Serialize;

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
}
