//! SRC's accuracy against the truncated SVD, determinism, and untouched inputs.

use srcflow::gen::{random_mpo, random_mps};
use srcflow::ops::{distance, exact_product, truncate_svd};
use srcflow::{apply, Layer, Options, Stack, Train};

fn problem(seed: u64) -> (Train, Train) {
    (
        random_mpo(12, 2, 2, 4, 0.2, seed),
        random_mps(12, 2, 12, 0.2, seed + 100),
    )
}

#[test]
fn error_is_within_four_times_the_truncated_svd_error_in_the_median() {
    let (h, psi) = problem(1);
    let stack = Stack::new(vec![
        Layer {
            name: "H".into(),
            train: h.clone(),
        },
        Layer {
            name: "psi".into(),
            train: psi.clone(),
        },
    ])
    .unwrap();
    let exact = exact_product(&stack).unwrap();
    let chi = 12;
    let optimum = distance(&truncate_svd(&exact, chi).unwrap(), &exact).unwrap();
    assert!(optimum > 1e-6, "the problem must need truncation");
    let mut ratios: Vec<f64> = (0..10)
        .map(|seed| {
            let out = apply(&h, &psi, &Options::new(chi).with_seed(seed)).unwrap();
            distance(&out, &exact).unwrap() / optimum
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let median = (ratios[4] + ratios[5]) / 2.0;
    assert!(median <= 4.0, "median ratio {median} (ratios {ratios:?})");
    assert!(
        ratios[0] >= 1.0 - 1e-9,
        "SRC cannot beat the SVD optimum by much: {ratios:?}"
    );
}

#[test]
fn the_same_seed_gives_bitwise_the_same_output_and_another_seed_does_not() {
    let (h, psi) = problem(2);
    let run = |seed, threads| {
        apply(
            &h,
            &psi,
            &Options::new(8).with_seed(seed).with_threads(threads),
        )
        .unwrap()
    };
    let first = run(5, 0);
    assert_eq!(run(5, 0), first);
    assert_ne!(run(6, 0), first);
}

#[test]
fn inputs_are_left_untouched() {
    let (h, psi) = problem(3);
    let (h_copy, psi_copy) = (h.clone(), psi.clone());
    apply(&h, &psi, &Options::new(8)).unwrap();
    assert_eq!(h, h_copy);
    assert_eq!(psi, psi_copy);
}
