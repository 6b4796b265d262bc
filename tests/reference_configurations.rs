//! The engine's configurations beyond one device in memory: two and three devices, and two
//! devices with injected out-of-memory faults, on all 24 NumPy fixtures of
//! `tests/fixtures/reference` (bra stacks, depth 3, rectangular legs, jagged bonds, four dtypes),
//! each output held to NumPy's product by the dense reference; and environments spread over
//! device, host and disk for a depth-3 stack, a bra stack, complex64 and float32. The fixtures
//! are too small for any environment to leave the device (their sweeps' other values outweigh
//! them), so the out-of-core runs use 32-site stacks, held to their in-memory runs.

mod common;

use common::dense_reference::{relative_distance, DenseOperator};
use common::*;
use srcflow::device::{DeviceOptions, OomFault};
use srcflow::engine::MemorySink;
use srcflow::engine::Tiering;
use srcflow::gen::{random_mpo, random_mps};
use srcflow::io::{npy, LayerEntry, Manifest, ProblemDir, FORMAT};
use srcflow::ops::distance;
use srcflow::tensor::DType;
use srcflow::{Engine, Options, Report, Stack, Tensor, Train, C64};
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reference");

/// χ̄ above every case's rank: the runs are exact.
const EXACT: usize = 1000;

/// A stack, its exact product as a dense vector (interleaved legs), and the round-off its
/// working type allows.
struct Case {
    name: String,
    stack: Stack,
    dense: Vec<C64>,
    tolerance: f64,
}

impl Case {
    /// Fails unless `out` is the dense product to this case's tolerance.
    fn assert_exact(&self, what: &str, out: &Train) {
        let ours = DenseOperator::from_lrud(&out.cores_c64()).interleaved();
        let error = relative_distance(&ours, &self.dense);
        assert!(
            error < self.tolerance,
            "{} {what}: {error:e} from the reference",
            self.name
        );
    }
}

/// Round-off allowed in a run computed in `dtype`.
fn tolerance(double: bool) -> f64 {
    if double {
        1e-10
    } else {
        1e-4
    }
}

/// Every NumPy fixture, with NumPy's product.
fn fixtures() -> Vec<Case> {
    let mut dirs: Vec<_> = std::fs::read_dir(ROOT)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            Case {
                stack: ProblemDir::open(&dir.join("problem"))
                    .unwrap()
                    .load()
                    .unwrap(),
                dense: npy::read(&dir.join("dense.npy"))
                    .unwrap()
                    .to_c64()
                    .into_data(),
                tolerance: tolerance(name.ends_with("float64") || name.ends_with("complex128")),
                name,
            }
        })
        .collect()
}

/// `train` with its elements' imaginary parts dropped (a real train, for float32 runs).
fn real(train: &Train) -> Train {
    let cores = train
        .cores_c64()
        .iter()
        .map(|c| {
            let data = c.data().iter().map(|z| C64::new(z.re, 0.0)).collect();
            Tensor::new(c.shape().to_vec(), data).unwrap()
        })
        .collect();
    Train::new(train.kind(), cores).unwrap()
}

/// Stacks of 32 sites whose environments outweigh the rest of a sweep (bonds 32 and 4, as
/// `common::problem`), in the user's order with the type their files hold: depth 3, a bra stack
/// with rectangular legs, and MPO·MPS in complex64 and, on real trains, float32. Too big to
/// densify, so their out-of-core runs are held to their in-memory runs, which the fixtures hold
/// to NumPy.
fn spilling() -> Vec<(&'static str, Vec<Train>, DType)> {
    let depth3 = vec![
        random_mpo(32, 2, 2, 4, 0.5, 1),
        random_mpo(32, 2, 2, 2, 0.5, 2),
        random_mps(32, 2, 32, 0.5, 3),
    ];
    let bra = vec![
        random_mps(32, 2, 32, 0.5, 4),
        random_mpo(32, 2, 3, 4, 0.5, 5),
        random_mpo(32, 3, 2, 2, 0.5, 6),
    ];
    let h_psi = vec![
        random_mpo(32, 2, 2, 4, 0.5, 7),
        random_mps(32, 2, 32, 0.5, 8),
    ];
    let real_h_psi = h_psi.iter().map(real).collect();
    vec![
        ("depth 3", depth3, DType::Complex128),
        ("bra stack", bra, DType::Complex128),
        ("complex64", h_psi, DType::Complex64),
        ("float32", real_h_psi, DType::Float32),
    ]
}

