//! `Kind`: whether a train is a state (MPS) or an operator (MPO).

use serde::{Deserialize, Serialize};

/// Matrix product state or matrix product operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A state: one physical leg per site.
    Mps,
    /// An operator: an up and a down physical leg per site.
    Mpo,
}

impl Kind {
    /// Lower-case name as written in manifests.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Mps => "mps",
            Kind::Mpo => "mpo",
        }
    }
}
