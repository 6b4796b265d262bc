//! The memory governor on the command line: fault options, the rewrite in the graph dump, the
//! trace and the report, and a failure that leaves nothing behind.

mod common;

use common::*;
use srcflow::SweepGraph;

#[test]
fn a_fragmented_run_shows_its_rewrites_in_the_graph_dump_the_trace_and_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let (out, graph, trace) = (
        tmp.path().join("out"),
        tmp.path().join("graph.json"),
        tmp.path().join("trace.json"),
    );
    let chi = CHI_OUT.to_string();
    let output = srcflow(&["run", &problem, "--chi-out", &chi, "--json"])
        .args(["--device-memory", "4MiB", "--fragment", "256KiB"])
        .arg("--out")
        .arg(&out)
        .arg("--graph-out")
        .arg(&graph)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rewrites = report["memory"]["rewrites"].as_u64().unwrap();
    assert!(rewrites > 0, "{}", report["memory"]);

    let dumped = SweepGraph::from_json(&std::fs::read_to_string(&graph).unwrap(), &graph).unwrap();
    let halves = dumped.tasks().filter(|t| t.within.is_some()).count();
    assert!(
        halves as u64 > rewrites,
        "every rewrite leaves two half-batch nodes"
    );

    let parts =
        check_trace(&serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap());
    let named = |name: &str| parts.instants.iter().filter(|e| e["name"] == name).count();
    assert_eq!(named("half-batch rewrite") as u64, rewrites);
    assert!(named("admission refused") > 0);
    assert!(parts
        .slice_events
        .iter()
        .any(|e| e["args"]["half-batch of"].is_string()));
    assert!(parts
        .counters
        .get("reserved bytes")
        .is_some_and(|&b| b > 0.0));
}

#[test]
fn a_device_too_fragmented_for_one_column_fails_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let (out, trace) = (tmp.path().join("out"), tmp.path().join("trace.json"));
    let output = srcflow(&["run", &problem, "--chi-out", "32"])
        .args(["--device-memory", "4MiB", "--fragment", "16KiB"])
        .arg("--scratch-dir")
        .arg(&scratch)
        .arg("--out")
        .arg(&out)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("out of device memory") && message.contains("site"),
        "{message}"
    );
    assert!(!message.contains("panicked"), "{message}");
    assert!(!out.exists() && !trace.exists());
    assert_empty(&scratch);
}

#[test]
fn unreadable_fault_options_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let out = tmp.path().join("out");
    for (flag, value, expected) in [
        ("--inject-oom", "1.5", "between 0 and 1"),
        ("--inject-oom", "0.1:x", "RATE[:SEED]"),
        ("--shrink-device", "4MiB", "SIZE@STEP"),
        ("--fragment", "lots", "lots"),
        ("--recovery-budget", "2", "--recovery-budget"),
    ] {
        let output = srcflow(&["run", &problem, "--chi-out", "8", flag, value])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(!output.status.success());
        let message = stderr(&output);
        assert!(message.contains(expected), "{flag} {value}: {message}");
        assert!(!out.exists());
    }
}
