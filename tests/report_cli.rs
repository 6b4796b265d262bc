//! The report speaks the user's language: the summary by default, the engine's internals under
//! `--verbose`, and the default run's norm, error ratio and oversampling hint.

mod common;

use common::{srcflow, stderr};

/// Standard output of `srcflow ARGS`, which must succeed.
fn stdout_of(args: &[&str]) -> String {
    let output = srcflow(args).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The number printed after `label` in `text`.
fn number_after(text: &str, label: &str) -> f64 {
    let line = text.lines().find(|l| l.starts_with(label)).expect(label);
    let value = line[label.len()..]
        .split_whitespace()
        .next()
        .expect("a number");
    value
        .parse()
        .unwrap_or_else(|_| panic!("{value:?} in {line:?}"))
}

#[test]
fn the_default_run_reports_the_norm_the_ratio_and_what_oversampling_gives() {
    let text = stdout_of(&[]);
    for part in [
        "norm of the product",
        "errors below are relative to it",
        "relative distance to the exact product",
        "ratio",
        "hint: the error is",
        "--oversample 1.5",
    ] {
        assert!(text.contains(part), "{part:?} missing: {text}");
    }
    assert!(
        !text.contains("engine internals") && !text.contains("stalls"),
        "{text}"
    );
    let error = number_after(&text, "relative distance to the exact product");
    let optimum = number_after(&text, "truncated-SVD relative error (optimum)");
    assert!(
        0.0 < optimum && optimum <= error && error < 1.0,
        "relative errors {error:e} (run) and {optimum:e} (optimum): {text}"
    );
    let verbose = stdout_of(&["--verbose"]);
    assert!(
        verbose.contains("engine internals") && verbose.contains("stalls →"),
        "{verbose}"
    );
}

#[test]
fn a_run_prints_the_internals_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let problem = common::problem_dir(dir.path());
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let plain = stdout_of(&["run", &problem, "--chi-out", "8", "--out", &out("a")]);
    assert!(
        plain.contains("wall") && !plain.contains("stalls"),
        "{plain}"
    );
    let verbose = stdout_of(&["run", &problem, "--chi-out", "8", "--out", &out("b"), "-v"]);
    assert!(
        verbose.contains("engine internals") && verbose.contains("environments"),
        "{verbose}"
    );
}
