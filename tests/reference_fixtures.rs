//! srcflow against references it did not compute: the NumPy-made fixtures of
//! `tests/fixtures/make_references.py` (MPO·MPS, MPO·MPO, depth 3, a bra stack, rectangular legs
//! and jagged bonds, each in all four dtypes) and the dense reference of
//! `tests/common/dense_reference.rs`. Every command runs as a user runs it, on the problem files.

mod common;

use common::dense_reference::{dense_problem, layer_cores, norm_sqr, relative_distance, spectra};
use common::{srcflow, stderr};
use serde_json::Value;
use srcflow::io::{npy, ProblemDir};
use srcflow::ops::{bond_spectra, exact_product};
use srcflow::tensor::C64;
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/reference");

/// One case in one dtype: its problem, NumPy's exact and SVD-truncated products, its facts.
struct Fixture {
    name: String,
    dir: PathBuf,
    expected: Value,
    dense: Vec<C64>,
}

impl Fixture {
    fn problem(&self) -> String {
        self.dir.join("problem").to_str().unwrap().into()
    }

    fn numpy(&self, file: &str) -> Vec<C64> {
        npy::read(&self.dir.join(file))
            .unwrap()
            .to_c64()
            .into_data()
    }

    fn number(&self, key: &str) -> f64 {
        self.expected[key].as_f64().unwrap()
    }

    fn chi_trunc(&self) -> String {
        self.expected["chi_trunc"].as_u64().unwrap().to_string()
    }

    /// Checks `ours` (singular values at every cut) against NumPy's, to 1e-10 of each cut's
    /// largest; values missing from `ours` count as zeros, and any beyond NumPy's must be.
    fn assert_spectra(&self, what: &str, ours: &[Vec<f64>]) {
        let numpys = self.expected["spectra"].as_array().unwrap();
        assert_eq!(ours.len(), numpys.len(), "{}: {what}", self.name);
        for (cut, (ours, numpys)) in ours.iter().zip(numpys).enumerate() {
            let numpys = numpys.as_array().unwrap();
            let top = numpys[0].as_f64().unwrap();
            let extra = ours.iter().skip(numpys.len()).find(|&&s| s > 1e-10 * top);
            assert!(
                extra.is_none(),
                "{}: {what} cut {cut} has {extra:?} beyond NumPy's",
                self.name
            );
            for (k, want) in numpys.iter().enumerate() {
                let (got, want) = (ours.get(k).copied().unwrap_or(0.0), want.as_f64().unwrap());
                let name = &self.name;
                assert!(
                    (got - want).abs() <= 1e-10 * top,
                    "{name}: {what} cut {cut} σ_{k}: {got} vs {want}"
                );
            }
        }
    }

    /// Round-off allowed in a product computed in this fixture's precision.
    fn tolerance(&self) -> f64 {
        match self.expected["dtype"].as_str().unwrap() {
            "float64" | "complex128" => 1e-10,
            _ => 1e-4,
        }
    }
}

/// Every fixture: 6 cases × 4 dtypes.
fn fixtures() -> Vec<Fixture> {
    let mut dirs: Vec<_> = std::fs::read_dir(ROOT)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 24, "6 cases in 4 dtypes under {ROOT}");
    dirs.into_iter()
        .map(|dir| {
            let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
            let dense = npy::read(&dir.join("dense.npy"))
                .unwrap()
                .to_c64()
                .into_data();
            Fixture {
                name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                expected: serde_json::from_str(&text).unwrap(),
                dense,
                dir,
            }
        })
        .collect()
}

/// Runs srcflow with `args` and the output directory `out` appended; fails with its stderr.
fn run_into(args: &[&str], out: &Path) {
    let mut all = args.to_vec();
    all.extend(["--out", out.to_str().unwrap()]);
    let output = srcflow(&all).output().unwrap();
    assert!(output.status.success(), "{all:?}: {}", stderr(&output));
}

/// The bonds of an output directory's single train, read from its cores' shapes.
fn output_bonds(out: &Path) -> Vec<usize> {
    let cores = layer_cores(&out.join("out"));
    cores[..cores.len() - 1]
        .iter()
        .enumerate()
        .map(|(site, c)| c.shape()[usize::from(site > 0)])
        .collect()
}

/// The dense output of a run, in the fixtures' interleaved order.
fn dense_output(out: &Path) -> Vec<C64> {
    dense_problem(out).interleaved()
}

