//! `srcflow run --backend cuda`: where no CUDA device is seen, a one-line error naming what is
//! missing and nothing written; on a GPU (an ignored test here: `tools/gpu_check.sh` runs it with
//! `--include-ignored`), the CPU's output to 1e-12 in complex128.

mod common;

use common::{problem_dir, srcflow, stderr};
use srcflow::backend::CudaBackend;
use std::path::Path;
use std::process::Command;

/// `srcflow run` of `problem` into `out` on `backend`.
fn run_on(backend: &str, problem: &str, out: &Path) -> std::process::Output {
    command_on(backend, problem, out).output().unwrap()
}

/// The command of [`run_on`].
fn command_on(backend: &str, problem: &str, out: &Path) -> Command {
    let out = out.to_str().unwrap();
    let args = [
        "run",
        problem,
        "--chi-out",
        "16",
        "--out",
        out,
        "--backend",
        backend,
    ];
    srcflow(&args)
}

#[test]
fn backend_cuda_where_no_device_is_seen_says_in_one_line_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let out = tmp.path().join("out");
    // No device is visible to the run, on this machine or on a GPU machine alike.
    let mut command = command_on("cuda", &problem, &out);
    let output = command.env("CUDA_VISIBLE_DEVICES", "").output().unwrap();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("CUDA"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
    assert!(!out.exists(), "a failed run must write nothing");
}

#[test]
#[ignore = "needs a CUDA device: tools/gpu_check.sh runs it with --include-ignored"]
fn backend_cuda_gives_the_cpu_output_on_a_gpu() {
    assert!(
        CudaBackend::device_count() > 0,
        "no CUDA device on this machine: this test needs one"
    );
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let on_gpu = tmp.path().join("on-gpu");
    let output = run_on("cuda", &problem, &on_gpu);
    assert!(output.status.success(), "{}", stderr(&output));
    let on_cpu = tmp.path().join("on-cpu");
    assert!(run_on("cpu", &problem, &on_cpu).status.success());
    let distance = srcflow(&[
        "distance",
        on_gpu.to_str().unwrap(),
        on_cpu.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&distance.stdout);
    let value: f64 = text.split_whitespace().last().unwrap().parse().unwrap();
    assert!(value < 1e-12, "GPU and CPU outputs {value} apart");
}

#[test]
fn auto_names_the_backend_it_used_in_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let out = tmp.path().join("out");
    let out_text = out.to_str().unwrap();
    let args = [
        "run",
        &problem,
        "--chi-out",
        "16",
        "--out",
        out_text,
        "--backend",
        "auto",
        "--json",
    ];
    let output = srcflow(&args).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let expected = if CudaBackend::device_count() > 0 {
        "cuda"
    } else {
        "cpu"
    };
    assert_eq!(report["backend"], expected);
}
