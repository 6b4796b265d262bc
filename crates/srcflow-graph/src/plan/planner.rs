//! The planner: shapes and budgets in, a plan out — the batch size and the tier of every
//! environment — with no data read.

use super::memory::{Drift, MemoryProfile, Peak};
use super::Budgets;
use crate::graph::{GraphOptions, SweepGraph};
use crate::train::StackShape;
use serde::Serialize;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::{ByteSize, Tier};

/// What to plan for.
#[derive(Clone, Debug)]
pub struct PlanRequest<'a> {
    /// The stack's shapes.
    pub stack: &'a StackShape,
    /// The graph's options; a `batch_cols` of `None` lets the planner choose the batch.
    pub graph: GraphOptions,
    /// The budgets to fit.
    pub budgets: &'a Budgets,
    /// How far the scheduler lets I/O drift from compute.
    pub drift: Drift,
    /// True when device memory is host memory (the CPU backend): both count against the host
    /// budget.
    pub shared_memory: bool,
}

/// The planner's decisions and its model of the run's memory.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Sketch columns per env and sketch task.
    pub batch_cols: usize,
    /// Sweep steps ahead of compute that fetches may hold memory for.
    pub fetch_window: usize,
    /// Tier of each environment C_0 … C_{n-2} between the passes.
    pub tiers: Vec<Tier>,
    /// Bytes of each environment (all columns).
    pub env_bytes: Vec<u64>,
    /// Modelled peak bytes per tier.
    pub profile: MemoryProfile,
    /// Modelled peak of the process's resident memory.
    pub process_peak: u64,
    /// The budgets planned for.
    pub budgets: Budgets,
    /// The least device and host budgets for which planning again gives this same plan, when
    /// every larger one does too: set when the plan kept every environment on the device at
    /// the widest batch (and folded, if asked to), which no larger budget changes. `None`
    /// when the plan depends on the budgets it was made for.
    #[serde(skip)]
    pub same_from: Option<BudgetFloor>,
}

/// Device and host budgets at and above which the planner's choice does not change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetFloor {
    /// Bytes of device memory per device.
    pub device: u64,
    /// Bytes of host memory for the process.
    pub host: u64,
}

impl BudgetFloor {
    /// The floor of a placement whose device peak is `device` and process peak `host`.
    fn of(profile: &MemoryProfile, process_peak: u64) -> Self {
        BudgetFloor {
            device: profile.device.bytes,
            host: process_peak,
        }
    }

    /// The larger of each budget of `self` and `other`.
    fn max(self, other: BudgetFloor) -> Self {
        BudgetFloor {
            device: self.device.max(other.device),
            host: self.host.max(other.host),
        }
    }

    /// True when `budgets` hold this floor.
    pub fn holds(&self, budgets: &Budgets) -> bool {
        self.device <= budgets.device && self.host <= budgets.host
    }
}

impl Plan {
    /// Number of environments on `tier`.
    pub fn count_on(&self, tier: Tier) -> usize {
        self.tiers.iter().filter(|&&t| t == tier).count()
    }
}

/// Plans a run: the largest batch (halving from all of a device's columns) for which some
/// placement fits the budgets, newest environments on the fastest tier, with the sites folded
/// when the options allow it and that moves no environment down a tier. Returns the plan and
/// its placed graph.
///
/// Halving stops once it no longer pays: when a batch half as wide still needs at least 90 % of
/// what the wider one needed, what does not fit is not the batch (a 2000-column sketch on 50
/// sites would otherwise be planned down to one column, in a graph of a million tasks).
pub fn plan(request: &PlanRequest) -> Result<(Plan, SweepGraph)> {
    let sketch = request.graph.sketch_for(request.stack).max(1);
    let widest = sketch.div_ceil(request.graph.devices.clamp(1, sketch));
    let candidates: Vec<usize> = match request.graph.batch_cols {
        Some(batch) => vec![batch],
        None => std::iter::successors(Some(widest), |&b| (b > 1).then(|| b.div_ceil(2))).collect(),
    };
    let mut refusal: Option<Refusal> = None;
    for (tried, batch) in candidates.into_iter().enumerate() {
        let options = request.graph.with_batch_cols(batch).with_fold(false);
        let graph = SweepGraph::build(request.stack, &options)?;
        let found = match place(request, &graph, batch) {
            Ok(found) if request.graph.fold => folded_if_free(request, options, found),
            Ok(found) => (found, None),
            Err(Failure::Other(e)) => return Err(e),
            Err(Failure::Refused(refused)) => {
                let stalled = refusal
                    .as_ref()
                    .is_some_and(|wider| refused.needed * 10 >= wider.needed * 9);
                refusal = Some(refused);
                if stalled {
                    break;
                }
                continue;
            }
        };
        return Ok(with_floor(found, tried == 0, request.graph.fold));
    }
    Err(refusal.expect("at least one batch size is tried").error)
}

