//! Bad input gets a clear error naming the culprit, exit code 1, and no output at all.

use srcflow::gen::{random_mpo, random_mps};
use srcflow::io::npy;
use srcflow::train::Kind;
use srcflow::{Options, Tensor, Train, C64};
use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/numpy_problem");
const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reference");

/// A writable copy of the NumPy fixture problem in a fresh temporary directory.
fn copy_of_fixture() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("problem");
    for layer in ["H", "psi"] {
        std::fs::create_dir_all(dir.join(layer)).unwrap();
        for entry in std::fs::read_dir(Path::new(FIXTURE).join(layer)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.join(layer).join(entry.file_name())).unwrap();
        }
    }
    std::fs::copy(
        Path::new(FIXTURE).join("manifest.json"),
        dir.join("manifest.json"),
    )
    .unwrap();
    (tmp, dir)
}

/// Runs `srcflow run` on `dir`, expects failure, and returns stderr; checks nothing was left behind.
fn run_fails(dir: &Path, chi_out: &str) -> String {
    let out = dir.parent().unwrap().join("out");
    run_fails_with(dir, &["--chi-out", chi_out, "--out", out.to_str().unwrap()])
}

/// Runs `srcflow run` on `dir` with `args`, expects failure, and returns stderr; checks that
/// nothing was left behind next to `dir`.
fn run_fails_with(dir: &Path, args: &[&str]) -> String {
    let parent = dir.parent().unwrap();
    let before: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let result = Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args(["run", dir.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        result.status.code(),
        Some(1),
        "stdout: {}",
        String::from_utf8_lossy(&result.stdout)
    );
    let after: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        before, after,
        "a failed run must leave no output or scratch behind"
    );
    let stderr = String::from_utf8(result.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn tensor(shape: Vec<usize>, value: f64) -> Tensor {
    let len = shape.iter().product();
    Tensor::new(shape, vec![C64::new(value, 0.0); len]).unwrap()
}

fn assert_mentions(stderr: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            stderr.contains(part),
            "error should mention {part:?}: {stderr}"
        );
    }
}

#[test]
fn a_missing_core_file_is_named() {
    let (_tmp, dir) = copy_of_fixture();
    std::fs::remove_file(dir.join("psi/00002.npy")).unwrap();
    assert_mentions(&run_fails(&dir, "8"), &["psi", "00002.npy", "missing"]);
}

#[test]
fn a_layer_with_a_site_too_many_is_named_with_the_counts_not_a_file() {
    let (_tmp, dir) = copy_of_fixture();
    std::fs::copy(dir.join("psi/00003.npy"), dir.join("psi/00004.npy")).unwrap();
    let stderr = run_fails(&dir, "8");
    assert_mentions(&stderr, &["layer 'psi' has 5 sites but layer 'H' has 4"]);
    assert!(!stderr.contains(".npy"), "no file is at fault: {stderr}");
}

#[test]
fn a_layer_with_its_last_site_missing_is_named_with_the_counts() {
    let (_tmp, dir) = copy_of_fixture();
    std::fs::remove_file(dir.join("H/00003.npy")).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["layer 'psi' has 4 sites but layer 'H' has 3"],
    );
}

#[test]
fn an_extra_file_is_named() {
    let (_tmp, dir) = copy_of_fixture();
    std::fs::write(dir.join("H/notes.txt"), "hello").unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["notes.txt", "unexpected file", "'H'"],
    );
}

#[test]
fn a_core_of_the_wrong_rank_is_named() {
    let (_tmp, dir) = copy_of_fixture();
    npy::write(&dir.join("H/00001.npy"), &tensor(vec![3, 3, 2], 1.0)).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["layer 'H', site 1", "H/00001.npy", "rank-4", "(l, r, u, d)"],
    );
}

#[test]
fn mismatched_bonds_are_named() {
    let (_tmp, dir) = copy_of_fixture();
    npy::write(&dir.join("psi/00001.npy"), &tensor(vec![2, 3, 2], 1.0)).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["layer 'psi', site 2", "left bond 2", "right bond 3"],
    );
}

#[test]
fn mismatched_physical_legs_between_layers_are_named() {
    let (_tmp, dir) = copy_of_fixture();
    npy::write(&dir.join("psi/00001.npy"), &tensor(vec![2, 2, 3], 1.0)).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &[
            "layer 'H', site 1",
            "down leg 2",
            "up leg 3",
            "layer 'psi', site 1",
        ],
    );
}

