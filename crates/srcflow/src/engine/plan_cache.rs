//! `PlanCache`: the sweep graphs and plans a [`super::Session`] has made, by what they were
//! made from, so that a call with the same shapes, options and budgets plans nothing.

use srcflow_graph::graph::{GraphOptions, SweepGraph};
use srcflow_graph::plan::{Budgets, Plan};
use srcflow_graph::train::StackShape;
use srcflow_sched::sched::Pacing;
use std::sync::Arc;

/// Plans a session keeps; past this many the least recently used is forgotten. A time
/// evolution plans once per pattern of bonds, and its bonds settle after a few steps.
pub const PLANS_KEPT: usize = 32;

/// Tasks the kept plans' graphs may hold in all (a few hundred bytes each): the least recently
/// used plans are forgotten to make room, and a graph larger than this is not kept.
pub const PLAN_TASKS_KEPT: usize = 1_000_000;

/// A sweep graph ready to run, with its plan when the run has budgets.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The graph, with its spill and fetch tasks where the plan puts environments off the
    /// device.
    pub graph: Arc<SweepGraph>,
    /// The plan (`None` without budgets).
    pub plan: Option<Plan>,
}

/// Everything but the budgets that a graph and plan are made from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlanKey {
    /// The stack's shapes, in ket form.
    pub stack: StackShape,
    /// The graph's options.
    pub graph: GraphOptions,
    /// How far I/O may drift from compute.
    pub pacing: Pacing,
    /// The prefetch windows the policy lets the planner try, widest first.
    pub windows: Vec<usize>,
    /// True when device memory is host memory.
    pub shared_memory: bool,
}

/// One plan kept, with the budgets it was made for.
struct Entry {
    key: PlanKey,
    budgets: Option<Budgets>,
    prepared: Prepared,
    /// When it was last used, on the cache's own counter.
    used: u64,
}

/// The plans kept, at most [`PLANS_KEPT`], and how often one was found.
#[derive(Default)]
pub(crate) struct PlanCache {
    entries: Vec<Entry>,
    uses: u64,
    /// Lookups that found a plan.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
}

impl PlanCache {
    /// The plan kept for `key` that planning for `budgets` would give again: one made for the
    /// same budgets, or one that no larger budget changes ([`Plan::same_from`]) and that
    /// `budgets` hold (detected budgets move a little between calls).
    pub fn find(&mut self, key: &PlanKey, budgets: Option<&Budgets>) -> Option<Prepared> {
        self.uses += 1;
        let found = self
            .entries
            .iter_mut()
            .find(|e| e.key == *key && (e.budgets.as_ref() == budgets || holds_floor(e, budgets)));
        let Some(entry) = found else {
            self.misses += 1;
            return None;
        };
        self.hits += 1;
        entry.used = self.uses;
        let mut prepared = entry.prepared.clone();
        if let (Some(plan), Some(budgets)) = (&mut prepared.plan, budgets) {
            plan.budgets = budgets.clone();
        }
        Some(prepared)
    }

    /// Keeps `prepared`, made for `key` and `budgets`, forgetting the least recently used plans
    /// while [`PLANS_KEPT`] are kept already or their tasks and its would pass
    /// [`PLAN_TASKS_KEPT`]; a graph larger than that is not kept.
    pub fn keep(&mut self, key: PlanKey, budgets: Option<&Budgets>, prepared: Prepared) {
        let tasks = prepared.graph.task_count();
        if tasks > PLAN_TASKS_KEPT {
            return;
        }
        while self.entries.len() >= PLANS_KEPT || self.tasks() + tasks > PLAN_TASKS_KEPT {
            let oldest = (0..self.entries.len()).min_by_key(|&i| self.entries[i].used);
            match oldest {
                Some(oldest) => self.entries.swap_remove(oldest),
                None => break,
            };
        }
        self.uses += 1;
        self.entries.push(Entry {
            key,
            budgets: budgets.cloned(),
            prepared,
            used: self.uses,
        });
    }

    /// Tasks of the kept plans' graphs.
    fn tasks(&self) -> usize {
        self.entries
            .iter()
            .map(|e| e.prepared.graph.task_count())
            .sum()
    }

    /// Plans kept now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Forgets every plan.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// True when `entry`'s plan stays the same for `budgets`: it has a budget floor that they
/// hold, and they spill to the same scratch folder.
fn holds_floor(entry: &Entry, budgets: Option<&Budgets>) -> bool {
    let (Some(plan), Some(budgets)) = (&entry.prepared.plan, budgets) else {
        return false;
    };
    let floor = plan.same_from.filter(|floor| floor.holds(budgets));
    floor.is_some() && plan.budgets.scratch_dir == budgets.scratch_dir
}
