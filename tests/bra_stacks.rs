//! Bra stacks `φ·A·B`: the MPS is a row vector, so the product equals the ket stack
//! `Bᵀ·Aᵀ·φ`; `--conj` takes ⟨φ| instead. Checked in memory and from a problem directory.

mod common;

use common::{srcflow, stderr};
use srcflow::gen::{random_mpo, random_mps};
use srcflow::io::{Manifest, ProblemDir, FORMAT};
use srcflow::ops::{distance, exact_product};
use srcflow::train::Kind;
use srcflow::{src, Options, Stack, Tensor, Train};
use std::path::Path;

/// φ (physical 2), A (2 → 3) and B (3 → 2) on 6 sites: rectangular legs, jagged bonds.
fn trains() -> (Train, Train, Train) {
    (
        random_mps(6, 2, 5, 0.5, 1),
        random_mpo(6, 2, 3, 3, 0.5, 2),
        random_mpo(6, 3, 2, 2, 0.5, 3),
    )
}

/// Up and down swapped at every site, written out here rather than taken from the library.
fn transpose(mpo: &Train) -> Train {
    let cores = mpo
        .cores_c64()
        .iter()
        .map(|c| c.permute(&[0, 1, 3, 2]))
        .collect();
    Train::new(Kind::Mpo, cores).unwrap()
}

fn conjugate(train: &Train) -> Train {
    let cores = train.cores_c64().iter().map(Tensor::conj).collect();
    Train::new(train.kind(), cores).unwrap()
}

/// The exact product of the ket stack `trains[0] · trains[1] · …`.
fn exact(trains: &[&Train]) -> Train {
    exact_product(&Stack::of_trains(trains).unwrap()).unwrap()
}

#[test]
fn a_bra_stack_equals_the_transposed_ket_stack() {
    let (phi, a, b) = trains();
    let reference = exact(&[&transpose(&b), &transpose(&a), &phi]);
    let out = src(&[&phi, &a, &b], &Options::new(64)).unwrap();
    assert_eq!(out.kind(), Kind::Mps);
    assert_eq!(
        out.core(0).shape()[2],
        2,
        "the output's leg is B's down leg"
    );
    assert!(distance(&out, &reference).unwrap() <= 1e-12);
    let bra_mpo = src(&[&phi, &a], &Options::new(64)).unwrap();
    assert_eq!(bra_mpo.core(0).shape()[2], 3);
    let reference = exact(&[&transpose(&a), &phi]);
    assert!(distance(&bra_mpo, &reference).unwrap() <= 1e-12);
}

/// Writes `layers` (name, kind, train in `[l, r, u, d]` form) as a problem directory.
fn write_problem(dir: &Path, layers: &[(&str, &Train)]) {
    std::fs::create_dir(dir).unwrap();
    let manifest = Manifest {
        format: FORMAT.into(),
        layers: layers
            .iter()
            .map(|(name, t)| srcflow::io::LayerEntry {
                name: name.to_string(),
                kind: t.kind(),
            })
            .collect(),
    };
    manifest.write(dir).unwrap();
    for (name, train) in layers {
        std::fs::create_dir(dir.join(name)).unwrap();
        for (site, core) in train.to_quimb().iter().enumerate() {
            srcflow::io::npy::write_any(&dir.join(name).join(format!("{site:05}.npy")), core)
                .unwrap();
        }
    }
}

/// `srcflow run` on `problem` with `extra` arguments; the written train.
fn run_cli(problem: &Path, out: &Path, extra: &[&str]) -> Train {
    let mut args = vec![
        "run",
        problem.to_str().unwrap(),
        "--chi-out",
        "64",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    let ran = srcflow(&args).output().unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    ProblemDir::open(out).unwrap().load_train().unwrap()
}

#[test]
fn a_bra_problem_directory_runs_as_given_or_conjugated() {
    let (phi, a, b) = trains();
    let dir = tempfile::tempdir().unwrap();
    let problem = dir.path().join("bra");
    write_problem(&problem, &[("phi", &phi), ("A", &a), ("B", &b)]);
    let opened = ProblemDir::open(&problem).unwrap();
    assert_eq!(opened.orientation(), srcflow::train::Orientation::Bra);

    let plain = run_cli(&problem, &dir.path().join("plain"), &[]);
    let reference = exact(&[&transpose(&b), &transpose(&a), &phi]);
    assert!(distance(&plain, &reference).unwrap() <= 1e-12);

    let conj = run_cli(&problem, &dir.path().join("conj"), &["--conj"]);
    let reference = exact(&[&transpose(&b), &transpose(&a), &conjugate(&phi)]);
    assert!(distance(&conj, &reference).unwrap() <= 1e-12);
    assert!(
        distance(&conj, &plain).unwrap() > 1e-3,
        "--conj changed nothing"
    );
}

#[test]
fn misplaced_mps_layers_and_conj_on_a_ket_stack_are_refused_by_name() {
    let (phi, a, _) = trains();
    let dir = tempfile::tempdir().unwrap();
    let both = dir.path().join("both");
    let psi = random_mps(6, 3, 4, 0.5, 9);
    write_problem(&both, &[("phi", &phi), ("A", &a), ("psi", &psi)]);
    let message = ProblemDir::open(&both).err().unwrap().to_string();
    assert!(
        message.contains("'phi' and 'psi' are both MPS"),
        "{message}"
    );

    let middle = dir.path().join("middle");
    let b = random_mpo(6, 2, 2, 2, 0.5, 4);
    write_problem(&middle, &[("B", &b), ("phi", &phi), ("A", &a)]);
    let message = ProblemDir::open(&middle).err().unwrap().to_string();
    assert!(
        message.contains("'phi' is an MPS in the middle"),
        "{message}"
    );

    let ket = dir.path().join("ket");
    write_problem(&ket, &[("B", &b), ("phi", &phi)]);
    let ran = srcflow(&[
        "run",
        ket.to_str().unwrap(),
        "--chi-out",
        "8",
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--conj",
    ])
    .output()
    .unwrap();
    assert!(!ran.status.success());
    assert!(stderr(&ran).contains("--conj"), "{}", stderr(&ran));
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_checkpoint_resumed_with_conj_changed_is_refused_naming_it() {
    let (phi, a, b) = trains();
    let dir = tempfile::tempdir().unwrap();
    let problem = dir.path().join("bra");
    write_problem(&problem, &[("phi", &phi), ("A", &a), ("B", &b)]);
    let (out, checkpoint) = (dir.path().join("out"), dir.path().join("checkpoint"));
    let run = |extra: &[&str]| {
        let mut args = vec!["run", problem.to_str().unwrap(), "--chi-out", "64"];
        args.extend(["--out", out.to_str().unwrap(), "--checkpoint"]);
        args.push(checkpoint.to_str().unwrap());
        args.extend(extra);
        srcflow(&args).output().unwrap()
    };
    let killed = run(&["--inject-kill", "qr:2"]);
    assert!(!killed.status.success(), "the run was to be killed");
    let refused = run(&["--conj"]);
    assert!(!refused.status.success());
    let said = stderr(&refused);
    assert!(
        said.contains("bra conjugated false there, true here"),
        "{said}"
    );
}