#[test]
fn an_unsupported_dtype_is_named() {
    let (_tmp, dir) = copy_of_fixture();
    let header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    bytes.extend([0u8; 32]);
    std::fs::write(dir.join("psi/00003.npy"), bytes).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["psi/00003.npy", "unsupported dtype", "<i8"],
    );
}

#[test]
fn a_truncated_file_is_named() {
    let (_tmp, dir) = copy_of_fixture();
    let path = dir.join("H/00002.npy");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 40]).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["layer 'H', site 2", "00002.npy", "truncated"],
    );
}

#[test]
fn a_garbage_file_is_named() {
    let (_tmp, dir) = copy_of_fixture();
    std::fs::write(dir.join("H/00000.npy"), b"not a numpy file at all").unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["layer 'H', site 0", "not a valid .npy"],
    );
}

#[test]
fn nan_in_a_core_is_named() {
    let (_tmp, dir) = copy_of_fixture();
    let mut core = tensor(vec![2, 2, 2], 1.0);
    core.data_mut()[5] = C64::new(f64::NAN, 0.0);
    npy::write(&dir.join("psi/00001.npy"), &core).unwrap();
    let err = run_fails(&dir, "8");
    assert_mentions(&err, &["layer 'psi', site 1", "element 5", "NaN"]);
    assert!(!err.contains("read["), "no internal task names: {err}");
}

/// A NaN in the middle layer of a depth-3 stack (the NumPy fixture `depth3_float64`), read
/// from its file, is named with its layer, site and element; nothing is left behind.
#[test]
fn nan_in_a_middle_layer_of_a_depth_3_stack_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("problem");
    let fixture = Path::new(REFERENCE).join("depth3_float64/problem");
    for layer in ["A", "B", "psi"] {
        std::fs::create_dir_all(dir.join(layer)).unwrap();
        for entry in std::fs::read_dir(fixture.join(layer)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.join(layer).join(entry.file_name())).unwrap();
        }
    }
    std::fs::copy(fixture.join("manifest.json"), dir.join("manifest.json")).unwrap();
    let mut core = npy::read(&dir.join("B/00003.npy")).unwrap().to_c64();
    core.data_mut()[7] = C64::new(f64::INFINITY, 0.0);
    npy::write(&dir.join("B/00003.npy"), &core).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["layer 'B', site 3", "element 7", "NaN or infinite"],
    );
}

/// The library checks what it is handed, as the reader checks files: a NaN in the middle layer
/// of an in-memory depth-3 stack is named before any work.
#[test]
fn nan_through_the_library_is_named() {
    let a = random_mpo(6, 2, 2, 3, 0.5, 1);
    let psi = random_mps(6, 2, 3, 0.5, 3);
    let mut cores = random_mpo(6, 2, 2, 2, 0.5, 2).cores_c64();
    cores[4].data_mut()[2] = C64::new(0.0, f64::NAN);
    let b = Train::new(Kind::Mpo, cores).unwrap();
    let err = srcflow::src(&[&a, &b, &psi], &Options::new(8))
        .unwrap_err()
        .to_string();
    assert_mentions(
        &err,
        &["layer 'layer1', site 4", "element 2", "NaN or infinite"],
    );
}

#[test]
fn chi_out_zero_is_refused() {
    let (_tmp, dir) = copy_of_fixture();
    assert_mentions(&run_fails(&dir, "0"), &["--chi-out", "at least 1"]);
}

#[test]
fn an_existing_output_is_never_overwritten() {
    let (_tmp, dir) = copy_of_fixture();
    let out = dir.parent().unwrap().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "precious").unwrap();
    let result = Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args([
            "run",
            dir.to_str().unwrap(),
            "--chi-out",
            "8",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(1));
    assert_mentions(
        &String::from_utf8_lossy(&result.stderr),
        &["already exists"],
    );
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "precious"
    );
}

#[test]
fn a_missing_folder_for_the_output_trace_or_graph_is_named_and_not_made() {
    let (_tmp, dir) = copy_of_fixture();
    let parent = dir.parent().unwrap();
    let missing = parent.join("typo");
    let out = parent.join("out");
    let (out, missing_out) = (out.to_str().unwrap(), missing.join("out"));
    let trace = missing.join("run.json");
    let cases = [
        ("--out", missing_out.to_str().unwrap(), "output (--out)"),
        ("--trace", trace.to_str().unwrap(), "trace (--trace)"),
        (
            "--graph-out",
            trace.to_str().unwrap(),
            "graph (--graph-out)",
        ),
    ];
    for (flag, path, role) in cases {
        let mut args = vec!["--chi-out", "8", flag, path];
        if flag != "--out" {
            args.extend(["--out", out]);
        }
        let stderr = run_fails_with(&dir, &args);
        let folder = missing.to_str().unwrap();
        assert_mentions(
            &stderr,
            &[
                folder,
                &format!("the folder of the {role}"),
                "does not exist",
            ],
        );
        assert!(!missing.exists(), "{flag}: the missing folder was made");
    }
}

