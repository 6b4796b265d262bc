//! A session that outlives its runs: warm runs give bitwise the output of fresh engines, plans
//! are kept and reused for the same shapes, options and budgets, and a run that fails (bad
//! input, injected out-of-memory, a disk error, a device failure, a cancel) leaves the session
//! usable with the same output as before.

mod common;

use common::{budgets_for_every_tier, options, problem, CHI_OUT, PLENTY};
use srcflow::device::{DeviceFault, DeviceOptions, OomFault};
use srcflow::engine::{CoreSource, MemorySink, MemorySource, Session, SessionStats, Tiering};
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::plan::Budgets;
use srcflow::tensor::AnyTensor;
use srcflow::{CancelToken, Engine, EngineBuilder, Options, Stack, Train};
use std::path::Path;

/// An engine on `session` with `options` and `tiering`, budgets detected when none are given.
fn engine_on(session: &Session, options: Options, tiering: Tiering) -> Engine {
    EngineBuilder::new(options)
        .tiering(tiering)
        .session(session.clone())
        .build()
        .unwrap()
}

/// Budgets with `device` and `host` bytes, unlimited disk under `scratch`.
fn budgets(device: u64, host: u64, scratch: &Path) -> Tiering {
    Tiering::default().with_budgets(Budgets::new(device, host, PLENTY, scratch.to_path_buf()))
}

/// Detected budgets, as the Python package has on every call.
fn detected() -> Tiering {
    Tiering::default().with_budgets(Budgets::detect(None, None, None, None).unwrap())
}

/// The output of `stack` from an engine of its own (no shared session).
fn fresh(stack: &Stack, options: Options) -> Train {
    let engine = EngineBuilder::new(options)
        .tiering(detected())
        .build()
        .unwrap();
    engine.run(stack).unwrap().output
}

/// A random MPO·MPO problem (the output an MPO).
fn mpo_mpo() -> Stack {
    let spec = ProblemSpec {
        sites: 12,
        bond: 8,
        mpo_bond: 4,
        ..ProblemSpec::default()
    };
    generate(ProblemKind::Identity, &spec).unwrap()
}

#[test]
fn warm_runs_give_bitwise_the_output_of_fresh_engines() {
    let session = Session::new();
    for stack in [problem(), mpo_mpo()] {
        let expected = fresh(&stack, options(None));
        for _ in 0..3 {
            let engine = engine_on(&session, options(None), detected());
            assert_eq!(engine.run(&stack).unwrap().output, expected);
        }
    }
    let stats = session.stats();
    assert_eq!((stats.plan_misses, stats.plan_hits), (2, 4), "{stats:?}");
}

#[test]
fn plans_are_kept_per_shape_option_and_budget() {
    let session = Session::new();
    let scratch = tempfile::tempdir().unwrap();
    let stack = problem();
    let run = |options: Options, tiering: Tiering| {
        engine_on(&session, options, tiering).run(&stack).unwrap();
        session.stats()
    };
    let first = run(options(None), detected());
    assert_eq!((first.plans, first.plan_misses, first.plan_hits), (1, 1, 0));
    let again = run(options(None), detected());
    assert_eq!(
        again.plan_hits, 1,
        "detected budgets that hold the plan reuse it"
    );
    let wider = Options::new(CHI_OUT + 8);
    assert_eq!(run(wider, detected()).plan_misses, 2, "another χ̄ plans");
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let tight = || budgets(device, host, scratch.path());
    assert_eq!(
        run(options(None), tight()).plan_misses,
        3,
        "a tighter budget plans"
    );
    let stats = run(options(None), tight());
    assert_eq!((stats.plans, stats.plan_misses, stats.plan_hits), (3, 3, 2));
}

#[test]
fn a_plan_that_spills_is_not_reused_for_other_budgets() {
    let session = Session::new();
    let scratch = tempfile::tempdir().unwrap();
    let stack = problem();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    for extra in [0, 1 << 20] {
        let engine = engine_on(
            &session,
            options(None),
            budgets(device + extra, host, scratch.path()),
        );
        engine.prepared(&stack.shape()).unwrap();
    }
    assert_eq!(session.stats().plan_misses, 2);
}

#[test]
fn a_failed_run_leaves_the_session_usable() {
    let session = Session::new();
    let scratch = tempfile::tempdir().unwrap();
    let stack = problem();
    let expected = fresh(&stack, options(None));
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let failing = [
        budgets(device, host, scratch.path())
            .with_disk_fault("eio:2".parse::<srcflow::store::DiskFault>().unwrap()),
        budgets(1 << 22, PLENTY, scratch.path())
            .with_device(DeviceOptions::default().with_inject_oom(OomFault::new(1.0, 0).unwrap())),
        detected().with_device(
            DeviceOptions::default().with_inject_failure("0:3".parse::<DeviceFault>().unwrap()),
        ),
    ];
    for tiering in failing {
        let error = engine_on(&session, options(None), tiering).run(&stack);
        assert!(error.is_err(), "the injected fault fails the run");
        let engine = engine_on(&session, options(None), detected());
        assert_eq!(engine.run(&stack).unwrap().output, expected);
        common::assert_empty(scratch.path());
    }
    let failing = FailsAt {
        stack: &stack,
        site: 5,
    };
    let engine = engine_on(&session, options(None), detected());
    let sink = MemorySink::new(stack.shape().output_kind(), stack.shape().sites());
    let graph = engine.prepared(&stack.shape()).unwrap().graph;
    let error = engine.run_graph(&graph, &failing, &sink).unwrap_err();
    assert!(
        error.to_string().contains("site 5 is unreadable"),
        "{error}"
    );
    assert_eq!(engine.run(&stack).unwrap().output, expected);
}

