//! Trains of any of the four element types, held without copies: a float64 train runs in
//! float64 and gives the exact product where the cut keeps every bond, mixed cores are refused
//! by site, a stack and its reads share the caller's arrays, and a caller gets the very memory
//! it lent back after the run.

use srcflow::engine::{CoreSource, MemorySource};
use srcflow::gen::{random_mpo, random_mps};
use srcflow::ops::{distance, exact_product};
use srcflow::tensor::{AnyTensor, DType, C64};
use srcflow::{apply, Kind, Options, Stack, Train};
use std::sync::Arc;

/// `train` with its cores cast to `dtype` (real types keep the real parts).
fn cast(train: &Train, dtype: DType) -> Train {
    let cores = train
        .cores()
        .iter()
        .map(|c| c.clone().cast(dtype))
        .collect();
    Train::of_any(train.kind(), cores).unwrap()
}

#[test]
fn a_float64_train_runs_in_float64_and_gives_the_exact_product() {
    let h = cast(&random_mpo(8, 2, 2, 2, 0.5, 1), DType::Float64);
    let psi = cast(&random_mps(8, 2, 3, 0.5, 2), DType::Float64);
    assert_eq!((h.dtype(), psi.dtype()), (DType::Float64, DType::Float64));
    let out = apply(&h, &psi, &Options::new(8)).unwrap();
    assert_eq!(out.dtype(), DType::Float64);
    let exact = exact_product(&Stack::of_trains(&[&h, &psi]).unwrap()).unwrap();
    let error = distance(&out, &exact).unwrap();
    assert!(error < 1e-12, "{error}");
}

#[test]
fn a_float32_state_under_a_complex64_operator_runs_in_complex64() {
    let h = cast(&random_mpo(6, 2, 2, 2, 0.5, 3), DType::Complex64);
    let psi = cast(&random_mps(6, 2, 3, 0.5, 4), DType::Float32);
    let out = apply(&h, &psi, &Options::new(8)).unwrap();
    assert_eq!(out.dtype(), DType::Complex64);
    let exact = exact_product(&Stack::of_trains(&[&h, &psi]).unwrap()).unwrap();
    let error = distance(&out, &exact).unwrap();
    assert!(error < 1e-5, "{error}");
}

#[test]
fn cores_of_two_types_are_refused_naming_the_site() {
    let psi = random_mps(4, 2, 3, 0.5, 5);
    let mut cores: Vec<AnyTensor> = psi.cores().to_vec();
    cores[2] = cores[2].clone().cast(DType::Float32);
    let err = Train::of_any(Kind::Mps, cores).unwrap_err().to_string();
    assert!(err.contains("site 2") && err.contains("float32"), "{err}");
    assert!(err.contains("complex128"), "{err}");
}

#[test]
fn a_stack_and_its_reads_share_the_callers_arrays() {
    let h = random_mpo(5, 2, 2, 2, 0.5, 6);
    let psi = random_mps(5, 2, 3, 0.5, 7);
    let stack = Stack::of_trains(&[&h, &psi]).unwrap();
    let source = MemorySource::new(&stack);
    for site in 0..5 {
        let given = psi.core(site).typed::<C64>(&"given").unwrap();
        let stacked = stack.layers()[1].train.core(site).typed::<C64>(&"stacked");
        let read = source.read(1, site).unwrap().typed::<C64>(&"read").unwrap();
        assert!(
            Arc::ptr_eq(&given, &stacked.unwrap()),
            "site {site} was copied"
        );
        assert!(Arc::ptr_eq(&given, &read), "site {site} was copied on read");
    }
}

#[test]
fn a_caller_lends_its_arrays_to_a_run_and_takes_the_same_memory_back() {
    let h = cast(&random_mpo(6, 2, 2, 2, 0.5, 8), DType::Float64);
    let psi = cast(&random_mps(6, 2, 3, 0.5, 9), DType::Float64);
    let address = |core: &AnyTensor| core.typed::<f64>(&"a core").unwrap().data().as_ptr();
    let lent: Vec<*const f64> = psi.cores().iter().map(address).collect();
    let out = apply(&h, &psi, &Options::new(8)).unwrap();
    assert_eq!(out.dtype(), DType::Float64);
    for (site, core) in psi.into_cores().into_iter().enumerate() {
        let back = core
            .into_array::<f64>(&"the lent core")
            .unwrap()
            .into_data();
        assert_eq!(back.as_ptr(), lent[site], "site {site} came back as a copy");
    }
}
