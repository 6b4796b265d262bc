//! What `srcflow run` prints on standard error: nothing off a terminal by default (no progress
//! bar in pipes or CI, no logs), and `tracing` logs at the level `RUST_LOG` asks for.

mod common;

use common::*;

/// Runs the test problem with `RUST_LOG` set to `filter` (unset for `None`); returns stderr.
fn run_logged(filter: Option<&str>, extra: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = problem_dir(tmp.path());
    let mut command = srcflow(&["run", &dir, "--chi-out", "32"]);
    command.arg("--out").arg(tmp.path().join("out")).args(extra);
    command.env_remove("RUST_LOG");
    if let Some(filter) = filter {
        command.env("RUST_LOG", filter);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    stderr(&output)
}

#[test]
fn a_run_in_a_pipe_prints_nothing_on_stderr() {
    let text = run_logged(None, &[]);
    assert!(text.is_empty(), "expected no progress bar or logs: {text}");
}

#[test]
fn rust_log_turns_on_the_logs_by_level() {
    let info = run_logged(Some("srcflow=info"), &["--device-memory", "4MiB"]);
    for expected in ["plan: environments per tier", "sweep starts", "sweep done"] {
        assert!(info.contains(expected), "'{expected}' missing: {info}");
    }
    assert!(
        !info.contains("memory governor"),
        "debug lines at info: {info}"
    );
    let debug = run_logged(
        Some("srcflow=debug"),
        &["--device-memory", "4MiB", "--fragment", "256KiB"],
    );
    assert!(debug.contains("half-batch rewrite"), "{debug}");
    assert!(!debug.contains('\u{1b}'), "no colour codes off a terminal");
}
