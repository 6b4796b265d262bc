//! The contraction orders of one kernel call: chosen by dry runs on shapes when the graph is
//! built, kept on the task, and followed when the task runs. No table outlives a graph build,
//! and a running kernel takes no lock to find its order.

use super::search_shape::proxy;
use crate::error::{Error, Result};
use crate::tensor::{Labeled, Leg, Operand, Shape};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The orders one kernel call took, in the order it took them: each the permutation of a fold
/// (`order::fold`) or, for the environment kernel, the index of its order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orders(Vec<Vec<usize>>);

impl Orders {
    /// True when the call chose no order (a kernel with nothing to reorder).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a choice decides: the keys of the two kinds never meet in a memo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Decision {
    /// The order in which a fold takes its operands.
    Fold,
    /// Which of the environment kernel's orders it takes.
    Env,
}

/// Shapes of the operands of one choice: the key of a remembered order.
type Key = (Decision, Vec<(Vec<Leg>, Vec<usize>)>);

/// The orders chosen so far in one graph build, by the shapes they were chosen for (the same
/// shapes recur at every site and batch of a sweep). It lives as long as the build.
#[derive(Debug, Default)]
pub struct OrderMemo(HashMap<Key, Vec<usize>>);

/// How a kernel call gets its orders: chosen now (on shapes, at graph build) or given.
pub enum OrderChoice<'a> {
    /// Each order searched (or taken from the memo) and recorded in `made`.
    Choose {
        /// Orders chosen before in this build.
        memo: &'a mut OrderMemo,
        /// The orders this call chose, in its order.
        made: Orders,
    },
    /// The orders chosen at build, taken one after another.
    Follow {
        /// The task's orders.
        given: &'a Orders,
        /// How many were taken.
        taken: usize,
    },
}

impl<'a> OrderChoice<'a> {
    /// Chooses each order on the operands' shapes, remembering it in `memo`.
    pub fn choose(memo: &'a mut OrderMemo) -> Self {
        OrderChoice::Choose {
            memo,
            made: Orders::default(),
        }
    }

    /// Follows `given`, the orders chosen when the task was built.
    pub fn follow(given: &'a Orders) -> Self {
        OrderChoice::Follow { given, taken: 0 }
    }

    /// The orders this call chose (empty when it followed given ones).
    pub fn into_made(self) -> Orders {
        match self {
            OrderChoice::Choose { made, .. } => made,
            OrderChoice::Follow { .. } => Orders::default(),
        }
    }

    /// The next order: given, remembered for these `operands`' shapes, or found by `search`
    /// (which gets the shapes and the memo for the dry runs it makes) and remembered.
    pub(super) fn next<O: Operand>(
        &mut self,
        decision: Decision,
        operands: &[&O],
        search: impl FnOnce(&[Labeled<Shape>], &mut OrderMemo) -> Vec<usize>,
    ) -> Result<Vec<usize>> {
        match self {
            OrderChoice::Follow { given, taken } => {
                let order = given.0.get(*taken).cloned().ok_or_else(|| {
                    Error::Invalid(format!(
                        "a kernel asked for contraction order {} but its task holds {}: the \
                         task was built for other inputs",
                        *taken + 1,
                        given.0.len()
                    ))
                })?;
                *taken += 1;
                Ok(order)
            }
            OrderChoice::Choose { memo, made } => {
                let shapes: Vec<Labeled<Shape>> = operands.iter().map(|&o| proxy(o)).collect();
                let key = (decision, key(&shapes));
                let order = match memo.0.get(&key) {
                    Some(order) => order.clone(),
                    None => {
                        let order = search(&shapes, memo);
                        memo.0.insert(key, order.clone());
                        order
                    }
                };
                made.0.push(order.clone());
                Ok(order)
            }
        }
    }
}

/// The key of the shapes `operands`.
fn key(operands: &[Labeled<Shape>]) -> Vec<(Vec<Leg>, Vec<usize>)> {
    operands
        .iter()
        .map(|o| (o.legs.clone(), o.value.clone()))
        .collect()
}
