//! Element types: float32, float64, complex64 and complex128 inputs, mixed across layers, with
//! NumPy's promotion; `--dtype` to force one; errors at each precision's level.

mod common;

use common::{srcflow, stderr};
use srcflow::gen::{random_mpo, random_mps};
use srcflow::io::{npy, LayerEntry, Manifest, ProblemDir, FORMAT};
use srcflow::ops::{distance, exact_product};
use srcflow::tensor::DType;
use srcflow::{Engine, Options, Train};
use std::path::Path;

/// H (bond 3) · ψ (bond 4) on 7 sites, physical 2: exact rank ≤ 12, so χ̄ = 16 is exact.
fn trains() -> (Train, Train) {
    (random_mpo(7, 2, 2, 3, 0.5, 1), random_mps(7, 2, 4, 0.5, 2))
}

/// Writes H and ψ as a problem directory, each layer's cores cast to its type.
fn write_problem(dir: &Path, h: (&Train, DType), psi: (&Train, DType)) {
    std::fs::create_dir(dir).unwrap();
    let layers = [("H", h), ("psi", psi)];
    Manifest {
        format: FORMAT.into(),
        layers: layers
            .iter()
            .map(|(name, (train, _))| LayerEntry {
                name: name.to_string(),
                kind: train.kind(),
            })
            .collect(),
    }
    .write(dir)
    .unwrap();
    for (name, (train, dtype)) in layers {
        std::fs::create_dir(dir.join(name)).unwrap();
        for (site, core) in train.to_quimb().into_iter().enumerate() {
            let core = core.cast(dtype);
            npy::write_any(&dir.join(name).join(format!("{site:05}.npy")), &core).unwrap();
        }
    }
}

/// `srcflow run` on `problem` at χ̄ = 16 with `extra` arguments: the output's type and
/// its distance to the exact product of the inputs as stored.
fn run(problem: &Path, out: &Path, extra: &[&str]) -> (DType, f64) {
    let mut args = vec!["run", problem.to_str().unwrap(), "--chi-out", "16"];
    args.extend(["--out", out.to_str().unwrap(), "--seed", "7"]);
    args.extend(extra);
    let ran = srcflow(&args).output().unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    let written = ProblemDir::open(out).unwrap();
    let dtype = written.shape().dtype();
    let exact = exact_product(&ProblemDir::open(problem).unwrap().load().unwrap()).unwrap();
    (
        dtype,
        distance(&written.load_train().unwrap(), &exact).unwrap(),
    )
}

/// The error a type's precision allows on an exact case.
fn tolerance(dtype: DType) -> f64 {
    if dtype.is_double() {
        1e-12
    } else {
        1e-5
    }
}

#[test]
fn every_type_and_mixed_stacks_compute_in_the_promoted_type_at_its_precision() {
    use DType::*;
    let (h, psi) = trains();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (Float32, Float32, Float32),
        (Float64, Float64, Float64),
        (Complex64, Complex64, Complex64),
        (Complex128, Complex128, Complex128),
        (Float32, Complex64, Complex64),
        (Float32, Float64, Float64),
        (Float64, Complex64, Complex128),
        (Complex64, Float64, Complex128),
    ];
    for (i, (h_type, psi_type, promoted)) in cases.into_iter().enumerate() {
        let problem = dir.path().join(format!("p{i}"));
        write_problem(&problem, (&h, h_type), (&psi, psi_type));
        let (dtype, error) = run(&problem, &dir.path().join(format!("o{i}")), &[]);
        let what = format!("H {h_type} · psi {psi_type}");
        assert_eq!(dtype, promoted, "{what}");
        assert!(error <= tolerance(promoted), "{what}: error {error:e}");
        if promoted.is_double() {
            continue;
        }
        assert!(
            error > 1e-12,
            "{what} ran in double precision: error {error:e}"
        );
    }
}

#[test]
fn dtype_forces_the_working_type_and_refuses_to_drop_imaginary_parts() {
    let (h, psi) = trains();
    let dir = tempfile::tempdir().unwrap();
    let problem = dir.path().join("p");
    write_problem(&problem, (&h, DType::Complex128), (&psi, DType::Complex128));
    let single = run(
        &problem,
        &dir.path().join("single"),
        &["--dtype", "complex64"],
    );
    assert_eq!(single.0, DType::Complex64);
    assert!(single.1 <= 1e-5 && single.1 > 1e-12, "error {:e}", single.1);

    let out = dir.path().join("real");
    let ran = srcflow(&[
        "run",
        problem.to_str().unwrap(),
        "--chi-out",
        "16",
        "--out",
        out.to_str().unwrap(),
        "--dtype",
        "float64",
    ])
    .output()
    .unwrap();
    assert!(!ran.status.success());
    let message = stderr(&ran);
    assert!(message.contains("layer 'H' (complex128)"), "{message}");
    assert!(!out.exists());
}

#[test]
fn one_seed_gives_the_same_sketch_in_every_precision() {
    let h = random_mpo(10, 2, 2, 4, 0.3, 3);
    let psi = random_mps(10, 2, 8, 0.3, 4);
    let run = |dtype, seed| {
        let options = Options::new(8)
            .with_graph(srcflow::graph::GraphOptions::new(8).with_dtype(dtype))
            .with_seed(seed);
        srcflow::apply(&h, &psi, &options).unwrap()
    };
    let double = run(DType::Complex128, 5);
    let single = run(DType::Complex64, 5);
    let other_seed = run(DType::Complex128, 6);
    let same = distance(&single, &double).unwrap();
    let different = distance(&other_seed, &double).unwrap();
    assert!(same <= 1e-4, "complex64 and complex128 differ by {same:e}");
    assert!(
        different > 100.0 * same,
        "another seed: {different:e}, same seed: {same:e}"
    );
}

#[test]
fn single_precision_halves_the_planned_memory() {
    let stack = common::problem();
    let engine = |dtype| {
        let options = Options::new(common::CHI_OUT)
            .with_graph(srcflow::graph::GraphOptions::new(common::CHI_OUT).with_dtype(dtype));
        common::engine_for(
            options,
            common::PLENTY,
            common::PLENTY,
            Path::new("."),
            Default::default(),
        )
    };
    let double = common::plan_of(&engine(DType::Complex128), &stack.shape());
    let single = common::plan_of(&engine(DType::Complex64), &stack.shape());
    let halves: Vec<u64> = double.env_bytes.iter().map(|b| b / 2).collect();
    assert_eq!(single.env_bytes, halves);
    assert_eq!(single.profile.device.bytes * 2, double.profile.device.bytes);
    let peak = |dtype| {
        let options = Options::new(common::CHI_OUT)
            .with_graph(srcflow::graph::GraphOptions::new(common::CHI_OUT).with_dtype(dtype));
        let report = Engine::new(options).unwrap().run(&stack).unwrap().report;
        report.peak_bytes.device as f64
    };
    let ratio = peak(DType::Complex64) / peak(DType::Complex128);
    assert!(
        (0.45..=0.55).contains(&ratio),
        "measured peak ratio {ratio}"
    );
}
