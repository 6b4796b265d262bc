//! Disk lanes with depth: requests in flight per transfer (`--io-depth`), direct I/O
//! (`--direct-io`) and an emulated parallel filesystem (`--disk-emulate`), on `run`,
//! `simulate` and `calibrate`.

mod common;

use common::*;
use std::path::Path;
use std::process::Output;

/// Budgets that put eight environments of 2 MB slices on disk (sites 0 to 7 of 24, the
/// last two full size), on `p4`'s problem.
const BUDGETS: [&str; 4] = ["--host-memory", "80MB", "--device-memory", "40MB"];

/// A filesystem whose one request moves 20 MB/s, and five together 100 MB/s.
const EMULATED: &str = "2ms,20MB/s,100MB/s";

/// A random MPO·MPS of 24 sites, bond 64, MPO bond 16, written under `dir`.
fn problem_in(dir: &Path) -> String {
    let path = dir.join("problem");
    let made = srcflow(&[
        "gen",
        "random",
        "--sites",
        "24",
        "--bond",
        "64",
        "--mpo-bond",
        "16",
    ])
    .arg(&path)
    .output()
    .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    path.to_str().unwrap().into()
}

/// `srcflow run` of `problem` at χ̄ 256 on the budgets, with `extra` flags, into `out`.
fn run(problem: &str, out: &Path, extra: &[&str]) -> Output {
    srcflow(&["run", problem, "--chi-out", "256", "--json"])
        .args(BUDGETS)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// Bytes per second of the disk-read lane in a `--json` report.
fn disk_read_rate(output: &Output) -> f64 {
    assert!(output.status.success(), "{}", stderr(output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let lanes = report["lanes"].as_array().unwrap();
    let read = lanes.iter().find(|l| l["lane"] == "disk-read");
    read.expect("environments went to disk")["bytes_per_s"]
        .as_f64()
        .unwrap()
}

#[test]
fn depth_buys_an_emulated_parallel_filesystem_more_than_one_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_in(tmp.path());
    let (one, deep) = (tmp.path().join("one"), tmp.path().join("deep"));
    let emulate = ["--disk-emulate", EMULATED];
    let at_one = run(
        &problem,
        &one,
        &[&emulate[..], &["--io-depth", "1"]].concat(),
    );
    let at_default = run(&problem, &deep, &emulate);
    // One request in flight never moves more than one stream; the default depth's several
    // move more (about 30 MB/s here: files of 2 MB are three requests of 1 MB).
    let (one_rate, deep_rate) = (disk_read_rate(&at_one), disk_read_rate(&at_default));
    assert!(one_rate <= 20e6, "depth 1 read at {one_rate} B/s");
    assert!(
        deep_rate > 24e6,
        "the default depth read at {deep_rate} B/s"
    );
    let same = std::process::Command::new("diff")
        .args(["-r", one.to_str().unwrap(), deep.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(
        same.success(),
        "the depth changes how bytes move, not what they are"
    );
}

#[test]
fn direct_io_never_and_always_give_the_same_output() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_in(tmp.path());
    let outs: Vec<_> = ["--no-direct-io", "--direct-io"]
        .iter()
        .map(|when| {
            let out = tmp.path().join(when.trim_start_matches('-'));
            let ran = run(&problem, &out, &[when, "--io-depth", "3"]);
            assert!(ran.status.success(), "{when}: {}", stderr(&ran));
            out
        })
        .collect();
    let same = std::process::Command::new("diff")
        .arg("-r")
        .args(&outs)
        .status()
        .unwrap();
    assert!(same.success());
}

#[test]
fn bad_disk_choices_are_refused_by_flag_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_in(tmp.path());
    let out = tmp.path().join("out");
    for (flags, culprit) in [
        (&["--io-depth", "0"][..], "--io-depth"),
        (&["--io-depth", "65"], "--io-depth"),
        (&["--disk-emulate", "20ms,10MiB/s"], "LAT,STREAM,TOTAL"),
        (&["--disk-emulate", "20ms,10MiB/s,1kB/s"], "total bandwidth"),
        (&["--direct-io", "--no-direct-io"], "cannot be used with"),
    ] {
        let refused = run(&problem, &out, flags);
        let message = stderr(&refused);
        assert!(!refused.status.success(), "{flags:?} ran");
        assert!(message.contains(culprit), "{flags:?}: {message}");
        assert!(!out.exists(), "{flags:?} left an output");
    }
}

#[test]
fn calibrate_measures_an_emulated_filesystem_and_simulate_times_it() {
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model.json");
    let calibrated = srcflow(&[
        "calibrate",
        "--disk-only",
        "--disk-emulate",
        "2ms,50MB/s,200MB/s",
    ])
    .arg("--model")
    .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs/dev-vm-2-core-xeon.json"))
    .arg("--scratch-dir")
    .arg(tmp.path())
    .arg("--out")
    .arg(&model)
    .output()
    .unwrap();
    assert!(calibrated.status.success(), "{}", stderr(&calibrated));
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&model).unwrap()).unwrap();
    let disk = &written["disk_requests"];
    let near = |found: f64, wanted: f64| (found / wanted - 1.0).abs() < 0.25;
    assert!(near(disk["latency_s"].as_f64().unwrap(), 2e-3), "{disk}");
    assert!(
        near(disk["stream_bytes_per_s"].as_f64().unwrap(), 50e6),
        "{disk}"
    );
    assert!(
        near(disk["total_bytes_per_s"].as_f64().unwrap(), 200e6),
        "{disk}"
    );
    // The compute models are kept, and nothing is left in the scratch folder.
    assert!(written["compute"].as_array().is_some_and(|c| !c.is_empty()));
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the model: {left:?}");
    // The simulator times disk reads by those requests: one stream at depth 1.
    let problem = problem_in(tmp.path());
    let simulated = |depth: &str| {
        let output = srcflow(&["simulate", &problem, "--chi-out", "256", "--json"])
            .args(BUDGETS)
            .args(["--io-depth", depth, "--model"])
            .arg(&model)
            .output()
            .unwrap();
        disk_read_rate(&output)
    };
    let (one, deep) = (simulated("1"), simulated("8"));
    assert!(one <= 50e6 && deep > 1.2 * one, "{one} {deep}");
}

#[test]
fn a_scratch_folder_too_small_for_the_spill_is_refused_by_name_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_in(tmp.path());
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let out = tmp.path().join("out");
    let refused = srcflow(&["run", &problem, "--chi-out", "256", "--disk-space", "5MB"])
        .args(BUDGETS)
        .arg("--scratch-dir")
        .arg(&scratch)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let message = stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{message}");
    let named = format!("scratch disk under {}", scratch.display());
    assert!(
        message.contains(&named) && message.contains("--disk-space"),
        "{message}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
}