#[test]
fn the_dense_reference_agrees_with_numpys_einsum_and_svd() {
    for f in fixtures() {
        let ours = dense_problem(Path::new(&f.problem()));
        let legs: Vec<usize> = f.expected["legs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|pair| {
                pair.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap() as usize)
            })
            .collect();
        assert_eq!(ours.legs_interleaved(), legs, "{}", f.name);
        let error = relative_distance(&ours.interleaved(), &f.dense);
        assert!(error < 1e-12, "{}: {error:e}", f.name);
        f.assert_spectra("faer on NumPy's product", &spectra(&f.dense, &legs));
    }
}

/// Every fixture at full rank on the CPU equals NumPy's product.
#[test]
fn runs_at_full_rank_on_the_cpu_give_numpys_exact_product() {
    full_rank_runs_give_numpys_product("cpu");
}

/// Every fixture at full rank on CUDA device 0 equals NumPy's product (ignored but where asked
/// for: `-- --include-ignored` on a GPU machine).
#[test]
#[ignore = "needs a CUDA device: run with --include-ignored on one"]
fn runs_at_full_rank_on_cuda_give_numpys_exact_product() {
    assert!(
        srcflow::backend::CudaBackend::device_count() > 0,
        "no CUDA device on this machine: this test needs one"
    );
    full_rank_runs_give_numpys_product("cuda");
}

