//! The sweep graph: built from shapes, every task costed, exported and loaded back.

use srcflow::gen::{random_mpo, random_mps};
use srcflow::graph::{DataId, GraphOptions, Op};
use srcflow::{Layer, Stack, SweepGraph};
use std::path::Path;

/// A 6-site MPO · MPS with legs of 3 and bonds of 4, whose ranks reach 16 (above χ̄ = 10),
/// in column batches of `batch_cols`.
fn graph(batch_cols: Option<usize>) -> SweepGraph {
    let stack = Stack::new(vec![
        Layer {
            name: "H".into(),
            train: random_mpo(6, 3, 3, 4, 0.5, 1),
        },
        Layer {
            name: "psi".into(),
            train: random_mps(6, 3, 4, 0.5, 2),
        },
    ])
    .unwrap();
    SweepGraph::build(
        &stack.shape(),
        &GraphOptions::new(10).with_batch_cols(batch_cols),
    )
    .unwrap()
}

#[test]
fn every_site_gets_its_tasks_and_batches_split_the_columns() {
    let g = graph(Some(4));
    let count = |op: Op| g.tasks().filter(|t| t.op == op).count();
    assert_eq!(count(Op::Env), 5 * 3, "5 environments in 3 column batches");
    assert_eq!(count(Op::Sketch), 5 * 3);
    assert_eq!(
        (count(Op::Qr), count(Op::First), count(Op::WriteSite)),
        (5, 1, 6)
    );
    for site in 1..6 {
        let rows = g.out_bonds[site - 1];
        let mut blocks: Vec<_> = g
            .tasks()
            .filter(|t| t.op == Op::Project && t.site == site)
            .map(|t| {
                let whole = srcflow::graph::Cols {
                    start: 0,
                    end: rows,
                };
                (t.cols.unwrap_or(whole), t.within.unwrap_or(whole))
            })
            .collect();
        blocks.sort_by_key(|(cols, _)| cols.start);
        let expected: Vec<(usize, usize)> = (0..rows)
            .step_by(4)
            .map(|start| (start, (start + 4).min(rows)))
            .collect();
        let found: Vec<(usize, usize)> = blocks.iter().map(|(c, _)| (c.start, c.end)).collect();
        assert_eq!(
            found, expected,
            "project rows of site {site} in blocks of the batch"
        );
        assert!(blocks.iter().all(|(_, w)| (w.start, w.end) == (0, rows)));
    }
    let cols: Vec<_> = g
        .tasks()
        .filter(|t| t.op == Op::Env && t.site == 0)
        .map(|t| t.cols.unwrap())
        .collect();
    assert_eq!(
        cols.iter().map(|c| (c.start, c.end)).collect::<Vec<_>>(),
        vec![(0, 4), (4, 8), (8, 10)]
    );
    assert!(g
        .tasks()
        .filter(|t| t.op != Op::WriteSite && !matches!(t.op, Op::ReadSite { .. }))
        .all(|t| t.flops > 0.0));
    assert!(g.tasks().all(|t| t.peak_bytes > 0));
    assert!(g.topological_order().is_some(), "the graph has no cycle");
}

#[test]
fn json_loads_back_to_the_same_graph_and_dot_names_every_task() {
    let g = graph(None);
    let back = SweepGraph::from_json(&g.to_json(), Path::new("graph.json")).unwrap();
    assert_eq!(back.to_json(), g.to_json());
    let dot = g.to_dot();
    assert!(dot.starts_with("digraph sweep {"));
    assert_eq!(dot.matches("->").count(), g.dependency_count());
    assert!(dot.contains("env(0, 0..10)") && dot.contains("first(0)"));
    assert!(
        SweepGraph::from_json("{\"graph\": 1}", Path::new("bad.json"))
            .unwrap_err()
            .to_string()
            .contains("bad.json")
    );
}

#[test]
fn placement_puts_spill_and_fetch_tasks_between_an_env_and_its_sketch() {
    use srcflow::graph::{DataId, Lane, Stage};
    use srcflow::Tier;
    let mut g = graph(Some(4));
    let tiers = [
        Tier::Disk,
        Tier::Host,
        Tier::Device,
        Tier::Device,
        Tier::Device,
    ];
    g.place_environments(&tiers).unwrap();
    let count = |op: Op| g.tasks().filter(|t| t.op == op).count();
    assert_eq!(
        count(Op::Spill { to: Tier::Host }),
        2 * 3,
        "host and disk envs, 3 batches"
    );
    assert_eq!(count(Op::Spill { to: Tier::Disk }), 3);
    assert_eq!(count(Op::Fetch { from: Tier::Disk }), 3);
    assert_eq!(count(Op::Fetch { from: Tier::Host }), 2 * 3);
    for task in g.tasks().filter(|t| t.op == Op::Sketch) {
        let env = task.inputs[0];
        match task.site {
            1 | 2 => assert!(
                matches!(
                    env,
                    DataId::Spilled {
                        stage: Stage::Device,
                        ..
                    }
                ),
                "sketch {task} reads the fetched copy, not {env}"
            ),
            _ => assert!(matches!(env, DataId::Env { .. }), "{task} reads {env}"),
        }
    }
    let lanes: Vec<Lane> = g.tasks().map(|t| t.lane).collect();
    assert!(lanes.contains(&Lane::DiskRead) && lanes.contains(&Lane::Upload));
    assert!(g.topological_order().is_some(), "still acyclic");
    let wrong = g.place_environments(&[Tier::Host]).unwrap_err().to_string();
    assert!(
        wrong.contains("1 environment tiers") && wrong.contains("5 environments"),
        "{wrong}"
    );
    let again = g.place_environments(&tiers).unwrap_err().to_string();
    assert!(again.contains("already placed"), "{again}");
}

#[test]
fn an_oversampled_graph_sketches_wider_and_ends_with_a_rounding_sweep() {
    let plain = graph(None);
    let stack = plain.stack.clone();
    let options = GraphOptions::new(10).with_oversample(1.5);
    let g = SweepGraph::build(&stack, &options).unwrap();
    assert_eq!((g.sketch, g.chi_out), (15, 10));
    let count = |op: Op| g.tasks().filter(|t| t.op == op).count();
    assert_eq!(count(Op::Round), 6);
    assert_eq!(
        count(Op::StoreDraft),
        5,
        "site 0 goes straight to the rounding"
    );
    assert_eq!(count(Op::LoadDraft), 5);
    assert_eq!(count(Op::WriteSite), 6);
    for task in g.tasks().filter(|t| t.op == Op::WriteSite) {
        assert_eq!(task.inputs, vec![DataId::Rounded { site: task.site }]);
    }
    let order: Vec<usize> = g
        .nodes_in_order()
        .into_iter()
        .filter(|&n| g[n].op == Op::Round)
        .map(|n| g[n].site)
        .collect();
    assert_eq!(
        order,
        (0..6).collect::<Vec<_>>(),
        "the rounding runs left to right"
    );
    let back = SweepGraph::from_json(&g.to_json(), Path::new("graph.json")).unwrap();
    assert_eq!(back.task_count(), g.task_count());
    assert_eq!(plain.tasks().filter(|t| t.op == Op::Round).count(), 0);
}
