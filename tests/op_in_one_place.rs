//! An op's life in one place: what each op is to the scheduler, the memory governor, reports
//! and traces is declared in `Op::profile` (srcflow-graph's `graph/op.rs`). Outside the graph
//! crate, only the code that runs an op's data moves, times them, or rewrites the graph for
//! ranks names ops one by one.

use std::path::{Path, PathBuf};

/// The library's code outside the graph crate that names ops one by one, and why.
const NAMES_OPS: [&str; 6] = [
    // executes data moves: reads, writes, spills, fetches, checkpoints, messages
    "crates/srcflow/src/engine/executor.rs",
    // executes copies between devices
    "crates/srcflow/src/engine/collective.rs",
    // the seconds each QR took on each device, for the report
    "crates/srcflow/src/engine/device_use.rs",
    // the simulator's cost of messages and gathers
    "crates/srcflow-sched/src/sim/machine.rs",
    // the send and receive tasks that carry values between ranks
    "crates/srcflow-sched/src/ranks/across_nodes.rs",
    "crates/srcflow-sched/src/ranks/localize.rs",
];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The code of `path` before its unit tests.
fn code_before_tests(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a readable source file");
    let end = text.find("#[cfg(test)]").unwrap_or(text.len());
    text[..end].to_string()
}

#[test]
fn ops_are_named_one_by_one_only_where_they_run_or_are_timed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    rust_files(&root.join("crates"), &mut files);
    let mut naming: Vec<String> = files
        .iter()
        .filter(|path| !path.starts_with(root.join("crates/srcflow-graph")))
        .filter(|path| code_before_tests(path).contains("Op::"))
        .map(|path| path.strip_prefix(root).unwrap().display().to_string())
        .collect();
    naming.sort();
    let mut expected: Vec<String> = NAMES_OPS.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(
        naming, expected,
        "an op's lane, device memory, tier moves, pacing and meaning belong in \
         `Op::profile` (crates/srcflow-graph/src/graph/op.rs)"
    );
}

#[test]
fn the_profile_of_every_op_is_written_out() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let op = code_before_tests(&root.join("crates/srcflow-graph/src/graph/op.rs"));
    let table = &op[op.find("pub fn profile").expect("Op::profile")..];
    let table = &table[..table.find("\n    }\n").expect("its end")];
    assert!(
        !table.contains("_ =>"),
        "Op::profile has a wildcard arm: a new op would take its profile unasked"
    );
}