/// Cores of a stack in memory, but for one site, whose reads fail (a bad file, a Python
/// array-like that raises).
struct FailsAt<'a> {
    stack: &'a Stack,
    site: usize,
}

impl CoreSource for FailsAt<'_> {
    fn read(&self, layer: usize, site: usize) -> srcflow::Result<AnyTensor> {
        if site == self.site {
            return Err(srcflow::Error::Invalid(format!(
                "site {site} is unreadable"
            )));
        }
        MemorySource::new(self.stack).read(layer, site)
    }
}

#[test]
fn a_cancelled_run_stops_and_the_next_one_runs() {
    let session = Session::new();
    let stack = problem();
    let cancel = CancelToken::new();
    cancel.cancel();
    let cancelled = EngineBuilder::new(options(None))
        .session(session.clone())
        .cancel(cancel)
        .build()
        .unwrap();
    let error = cancelled.run(&stack).unwrap_err();
    assert!(matches!(error, srcflow::Error::Interrupted), "{error}");
    let engine = engine_on(&session, options(None), Tiering::default());
    assert_eq!(
        engine.run(&stack).unwrap().output,
        fresh(&stack, options(None))
    );
}

#[test]
fn trim_forgets_plans_and_close_drops_backends() {
    let session = Session::new();
    let stack = problem();
    engine_on(&session, options(None), detected())
        .run(&stack)
        .unwrap();
    let held = session.stats();
    assert_eq!((held.backends, held.plans), (1, 1));
    session.trim();
    assert_eq!(session.stats().plans, 0);
    assert_eq!(session.stats().backends, 1);
    session.close();
    assert_eq!(
        session.stats(),
        SessionStats {
            plan_misses: 1,
            ..SessionStats::default()
        }
    );
    engine_on(&session, options(None), detected())
        .run(&stack)
        .unwrap();
    assert_eq!(
        session.stats().backends,
        1,
        "a closed session makes new backends"
    );
}

#[test]
fn a_watch_runs_on_the_calling_thread_and_can_cancel() {
    let session = Session::new();
    let spec = ProblemSpec {
        sites: 40,
        bond: 48,
        mpo_bond: 8,
        ..ProblemSpec::default()
    };
    let stack = generate(ProblemKind::Random, &spec).unwrap();
    let cancel = CancelToken::new();
    let engine = EngineBuilder::new(Options::new(48).with_threads(1))
        .session(session.clone())
        .cancel(cancel.clone())
        .build()
        .unwrap();
    let prepared = engine.prepared(&stack.shape()).unwrap();
    let sink = MemorySink::new(stack.shape().output_kind(), 40);
    let caller = std::thread::current().id();
    let mut watched = 0;
    let mut watch = || {
        assert_eq!(std::thread::current().id(), caller);
        watched += 1;
        cancel.cancel();
    };
    let source = MemorySource::new(&stack);
    let ran = engine.run_graph_watched(&prepared.graph, &source, &sink, &mut watch);
    assert!(watched > 0, "the run took more than one watch period");
    assert!(matches!(ran, Err(srcflow::Error::Interrupted)));
}

#[test]
fn a_session_keeps_at_most_plans_kept_plans() {
    let session = Session::new();
    let spec = ProblemSpec {
        sites: 4,
        bond: 8,
        mpo_bond: 2,
        ..ProblemSpec::default()
    };
    let stack = generate(ProblemKind::Random, &spec).unwrap();
    for chi in 1..=srcflow::engine::PLANS_KEPT + 3 {
        let engine = engine_on(&session, Options::new(chi), Tiering::default());
        engine.prepared(&stack.shape()).unwrap();
    }
    let stats = session.stats();
    assert_eq!(stats.plans, srcflow::engine::PLANS_KEPT);
    assert_eq!(stats.plan_misses as usize, srcflow::engine::PLANS_KEPT + 3);
    let newest = engine_on(
        &session,
        Options::new(srcflow::engine::PLANS_KEPT + 3),
        Tiering::default(),
    );
    newest.prepared(&stack.shape()).unwrap();
    assert_eq!(session.stats().plan_hits, 1, "the newest plan is kept");
    let oldest = engine_on(&session, Options::new(1), Tiering::default());
    oldest.prepared(&stack.shape()).unwrap();
    assert_eq!(session.stats().plan_hits, 1, "the oldest was forgotten");
}
