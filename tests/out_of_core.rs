//! Out-of-core runs: wherever the planner puts the environments (device, host, disk), the
//! result is the same, and the scratch directory is empty afterwards — after success, after a
//! failed write and after a full disk.

mod common;

use common::*;
use srcflow::engine::Tiering;
use srcflow::ops::distance;
use srcflow::sched::Prefetch;
use srcflow::store::DiskRates;
use srcflow::{Bandwidth, Tier};
use srcflow::{Engine, Options, Train};

fn assert_same(out: &Train, reference: &Train, what: &str) {
    let d = distance(out, reference).unwrap();
    assert!(
        d <= 1e-12,
        "{what}: distance {d:e} to the all-in-memory result"
    );
}

/// An engine with a device budget of `device` bytes and the prefetch `policy`, scratch under
/// `scratch`.
fn with_policy(device: u64, policy: &str, scratch: &std::path::Path) -> Engine {
    let tiering =
        Tiering::default().with_prefetch(std::sync::Arc::new(policy.parse::<Prefetch>().unwrap()));
    engine_with(device, PLENTY, scratch, None, tiering)
}

#[test]
fn results_do_not_depend_on_where_environments_live() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let reference = Engine::new(Options::new(CHI_OUT))
        .unwrap()
        .run(&stack)
        .unwrap()
        .output;

    let device_only = engine(PLENTY, PLENTY, scratch.path(), None);
    assert_eq!(
        plan_of(&device_only, &stack.shape()).count_on(Tier::Device),
        31
    );
    assert_same(
        &device_only.run(&stack).unwrap().output,
        &reference,
        "device only",
    );

    let device = device_budget_with_host_tier(&stack, scratch.path(), None);
    let with_host = engine(device, PLENTY, scratch.path(), None);
    let plan = plan_of(&with_host, &stack.shape());
    assert!(plan.count_on(Tier::Host) >= 1 && plan.count_on(Tier::Disk) == 0);
    let srcflow::engine::Run {
        output: out,
        report,
        ..
    } = with_host.run(&stack).unwrap();
    assert_same(&out, &reference, "device + host");
    assert_eq!(
        report.environments.get("host"),
        Some(&plan.count_on(Tier::Host))
    );

    for batch in [None, Some(7)] {
        let (device, host) = budgets_for_every_tier(&stack, scratch.path(), batch);
        let everywhere = engine(device, host, scratch.path(), batch);
        let plan = plan_of(&everywhere, &stack.shape());
        let srcflow::engine::Run {
            output: out,
            report,
            ..
        } = everywhere.run(&stack).unwrap();
        assert_same(
            &out,
            &reference,
            &format!("device + host + disk, batch {batch:?}"),
        );
        assert_eq!(
            report.environments.get("disk"),
            Some(&plan.count_on(Tier::Disk))
        );
        assert!(report.peak_bytes.disk > 0, "environments went to disk");
        assert_empty(scratch.path());
    }
}

#[test]
fn every_prefetch_policy_gives_the_same_result_on_a_slow_disk() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let batch = Some(8);
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), batch);
    let mut outputs = Vec::new();
    for policy in [
        "none",
        "lookahead:1",
        "lookahead:3",
        "bandwidth",
        "bandwidth:1",
    ] {
        let tiering = Tiering::default()
            .with_prefetch(std::sync::Arc::new(policy.parse::<Prefetch>().unwrap()))
            .with_disk_rates(DiskRates::both(Bandwidth(10e6)));
        let engine = engine_with(device, host, scratch.path(), batch, tiering);
        outputs.push(engine.run(&stack).unwrap().output);
        assert_empty(scratch.path());
    }
    for out in &outputs[1..] {
        assert_eq!(out.cores(), outputs[0].cores(), "bitwise the same output");
    }
}

#[test]
fn a_read_cap_paces_reads_and_leaves_writes_alone() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let cap = 4e6;
    let tiering = Tiering::default().with_disk_rates("read=4MB/s".parse::<DiskRates>().unwrap());
    let engine = engine_with(device, host, scratch.path(), None, tiering);
    let report = engine.run(&stack).unwrap().report;
    let rate = |lane: &str| {
        let uses = report.lanes.iter().filter(|u| u.lane == lane);
        let (bytes, busy) = uses.fold((0, 0.0), |(b, t), u| (b + u.bytes, t + u.busy_s));
        assert!(bytes > 0, "{lane} moved nothing");
        bytes as f64 / busy
    };
    assert!(
        rate("disk-read") <= cap * 1.02,
        "reads at {}",
        rate("disk-read")
    );
    assert!(
        rate("disk-write") > 2.0 * cap,
        "writes at {}",
        rate("disk-write")
    );
    assert_empty(scratch.path());
}

