//! `srcflow distance A B`: exactly 0 for equal trains, and, when B has norm 0, the absolute
//! distance, said to be so.

use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::train::Kind;
use srcflow::{Stack, Tensor, Train, C64};
use std::path::Path;
use std::process::{Command, Output};

/// Writes `train` as a one-layer problem at `dir`.
fn write(dir: &Path, train: &Train) {
    srcflow::io::write_stack(dir, &Stack::of_trains(&[train]).unwrap()).unwrap();
}

/// `srcflow distance a b`.
fn distance(a: &Path, b: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_srcflow"))
        .args(["distance", a.to_str().unwrap(), b.to_str().unwrap()])
        .output()
        .unwrap()
}

/// A random MPS of 6 sites.
fn mps() -> Train {
    let spec = ProblemSpec {
        sites: 6,
        bond: 4,
        ..ProblemSpec::default()
    };
    let stack = generate(ProblemKind::Random, &spec).unwrap();
    stack.layers().last().unwrap().train.clone()
}

#[test]
fn equal_trains_are_exactly_0_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let train = mps();
    write(&a, &train);
    write(&b, &train);
    let said = distance(&a, &b);
    assert!(
        said.status.success(),
        "{}",
        String::from_utf8_lossy(&said.stderr)
    );
    let value: f64 = String::from_utf8_lossy(&said.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(value, 0.0);
}

#[test]
fn against_a_train_of_norm_0_the_distance_is_absolute_and_said_so() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, zero) = (tmp.path().join("a"), tmp.path().join("zero"));
    let train = mps();
    write(&a, &train);
    let zeros = (0..train.len())
        .map(|site| {
            let shape = train.core(site).shape().to_vec();
            let len = shape.iter().product();
            Tensor::new(shape, vec![C64::new(0.0, 0.0); len]).unwrap()
        })
        .collect();
    write(&zero, &Train::new(Kind::Mps, zeros).unwrap());
    let said = distance(&a, &zero);
    let stderr = String::from_utf8_lossy(&said.stderr);
    assert!(said.status.success(), "{stderr}");
    assert!(
        stderr.contains("norm 0") && stderr.contains("absolute distance"),
        "{stderr}"
    );
    let value: f64 = String::from_utf8_lossy(&said.stdout)
        .trim()
        .parse()
        .unwrap();
    let norm = srcflow::ops::norm(&train);
    assert!(
        (value - norm).abs() <= 1e-12 * norm,
        "{value} against ‖A‖ = {norm}"
    );
}