#[test]
fn a_scratch_dir_that_is_a_file_or_missing_is_named_and_not_made() {
    let (_tmp, dir) = copy_of_fixture();
    let parent = dir.parent().unwrap();
    let out = parent.join("out");
    let out = out.to_str().unwrap();
    let with_scratch = |scratch: &Path| {
        let scratch = scratch.to_str().unwrap();
        run_fails_with(
            &dir,
            &["--chi-out", "8", "--out", out, "--scratch-dir", scratch],
        )
    };
    let file = parent.join("notes.txt");
    std::fs::write(&file, "not a folder").unwrap();
    let stderr = with_scratch(&file);
    assert_mentions(
        &stderr,
        &["notes.txt", "the scratch folder is a file, not a folder"],
    );
    let missing = parent.join("scratch");
    let stderr = with_scratch(&missing);
    assert_mentions(&stderr, &["scratch: the scratch folder does not exist"]);
    assert!(!missing.exists(), "the missing scratch folder was made");
}

#[test]
fn one_site_is_an_error() {
    let (_tmp, dir) = copy_of_fixture();
    for layer in ["H", "psi"] {
        for site in 1..4 {
            std::fs::remove_file(dir.join(format!("{layer}/{site:05}.npy"))).unwrap();
        }
    }
    assert_mentions(&run_fails(&dir, "8"), &["at least 2"]);
}

#[test]
fn a_path_traversing_layer_name_is_refused() {
    let (_tmp, dir) = copy_of_fixture();
    let manifest = r#"{"format": "srcflow/1", "layers": [{"name": "../H", "kind": "mpo"}, {"name": "psi", "kind": "mps"}]}"#;
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    assert_mentions(
        &run_fails(&dir, "8"),
        &["manifest.json", "'../H'", "plain folder name"],
    );
}

#[test]
fn a_successful_run_writes_a_complete_problem_directory() {
    let (_tmp, dir) = copy_of_fixture();
    let out = dir.parent().unwrap().join("out");
    let status = Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args([
            "run",
            dir.to_str().unwrap(),
            "--chi-out",
            "16",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let back = srcflow::io::ProblemDir::open(&out)
        .unwrap()
        .load_train()
        .unwrap();
    assert_eq!(back.len(), 4);
    let d = Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args(["distance", out.to_str().unwrap(), dir.to_str().unwrap()])
        .output()
        .unwrap();
    let distance: f64 = String::from_utf8_lossy(&d.stdout).trim().parse().unwrap();
    assert!(distance < 1e-12, "distance {distance}");
}

#[test]
fn numbers_beyond_the_machine_are_refused_in_one_line_before_any_work() {
    let (_tmp, dir) = copy_of_fixture();
    let out = dir.parent().unwrap().join("out");
    let out = out.to_str().unwrap();
    let threads = run_fails_with(
        &dir,
        &["--chi-out", "8", "--out", out, "--threads", "100000"],
    );
    assert_mentions(&threads, &["--threads must be at most", "found 100000"]);
    let devices = Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args(["run", dir.to_str().unwrap(), "--chi-out", "8", "--out", out])
        .args(["--devices", "100000"])
        .output()
        .unwrap();
    assert_eq!(devices.status.code(), Some(2), "a flag clap refuses");
    let said = String::from_utf8_lossy(&devices.stderr);
    assert_mentions(&said, &["--devices", "more than 1024 devices"]);
    let gen = Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args(["gen", "random", out, "--sites", "18446744073709551615"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&gen.stderr);
    assert_eq!(gen.status.code(), Some(1), "{said}");
    assert_mentions(
        &said,
        &["at most 1000000 sites", "found 18446744073709551615"],
    );
    assert_eq!(said.lines().count(), 1, "{said}");
    let huge = Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args(["run", dir.to_str().unwrap(), "--out", out])
        .args(["--chi-out", "18446744073709551615"])
        .output()
        .unwrap();
    assert!(
        huge.status.success(),
        "{}",
        String::from_utf8_lossy(&huge.stderr)
    );
}

/// The bytes of every file under `dir`, by path.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        match path.is_dir() {
            true => files.extend(contents(&path)),
            false => files.push((path.clone(), std::fs::read(&path).unwrap())),
        }
    }
    files.sort();
    files
}

