//! `srcflow run --checkpoint`: a run killed at any point (SIGKILL: in a write, between sites,
//! in either pass, with one device or two, in memory or spilling to disk) and run again gives
//! the uninterrupted run's output, bit for bit; a checkpoint of another run is refused.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// How a run keeps its environments.
#[derive(Clone, Copy, Debug)]
enum Memory {
    /// All on the device.
    InMemory,
    /// Some on the host and at least half on disk.
    Spilling,
}

/// A problem on disk and the flags of one way of running it.
struct Case {
    tmp: tempfile::TempDir,
    problem: String,
    flags: Vec<String>,
}

impl Case {
    fn new(devices: usize, memory: Memory) -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let dir = problem_dir(tmp.path());
        let scratch = tmp.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        let mut flags: Vec<String> = ["--chi-out", &CHI_OUT.to_string(), "--seed", "5"]
            .map(String::from)
            .into();
        flags.extend(["--devices".into(), devices.to_string()]);
        if let Memory::Spilling = memory {
            let (device, host) = budgets_for_every_tier(&problem(), &scratch, None);
            let budgets = ["--device-memory", &format!("{device}B")];
            flags.extend(budgets.map(String::from));
            flags.extend(["--host-memory".into(), format!("{host}B")]);
            flags.extend(["--scratch-dir".into(), scratch.display().to_string()]);
        }
        Case {
            tmp,
            problem: dir,
            flags,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// `srcflow run` of the case into `out`, with `extra` flags.
    fn run(&self, out: &str, extra: &[&str]) -> Output {
        self.run_as(&self.flags, out, extra)
    }

    /// `srcflow run` of the problem with `flags` in place of the case's, into `out`, with
    /// `extra` flags.
    fn run_as(&self, flags: &[String], out: &str, extra: &[&str]) -> Output {
        let mut args = vec!["run", &self.problem, "--out"];
        let out = self.path(out);
        args.push(out.to_str().unwrap());
        args.extend(flags.iter().map(String::as_str));
        args.extend(extra);
        srcflow(&args).output().unwrap()
    }

    /// The bytes of every output core in `out`.
    fn output(&self, out: &str) -> Vec<Vec<u8>> {
        let layer = self.path(out).join("out");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&layer)
            .unwrap_or_else(|e| panic!("{}: {e}", layer.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files.iter().map(|f| std::fs::read(f).unwrap()).collect()
    }
}

/// Fails unless `output` ended by SIGKILL.
fn assert_killed(output: &Output, at: &str) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        output.status.signal(),
        Some(9),
        "the run was to be killed at {at}: {}",
        stderr(output)
    );
}

/// Kills the run of `case` at each of `kills` in turn (each kill in the run resumed after the
/// last), then runs it to the end; its output must be the uninterrupted run's and its
/// checkpoint gone.
fn killed_and_resumed(case: &Case, kills: &[&str], reference: &[Vec<u8>]) {
    let checkpoint = case.path("checkpoint");
    let with_checkpoint = ["--checkpoint", checkpoint.to_str().unwrap()];
    for kill in kills {
        let killed = case.run(
            "out",
            &[&with_checkpoint[..], &["--inject-kill", kill]].concat(),
        );
        assert_killed(&killed, kill);
        assert!(!case.path("out").exists(), "a killed run left an output");
        assert!(checkpoint.join("identity.json").exists());
    }
    let kept = kept_values(&checkpoint);
    let finished = case.run("out", &with_checkpoint);
    let flags = &case.flags;
    assert!(
        finished.status.success(),
        "{flags:?} {kills:?}: {}",
        stderr(&finished)
    );
    let report = String::from_utf8_lossy(&finished.stdout);
    assert_eq!(
        kept > 0,
        report.contains("resumed        skipped"),
        "{kills:?}: {report}"
    );
    assert!(
        case.output("out") == reference,
        "{kills:?}: the output differs"
    );
    assert!(!checkpoint.exists(), "a finished run left its checkpoint");
    std::fs::remove_dir_all(case.path("out")).unwrap();
}