/// `found` (a plan, its graph and, when folded, the unfolded plan it was chosen over) with
/// the budget floor above which it stays the same: only for the widest batch (`widest`) with
/// every environment on the device, and, when folding was asked for (`fold`), the folded plan
/// (a larger budget could fold what the given one could not).
fn with_floor(
    found: ((Plan, SweepGraph), Option<Plan>),
    widest: bool,
    fold: bool,
) -> (Plan, SweepGraph) {
    let ((mut plan, graph), unfolded) = found;
    let on_device = plan.tiers.iter().all(|&t| t == Tier::Device);
    let folded = !fold || unfolded.is_some();
    if widest && on_device && folded {
        let own = BudgetFloor::of(&plan.profile, plan.process_peak);
        plan.same_from = Some(match &unfolded {
            Some(u) => own.max(BudgetFloor::of(&u.profile, u.process_peak)),
            None => own,
        });
    }
    (plan, graph)
}

/// The plan with the sites folded ([`SweepGraph::folds`]) with the unfolded plan it replaced,
/// when that placement keeps every environment on the tier `unfolded` put it on; else
/// `unfolded` alone.
fn folded_if_free(
    request: &PlanRequest,
    options: GraphOptions,
    unfolded: (Plan, SweepGraph),
) -> ((Plan, SweepGraph), Option<Plan>) {
    let options = options.with_fold(true);
    let Ok(graph) = SweepGraph::build(request.stack, &options) else {
        return (unfolded, None);
    };
    match place(request, &graph, unfolded.0.batch_cols) {
        Ok(folded) if folded.0.tiers == unfolded.0.tiers => (folded, Some(unfolded.0)),
        _ => (unfolded, None),
    }
}

/// Why a placement failed: a budget it cannot fit, or another error.
enum Failure {
    /// A tier's budget is too small; `needed` is the peak it would take.
    Refused(Refusal),
    /// Anything else (a malformed graph).
    Other(Error),
}

/// A budget a placement cannot fit: the bytes it needs and the error that says so.
struct Refusal {
    needed: u64,
    error: Error,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Other(e)
    }
}

/// Demotes the oldest environments until the modelled run fits, or says what does not fit.
fn place(
    request: &PlanRequest,
    base: &SweepGraph,
    batch: usize,
) -> std::result::Result<(Plan, SweepGraph), Failure> {
    let envs = base.environments();
    let mut tiers = vec![Tier::Device; envs];
    loop {
        let mut graph = base.clone();
        graph.place_environments(&tiers)?;
        let profile = MemoryProfile::of(&graph, request.drift);
        let process_peak = profile.process_peak(request.shared_memory);
        let budgets = request.budgets;
        let host_peak = Peak {
            bytes: process_peak,
            ..profile.combined
        };
        let demote = if profile.device.bytes > budgets.device {
            let device = Shortfall::new("device memory", budgets.device_setting());
            demote_oldest(
                &mut tiers,
                Tier::Host,
                device,
                profile.device,
                budgets.device,
            )
        } else if process_peak > budgets.host {
            let host = Shortfall::new("host memory", "`Budgets::host`");
            demote_oldest(&mut tiers, Tier::Disk, host, host_peak, budgets.host)
        } else if profile.disk.bytes > budgets.disk {
            let folder = format!("scratch disk under {}", budgets.scratch_dir.display());
            let disk = Shortfall::new(folder, "`Budgets::disk`");
            Err(disk.refusal(profile.disk, budgets.disk))
        } else {
            let env_bytes = (0..envs)
                .map(|site| base.env_bytes(site, full_cols(base)))
                .collect();
            let plan = Plan {
                batch_cols: batch,
                fetch_window: request.drift.fetch_ahead_steps,
                tiers,
                env_bytes,
                profile,
                process_peak,
                budgets: budgets.clone(),
                same_from: None,
            };
            return Ok((plan, graph));
        };
        demote.map_err(Failure::Refused)?;
    }
}

/// All sketch columns of `graph`.
fn full_cols(graph: &SweepGraph) -> crate::graph::Cols {
    crate::graph::Cols {
        start: 0,
        end: graph.sketch,
    }
}

/// Moves the oldest environment above `to` down to `to`; fails when none is left to move.
fn demote_oldest(
    tiers: &mut [Tier],
    to: Tier,
    short: Shortfall,
    peak: Peak,
    budget: u64,
) -> std::result::Result<(), Refusal> {
    match tiers.iter_mut().find(|t| **t < to) {
        Some(slot) => {
            *slot = to;
            Ok(())
        }
        None => Err(short.refusal(peak, budget)),
    }
}

/// A budget a plan may fall short of: what it bounds and the setting that raises it.
struct Shortfall {
    what: String,
    setting: &'static str,
}

impl Shortfall {
    /// The shortfall of `what` (device memory, …), raised by `setting`.
    fn new(what: impl Into<String>, setting: &'static str) -> Self {
        let what = what.into();
        Shortfall { what, setting }
    }

    /// The refusal of a problem whose `peak` does not fit `budget`: where, how much, and what
    /// to change.
    fn refusal(&self, peak: Peak, budget: u64) -> Refusal {
        let error = Error::DoesNotFit {
            site: peak.site,
            kernel: peak.kernel,
            memory: self.what.clone(),
            needed: ByteSize(peak.bytes),
            budget: ByteSize(budget),
            setting: self.setting,
            advice: String::new(),
        };
        Refusal {
            needed: peak.bytes,
            error,
        }
    }
}
