//! `srcflow run --backend cuda`: on a machine without a CUDA device, a one-line error naming
//! what is missing and nothing written; with one, the CPU's output to 1e-12 in complex128.

mod common;

use common::{problem_dir, srcflow, stderr};
use srcflow::backend::CudaBackend;
use std::path::Path;

/// `srcflow run` of `problem` into `out` on `backend`.
fn run_on(backend: &str, problem: &str, out: &Path) -> std::process::Output {
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
    srcflow(&args).output().unwrap()
}

#[test]
fn backend_cuda_runs_on_a_gpu_or_says_in_one_line_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = problem_dir(tmp.path());
    let on_gpu = tmp.path().join("on-gpu");
    let output = run_on("cuda", &problem, &on_gpu);
    if CudaBackend::device_count() == 0 {
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.contains("CUDA"), "{message}");
        assert!(!message.contains("panicked"), "{message}");
        assert!(!on_gpu.exists(), "a failed run must write nothing");
        eprintln!("backend cuda: not run (no CUDA device on this machine)");
        return;
    }
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
