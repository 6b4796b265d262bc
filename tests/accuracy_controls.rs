//! `--cutoff` and `--oversample`: bonds and errors against the truncated SVD on problems whose
//! spectrum is known, and the rounding sweep in memory, out of core and through the CLI.

mod common;

use common::*;
use srcflow::engine::Tiering;
use srcflow::gen::{random_mpo, random_mps};
use srcflow::io::{write_stack, ProblemDir};
use srcflow::ops::{bond_spectra, distance, exact_product, norm, truncate_svd};
use srcflow::Tier;
use srcflow::{apply, Engine, Layer, Options, Stack, Train};

/// A 12-site MPO·MPS stack whose spectrum decays by `decay` over each bond, and its exact
/// product.
fn decaying_problem(seed: u64, decay: f64) -> (Stack, Train) {
    let layer = |name: &str, train| Layer {
        name: name.into(),
        train,
    };
    let stack = Stack::new(vec![
        layer("H", random_mpo(12, 2, 2, 4, decay, seed)),
        layer("psi", random_mps(12, 2, 16, decay, seed + 100)),
    ])
    .unwrap();
    let exact = exact_product(&stack).unwrap();
    (stack, exact)
}

/// The two trains of an MPO·MPS stack.
fn trains(stack: &Stack) -> (&Train, &Train) {
    (&stack.layers()[0].train, &stack.layers()[1].train)
}

/// The output bonds of a train, one per cut.
fn bonds(train: &Train) -> Vec<usize> {
    (0..train.len() - 1)
        .map(|site| train.core(site).shape()[1])
        .collect()
}

