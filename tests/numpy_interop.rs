//! Problem directories written by NumPy (tests/fixtures/make_fixtures.py) read correctly.

use srcflow::io::{npy, ProblemDir};
use srcflow::ops::exact_product;
use srcflow::{Engine, Options, Train, C64};
use std::path::Path;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/numpy_problem");
const DENSE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/numpy_problem_dense.npy"
);

/// The dense vector of an MPS (first site's index slowest).
fn densify(train: &Train) -> Vec<C64> {
    let mut v = vec![C64::new(1.0, 0.0)];
    let mut bond = 1;
    for core in &train.cores_c64() {
        let [l, r, u, d] = <[usize; 4]>::try_from(core.shape()).unwrap();
        assert_eq!((l, d), (bond, 1));
        let rows = v.len() / l;
        let mut next = vec![C64::new(0.0, 0.0); rows * u * r];
        for i in 0..rows {
            for p in 0..u {
                for b in 0..r {
                    next[(i * u + p) * r + b] = (0..l)
                        .map(|a| v[i * l + a] * core.data()[(a * r + b) * u + p])
                        .sum();
                }
            }
        }
        v = next;
        bond = r;
    }
    v
}

fn relative_error(a: &[C64], b: &[C64]) -> f64 {
    let diff: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let norm: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (diff / norm).sqrt()
}

#[test]
fn numpy_files_in_c_and_fortran_order_give_numpys_product() {
    let problem = ProblemDir::open(Path::new(FIXTURE)).unwrap();
    let stack = problem.load().unwrap();
    let expected = npy::read(Path::new(DENSE)).unwrap().to_c64();
    let exact = densify(&exact_product(&stack).unwrap());
    assert!(relative_error(&exact, expected.data()) < 1e-13);
    let out = Engine::new(Options::new(16))
        .unwrap()
        .run(&stack)
        .unwrap()
        .output;
    assert!(relative_error(&densify(&out), expected.data()) < 1e-12);
}

#[test]
fn written_cores_read_back_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("core.npy");
    let core = npy::read(&Path::new(FIXTURE).join("H/00001.npy")).unwrap();
    npy::write_any(&path, &core).unwrap();
    assert_eq!(npy::read(&path).unwrap(), core);
    assert_eq!(npy::read_header(&path).unwrap().dtype, "<c16");
}
