//! The library's engine builder: a user's prefetch policy is the one the run asks, traces are
//! kept only on request, a cancelled token stops a run cleanly, and bad choices are refused.

mod common;

use common::{budgets_for_every_tier, options, problem, PLENTY};
use srcflow::backend::{Backend, CpuBackend};
use srcflow::engine::Tiering;
use srcflow::graph::GraphOptions;
use srcflow::plan::Budgets;
use srcflow::sched::{FetchView, Prefetch, PrefetchPolicy};
use srcflow::{CancelToken, Engine, Error};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Fetches on demand, counting how often the scheduler asked.
#[derive(Debug, Default)]
struct CountingPolicy {
    asked: Arc<AtomicUsize>,
}

impl PrefetchPolicy for CountingPolicy {
    fn start_in(&self, view: &FetchView) -> Option<f64> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Prefetch::None.start_in(view)
    }

    fn window_steps(&self) -> usize {
        0
    }
}

#[test]
fn a_users_prefetch_policy_decides_the_fetches_and_the_result_is_unchanged() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let budgets = Budgets::new(device, host, PLENTY, scratch.path().to_path_buf());
    let policy = CountingPolicy::default();
    let asked = Arc::clone(&policy.asked);
    let tiering = Tiering::default()
        .with_budgets(budgets)
        .with_prefetch(Arc::new(policy));
    let run = srcflow::EngineBuilder::new(options(None))
        .tiering(tiering)
        .build()
        .unwrap()
        .run(&stack)
        .unwrap();
    assert!(
        asked.load(Ordering::SeqCst) > 0,
        "the policy was never asked"
    );
    let on_disk = run.report.environments.get("disk").copied().unwrap_or(0);
    assert!(
        on_disk > 0,
        "nothing was spilled: {:?}",
        run.report.environments
    );
    let in_memory = Engine::new(options(None)).unwrap().run(&stack).unwrap();
    let d = srcflow::ops::distance(&run.output, &in_memory.output).unwrap();
    assert!(d < 1e-12, "distance {d:e} to the in-memory run");
}

#[test]
fn a_trace_is_kept_only_when_asked_for() {
    let stack = problem();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    let plain = Engine::builder(8).build().unwrap().run(&stack).unwrap();
    assert!(plain.log.is_none());
    let err = plain.write_trace(&path).unwrap_err().to_string();
    assert!(err.contains("kept no log"), "{err}");
    assert!(!path.exists());

    let traced = Engine::builder(8).trace(true).build().unwrap();
    let run = traced.run(&stack).unwrap();
    run.write_trace(&path).unwrap();
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let slices: Vec<&serde_json::Value> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    assert!(
        slices.len() >= run.log.unwrap().events.len(),
        "a slice per task at least"
    );
    assert!(slices
        .iter()
        .any(|e| e["name"].as_str().unwrap().starts_with("env")));
}

#[test]
fn a_cancelled_token_stops_the_run_and_leaves_no_scratch() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let cancel = CancelToken::new();
    cancel.cancel();
    let budgets = Budgets::new(device, host, PLENTY, scratch.path().to_path_buf());
    let err = Engine::builder(common::CHI_OUT)
        .tiering(Tiering::default().with_budgets(budgets))
        .cancel(cancel)
        .build()
        .unwrap()
        .run(&stack)
        .unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err}");
    common::assert_empty(scratch.path());
}

#[test]
fn backends_must_match_the_devices() {
    let two: Vec<Box<dyn Backend>> = (0..2)
        .map(|_| Box::new(CpuBackend::new(1).unwrap()) as Box<dyn Backend>)
        .collect();
    let err = Engine::builder(8)
        .backends(two)
        .build()
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("1 device(s) but 2 backend(s)"), "{err}");
    let three = GraphOptions::new(8).with_devices(3);
    let one: Vec<Box<dyn Backend>> = vec![Box::new(CpuBackend::new(1).unwrap())];
    let err = Engine::builder(8)
        .graph(three)
        .backends(one)
        .build()
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("3 device(s) but 1 backend(s)"),
        "{err}"
    );
}
