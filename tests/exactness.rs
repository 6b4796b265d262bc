//! When χ̄ reaches the exact rank at every cut, SRC reproduces the exact product to round-off.

use srcflow::gen::{perturbed_identity, random_mpo, random_mps, time_evolution, Model};
use srcflow::ops::{distance, exact_product, is_right_canonical};
use srcflow::{Engine, Layer, Options, Stack, Train};

fn stack(trains: Vec<Train>) -> Stack {
    Stack::new(
        trains
            .into_iter()
            .enumerate()
            .map(|(i, train)| Layer {
                name: format!("L{i}"),
                train,
            })
            .collect(),
    )
    .unwrap()
}

fn check_exact(stack: &Stack, chi_out: usize, batch_cols: Option<usize>) {
    let exact = exact_product(stack).unwrap();
    let options = Options::new(chi_out)
        .with_graph(srcflow::graph::GraphOptions::new(chi_out).with_batch_cols(batch_cols));
    let out = Engine::new(options).unwrap().run(stack).unwrap().output;
    let d = distance(&out, &exact).unwrap();
    assert!(d <= 1e-12, "distance {d:e} to the exact product");
    assert!(
        is_right_canonical(&out, 1e-12),
        "output is not right-canonical"
    );
    assert!(out.bonds().iter().all(|&b| b <= chi_out));
}

#[test]
fn mpo_times_mps_is_exact() {
    let s = stack(vec![
        random_mpo(7, 2, 3, 3, 0.5, 1),
        random_mps(7, 3, 5, 0.5, 2),
    ]);
    check_exact(&s, 15 * 2, None);
}

#[test]
fn column_batches_give_the_same_exact_product() {
    let s = stack(vec![
        random_mpo(6, 2, 2, 3, 0.5, 3),
        random_mps(6, 2, 4, 0.5, 4),
    ]);
    check_exact(&s, 12, Some(5));
}

#[test]
fn mpo_times_mpo_is_exact() {
    let s = stack(vec![
        perturbed_identity(6, 2, 2, 0.3, 5),
        perturbed_identity(6, 2, 3, 0.3, 6),
    ]);
    check_exact(&s, 24, None);
}

#[test]
fn three_layer_stack_with_rectangular_legs_is_exact() {
    let s = stack(vec![
        random_mpo(6, 2, 3, 2, 0.5, 7),
        random_mpo(6, 3, 2, 2, 0.5, 8),
        random_mps(6, 2, 3, 0.5, 9),
    ]);
    check_exact(&s, 16, None);
}

#[test]
fn compressing_one_train_at_full_rank_is_exact() {
    check_exact(&stack(vec![random_mps(8, 2, 6, 0.3, 10)]), 6, None);
    check_exact(&stack(vec![random_mpo(6, 2, 2, 4, 0.3, 11)]), 16, None);
}

#[test]
fn trotter_mpo_squared_on_a_state_is_exact() {
    let u = time_evolution(Model::Heisenberg, 6, 0.1);
    check_exact(
        &stack(vec![u.clone(), u, random_mps(6, 2, 3, 0.5, 12)]),
        48,
        None,
    );
}

#[test]
fn two_sites_take_the_exact_path() {
    let s = stack(vec![
        random_mpo(2, 2, 2, 1, 1.0, 13),
        random_mps(2, 2, 2, 1.0, 14),
    ]);
    check_exact(&s, 4, None);
}
