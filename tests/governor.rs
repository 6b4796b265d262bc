//! The memory governor: injected allocation failures, a fragmented device and a device that
//! shrinks mid-run all end with the fault-free result (bitwise where only half-batch rewrites
//! ran and no slice is narrower than two columns; to round-off where a fold was undone) and an
//! empty scratch directory; what cannot fit is a clear error.

mod common;

use common::*;
use srcflow::device::{CapacitySchedule, DeviceOptions};
use srcflow::engine::Tiering;
use srcflow::ops::distance;
use srcflow::{Engine, Error, Report, Stack, Train};
use std::path::Path;

const MIB: u64 = 1 << 20;

/// An engine with `device` and `host` budgets whose device has the faults in `device_options`.
fn faulty(device: u64, host: u64, scratch: &Path, device_options: DeviceOptions) -> Engine {
    let tiering = Tiering::default().with_device(device_options);
    engine_with(device, host, scratch, None, tiering)
}

fn run(engine: &Engine, stack: &Stack) -> (Train, Report) {
    let run = engine.run(stack).unwrap();
    (run.output, run.report)
}

#[test]
fn injected_failures_leave_the_result_and_the_scratch_as_they_were() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let (reference, _) = run(&engine(device, host, scratch.path(), None), &stack);
    let mut failures = 0;
    for (rate, seed) in [
        (0.05, 1),
        (0.1, 2),
        (0.2, 3),
        (0.15, 4),
        (0.2, 5),
        (0.08, 6),
    ] {
        let options = DeviceOptions::default()
            .with_inject_oom(srcflow::device::OomFault::new(rate, seed).unwrap());
        let (out, report) = run(&faulty(device, host, scratch.path(), options), &stack);
        let d = distance(&out, &reference).unwrap();
        assert!(d <= 1e-12, "rate {rate} seed {seed}: distance {d:e}");
        assert_empty(scratch.path());
        let memory = &report.memory;
        assert_eq!(memory.injected, memory.out_of_memory, "nothing else failed");
        assert!(memory.rewrites + memory.retries >= memory.out_of_memory);
        failures += memory.injected;
    }
    assert!(
        failures >= 6,
        "only {failures} injected failures in six runs"
    );
}

#[test]
fn a_fragmented_device_completes_through_rewrites_with_the_same_bits() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let fragmented = DeviceOptions::default().with_fragment(MIB / 4);
    // Half-batch rewrites keep the bits; unfolding a site (its W does not fit a piece of the
    // fragmented device) sums in another order, so it is compared to round-off.
    for fold in [false, true] {
        let mut options = options(None);
        options.graph.fold = fold;
        let engine = |device: DeviceOptions| {
            let tiering = Tiering::default().with_device(device);
            engine_for(options, 4 * MIB, PLENTY, scratch.path(), tiering)
        };
        let (reference, plain) = run(&engine(DeviceOptions::default()), &stack);
        assert!(plain.memory.is_quiet());
        let (out, report) = run(&engine(fragmented.clone()), &stack);
        let memory = &report.memory;
        assert!(memory.refusals > 0 && memory.rewrites > 0, "{memory}");
        assert_eq!(memory.out_of_memory, 0, "admission saw it coming: {memory}");
        assert!(
            memory.finest_batch.values().all(|&cols| cols >= 2),
            "{memory}"
        );
        if fold {
            let unfolded = memory.events.iter().filter(|e| e.task.starts_with("fold("));
            assert!(unfolded.count() > 0, "some fold did not fit: {memory}");
            let d = distance(&out, &reference).unwrap();
            assert!(d <= 1e-12, "unfolded sites: distance {d:e}");
        } else {
            assert!(
                out.cores() == reference.cores(),
                "slices of 2 or more columns sum in the same order as the whole batch"
            );
        }
    }
}

/// Two devices under each fault in turn (injected allocation failures, fragmentation, a
/// capacity that shrinks mid-run), with and without a cutoff's rounding sweep: the fault-free
/// result to round-off, with the same bonds, and an empty scratch folder.
#[test]
fn two_devices_with_faults_and_a_cutoff_end_with_the_fault_free_result() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    for cutoff in [0.0, 1e-3] {
        let mut options = options(None);
        options.graph.devices = 2;
        options.graph.cutoff = cutoff;
        options.threads = 2;
        let engine = |device: DeviceOptions| {
            let tiering = Tiering::default().with_device(device);
            engine_for(options, 4 * MIB, PLENTY, scratch.path(), tiering)
        };
        let (reference, _) = run(&engine(DeviceOptions::default()), &stack);
        let faults = [
            (
                "injected",
                DeviceOptions::default()
                    .with_inject_oom(srcflow::device::OomFault::new(0.15, 3).unwrap()),
            ),
            (
                "fragmented",
                DeviceOptions::default().with_fragment(MIB / 4),
            ),
            (
                "shrinking",
                DeviceOptions::default()
                    .with_capacity_schedule("1280KiB@10".parse::<CapacitySchedule>().unwrap()),
            ),
        ];
        for (what, faults) in faults {
            let (out, report) = run(&engine(faults), &stack);
            let memory = &report.memory;
            let what = format!("{what}, cutoff {cutoff}");
            assert!(
                memory.out_of_memory + memory.refusals > 0,
                "{what}: no fault bit: {memory}"
            );
            assert_eq!(out.bonds(), reference.bonds(), "{what}");
            let d = distance(&out, &reference).unwrap();
            assert!(d <= 1e-12, "{what}: distance {d:e}");
            assert_empty(scratch.path());
        }
    }
}

#[test]
fn a_device_that_shrinks_mid_run_completes_with_smaller_batches() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let device = device_budget_with_host_tier(&stack, scratch.path(), None) / 2;
    let (reference, _) = run(&engine(device, PLENTY, scratch.path(), None), &stack);
    let shrunk = device * 8 / 10;
    let options = DeviceOptions::default()
        .with_capacity_schedule(format!("{shrunk}B@10").parse::<CapacitySchedule>().unwrap());
    let (out, report) = run(&faulty(device, PLENTY, scratch.path(), options), &stack);
    assert!(report.memory.rewrites > 0, "{}", report.memory);
    let d = distance(&out, &reference).unwrap();
    assert!(d <= 1e-12, "distance {d:e}");
}

#[test]
fn a_task_that_cannot_fit_even_one_column_is_a_clear_error() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier(&stack, scratch.path(), None);
    let options = DeviceOptions::default().with_fragment(16 << 10);
    let err = faulty(device.max(4 * MIB), host, scratch.path(), options)
        .run(&stack)
        .unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    let message = err.to_string();
    for part in [
        "out of device memory",
        "site",
        "kernel",
        "needs",
        "free",
        "capacity",
    ] {
        assert!(message.contains(part), "'{part}' missing from: {message}");
    }
    assert_empty(scratch.path());
}

#[test]
fn failing_every_allocation_stops_at_the_watchdog() {
    let stack = problem();
    let scratch = tempfile::tempdir().unwrap();
    let options =
        DeviceOptions::default().with_inject_oom(srcflow::device::OomFault::new(1.0, 0).unwrap());
    let err = faulty(4 * MIB, PLENTY, scratch.path(), options)
        .run(&stack)
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("watchdog"), "{message}");
    assert!(message.contains("injected"), "{message}");
    assert_empty(scratch.path());
}
