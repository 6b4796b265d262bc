//! What a user types for budgets and output paths: every output path is checked before any
//! work and named by its flag, `--out` never replaces anything while `--trace` and
//! `--graph-out` replace a file, budgets need a unit below a megabyte and cannot exceed the
//! machine, and the error of a budget too small names the budget the user set.

mod common;

use common::{problem_dir, srcflow, stderr};
use std::path::Path;

/// `srcflow run PROBLEM --chi-out 8 ARGS` in `dir`: its exit code and standard error.
fn run_in(dir: &Path, problem: &str, args: &[&str]) -> (Option<i32>, String) {
    let output = srcflow(&["run", problem, "--chi-out", "8"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (output.status.code(), stderr(&output))
}

/// The entries of `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_folder_given_as_an_output_file_is_refused_by_its_flag_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    std::fs::create_dir(tmp.path().join("folder")).unwrap();
    for (flag, role) in [("--trace", "trace"), ("--graph-out", "graph")] {
        let before = entries(tmp.path());
        let (code, err) = run_in(tmp.path(), &problem, &["--out", "out", flag, "folder"]);
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!("the {role} ({flag}) is a folder")),
            "{err}"
        );
        assert!(!err.contains("wall"), "refused before the run: {err}");
        assert_eq!(
            entries(tmp.path()),
            before,
            "nothing written or left behind"
        );
        let (_, err) = run_in(
            tmp.path(),
            &problem,
            &["--out", "out", flag, "no/such.json"],
        );
        assert!(
            err.contains(flag) && err.contains("does not exist"),
            "{err}"
        );
    }
}

#[test]
fn a_trace_file_is_replaced_and_an_output_folder_never_is() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    std::fs::write(tmp.path().join("run.json"), "an older trace").unwrap();
    let (code, err) = run_in(
        tmp.path(),
        &problem,
        &["--out", "out", "--trace", "run.json"],
    );
    assert_eq!(code, Some(0), "{err}");
    let trace = std::fs::read_to_string(tmp.path().join("run.json")).unwrap();
    assert!(trace.contains("traceEvents"), "the trace replaced the file");
    let (code, err) = run_in(
        tmp.path(),
        &problem,
        &["--out", "out", "--trace", "run.json"],
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("out") && err.contains("exists"), "{err}");
}

#[test]
fn a_budget_without_a_unit_below_a_megabyte_is_refused_and_one_letter_units_are_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let (code, err) = run_in(tmp.path(), &problem, &["--out", "o", "--host-memory", "60"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("'60' has no unit") && err.contains("60MB"),
        "{err}"
    );
    let (code, err) = run_in(
        tmp.path(),
        &problem,
        &["--out", "o", "--host-memory", "500M"],
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_host_budget_above_the_machine_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let (code, err) = run_in(
        tmp.path(),
        &problem,
        &["--out", "o", "--host-memory", "1PB"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--host-memory of 1.00 PB is more than this machine's memory"),
        "{err}"
    );
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn a_host_budget_too_small_is_named_when_the_device_budget_follows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let (code, err) = run_in(
        tmp.path(),
        &problem,
        &["--out", "o", "--host-memory", "20kB"],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("raise --host-memory"), "{err}");
    assert!(!err.contains("--device-memory"), "{err}");
    let given = [
        "--out",
        "o",
        "--host-memory",
        "1GB",
        "--device-memory",
        "20kB",
    ];
    let (_, err) = run_in(tmp.path(), &problem, &given);
    assert!(err.contains("raise --device-memory"), "{err}");
}

#[test]
fn fault_injection_flags_are_left_out_of_help_and_still_taken() {
    let hidden = [
        "--inject-oom",
        "--inject-device-failure",
        "--fragment",
        "--shrink-device",
        "--inject-disk-error",
        "--inject-kill",
    ];
    for command in ["run", "plan", "graph"] {
        let help = srcflow(&[command, "--help"]).output().unwrap();
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(
            text.contains("--recovery-budget"),
            "{command} --help: {text}"
        );
        for flag in hidden {
            assert!(!text.contains(flag), "{command} --help lists {flag}");
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let args = ["--out", "out", "--inject-device-failure", "0"];
    let (code, message) = run_in(tmp.path(), &problem, &args);
    assert_eq!(code, Some(1), "{message}");
    assert!(message.contains("device 0"), "{message}");
    assert!(
        !tmp.path().join("out").exists(),
        "a failed run writes nothing"
    );
}
