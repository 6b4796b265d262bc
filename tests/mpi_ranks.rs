//! `srcflow run` under `mpirun -np 2` and `-np 3` on this machine (a build with
//! `--features mpi`; tools/mpi_tests.sh installs MPI and runs these): the same output as one
//! process with the same devices on MPO·MPS, MPO·MPO and a depth-2 stack, in memory, out of
//! core and with injected out-of-memory faults; a failing rank fails every rank within 30 s and
//! leaves no output, no trace and no scratch; a traced run writes one trace of every rank.
#![cfg(feature = "mpi")]

mod common;

use common::{assert_empty, budgets_for_every_tier_of, srcflow, stderr};
use srcflow::gen::{random_mpo, random_mps};
use srcflow::graph::GraphOptions;
use srcflow::io::{write_stack, ProblemDir};
use srcflow::ops::distance;
use srcflow::{Layer, Options, Stack, Train};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Devices every run shares its sweep between (one or more per rank).
const DEVICES: usize = 3;

fn layer(name: &str, train: Train) -> Layer {
    Layer {
        name: name.into(),
        train,
    }
}

/// The three stacks: MPO·MPS (the shared test problem), MPO·MPO, and MPO·MPO·MPS.
fn stacks() -> Vec<(&'static str, Stack)> {
    let mpo_mpo = Stack::new(vec![
        layer("A", random_mpo(16, 2, 2, 12, 0.4, 21)),
        layer("B", random_mpo(16, 2, 2, 16, 0.4, 22)),
    ]);
    let depth_two = Stack::new(vec![
        layer("H1", random_mpo(16, 2, 2, 3, 0.4, 31)),
        layer("H2", random_mpo(16, 2, 2, 3, 0.4, 32)),
        layer("psi", random_mps(16, 2, 32, 0.4, 33)),
    ]);
    vec![
        ("mpo-mps", common::problem()),
        ("mpo-mpo", mpo_mpo.unwrap()),
        ("depth-2", depth_two.unwrap()),
    ]
}

/// `mpirun -np ranks srcflow args…`, with what Open MPI needs to run as root and with more
/// ranks than cores.
fn mpirun(ranks: usize, args: &[String]) -> Output {
    let binary = srcflow(&[]).get_program().to_owned();
    Command::new("mpirun")
        .args(["--oversubscribe", "--tag-output", "-np", &ranks.to_string()])
        .arg(binary)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun runs (tools/mpi_setup.sh installs it)")
}

/// The arguments of `srcflow run` on `problem` into `out`, with `extra` ones.
fn run_args(problem: &Path, out: &Path, extra: &[String]) -> Vec<String> {
    let mut args: Vec<String> = ["run", "--chi-out", "24", "--threads", "1"]
        .map(String::from)
        .to_vec();
    args.extend(["--devices".into(), DEVICES.to_string()]);
    args.push(problem.display().to_string());
    args.extend(["--out".into(), out.display().to_string()]);
    args.extend_from_slice(extra);
    args
}

/// The output train written to `dir`.
fn output(dir: &Path) -> Train {
    ProblemDir::open(dir).unwrap().load_train().unwrap()
}

/// Fails unless `mpirun -np 2` and `-np 3` write what one process writes, for every stack, with
/// the `extra` arguments `extra_for(stack, scratch)` gives.
fn assert_ranks_write_what_one_process_writes(extra_for: impl Fn(&Stack, &Path) -> Vec<String>) {
    for (name, stack) in stacks() {
        let dir = tempfile::tempdir().unwrap();
        let (problem, scratch) = (dir.path().join("problem"), dir.path().join("scratch"));
        write_stack(&problem, &stack).unwrap();
        std::fs::create_dir(&scratch).unwrap();
        let extra = extra_for(&stack, &scratch);
        let alone = dir.path().join("alone");
        let one = srcflow(&[])
            .args(run_args(&problem, &alone, &extra))
            .output()
            .unwrap();
        assert!(
            one.status.success(),
            "{name}, one process: {}",
            stderr(&one)
        );
        for ranks in [2, 3] {
            let out = dir.path().join(format!("ranks-{ranks}"));
            let ran = mpirun(ranks, &run_args(&problem, &out, &extra));
            assert!(
                ran.status.success(),
                "{name}, {ranks} ranks: {}",
                stderr(&ran)
            );
            let d = distance(&output(&out), &output(&alone)).unwrap();
            assert!(
                d <= 1e-12,
                "{name}, {ranks} ranks: distance {d:e} to one process"
            );
            assert_empty(&scratch);
        }
    }
}

