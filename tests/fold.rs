//! Folding each site's cores into S once, for both its sketch and its projection, changes
//! only the order of the sums: the result agrees with contracting the cores in each kernel,
//! for fewer flops.

mod common;

use common::*;
use srcflow::engine::Tiering;
use srcflow::gen::{random_mpo, random_mps};
use srcflow::graph::{GraphOptions, Op, SweepGraph};
use srcflow::ops::distance;
use srcflow::{Engine, Layer, Options, Stack, Train};

fn stack(trains: Vec<Train>) -> Stack {
    let layers = trains.into_iter().enumerate().map(|(i, train)| Layer {
        name: format!("L{i}"),
        train,
    });
    Stack::new(layers.collect()).unwrap()
}

fn folds(graph: &SweepGraph) -> usize {
    graph.tasks().filter(|t| t.op == Op::Fold).count()
}

#[test]
fn folded_sites_give_the_unfolded_result_with_fewer_flops() {
    let stacks = [
        stack(vec![
            random_mpo(8, 2, 2, 4, 0.5, 1),
            random_mps(8, 2, 16, 0.5, 2),
        ]),
        stack(vec![
            random_mpo(7, 3, 2, 3, 0.5, 3),
            random_mpo(7, 2, 2, 12, 0.5, 4),
        ]),
        stack(vec![
            random_mpo(7, 2, 3, 2, 0.5, 5),
            random_mpo(7, 3, 2, 3, 0.5, 6),
            random_mps(7, 2, 10, 0.5, 7),
        ]),
    ];
    for (i, stack) in stacks.iter().enumerate() {
        let folded = Options::new(9);
        let unfolded = folded.with_graph(folded.graph.with_fold(false));
        let graph = |o: Options| SweepGraph::build(&stack.shape(), &o.graph).unwrap();
        let (g_folded, g_unfolded) = (graph(folded), graph(unfolded));
        assert!(folds(&g_folded) > 0, "stack {i}: no site folds");
        assert_eq!(folds(&g_unfolded), 0);
        assert!(
            g_folded.total_flops() < g_unfolded.total_flops(),
            "stack {i}"
        );
        let run = |o: Options| Engine::new(o).unwrap().run(stack).unwrap().output;
        let d = distance(&run(folded), &run(unfolded)).unwrap();
        assert!(d <= 1e-12, "stack {i}: folded and unfolded differ by {d:e}");
    }
}

#[test]
fn sites_fold_on_one_device_only() {
    let shape = problem().shape();
    let on = |devices: usize| {
        let options = GraphOptions::new(CHI_OUT).with_devices(devices);
        folds(&SweepGraph::build(&shape, &options).unwrap())
    };
    assert!(on(1) > 0);
    assert_eq!(on(2), 0);
}

#[test]
fn the_planner_folds_only_where_no_environment_moves_down_a_tier() {
    // Wide physical legs make W (phys times the size of S) the largest value of a site.
    let stack = stack(vec![
        random_mpo(6, 4, 4, 3, 0.5, 8),
        random_mpo(6, 4, 4, 3, 0.5, 9),
    ]);
    let scratch = tempfile::tempdir().unwrap();
    let prepare = |fold: bool, host: u64| {
        let options =
            Options::new(16).with_graph(srcflow::graph::GraphOptions::new(16).with_fold(fold));
        let engine = engine_for(options, PLENTY, host, scratch.path(), Tiering::default());
        engine.prepare(&stack.shape()).unwrap()
    };
    let (graph, plan) = prepare(true, PLENTY);
    assert!(folds(&graph) > 0, "folds when memory is plentiful");
    let folded_peak = plan.unwrap().process_peak;
    let (_, unfolded) = prepare(false, PLENTY);
    let unfolded_peak = unfolded.unwrap().process_peak;
    assert!(folded_peak > unfolded_peak, "W costs memory");
    let (graph, plan) = prepare(true, unfolded_peak);
    let plan = plan.unwrap();
    assert_eq!(folds(&graph), 0, "folding would not fit the budget");
    assert_eq!(plan.count_on(srcflow::Tier::Device), plan.tiers.len());
}
