//! Hostile input: every reader (`.npy`, `manifest.json`, machine models, command-line values,
//! graph JSON) gets random and mutated input and must answer with a value or an
//! error — never a panic, never an allocation sized by a claimed shape that the file does not
//! back. `SRCFLOW_FUZZ_CASES` sets the inputs per target (300 by default, for CI);
//! `tools/fuzz.sh` runs many more for a bounded time and prints how many were tried.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use srcflow::device::{CapacitySchedule, OomFault};
use srcflow::io::{npy, ProblemDir};
use srcflow::sched::Prefetch;
use srcflow::sim::MachineModel;
use srcflow::store::DiskFault;
use srcflow::{Bandwidth, ByteSize};
use srcflow::{SweepGraph, Tensor, C64};
use std::path::Path;

/// Inputs per target.
fn cases() -> u32 {
    std::env::var("SRCFLOW_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

/// Runs `check` on `cases()` inputs drawn from `strategy`; prints how many were tried.
fn fuzz<S: Strategy>(name: &str, strategy: S, check: impl Fn(S::Value)) {
    let n = cases();
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |input| {
            check(input);
            Ok(())
        })
        .unwrap();
    println!("fuzz target {name}: {n} inputs, no panic");
}

/// The bytes of a valid complex128 `.npy` file of shape [2, 3].
fn valid_npy(dir: &Path) -> Vec<u8> {
    let data = (0..6).map(|i| C64::new(i as f64, -1.0)).collect();
    let path = dir.join("valid.npy");
    npy::write(&path, &Tensor::new(vec![2, 3], data).unwrap()).unwrap();
    std::fs::read(path).unwrap()
}

/// Reads `bytes` as a `.npy` file; a tensor read must hold as many elements as its shape says.
fn read_npy(dir: &Path, bytes: &[u8]) {
    let path = dir.join("input.npy");
    std::fs::write(&path, bytes).unwrap();
    let _ = npy::read_header(&path);
    if let Ok(tensor) = npy::read(&path) {
        let elements = tensor.shape().iter().product::<usize>();
        assert_eq!(tensor.bytes(), (elements * tensor.dtype().bytes()) as u64);
        assert!(
            tensor.bytes() <= bytes.len() as u64,
            "data the file does not hold"
        );
    }
}

#[test]
fn npy_reader_survives_random_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let magic = prop_oneof![Just(b"\x93NUMPY\x01\x00".to_vec()), Just(vec![])];
    let input = (magic, vec(any::<u8>(), 0..300)).prop_map(|(m, rest)| [m, rest].concat());
    fuzz("npy random bytes", input, |bytes| {
        read_npy(tmp.path(), &bytes)
    });
}

#[test]
fn npy_reader_survives_mutated_files() {
    let tmp = tempfile::tempdir().unwrap();
    let valid = valid_npy(tmp.path());
    let len = valid.len();
    let edits = vec((0..len, any::<u8>()), 1..8);
    let header_text = prop_oneof![
        Just("(2, 3)".to_string()),
        "\\(([0-9]{1,20}, ){0,4}[0-9]{0,20}\\)",
        "[ -~]{0,40}",
    ];
    let input = (edits, 0..=len, header_text);
    fuzz("npy mutated files", input, |(edits, keep, shape)| {
        let text = String::from_utf8_lossy(&valid).replace("(2, 3)", &shape);
        let mut bytes = text.into_bytes();
        bytes.truncate(keep.max(10).min(bytes.len()));
        for (at, byte) in edits {
            if let Some(b) = bytes.get_mut(at) {
                *b = byte;
            }
        }
        read_npy(tmp.path(), &bytes);
    });
}

#[test]
fn problem_directories_survive_random_manifests() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("problem");
    std::fs::create_dir_all(dir.join("psi")).unwrap();
    let valid = r#"{"format": "srcflow/1", "layers": [{"name": "psi", "kind": "mps"}]}"#;
    let names = "[a-z./]{0,6}|\\.\\./[a-z]{1,4}|/etc|psi";
    let input = prop_oneof![
        "[ -~]{0,120}".boxed(),
        (names, "mps|mpo|[a-z]{0,4}")
            .prop_map(|(name, kind)| format!(
                r#"{{"format": "srcflow/1", "layers": [{{"name": "{name}", "kind": "{kind}"}}]}}"#
            ))
            .boxed(),
        (vec((0..valid.len(), any::<u8>()), 1..5))
            .prop_map(move |edits| {
                let mut bytes = valid.as_bytes().to_vec();
                for (at, b) in edits {
                    bytes[at] = b;
                }
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .boxed(),
    ];
    fuzz("manifest.json", input, |text| {
        std::fs::write(dir.join("manifest.json"), text).unwrap();
        if let Ok(problem) = ProblemDir::open(&dir) {
            let names: Vec<&str> = problem
                .shape()
                .layers
                .iter()
                .map(|l| l.name.as_str())
                .collect();
            assert!(names.iter().all(|n| !n.contains('/') && !n.contains("..")));
        }
    });
}

#[test]
fn command_line_values_survive_random_text() {
    let input = prop_oneof![
        "[ -~]{0,24}",
        "[0-9.]{0,22}([kMGTP]i?B)?(/s)?",
        "(lookahead|bandwidth|none)(:[0-9]{0,22})?",
        "[0-9.]{0,8}:[0-9]{0,22}",
        "([0-9]{0,22}[kMG]?i?B@[0-9]{0,22},?){1,3}",
        "(enospc|eio)(:[0-9-]{0,22})?",
    ];
    fuzz("command-line values", input, |text| {
        let _ = text.parse::<ByteSize>();
        let _ = text.parse::<Bandwidth>();
        let _ = text.parse::<Prefetch>();
        let _ = text.parse::<OomFault>();
        let _ = text.parse::<CapacitySchedule>();
        let _ = text.parse::<DiskFault>();
    });
}

#[test]
fn graph_json_survives_random_text() {
    let origin = Path::new("graph.json");
    let input = prop_oneof![
        "[ -~]{0,200}".boxed(),
        "\\{\"graph\": \\{\"nodes\": \\[[ -~]{0,60}\\]".boxed(),
    ];
    fuzz("graph JSON", input, |text| {
        let _ = SweepGraph::from_json(&text, origin);
    });
}

#[test]
fn machine_models_survive_random_and_mutated_json() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("model.json");
    let valid = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/graphs/dev-vm-2-core-xeon.json"
    ))
    .unwrap();
    let len = valid.len();
    let input = prop_oneof![
        "[ -~]{0,200}".boxed(),
        vec((0..len, any::<u8>()), 1..6)
            .prop_map(move |edits| {
                let mut bytes = valid.clone().into_bytes();
                for (at, b) in edits {
                    bytes[at] = b;
                }
                bytes
            })
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .boxed(),
    ];
    fuzz("machine model JSON", input, |text| {
        std::fs::write(&path, text).unwrap();
        if let Ok(model) = MachineModel::read(&path) {
            assert!(model.gflops.values().all(|&r| r > 0.0 && r.is_finite()));
        }
    });
}
