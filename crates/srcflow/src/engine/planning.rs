//! The graph and plan an engine runs for a stack: kept by the session, or planned now, with the
//! prefetch windows the policy allows tried from the widest until one fits the budgets.

use super::plan_cache::PlanKey;
use super::{Engine, Prepared};
use srcflow_graph::graph::SweepGraph;
use srcflow_graph::plan::{self, Drift, Plan, PlanRequest};
use srcflow_graph::train::StackShape;
use srcflow_sched::sim::MachineModel;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::Tier;
use std::sync::Arc;

impl Engine {
    /// The graph this engine would run for `stack`, with its plan when budgets are set.
    pub fn prepare(&self, stack: &StackShape) -> Result<(SweepGraph, Option<Plan>)> {
        let prepared = self.prepared(stack)?;
        Ok(((*prepared.graph).clone(), prepared.plan))
    }

    /// Like [`Engine::prepare`], shared: the session's graph and plan for `stack` when it made
    /// them for the same shapes, options and budgets before, else new ones it keeps.
    pub fn prepared(&self, stack: &StackShape) -> Result<Prepared> {
        self.prepared_for(stack, self.backend().shares_host_memory())
    }

    /// The graph and plan for `stack` on a modelled machine (a GPU has memory of its own).
    pub fn prepare_on(
        &self,
        stack: &StackShape,
        machine: &MachineModel,
    ) -> Result<(SweepGraph, Option<Plan>)> {
        let prepared = self.prepared_for(stack, !machine.device_has_own_memory)?;
        Ok(((*prepared.graph).clone(), prepared.plan))
    }

    /// The graph and plan for `stack`, from the session's plans or made now;
    /// `shared_memory` when device memory is host memory.
    pub(super) fn prepared_for(&self, stack: &StackShape, shared_memory: bool) -> Result<Prepared> {
        let key = PlanKey {
            stack: stack.clone(),
            graph: self.options.graph,
            pacing: self.pacing,
            windows: self.tiering.prefetch.windows_to_try(2 * stack.sites()),
            shared_memory,
        };
        let budgets = self.tiering.budgets.as_ref();
        self.session.prepared(key, budgets, || {
            let (graph, plan) = self.prepare_for(stack, shared_memory)?;
            Ok(Prepared {
                graph: Arc::new(graph),
                plan,
            })
        })
    }

    /// The graph and plan for `stack`, planned now; `shared_memory` when device memory is
    /// host memory. A plan that had to narrow the policy's prefetch window depends on its
    /// budgets: it has no budget floor.
    fn prepare_for(
        &self,
        stack: &StackShape,
        shared_memory: bool,
    ) -> Result<(SweepGraph, Option<Plan>)> {
        let Some(budgets) = &self.tiering.budgets else {
            return Ok((SweepGraph::build(stack, &self.options.graph)?, None));
        };
        let plan_with = |window| {
            plan::plan(&PlanRequest {
                stack,
                graph: self.options.graph,
                budgets,
                drift: self.drift(window),
                shared_memory,
            })
        };
        let steps = 2 * stack.sites();
        let windows = self.tiering.prefetch.windows_to_try(steps);
        let mut refusal = None;
        for (tried, &window) in windows.iter().enumerate() {
            match plan_with(window) {
                Ok((mut plan, mut graph)) => {
                    Self::log_plan(&plan);
                    if tried > 0 {
                        plan.same_from = None;
                    }
                    graph.planned_fetch_window = Some(window);
                    return Ok((graph, Some(plan)));
                }
                Err(e) => refusal = Some(e),
            }
        }
        let refusal = refusal.expect("a policy has at least one window");
        let narrowest = windows.into_iter().min().unwrap_or(0);
        let fitting = (0..narrowest).rev().find(|&w| plan_with(w).is_ok());
        let refusal = match fitting {
            Some(window) => narrower_window_fits(refusal, window),
            None => refusal,
        };
        Err(match self.kept_batch {
            Some(batch) => batch_kept_does_not_fit(refusal, batch),
            None => refusal,
        })
    }

    /// Logs what `plan` put where.
    fn log_plan(plan: &Plan) {
        tracing::info!(
            batch_cols = plan.batch_cols,
            fetch_window = plan.fetch_window,
            device = plan.count_on(Tier::Device),
            host = plan.count_on(Tier::Host),
            disk = plan.count_on(Tier::Disk),
            "plan: environments per tier"
        );
    }

    /// How far the scheduler will let I/O drift from compute with a prefetch window of
    /// `window` steps (the planner's model of it).
    pub(super) fn drift(&self, window: usize) -> Drift {
        Drift {
            read_ahead_steps: self.pacing.read_ahead_steps,
            upload_ahead_steps: self.pacing.upload_ahead_steps,
            fetch_ahead_steps: window,
            spill_lag_steps: self.pacing.spill_lag_steps,
        }
    }
}

/// `refusal` (a budget the plan cannot fit) with why the batch was `batch`: the checkpoint's,
/// which a resume keeps to give the same bits.
fn batch_kept_does_not_fit(refusal: Error, batch: usize) -> Error {
    with_advice(
        refusal,
        format!(
            ". The run resumes a checkpoint made with {batch} sketch columns per task \
         (`GraphOptions::batch_cols`), which it keeps to give the uninterrupted run's bits: \
         raise the budget to what that batch needs, or remove the checkpoint \
         (`EngineBuilder::checkpoint`) to start afresh with the batch this budget allows"
        ),
    )
}

/// `refusal` (a budget the plan cannot fit) with the hint that a prefetch window of `window`
/// steps, narrower than the policy's, fits.
fn narrower_window_fits(refusal: Error, window: usize) -> Error {
    let policy = match window {
        0 => "none".to_string(),
        k => format!("lookahead:{k}"),
    };
    with_advice(
        refusal,
        format!("; or fetch fewer steps ahead: `Tiering::prefetch` {policy} fits"),
    )
}

/// `refusal` with `more` added to its advice, when it is a budget the plan cannot fit.
fn with_advice(mut refusal: Error, more: String) -> Error {
    if let Error::DoesNotFit { advice, .. } = &mut refusal {
        advice.push_str(&more);
    }
    refusal
}