#[test]
fn a_failed_or_full_disk_names_the_file_and_leaves_no_scratch() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    for (fault, message) in [("eio:2", "Input/output error"), ("enospc", "No space left")] {
        let tiering =
            Tiering::default().with_disk_fault(fault.parse::<srcflow::store::DiskFault>().unwrap());
        let engine = engine_with(device, host, scratch.path(), None, tiering);
        let err = engine.run(&stack).unwrap_err().to_string();
        assert!(
            err.contains(message) && err.contains(".bin"),
            "{fault}: {err}"
        );
        assert!(
            err.contains("srcflow-scratch-"),
            "names the scratch file: {err}"
        );
        assert_empty(scratch.path());
    }
}

#[test]
fn a_problem_that_cannot_fit_is_refused_before_it_starts() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let engine = engine(PLENTY, 1 << 20, scratch.path(), None);
    let refusal = engine.prepare(&stack.shape()).unwrap_err();
    match &refusal {
        srcflow::Error::DoesNotFit {
            needed,
            budget,
            setting,
            ..
        } => {
            assert_eq!(*budget, srcflow::ByteSize(1 << 20), "{refusal}");
            assert!(needed > budget, "{refusal}");
            assert_eq!(*setting, "`Budgets::host`", "{refusal}");
        }
        other => panic!("not a refusal to fit: {other:?}"),
    }
    let err = refusal.to_string();
    assert!(
        err.contains("at site") && err.contains("more than the budget"),
        "{err}"
    );
    assert!(
        err.contains("`Budgets::host`"),
        "says what to change: {err}"
    );
    assert_empty(scratch.path());
}

#[test]
fn the_default_policy_narrows_its_window_to_fit_a_tight_device() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let with = |device, policy: &str| with_policy(device, policy, scratch.path());
    // The device budget shrinks until a two-step window no longer fits; fetching on demand
    // must still fit it.
    let mut device = device_budget_with_host_tier(&stack, scratch.path(), None);
    let step = largest_env(&plan_of(&with(device, "none"), &stack.shape())) / 8;
    while with(device, "lookahead:2").prepare(&stack.shape()).is_ok() {
        device -= step;
    }
    assert!(with(device, "none").prepare(&stack.shape()).is_ok());
    let default = with(device, "bandwidth:2");
    let plan = plan_of(&default, &stack.shape());
    assert!(plan.fetch_window < 2, "window {}", plan.fetch_window);
    assert!(plan.count_on(Tier::Host) > 0);
    let reference = Engine::new(Options::new(CHI_OUT))
        .unwrap()
        .run(&stack)
        .unwrap()
        .output;
    assert_same(
        &default.run(&stack).unwrap().output,
        &reference,
        "narrowed window",
    );
}

#[test]
fn a_lookahead_that_does_not_fit_names_the_narrower_window_that_does() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let with = |device, policy: &str| with_policy(device, policy, scratch.path());
    let mut device = device_budget_with_host_tier(&stack, scratch.path(), None);
    let step = largest_env(&plan_of(&with(device, "none"), &stack.shape())) / 8;
    while with(device, "lookahead:3").prepare(&stack.shape()).is_ok() {
        device -= step;
    }
    let refusal = with(device, "lookahead:3")
        .prepare(&stack.shape())
        .unwrap_err()
        .to_string();
    let hint = refusal
        .split("fewer steps ahead: `Tiering::prefetch` ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" fits"))
        .unwrap_or_else(|| panic!("no narrower window named: {refusal}"));
    assert_ne!(hint, "lookahead:3");
    assert!(
        with(device, hint).prepare(&stack.shape()).is_ok(),
        "{refusal}"
    );
    let hopeless = with(1, "lookahead:3").prepare(&stack.shape()).unwrap_err();
    assert!(
        !hopeless.to_string().contains("fewer steps ahead"),
        "no window fits one byte: {hopeless}"
    );
}

/// Remembers the bytes written to disk that the last finished task reported.
#[derive(Default)]
struct LastWritten(std::sync::atomic::AtomicU64);

impl srcflow::sched::Progress for LastWritten {
    fn task_done(
        &self,
        _: &srcflow::graph::Task,
        _: srcflow::graph::Pass,
        _: usize,
        _: usize,
        written: u64,
    ) {
        self.0.store(written, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn the_progress_and_the_report_give_one_number_for_the_bytes_written_to_disk() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let heard = std::sync::Arc::new(LastWritten::default());
    let run = builder_for(
        options(None),
        device,
        host,
        scratch.path(),
        Tiering::default(),
    )
    .progress(heard.clone())
    .build()
    .unwrap()
    .run(&stack)
    .unwrap();
    let written = run.report.written_to_disk_bytes;
    assert!(written > 0, "the run wrote to disk");
    assert_eq!(heard.0.load(std::sync::atomic::Ordering::SeqCst), written);
    assert!(run
        .report
        .to_string()
        .contains(&format!("({} written to disk)", srcflow::ByteSize(written))));
}
