//! `Leg`: the name of a tensor axis, so contractions say what they sum over.

use serde::{Deserialize, Serialize};

/// The name of one axis of a core, an environment or an intermediate.
///
/// Layers are numbered from 0 (the top of the stack, acting last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Leg {
    /// The sketch column (the batch axis of environments and sketches).
    Col,
    /// Left bond of a layer's core.
    Left(usize),
    /// Right bond of a layer's core.
    Right(usize),
    /// The physical leg joining layer `i`'s down leg to layer `i + 1`'s up leg.
    Join(usize),
    /// The up leg of the top layer: the output's up leg.
    Up,
    /// The down leg of the bottom layer: the output's down leg (size 1 for a ket).
    Down,
    /// Left bond of an output core.
    OutLeft,
    /// Right bond of an output core.
    OutRight,
}