#[test]
fn outputs_on_an_input_or_on_each_other_are_refused_naming_both_and_nothing_is_written() {
    let (_tmp, dir) = copy_of_fixture();
    let parent = dir.parent().unwrap();
    let scratch = parent.join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let text = |p: &Path| p.to_str().unwrap().to_string();
    let (out, same) = (text(&parent.join("out")), text(&parent.join("run.json")));
    let (manifest, core) = (
        text(&dir.join("manifest.json")),
        text(&dir.join("H/00000.npy")),
    );
    let (scratch, layer) = (text(&scratch), text(&dir.join("psi")));
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--trace", &manifest],
            &["trace (--trace)", "is the problem's manifest"],
        ),
        (
            &["--graph-out", &core],
            &["graph (--graph-out)", "problem's layer folder"],
        ),
        (
            &["--trace", &same, "--graph-out", &same],
            &["trace (--trace)", "graph (--graph-out)", "run.json"],
        ),
        (
            &["--checkpoint", &out],
            &["output (--out)", "checkpoint (--checkpoint)"],
        ),
        (
            &["--scratch-dir", &layer],
            &["scratch folder (--scratch-dir)", "problem's layer folder"],
        ),
    ];
    let before = contents(parent);
    for (flags, said) in cases {
        let mut args = vec!["--chi-out", "8", "--out", &out];
        args.extend(flags);
        let stderr = run_fails_with(&dir, &args);
        assert_mentions(&stderr, said);
        assert_eq!(contents(parent), before, "{flags:?} wrote over a file");
    }
    let stderr = run_fails_with(
        &dir,
        &[
            "--chi-out",
            "8",
            "--out",
            &out,
            "--checkpoint",
            &scratch,
            "--scratch-dir",
            &scratch,
        ],
    );
    assert_mentions(&stderr, &["--checkpoint", "--scratch-dir", &scratch]);
    assert!(
        Path::new(&scratch).is_dir(),
        "the scratch folder is the user's"
    );
}

/// Makes a FIFO at `path`.
fn make_fifo(path: &Path) {
    let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: makes a FIFO at a path of the test's temporary folder.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_fifo_named_as_a_core_file_is_refused_by_name_at_once() {
    let (_tmp, dir) = copy_of_fixture();
    let fifo = dir.join("psi/00002.npy");
    std::fs::remove_file(&fifo).unwrap();
    make_fifo(&fifo);
    let problem = dir.to_str().unwrap();
    let out = dir.parent().unwrap().join("out");
    let commands: [&[&str]; 4] = [
        &[
            "run",
            problem,
            "--chi-out",
            "8",
            "--out",
            out.to_str().unwrap(),
        ],
        &["plan", problem, "--chi-out", "8"],
        &["graph", problem, "--chi-out", "8"],
        &["distance", problem, REFERENCE],
    ];
    for args in commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_srcflow"))
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(30) {
                child.kill().unwrap();
                panic!("{args:?} waited on the FIFO");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_mentions(&stderr, &["psi/00002.npy", "FIFO", "not a regular file"]);
        assert!(!out.exists());
    }
}

#[test]
fn a_scratch_folder_a_killed_run_left_in_a_layer_folder_is_named_with_what_to_do() {
    let (_tmp, dir) = copy_of_fixture();
    std::fs::create_dir(dir.join("psi/srcflow-scratch-1-1")).unwrap();
    let stderr = run_fails(&dir, "8");
    assert_mentions(
        &stderr,
        &["psi/srcflow-scratch-1-1", "killed srcflow run", "remove it"],
    );
}

#[test]
fn cores_whose_products_overflow_are_said_to_have_overflowed() {
    let (_tmp, dir) = copy_of_fixture();
    for layer in ["H", "psi"] {
        for site in 0..4 {
            let path = dir.join(format!("{layer}/{site:05}.npy"));
            let core = npy::read(&path).unwrap().to_c64();
            let scaled: Vec<C64> = core.data().iter().map(|z| z * 1e300).collect();
            npy::write(&path, &Tensor::new(core.shape().to_vec(), scaled).unwrap()).unwrap();
        }
    }
    let err = run_fails(&dir, "4");
    assert_mentions(&err, &["overflowed", "scale the input cores down"]);
}