/// The median over seeds 0..10 of SRC's error divided by the truncated SVD's at `chi`.
fn median_ratio(stack: &Stack, exact: &Train, chi: usize, oversample: f64) -> f64 {
    let (h, psi) = trains(stack);
    let optimum = distance(&truncate_svd(exact, chi).unwrap(), exact).unwrap();
    let mut ratios: Vec<f64> = (0..10)
        .map(|seed| {
            let options = Options::new(chi)
                .with_graph(srcflow::graph::GraphOptions::new(chi).with_oversample(oversample))
                .with_seed(seed);
            let out = apply(h, psi, &options).unwrap();
            assert!(bonds(&out).iter().all(|&b| b <= chi), "{:?}", bonds(&out));
            distance(&out, exact).unwrap() / optimum
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    (ratios[4] + ratios[5]) / 2.0
}

#[test]
fn oversampling_by_half_brings_the_error_within_one_and_a_half_times_the_svd_optimum() {
    let (stack, exact) = decaying_problem(1, 0.05);
    let plain = median_ratio(&stack, &exact, 16, 1.0);
    let oversampled = median_ratio(&stack, &exact, 16, 1.5);
    assert!(
        plain >= 2.5,
        "plain SRC should be several times the optimum: {plain}"
    );
    assert!(
        oversampled <= 1.5,
        "oversample 1.5: {oversampled} × the optimum"
    );
}

/// Bonds the exact spectra keep at `cutoff`, and the relative error of dropping the rest.
fn expected_truncation(exact: &Train, cutoff: f64) -> (Vec<usize>, f64) {
    let spectra = bond_spectra(exact).unwrap();
    let kept = spectra
        .iter()
        .map(|s| s.iter().filter(|&&x| x >= cutoff * s[0]).count())
        .collect();
    let dropped: f64 = spectra
        .iter()
        .flat_map(|s| s.iter().filter(move |&&x| x < cutoff * s[0]))
        .map(|x| x * x)
        .sum();
    (kept, dropped.sqrt() / norm(exact))
}

#[test]
fn cutoff_keeps_bonds_within_chi_and_meets_the_tolerance_of_the_known_spectrum() {
    let (stack, exact) = decaying_problem(2, 0.05);
    let (h, psi) = trains(&stack);
    let chi = 48;
    for cutoff in [1e-2, 1e-3, 1e-4] {
        let (kept, tolerance) = expected_truncation(&exact, cutoff);
        let run = |oversample| {
            let options = Options::new(chi)
                .with_graph(
                    srcflow::graph::GraphOptions::new(chi)
                        .with_cutoff(cutoff)
                        .with_oversample(oversample),
                )
                .with_seed(3);
            let out = apply(h, psi, &options).unwrap();
            (bonds(&out), distance(&out, &exact).unwrap())
        };
        let (plain_bonds, plain_error) = run(1.0);
        let what = format!("cutoff {cutoff}: bonds {plain_bonds:?}, exact spectra keep {kept:?}");
        assert!(plain_bonds.iter().all(|&b| b < chi), "{what}");
        assert!(
            plain_error <= 4.0 * tolerance,
            "{what}: error {plain_error:e}, tolerance {tolerance:e}"
        );
        let (rounded_bonds, rounded_error) = run(1.5);
        let what =
            format!("cutoff {cutoff}, oversample 1.5: bonds {rounded_bonds:?}, exact {kept:?}");
        assert!(
            rounded_bonds
                .iter()
                .zip(&kept)
                .all(|(&b, &k)| b.abs_diff(k) <= 1),
            "{what}"
        );
        assert!(
            rounded_error <= 1.1 * tolerance,
            "{what}: error {rounded_error:e}, tolerance {tolerance:e}"
        );
    }
}

#[test]
fn the_exact_two_site_path_applies_the_cutoff_too() {
    let h = random_mpo(2, 4, 4, 1, 1.0, 5);
    let psi = random_mps(2, 4, 4, 0.01, 6);
    let full = apply(&h, &psi, &Options::new(16)).unwrap();
    let cut = apply(
        &h,
        &psi,
        &Options::new(16).with_graph(srcflow::graph::GraphOptions::new(16).with_cutoff(0.5)),
    )
    .unwrap();
    assert_eq!(bonds(&full), vec![4]);
    assert!(bonds(&cut)[0] < 4, "bonds {:?}", bonds(&cut));
}

#[test]
fn out_of_range_cutoffs_and_oversampling_are_refused_by_name() {
    for (options, named) in [
        (
            Options::new(4).with_graph(srcflow::graph::GraphOptions::new(4).with_cutoff(1.0)),
            "`GraphOptions::cutoff`",
        ),
        (
            Options::new(4).with_graph(srcflow::graph::GraphOptions::new(4).with_cutoff(-0.1)),
            "`GraphOptions::cutoff`",
        ),
        (
            Options::new(4).with_graph(srcflow::graph::GraphOptions::new(4).with_oversample(0.5)),
            "`GraphOptions::oversample`",
        ),
        (
            Options::new(4)
                .with_graph(srcflow::graph::GraphOptions::new(4).with_oversample(f64::NAN)),
            "`GraphOptions::oversample`",
        ),
    ] {
        let message = Engine::new(options).err().unwrap().to_string();
        assert!(message.contains(named), "{message}");
    }
}

#[test]
fn the_rounding_sweep_gives_the_same_result_out_of_core_and_through_the_cli() {
    let stack = problem();
    let options = Options::new(CHI_OUT)
        .with_graph(
            srcflow::graph::GraphOptions::new(CHI_OUT)
                .with_oversample(1.5)
                .with_cutoff(1e-6),
        )
        .with_seed(4);
    let reference = Engine::new(options).unwrap().run(&stack).unwrap().output;
    let scratch = tempfile::tempdir().unwrap();
    let (device, host) = budgets_for_every_tier_of(options, &stack.shape(), scratch.path());
    let everywhere = engine_for(options, device, host, scratch.path(), Tiering::default());
    assert!(plan_of(&everywhere, &stack.shape()).count_on(Tier::Disk) > 0);
    let out = everywhere.run(&stack).unwrap().output;
    assert!(distance(&out, &reference).unwrap() <= 1e-12);
    assert_empty(scratch.path());

    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in"), dir.path().join("out"));
    write_stack(&input, &stack).unwrap();
    let chi = CHI_OUT.to_string();
    let (input_arg, output_arg) = (input.to_str().unwrap(), output.to_str().unwrap());
    let args = [
        "run",
        input_arg,
        "--chi-out",
        &chi,
        "--out",
        output_arg,
        "--seed",
        "4",
        "--oversample",
        "1.5",
        "--cutoff",
        "1e-6",
        "--json",
    ];
    let ran = srcflow(&args).output().unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    let written = ProblemDir::open(&output).unwrap().load_train().unwrap();
    assert!(distance(&written, &reference).unwrap() <= 1e-12);
    let report: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap();
    let reported: Vec<usize> = serde_json::from_value(report["out_bonds"].clone()).unwrap();
    assert_eq!(reported, bonds(&written));
    assert_eq!(report["sketch"], 48);
}