#[test]
fn ranks_write_what_one_process_writes_in_memory() {
    assert_ranks_write_what_one_process_writes(|_, _| vec![]);
}

/// Budgets that put environments of `stack` on every tier, and the scratch directory.
fn out_of_core(stack: &Stack, scratch: &Path) -> Vec<String> {
    let options = Options::new(24)
        .with_graph(GraphOptions::new(24).with_devices(DEVICES))
        .with_threads(1);
    let (device, host) = budgets_for_every_tier_of(options, &stack.shape(), scratch);
    vec![
        "--device-memory".into(),
        format!("{device}B"),
        "--host-memory".into(),
        format!("{host}B"),
        "--scratch-dir".into(),
        scratch.display().to_string(),
    ]
}

#[test]
fn ranks_write_what_one_process_writes_out_of_core_and_with_out_of_memory_faults() {
    assert_ranks_write_what_one_process_writes(out_of_core);
    assert_ranks_write_what_one_process_writes(|stack, scratch| {
        let mut args = out_of_core(stack, scratch);
        args.extend(["--inject-oom".into(), "0.2:7".into()]);
        args
    });
}

#[test]
fn a_failing_rank_fails_every_rank_within_30_s_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let stack = common::problem();
    let (problem, scratch) = (dir.path().join("problem"), dir.path().join("scratch"));
    write_stack(&problem, &stack).unwrap();
    std::fs::create_dir(&scratch).unwrap();
    let mut extra = out_of_core(&stack, &scratch);
    extra.extend(["--inject-device-failure".into(), "2:30".into()]);
    let trace = dir.path().join("trace.json");
    extra.extend(["--trace".into(), trace.display().to_string()]);
    let out = dir.path().join("out");
    let start = Instant::now();
    let ran = mpirun(3, &run_args(&problem, &out, &extra));
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(!ran.status.success(), "the failure went unnoticed");
    let err = stderr(&ran);
    for rank in 0..3 {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("[1,{rank}]<stderr>:srcflow: error:")))
            .unwrap_or_else(|| panic!("rank {rank} printed no error: {err}"));
        assert!(line.contains("device 2 failed in"), "{line}");
        if rank != 2 {
            assert!(line.contains("rank 2 failed"), "{line}");
        }
    }
    assert!(!out.exists(), "output left behind");
    assert!(!trace.exists(), "trace left behind");
    assert_empty(&scratch);
}

#[test]
fn a_rank_refusing_its_arguments_fails_every_rank() {
    let dir = tempfile::tempdir().unwrap();
    let problem = dir.path().join("problem");
    write_stack(&problem, &common::problem()).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let ran = mpirun(2, &run_args(&problem, &out, &[]));
    assert!(!ran.status.success(), "an existing --out was accepted");
    let err = stderr(&ran);
    for rank in 0..2 {
        let tag = format!("[1,{rank}]<stderr>:srcflow: error:");
        let line = err.lines().find(|l| l.starts_with(&tag));
        let line = line.unwrap_or_else(|| panic!("rank {rank} printed no error: {err}"));
        assert!(line.contains("exists"), "{line}");
    }
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "--out was written"
    );
}

