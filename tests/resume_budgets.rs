//! A checkpoint resumes under another host budget (a Slurm requeue lands on a node with other
//! memory, and the default budget follows `MemAvailable`): the resume plans with the
//! checkpoint's batch of sketch columns where it fits, re-planning only the spills, and gives
//! the uninterrupted run's output bitwise; where that batch does not fit, it is refused naming
//! the budget, the batch and what to do.

mod common;

use common::{srcflow, stderr};
use std::path::Path;
use std::process::Output;

/// `srcflow plan` of `problem` at χ̄ 128 under `host` bytes with `extra` flags: the batch of
/// sketch columns it plans, or `None` when the problem does not fit.
fn planned_batch(problem: &str, scratch: &Path, host: u64, extra: &[&str]) -> Option<usize> {
    let host = format!("{host}B");
    let mut args = vec!["plan", problem, "--chi-out", "128", "--host-memory", &host];
    args.extend(["--scratch-dir", scratch.to_str().unwrap()]);
    args.extend(extra);
    let said = String::from_utf8_lossy(&srcflow(&args).output().unwrap().stdout).into_owned();
    let line = said.lines().find(|line| line.starts_with("batch"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Host budgets from 30 MB up in steps of 1 MB, with the batch each plans (none: no fit).
fn batches(problem: &str, scratch: &Path) -> Vec<(u64, Option<usize>)> {
    (30..90)
        .map(|mb| mb * 1_000_000)
        .map(|host| (host, planned_batch(problem, scratch, host, &[])))
        .collect()
}

/// `srcflow run` of `problem` into `out` under `host` bytes, with `extra` flags.
fn run(problem: &str, dir: &Path, out: &str, host: u64, extra: &[&str]) -> Output {
    let (out, scratch, host) = (dir.join(out), dir.join("scratch"), format!("{host}B"));
    let mut args = vec!["run", problem, "--chi-out", "128", "--seed", "3"];
    args.extend(["--host-memory", &host, "--out", out.to_str().unwrap()]);
    args.extend(["--scratch-dir", scratch.to_str().unwrap()]);
    args.extend(extra);
    srcflow(&args).output().unwrap()
}

/// The bytes of every file of the output folder `out`.
fn output_of(out: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<_> = std::fs::read_dir(out.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

#[test]
fn a_checkpoint_resumes_bitwise_under_a_smaller_budget_or_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let problem = tmp.path().join("problem");
    let spec = srcflow::gen::ProblemSpec {
        sites: 24,
        bond: 128,
        mpo_bond: 8,
        ..Default::default()
    };
    let stack = srcflow::gen::generate(srcflow::gen::ProblemKind::Random, &spec).unwrap();
    srcflow::io::write_stack(&problem, &stack).unwrap();
    let problem = problem.to_str().unwrap();
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let planned = batches(problem, &scratch);
    let fits: Vec<(u64, usize)> = planned.iter().filter_map(|&(h, b)| Some((h, b?))).collect();
    let &(large, batch) = fits.last().expect("a budget fits");
    let forced = batch.to_string();
    let smaller = fits
        .iter()
        .find(|&&(host, b)| {
            b < batch
                && planned_batch(problem, &scratch, host, &["--batch-cols", &forced]).is_some()
        })
        .map(|&(host, _)| host)
        .expect("a smaller budget plans a narrower batch but fits the wider one");
    let too_small = fits
        .iter()
        .find(|&&(host, _)| {
            planned_batch(problem, &scratch, host, &["--batch-cols", &forced]).is_none()
        })
        .map(|&(host, _)| host)
        .expect("a budget fits a narrower batch only");
    let plain = run(problem, tmp.path(), "reference", large, &[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let checkpoint = tmp.path().join("checkpoint");
    let with = ["--checkpoint", checkpoint.to_str().unwrap()];
    for (resumed_at, succeeds) in [(smaller, true), (too_small, false)] {
        let kill = [&with[..], &["--inject-kill", "project:10"]].concat();
        let killed = run(problem, tmp.path(), "out", large, &kill);
        assert!(!killed.status.success(), "the run was to be killed");
        let resumed = run(problem, tmp.path(), "out", resumed_at, &with);
        let said = stderr(&resumed);
        if succeeds {
            assert!(resumed.status.success(), "{said}");
            let report = String::from_utf8_lossy(&resumed.stdout);
            assert!(report.contains("resumed        skipped"), "{report}");
            let out = tmp.path().join("out");
            assert!(
                output_of(&out) == output_of(&tmp.path().join("reference")),
                "the output differs"
            );
            std::fs::remove_dir_all(out).unwrap();
        } else {
            assert!(!resumed.status.success());
            let batch_said = format!("made with {batch} sketch columns per task (--batch-cols)");
            assert!(
                said.contains(&batch_said) && said.contains("--host-memory"),
                "{said}"
            );
            assert!(
                checkpoint.join("identity.json").exists(),
                "the checkpoint is kept"
            );
        }
    }
}