/// Every fixture at full rank, run on `backend`, equals NumPy's product (all failures are
/// listed, not only the first).
fn full_rank_runs_give_numpys_product(backend: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for f in fixtures() {
        let out = tmp.path().join(format!("{}-{backend}", f.name));
        let args = [
            "run",
            &f.problem(),
            "--chi-out",
            "1000",
            "--backend",
            backend,
        ];
        let mut all = args.to_vec();
        all.extend(["--out", out.to_str().unwrap()]);
        let output = srcflow(&all).output().unwrap();
        if !output.status.success() {
            wrong.push(format!(
                "{} on {backend}: {}",
                f.name,
                stderr(&output).trim()
            ));
            continue;
        }
        let error = relative_distance(&dense_output(&out), &f.dense);
        if error >= f.tolerance() {
            wrong.push(format!("{} on {backend}: {error:.3e} from NumPy's", f.name));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} fixtures wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Truncated runs: never better than the optimum allows (the largest tail at any cut), and within
/// a factor of the TT-SVD's bound (the root of the squared tails): a randomized sketch of exactly
/// χ̄ columns measured up to 26× on these cases, an oversampled one (2χ̄, rounded by SVD) at
/// most 1.00× (`cargo test --release --test reference_fixtures truncated -- --nocapture`).
#[test]
fn truncated_runs_lie_between_the_optimal_bound_and_a_small_multiple_of_the_svds() {
    let tmp = tempfile::tempdir().unwrap();
    for f in fixtures() {
        let (chi, problem) = (f.chi_trunc(), f.problem());
        for (tag, extra, factor) in [
            ("plain", vec![], 50.0),
            ("oversampled", vec!["--oversample", "2"], 1.1),
        ] {
            let out = tmp.path().join(format!("{}-{tag}", f.name));
            let mut args = vec!["run", &problem, "--chi-out", &chi];
            args.extend(extra);
            run_into(&args, &out);
            let error = relative_distance(&dense_output(&out), &f.dense);
            let (low, high) = (f.number("optimal_lower_bound"), f.number("svd_upper_bound"));
            eprintln!(
                "{} {tag}: error {error:.3e}, optimum >= {low:.3e}, svd <= {high:.3e}",
                f.name
            );
            assert!(
                error >= low * (1.0 - 1e-6) - f.tolerance(),
                "{} {tag}: {error:e} < {low:e}",
                f.name
            );
            assert!(
                error <= factor * high + f.tolerance(),
                "{} {tag}: {error:e} > {factor}×{high:e}",
                f.name
            );
            let most = chi.parse::<usize>().unwrap();
            assert!(
                output_bonds(&out).iter().all(|&b| b <= most),
                "{} {tag}",
                f.name
            );
        }
    }
}

#[test]
fn svd_gives_numpys_tt_svd_and_its_error() {
    let tmp = tempfile::tempdir().unwrap();
    for f in fixtures() {
        let out = tmp.path().join(&f.name);
        run_into(&["svd", &f.problem(), "--chi-out", &f.chi_trunc()], &out);
        let ours = dense_output(&out);
        let numpys = f.numpy("svd.npy");
        // ‖ours − NumPy's‖ relative to the exact product's norm.
        let error =
            relative_distance(&ours, &numpys) * (norm_sqr(&numpys) / norm_sqr(&f.dense)).sqrt();
        assert!(error < 1e-9, "{}: {error:e} from NumPy's TT-SVD", f.name);
        let truncation = relative_distance(&ours, &f.dense);
        let expected = f.number("svd_error");
        assert!(
            (truncation / expected - 1.0).abs() < 1e-6,
            "{}: {truncation:e} vs {expected:e}",
            f.name
        );
    }
}

/// `srcflow distance` of a truncated output from its problem equals the dense distance, and the
/// distance of the problem from itself is round-off.
#[test]
fn distance_is_the_dense_distance() {
    let tmp = tempfile::tempdir().unwrap();
    for f in fixtures() {
        let out = tmp.path().join(&f.name);
        run_into(&["svd", &f.problem(), "--chi-out", &f.chi_trunc()], &out);
        let measured = distance_cli(out.to_str().unwrap(), &f.problem());
        let dense = relative_distance(&dense_output(&out), &f.dense);
        assert!(
            (measured / dense - 1.0).abs() < 1e-6,
            "{}: {measured:e} vs {dense:e}",
            f.name
        );
        let itself = distance_cli(&f.problem(), &f.problem());
        assert!(itself < 1e-12, "{}: {itself:e}", f.name);
    }
}

/// The number `srcflow distance A B` prints.
fn distance_cli(a: &str, b: &str) -> f64 {
    let output = srcflow(&["distance", a, b]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap()
}

/// `--cutoff c` keeps, at every cut, the product's singular values at or above c·σ_max, as a
/// left-to-right SVD truncation of NumPy's product counts them (c lies 25 % away from every
/// ratio): with a full-rank sketch, and with a truncating one (χ̄ the largest bond kept, a
/// sketch 3χ̄ wide). Before the cutoff got its own rounding sweep it was applied to each QR's
/// R, the sketch's singular values: 20 of these 24 fixtures then kept other bonds.
#[test]
fn a_cutoff_keeps_the_bonds_numpy_counts_above_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for f in fixtures() {
        let cutoff = f.number("cutoff").to_string();
        let expected: Vec<usize> = f.expected["cutoff_bonds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_u64().unwrap() as usize)
            .collect();
        let widest = expected.iter().max().unwrap().to_string();
        let problem = f.problem();
        for (tag, chi, oversample) in [("full", "1000", "1"), ("truncating", &*widest, "3")] {
            let out = tmp.path().join(format!("{}-{tag}", f.name));
            let args = [
                "run",
                &problem,
                "--chi-out",
                chi,
                "--oversample",
                oversample,
            ];
            run_into(&[&args[..], &["--cutoff", &cutoff]].concat(), &out);
            let got = output_bonds(&out);
            if got != expected {
                let name = &f.name;
                wrong.push(format!(
                    "{name} {tag} at cutoff {cutoff}: bonds {got:?}, NumPy {expected:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn bond_spectra_of_the_exact_product_are_numpys() {
    for f in fixtures() {
        let stack = ProblemDir::open(Path::new(&f.problem()))
            .unwrap()
            .load()
            .unwrap();
        f.assert_spectra(
            "bond_spectra",
            &bond_spectra(&exact_product(&stack).unwrap()).unwrap(),
        );
    }
}

/// χ̄ = 1 makes every bond 1 before the last site; the rounding sweep must still carry across
/// them (it once took a bond of 1 for the last site and lost the carry: found by the fuzz). With
/// a cutoff the rounding only regauges the plain run's output; oversampled, it is near the SVD.
#[test]
fn bonds_of_one_still_round_with_a_cutoff_or_oversampling() {
    let tmp = tempfile::tempdir().unwrap();
    let f = fixtures()
        .into_iter()
        .find(|f| f.name == "mpo_mps_float64")
        .unwrap();
    let problem = f.problem();
    let run = |tag: &str, extra: &[&str]| {
        let out = tmp.path().join(tag);
        let mut args = vec!["run", &problem, "--chi-out", "1"];
        args.extend(extra);
        run_into(&args, &out);
        assert!(output_bonds(&out).iter().all(|&b| b == 1), "{tag}");
        dense_output(&out)
    };
    let plain = run("plain", &[]);
    let cutoff = run("cutoff", &["--cutoff", "0.5"]);
    let regauged = relative_distance(&cutoff, &plain);
    assert!(
        regauged < 1e-12,
        "the cutoff's rounding moved the output by {regauged:e}"
    );
    let svd = tmp.path().join("svd");
    run_into(&["svd", &f.problem(), "--chi-out", "1"], &svd);
    let optimal = relative_distance(&dense_output(&svd), &f.dense);
    let error = relative_distance(&run("oversampled", &["--oversample", "2"]), &f.dense);
    assert!(
        error <= 1.5 * optimal,
        "{error:e} against the SVD's {optimal:e}"
    );
}