#[test]
fn a_traced_run_of_three_ranks_writes_one_trace_of_every_rank() {
    let dir = tempfile::tempdir().unwrap();
    let (problem, out) = (dir.path().join("problem"), dir.path().join("out"));
    write_stack(&problem, &common::problem()).unwrap();
    let trace = dir.path().join("trace.json");
    let extra = ["--trace".to_string(), trace.display().to_string()];
    let ran = mpirun(3, &run_args(&problem, &out, &extra));
    assert!(ran.status.success(), "{}", stderr(&ran));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    common::check_rank_trace(&written, 3, DEVICES);
    let report = srcflow(&["report", trace.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let printed = String::from_utf8_lossy(&report.stdout);
    assert!(printed.contains("host of rank 2 network"), "{printed}");
}

/// The bytes of every output core in `out`, in site order.
fn output_bytes(out: &Path) -> Vec<Vec<u8>> {
    let layer = out.join("out");
    let mut files: Vec<_> = std::fs::read_dir(&layer)
        .unwrap_or_else(|e| panic!("{}: {e}", layer.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Kills `mpirun -np ranks` of `args` with `--checkpoint` at each of `kills` in turn (each in
/// the run resumed after the last; `OP:N@R` kills rank R in its N-th task of kind OP), then
/// runs it to the end: its output must be bitwise `reference`, and its checkpoint gone.
fn killed_and_resumed(
    ranks: usize,
    args: &[String],
    out: &Path,
    kills: &[&str],
    reference: &[Vec<u8>],
) {
    let checkpoint = out.with_file_name("checkpoint");
    let with_checkpoint = [
        args,
        &["--checkpoint".into(), checkpoint.display().to_string()],
    ]
    .concat();
    for kill in kills {
        let killing = [
            &with_checkpoint[..],
            &["--inject-kill".into(), kill.to_string()],
        ]
        .concat();
        let killed = mpirun(ranks, &killing);
        assert!(
            !killed.status.success() && stderr(&killed).contains("signal 9"),
            "{ranks} ranks, the run was to be killed at {kill}: {}",
            stderr(&killed)
        );
        assert!(!out.exists(), "a killed run left an output");
    }
    let finished = mpirun(ranks, &with_checkpoint);
    assert!(
        finished.status.success(),
        "{ranks} ranks, {kills:?}: {}",
        stderr(&finished)
    );
    let report = String::from_utf8_lossy(&finished.stdout);
    assert!(
        report.contains("resumed        skipped"),
        "{kills:?}: {report}"
    );
    assert!(
        output_bytes(out) == reference,
        "{ranks} ranks, {kills:?}: the output differs"
    );
    assert!(!checkpoint.exists(), "a finished run left its checkpoint");
    std::fs::remove_dir_all(out).unwrap();
}

/// A problem written to disk, and the flags that run it in memory or spilling to disk.
struct Written {
    dir: tempfile::TempDir,
    problem: std::path::PathBuf,
    scratch: std::path::PathBuf,
    extra: Vec<String>,
}

impl Written {
    fn new(stack: &Stack, spilling: bool) -> Written {
        let dir = tempfile::tempdir().unwrap();
        let (problem, scratch) = (dir.path().join("problem"), dir.path().join("scratch"));
        write_stack(&problem, stack).unwrap();
        std::fs::create_dir(&scratch).unwrap();
        let extra = match spilling {
            true => out_of_core(stack, &scratch),
            false => vec![],
        };
        Written {
            dir,
            problem,
            scratch,
            extra,
        }
    }

    /// The output cores of an uninterrupted run of `ranks` ranks.
    fn reference(&self, ranks: usize) -> Vec<Vec<u8>> {
        let reference = self.dir.path().join(format!("reference-{ranks}"));
        let plain = mpirun(ranks, &run_args(&self.problem, &reference, &self.extra));
        assert!(plain.status.success(), "{}", stderr(&plain));
        output_bytes(&reference)
    }
}

/// Kills runs of `stack` under `mpirun -np` each of `ranks`, in memory or spilling to disk, in
/// one rank or in every rank at points of both passes, and resumes them.
fn ranks_resume_after_kills(stack: &Stack, spilling: bool, ranks: &[usize]) {
    let written = Written::new(stack, spilling);
    let mut kills = vec![
        vec!["env:3@0"],
        vec!["checkpoint:2@1"],
        vec!["checkpoint:12"],
        vec!["sketch:9@1"],
        vec!["qr:3@0"],
        vec!["project:6@1"],
        vec!["write:4@0"],
        vec!["first:1@0"],
        vec!["env:5@1", "qr:2@0", "project:9@0"],
    ];
    if spilling {
        kills.extend([vec!["spill-disk:1@1"], vec!["spill-disk:3@0"]]);
    }
    for &ranks in ranks {
        let reference = written.reference(ranks);
        let out = written.dir.path().join("out");
        let args = run_args(&written.problem, &out, &written.extra);
        for at in &kills {
            killed_and_resumed(ranks, &args, &out, at, &reference);
        }
        assert_empty(&written.scratch);
    }
}

#[test]
fn ranks_killed_in_any_rank_resume_together_bitwise_in_memory() {
    let mut stacks = stacks().into_iter().map(|(_, stack)| stack);
    ranks_resume_after_kills(&stacks.next().unwrap(), false, &[2, 3]);
    ranks_resume_after_kills(&stacks.next().unwrap(), false, &[2]);
}

#[test]
fn ranks_killed_in_any_rank_resume_together_bitwise_spilling_to_disk() {
    ranks_resume_after_kills(&common::problem(), true, &[2, 3]);
}

/// The processes whose parent is `parent`, each with the rank a launcher gave it.
fn ranks_started_by(parent: u32) -> Vec<(u32, Option<String>)> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let after_name = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
        if after_name.split(' ').nth(1) != Some(&parent.to_string()) {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let rank = environ
            .split(|&b| b == 0)
            .filter_map(|v| std::str::from_utf8(v).ok())
            .find_map(|v| v.strip_prefix("OMPI_COMM_WORLD_RANK="))
            .map(String::from);
        children.push((pid, rank));
    }
    children
}

#[test]
fn a_rank_killed_from_outside_at_any_moment_resumes_with_the_others_bitwise() {
    let written = Written::new(&common::problem(), true);
    let reference = written.reference(2);
    let out = written.dir.path().join("out");
    let checkpoint = written.dir.path().join("checkpoint");
    let mut args = run_args(&written.problem, &out, &written.extra);
    args.extend(["--disk-bandwidth", "20MB/s", "--checkpoint"].map(String::from));
    args.push(checkpoint.display().to_string());
    let journal = checkpoint.join("rank-1").join("journal.jsonl");
    let lines = || std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
    for (after, victim) in [(1, "1"), (9, "0"), (30, "1")] {
        let before = lines();
        let binary = srcflow(&[]).get_program().to_owned();
        let mut launcher = Command::new("mpirun")
            .args(["--oversubscribe", "-np", "2"])
            .arg(binary)
            .args(&args)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while lines() < before + after && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(
            lines() >= before + after,
            "rank 1 kept no {after} more values in 60 s"
        );
        let ranks = ranks_started_by(launcher.id());
        let (pid, _) = ranks
            .iter()
            .find(|(_, rank)| rank.as_deref() == Some(victim))
            .unwrap_or_else(|| panic!("no rank {victim} after {after} more values: {ranks:?}"));
        // SAFETY: kill has no preconditions.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        assert!(
            !launcher.wait().unwrap().success(),
            "the killed run succeeded"
        );
        assert!(!out.exists(), "a killed run left an output");
    }
    let finished = mpirun(2, &args);
    assert!(finished.status.success(), "{}", stderr(&finished));
    assert!(output_bytes(&out) == reference, "the output differs");
    assert!(!checkpoint.exists(), "a finished run left its checkpoint");
    assert_empty(&written.scratch);
}