/// Kills at points of both passes: in environment, sketch, projection and output tasks, in
/// the middle of checkpoint writes and spills, and twice in a row.
fn resumes_after_kills(devices: usize, memory: Memory) {
    let case = Case::new(devices, memory);
    let plain = case.run("reference", &[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let reference = case.output("reference");
    let mut kills = vec![
        vec!["env:3"],
        vec!["env:20"],
        vec!["checkpoint:1"],
        vec!["checkpoint:30"],
        vec!["sketch:10"],
        vec!["qr:2"],
        vec!["project:25"],
        vec!["write:12"],
        vec!["first:1"],
        vec!["env:9", "qr:4", "write:20"],
    ];
    if let Memory::Spilling = memory {
        kills.extend([vec!["spill-disk:1"], vec!["spill-disk:6"]]);
    }
    for at in &kills {
        killed_and_resumed(&case, at, &reference);
    }
}

#[test]
fn one_device_in_memory_resumes_bitwise_after_every_kill() {
    resumes_after_kills(1, Memory::InMemory);
}

#[test]
fn one_device_spilling_to_disk_resumes_bitwise_after_every_kill() {
    resumes_after_kills(1, Memory::Spilling);
}

#[test]
fn two_devices_resume_bitwise_after_every_kill() {
    resumes_after_kills(2, Memory::InMemory);
    resumes_after_kills(2, Memory::Spilling);
}

#[test]
fn a_checkpoint_of_every_fourth_site_resumes_bitwise() {
    let mut case = Case::new(1, Memory::InMemory);
    case.flags.extend(["--checkpoint-every".into(), "4".into()]);
    let without = &case.flags[..case.flags.len() - 2];
    let refused = case.run_as(without, "reference", &["--checkpoint-every", "4"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--checkpoint"),
        "{}",
        stderr(&refused)
    );
    let plain = case.run_as(without, "reference", &[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let reference = case.output("reference");
    for kills in [&["env:14"][..], &["sketch:9"], &["qr:20", "qr:3"]] {
        killed_and_resumed(&case, kills, &reference);
    }
}

#[test]
fn the_trace_of_a_resumed_run_shows_its_restores_writes_and_what_it_skipped() {
    let case = Case::new(1, Memory::Spilling);
    let checkpoint = case.path("checkpoint");
    let at = ["--checkpoint", checkpoint.to_str().unwrap()];
    assert_killed(
        &case.run("out", &[&at[..], &["--inject-kill", "qr:6"]].concat()),
        "qr:6",
    );
    let trace = case.path("trace.json");
    let resumed = case.run(
        "out",
        &[&at[..], &["--trace", trace.to_str().unwrap()]].concat(),
    );
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    check_trace(&trace);
    let skipped = &trace["otherData"]["srcflow"]["resumed"];
    assert!(skipped["skipped_tasks"].as_u64().unwrap() > 0, "{skipped}");
    assert!(skipped["restored"].as_u64().unwrap() > 0, "{skipped}");
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    for op in ["restore ", "checkpoint "] {
        assert!(names.iter().any(|n| n.starts_with(op)), "no {op} event");
    }
}

/// The number of values the journal in `checkpoint` records.
/// How many values the journal of `checkpoint` records as kept.
fn kept_values(checkpoint: &Path) -> usize {
    let text = std::fs::read_to_string(checkpoint.join("journal.jsonl")).unwrap_or_default();
    text.lines()
        .filter(|line| line.starts_with("{\"Kept\""))
        .count()
}

#[test]
fn a_run_killed_from_outside_at_any_moment_resumes_bitwise() {
    let case = Case::new(1, Memory::Spilling);
    let plain = case.run("reference", &[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let reference = case.output("reference");
    let checkpoint = case.path("checkpoint");
    for after in [1, 7, 25, 60] {
        let mut child = srcflow(&["run", &case.problem, "--out"])
            .arg(case.path("out"))
            .args(&case.flags)
            .args(["--disk-bandwidth", "20MB/s", "--checkpoint"])
            .arg(&checkpoint)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while kept_values(&checkpoint) < after && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let finished = case.run("out", &["--checkpoint", checkpoint.to_str().unwrap()]);
    assert!(finished.status.success(), "{}", stderr(&finished));
    assert!(case.output("out") == reference, "the output differs");
    assert!(!checkpoint.exists());
}

#[test]
fn a_checkpoint_of_another_run_is_refused_naming_what_differs_and_kept() {
    let case = Case::new(1, Memory::InMemory);
    let checkpoint = case.path("checkpoint");
    let at = ["--checkpoint", checkpoint.to_str().unwrap()];
    assert_killed(
        &case.run("out", &[&at[..], &["--inject-kill", "qr:3"]].concat()),
        "qr:3",
    );
    let kept = kept_values(&checkpoint);
    let other_flags: Vec<String> = ["--chi-out", "16", "--seed", "6"].map(String::from).into();
    let other = case.run_as(&other_flags, "out", &at);
    assert!(!other.status.success());
    let error = stderr(&other);
    assert!(error.contains("seed 5 there, 6 here"), "{error}");
    assert!(error.contains("chi_out 32 there, 16 here"), "{error}");
    assert!(error.contains("--checkpoint"), "{error}");
    let unfolded = case.run("out", &[&at[..], &["--no-fold"]].concat());
    let error = stderr(&unfolded);
    assert!(
        error.contains("sites folded") && error.contains(", 0 here"),
        "{error}"
    );
    assert_eq!(kept_values(&checkpoint), kept, "the refusal lost values");
    assert!(!case.path("out").exists());
    let resumed = case.run("out", &at);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
}

#[test]
fn a_folder_that_is_not_a_checkpoint_is_refused_and_left_alone() {
    let case = Case::new(1, Memory::InMemory);
    let folder = case.path("notes");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("todo.txt"), "mine").unwrap();
    let refused = case.run("out", &["--checkpoint", folder.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("todo.txt"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        std::fs::read_to_string(folder.join("todo.txt")).unwrap(),
        "mine"
    );
    let names: Vec<_> = std::fs::read_dir(&folder).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "the folder got more than it had");
    let orphan = case.path("missing").join("checkpoint");
    let refused = case.run("out", &["--checkpoint", orphan.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("missing"), "{}", stderr(&refused));
    assert!(!case.path("out").exists());
}

#[test]
fn a_kill_in_a_rank_the_run_does_not_have_is_refused_naming_the_flag() {
    let case = Case::new(1, Memory::InMemory);
    let checkpoint = case.path("checkpoint");
    let with_checkpoint = ["--checkpoint", checkpoint.to_str().unwrap()];
    let refused = case.run(
        "out",
        &[&with_checkpoint[..], &["--inject-kill", "qr:2@1"]].concat(),
    );
    assert!(!refused.status.success());
    let message = stderr(&refused);
    assert!(
        message.contains("--inject-kill")
            && message.contains("rank 1")
            && message.contains("1 rank"),
        "{message}"
    );
    assert!(
        !case.path("out").exists() && !checkpoint.exists(),
        "refused, yet wrote"
    );
}

#[test]
fn a_checkpoint_kept_by_time_resumes_bitwise() {
    let case = Case::new(1, Memory::InMemory);
    let plain = case.run("reference", &[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let reference = case.output("reference");
    let checkpoint = case.path("checkpoint");
    let hourly = ["--checkpoint-every", "1h", "--checkpoint"];
    let at = [&hourly[..], &[checkpoint.to_str().unwrap()]].concat();
    // Killed in the middle of its third checkpoint write: whatever the lanes' timing, two
    // values are kept then, and with an hour between sites kept they are output cores.
    assert_killed(
        &case.run(
            "out",
            &[&at[..], &["--inject-kill", "checkpoint:3"]].concat(),
        ),
        "checkpoint:3",
    );
    let journal = std::fs::read_to_string(checkpoint.join("journal.jsonl")).unwrap();
    assert!(
        journal.lines().count() > 0 && journal.lines().all(|l| l.contains("\"Basis\"")),
        "an hourly checkpoint of a short run keeps output cores only: {journal}"
    );
    let resumed = case.run("out", &at);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let report = String::from_utf8_lossy(&resumed.stdout);
    assert!(report.contains("resumed        skipped"), "{report}");
    assert!(case.output("out") == reference, "the output differs");
    std::fs::remove_dir_all(case.path("out")).unwrap();
    let often = ["--checkpoint-every", "0.001s"];
    let with_checkpoint = ["--checkpoint", checkpoint.to_str().unwrap()];
    for kills in [&["env:14"][..], &["sketch:9", "project:20"]] {
        let mut case_flags = case.flags.clone();
        case_flags.extend(often.map(String::from));
        for kill in kills {
            let killing = [&with_checkpoint[..], &["--inject-kill", kill]].concat();
            assert_killed(&case.run_as(&case_flags, "out", &killing), kill);
        }
        let finished = case.run_as(&case_flags, "out", &with_checkpoint);
        assert!(finished.status.success(), "{}", stderr(&finished));
        assert!(
            case.output("out") == reference,
            "{kills:?}: the output differs"
        );
        std::fs::remove_dir_all(case.path("out")).unwrap();
    }
    let refused = case.run("out", &["--checkpoint-every", "10 minutes"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("(30s, 10m, 1.5h), found '10 minutes'"),
        "{}",
        stderr(&refused)
    );
}