/// Writes `trains` as the problem directory `dir`, their cores cast to `dtype`.
fn write_problem(dir: &Path, trains: &[Train], dtype: DType) -> ProblemDir {
    let names: Vec<String> = (0..trains.len()).map(|i| format!("layer{i}")).collect();
    std::fs::create_dir(dir).unwrap();
    let layers = names.iter().zip(trains);
    Manifest {
        format: FORMAT.into(),
        layers: layers
            .clone()
            .map(|(name, train)| LayerEntry {
                name: name.clone(),
                kind: train.kind(),
            })
            .collect(),
    }
    .write(dir)
    .unwrap();
    for (name, train) in layers {
        std::fs::create_dir(dir.join(name)).unwrap();
        for (site, core) in train.to_quimb().into_iter().enumerate() {
            let core = core.cast(dtype);
            npy::write_any(&dir.join(name).join(format!("{site:05}.npy")), &core).unwrap();
        }
    }
    ProblemDir::open(dir).unwrap()
}

/// Runs `engine` on the problem directory `problem`, as `srcflow run` does, into memory.
fn run_dir(engine: &Engine, problem: &ProblemDir) -> (Train, Report) {
    let (graph, _) = engine.prepare(problem.shape()).unwrap();
    let sink = MemorySink::new(graph.output_kind(), graph.sites());
    let report = engine.run_graph(&graph, problem, &sink).unwrap();
    (sink.into_train().unwrap(), report)
}

/// χ̄ = [`EXACT`] computed in `dtype` (the inputs' type when `None`) on `devices` devices.
fn exact_options(dtype: Option<DType>, devices: usize) -> Options {
    let mut options = Options::new(EXACT);
    options.graph.dtype = dtype;
    options.graph.devices = devices;
    options.threads = devices;
    options
}

/// Half the environments on disk, the rest on device and host, on one and two devices, read
/// from files and spilled in the files' type: the in-memory run's output to round-off (the
/// planner's batches differ, so sums run in another order: 1e-12 in double precision, 1e-4 in
/// single, where up to 4e-6 was measured), and nothing left in the scratch folder.
#[test]
fn with_environments_on_device_host_and_disk() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, trains, dtype) in spilling() {
        let problem = write_problem(&tmp.path().join(name), &trains, dtype);
        for devices in [1, 2] {
            let mut options = common::options(None);
            options.graph.devices = devices;
            options.threads = devices;
            let (in_memory, _) = run_dir(&Engine::new(options).unwrap(), &problem);
            let scratch = tempfile::tempdir().unwrap();
            let (device, host) =
                budgets_for_every_tier_of(options, problem.shape(), scratch.path());
            let engine = engine_for(options, device, host, scratch.path(), Tiering::default());
            let (out, report) = run_dir(&engine, &problem);
            let what = format!("{name} out of core on {devices} device(s)");
            assert!(report.peak_bytes.disk > 0, "{what}: nothing on disk");
            let d = distance(&out, &in_memory).unwrap();
            let tol = if dtype.is_double() { 1e-12 } else { 1e-4 };
            eprintln!("{what}: {d:.1e} from the in-memory run");
            assert!(d <= tol, "{what}: {d:e} from the in-memory run");
            assert_empty(scratch.path());
        }
    }
}

#[test]
fn on_two_and_three_devices() {
    for case in fixtures() {
        for devices in [2, 3] {
            let engine = Engine::new(exact_options(None, devices)).unwrap();
            let run = engine.run(&case.stack).unwrap();
            case.assert_exact(&format!("on {devices} devices"), &run.output);
        }
    }
}

#[test]
fn on_two_devices_with_injected_out_of_memory_faults() {
    let mut injected = 0;
    for (seed, case) in fixtures().into_iter().enumerate() {
        let scratch = tempfile::tempdir().unwrap();
        let tiering = Tiering::default().with_device(
            DeviceOptions::default().with_inject_oom(OomFault::new(0.2, seed as u64).unwrap()),
        );
        let options = exact_options(None, 2);
        let engine = engine_for(options, PLENTY, PLENTY, scratch.path(), tiering);
        let run = engine.run(&case.stack).unwrap();
        case.assert_exact("with injected faults", &run.output);
        assert_empty(scratch.path());
        injected += run.report.memory.injected;
    }
    assert!(injected >= 24, "only {injected} injected faults in 24 runs");
}
