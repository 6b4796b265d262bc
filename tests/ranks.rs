//! Several ranks in one process (threads over `InProcessRanks`): the same output as one
//! process with the same devices, in memory and out of core, with injected out-of-memory
//! faults on one rank; a failure on one rank fails every rank; and the exchange plan's order.

mod common;

use common::{assert_empty, budgets_for_every_tier_of, check_rank_trace, engine_for, PLENTY};
use srcflow::device::{DeviceFault, DeviceOptions, OomFault};
use srcflow::engine::Tiering;
use srcflow::gen::{random_mpo, random_mps};
use srcflow::graph::{DataId, GraphOptions, Op, SweepGraph};
use srcflow::ops::distance;
use srcflow::plan::Budgets;
use srcflow::ranks::{Collective, Exchange, InProcessRanks, RankGraph, RankLayout};
use srcflow::{Engine, EngineBuilder, Error, Layer, Options, Run, Stack, Train};
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

fn layer(name: &str, train: Train) -> Layer {
    Layer {
        name: name.into(),
        train,
    }
}

/// MPO · MPS on 9 sites (bond 8, MPO bond 3).
fn mpo_mps() -> Stack {
    Stack::new(vec![
        layer("H", random_mpo(9, 2, 2, 3, 0.4, 11)),
        layer("psi", random_mps(9, 2, 8, 0.4, 12)),
    ])
    .unwrap()
}

/// MPO · MPO on 8 sites.
fn mpo_mpo() -> Stack {
    Stack::new(vec![
        layer("A", random_mpo(8, 2, 2, 4, 0.4, 21)),
        layer("B", random_mpo(8, 2, 2, 3, 0.4, 22)),
    ])
    .unwrap()
}

/// A depth-2 stack: MPO · MPO · MPS on 8 sites.
fn depth_two() -> Stack {
    Stack::new(vec![
        layer("H1", random_mpo(8, 2, 2, 2, 0.4, 31)),
        layer("H2", random_mpo(8, 2, 2, 3, 0.4, 32)),
        layer("psi", random_mps(8, 2, 6, 0.4, 33)),
    ])
    .unwrap()
}

/// `options` on `devices` devices, one thread per device.
fn on_devices(devices: usize, chi_out: usize, batch: Option<usize>) -> Options {
    Options::new(chi_out)
        .with_graph(
            GraphOptions::new(chi_out)
                .with_devices(devices)
                .with_batch_cols(batch),
        )
        .with_threads(devices)
}

/// How long a run of these small problems may take on every rank, failures included.
const BOUND: Duration = Duration::from_secs(60);

/// Runs `stack` as `ranks` ranks (threads of this process), each with `tiering(rank)` and a
/// log kept; every rank's result, in rank order. Fails if a rank has not returned within
/// [`BOUND`] (a hang).
fn run_ranks(
    ranks: usize,
    options: Options,
    stack: &Stack,
    tiering: impl Fn(usize) -> Tiering,
) -> Vec<srcflow::Result<Run>> {
    let with_tiering = |rank, builder: EngineBuilder| builder.tiering(tiering(rank));
    run_ranks_then(ranks, options, stack, with_tiering, |_, run| Ok(run))
}

/// Like [`run_ranks`], with each rank's engine what `build` makes of a builder of `options`
/// (rank by rank), and each rank's result what `then` makes of its engine and run.
fn run_ranks_then<T: Send + 'static>(
    ranks: usize,
    options: Options,
    stack: &Stack,
    build: impl Fn(usize, EngineBuilder) -> EngineBuilder,
    then: fn(&Engine, Run) -> srcflow::Result<T>,
) -> Vec<srcflow::Result<T>> {
    let (done, results) = std::sync::mpsc::channel();
    for (rank, transport) in InProcessRanks::group(ranks).into_iter().enumerate() {
        let threads = options.threads.div_ceil(ranks);
        let builder = build(rank, EngineBuilder::new(options.with_threads(threads)));
        let (stack, done) = (stack.clone(), done.clone());
        std::thread::spawn(move || {
            let engine = builder.ranks(transport).trace(true).build();
            let run = engine.and_then(|engine| then(&engine, engine.run(&stack)?));
            let _ = done.send((rank, run));
        });
    }
    let deadline = Instant::now() + BOUND;
    let mut runs: Vec<_> = (0..ranks)
        .map(|_| {
            let left = deadline.saturating_duration_since(Instant::now());
            results.recv_timeout(left).expect("a rank hung")
        })
        .collect();
    runs.sort_by_key(|(rank, _)| *rank);
    runs.into_iter().map(|(_, run)| run).collect()
}

/// Fails unless every rank of each of `ranks` returns the one-process output of `options`.
fn assert_ranks_agree(stack: &Stack, options: Options, ranks: &[usize]) {
    let one = srcflow::Engine::new(options)
        .unwrap()
        .run(stack)
        .unwrap()
        .output;
    for &count in ranks {
        for (rank, run) in run_ranks(count, options, stack, |_| Tiering::default())
            .into_iter()
            .enumerate()
        {
            let out = run
                .unwrap_or_else(|e| panic!("{count} ranks, rank {rank}: {e}"))
                .output;
            let d = distance(&out, &one).unwrap();
            assert!(d <= 1e-12, "{count} ranks, rank {rank}: distance {d:e}");
        }
    }
}

#[test]
fn two_and_three_ranks_agree_with_one_process_on_mpo_mps() {
    assert_ranks_agree(&mpo_mps(), on_devices(3, 13, None), &[2, 3]);
    assert_ranks_agree(&mpo_mps(), on_devices(4, 13, Some(3)), &[2, 3]);
}

#[test]
fn ranks_agree_with_one_process_on_mpo_mpo_and_a_depth_two_stack() {
    assert_ranks_agree(&mpo_mpo(), on_devices(3, 12, None), &[2, 3]);
    assert_ranks_agree(&depth_two(), on_devices(3, 10, Some(4)), &[2, 3]);
}

#[test]
fn ranks_agree_with_a_cutoff_and_oversampling() {
    let mut options = on_devices(2, 9, None);
    options.graph.oversample = 1.5;
    options.graph.cutoff = 1e-3;
    assert_ranks_agree(&mpo_mps(), options, &[2]);
}

/// Budgets for `options` that put environments on every tier, with scratch under `scratch`.
fn every_tier(options: Options, stack: &Stack, scratch: &Path) -> Budgets {
    let (device, host) = budgets_for_every_tier_of(options, &stack.shape(), scratch);
    Budgets::new(device, host, PLENTY, scratch.to_path_buf())
}

#[test]
fn ranks_agree_out_of_core_and_with_out_of_memory_faults_on_one_rank() {
    let scratch = tempfile::tempdir().unwrap();
    let stack = common::problem();
    let options = on_devices(3, 32, None);
    let budgets = every_tier(options, &stack, scratch.path());
    let one = engine_for(options, PLENTY, PLENTY, scratch.path(), Tiering::default())
        .run(&stack)
        .unwrap()
        .output;
    let faulty = |rank: usize| {
        Tiering::default()
            .with_device(
                DeviceOptions::default()
                    .with_inject_oom((rank == 1).then(|| OomFault::new(0.3, 5).unwrap())),
            )
            .with_budgets(budgets.clone())
    };
    for ranks in [2, 3] {
        let runs = run_ranks(ranks, options, &stack, faulty);
        for (rank, run) in runs.into_iter().enumerate() {
            let run = run.unwrap_or_else(|e| panic!("{ranks} ranks, rank {rank}: {e}"));
            let d = distance(&run.output, &one).unwrap();
            assert!(d <= 1e-12, "{ranks} ranks, rank {rank}: distance {d:e}");
            if rank == 1 {
                assert!(
                    a_half_feeds_a_send(&run),
                    "no half-batch node of rank 1 made a value other ranks read"
                );
            }
        }
        assert_empty(scratch.path());
    }
}

#[test]
fn rank_0_joins_every_ranks_trace_into_one() {
    // Two kernel threads per device, which only the rank owning a device knows.
    let options = on_devices(3, 12, Some(2)).with_threads(6);
    let traces = run_ranks_then(
        3,
        options,
        &mpo_mps(),
        |_, builder| builder,
        |engine, run| engine.whole_trace(&run.graph, run.log.as_ref().expect("a log")),
    );
    let traces: Vec<_> = traces.into_iter().map(|t| t.unwrap()).collect();
    assert!(
        traces[1..].iter().all(Option::is_none),
        "only rank 0 has the trace"
    );
    let trace = traces[0].as_ref().expect("rank 0 has the trace");
    check_rank_trace(trace, 3, 3);
    let threads = &trace["otherData"]["srcflow"]["threads_per_device"];
    assert_eq!(threads, &serde_json::json!([2, 2, 2]));
}

/// True when a half-batch node of the run (a governor's rewrite) makes a value that a send
/// task hands to other ranks.
fn a_half_feeds_a_send(run: &Run) -> bool {
    let graph = run.log.as_ref().and_then(|l| l.graph_after.as_ref());
    graph.is_some_and(|g| {
        g.task_ids()
            .any(|n| g[n].within.is_some() && g.successors(n).any(|next| g[next].op == Op::Send))
    })
}

#[test]
fn a_failure_on_one_rank_fails_every_rank_promptly_and_leaves_no_scratch() {
    let scratch = tempfile::tempdir().unwrap();
    let stack = common::problem();
    let options = on_devices(3, 32, None);
    let budgets = every_tier(options, &stack, scratch.path());
    let runs =
        run_ranks(3, options, &stack, |rank| {
            Tiering::default()
                .with_device(DeviceOptions::default().with_inject_failure(
                    (rank == 2).then(|| "2:12".parse::<DeviceFault>().unwrap()),
                ))
                .with_budgets(budgets.clone())
        });
    for (rank, run) in runs.into_iter().enumerate() {
        let err = run.expect_err("a rank succeeded").to_string();
        assert!(err.contains("device 2 failed in"), "rank {rank}: {err}");
        if rank != 2 {
            assert!(err.contains("rank 2 failed"), "rank {rank}: {err}");
        }
    }
    assert_empty(scratch.path());
}

#[test]
fn ranks_without_columns_and_two_site_problems_agree() {
    // 3 sketch columns on 4 devices: the last device, rank 2's only one, has nothing to do.
    assert_ranks_agree(&mpo_mps(), on_devices(4, 3, None), &[3]);
    let two_sites = Stack::new(vec![
        layer("H", random_mpo(2, 2, 2, 3, 0.4, 41)),
        layer("psi", random_mps(2, 2, 4, 0.4, 42)),
    ])
    .unwrap();
    assert_ranks_agree(&two_sites, on_devices(2, 4, None), &[2]);
}

#[test]
fn a_rank_failing_before_its_sweep_starts_fails_every_rank() {
    let scratch = tempfile::tempdir().unwrap();
    let runs = run_ranks(2, on_devices(2, 8, None), &mpo_mps(), |rank| {
        Tiering::default().with_budgets(
            (rank == 1).then(|| Budgets::new(1, PLENTY, PLENTY, scratch.path().to_path_buf())),
        )
    });
    let errors: Vec<String> = runs
        .into_iter()
        .map(|r| r.expect_err("a rank succeeded").to_string())
        .collect();
    assert!(errors[0].contains("rank 1 failed"), "{}", errors[0]);
}

#[test]
fn too_few_devices_for_the_ranks_is_refused_by_name() {
    let transports = InProcessRanks::group(3);
    let err = EngineBuilder::new(on_devices(2, 8, None))
        .ranks(transports[0].clone())
        .build()
        .err()
        .expect("accepted");
    assert!(matches!(err, Error::Invalid(_)));
    assert!(
        err.to_string().contains("3 ranks need at least 3 devices"),
        "{err}"
    );
}

/// The whole graph of `stack` on `devices` devices with batches of `batch` columns.
fn graph(stack: &Stack, devices: usize, batch: usize) -> SweepGraph {
    let options = on_devices(devices, 12, Some(batch)).graph;
    SweepGraph::build(&stack.shape(), &options).unwrap()
}

#[test]
fn each_exchange_needs_only_values_of_earlier_exchanges() {
    for (stack, devices, ranks) in [(mpo_mps(), 3, 3), (mpo_mpo(), 4, 2), (depth_two(), 3, 2)] {
        let whole = graph(&stack, devices, 2);
        let plans: Vec<RankGraph> = (0..ranks)
            .map(|rank| RankGraph::of(&whole, RankLayout::new(rank, ranks, devices).unwrap(), true))
            .collect();
        let sequence = |plan: &RankGraph| -> Vec<String> {
            let values = |e: &srcflow::ranks::Exchange| {
                e.values
                    .iter()
                    .map(|v| v.id.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            plan.exchanges
                .iter()
                .map(|e| format!("{:?} {}", e.collective, values(e)))
                .collect()
        };
        assert!(plans[0].exchanges.len() > 3, "too few exchanges to test");
        for plan in &plans[1..] {
            assert_eq!(
                sequence(plan),
                sequence(&plans[0]),
                "ranks order exchanges differently"
            );
        }
        let plan = &plans[0];
        let mut crossed: HashSet<DataId> = HashSet::new();
        for exchange in &plan.exchanges {
            for value in &exchange.values {
                let mut ancestors = value.makers.clone();
                let mut seen = HashSet::new();
                while let Some(node) = ancestors.pop() {
                    for edge in whole.incoming(node) {
                        let id = edge.data;
                        let is_crossing = plan
                            .exchanges
                            .iter()
                            .any(|e| e.values.iter().any(|v| v.id == id));
                        assert!(
                            !is_crossing || crossed.contains(&id),
                            "{} needs {id} first",
                            value.id
                        );
                        if seen.insert(edge.from) {
                            ancestors.push(edge.from);
                        }
                    }
                }
            }
            crossed.extend(exchange.values.iter().map(|v| v.id));
        }
    }
}

#[test]
fn a_gathers_root_receives_once_it_has_computed_its_own_part() {
    for (ranks, devices) in [(2, 2), (3, 4)] {
        let whole = graph(&mpo_mps(), devices, 2);
        let root = RankGraph::of(&whole, RankLayout::new(0, ranks, devices).unwrap(), true);
        let g = &root.graph;
        assert!(g.topological_order().is_some(), "a cycle");
        let mut receives = 0;
        for node in g.task_ids().filter(|&n| g[n].op == Op::Receive) {
            let DataId::Sketch { site, .. } = g[node].outputs[0] else {
                continue;
            };
            receives += 1;
            let after_own_sketch = g
                .predecessors(node)
                .any(|maker| g[maker].op == Op::Sketch && g[maker].site == site);
            assert!(after_own_sketch, "{} waits for nothing", g[node]);
        }
        assert!(receives > 0, "no sketch block gathered to rank 0");
    }
}

#[test]
fn rank_graphs_keep_their_devices_tasks_and_pair_every_send_with_receives() {
    let whole = graph(&mpo_mps(), 3, 2);
    let (ranks, devices) = (2, 3);
    let mut sent = HashSet::new();
    let mut received = HashSet::new();
    let mut tasks = 0;
    for rank in 0..ranks {
        let layout = RankLayout::new(rank, ranks, devices).unwrap();
        let part = RankGraph::of(&whole, layout, true);
        let own = layout.devices_of(rank, devices);
        for task in part.graph.tasks() {
            match task.op {
                Op::Send => assert!(sent.insert(task.inputs[0])),
                Op::Receive => {
                    received.extend(brought(task, &part.exchanges, rank));
                    // The all-gathers of an S gathered in place are this receive's replicas.
                    tasks += task.outputs.iter().filter(|id| lands_in_place(id)).count();
                }
                op => {
                    assert!((own.start..own.end).contains(&task.device), "{task}");
                    tasks += usize::from(!matches!(op, Op::ReadSite { .. } | Op::UploadPart));
                }
            }
        }
        let made: HashSet<DataId> = part
            .graph
            .tasks()
            .flat_map(|t| t.outputs.iter().copied())
            .collect();
        for task in part.graph.tasks() {
            for id in &task.inputs {
                assert!(
                    made.contains(id),
                    "rank {rank}: nothing makes {id} for {task}"
                );
            }
        }
        for exchange in &part.exchanges {
            if matches!(exchange.values[0].id, DataId::Sketch { .. }) {
                assert_eq!(exchange.collective, Collective::Gather { root: 0 });
            }
        }
        let joins = part
            .exchanges
            .iter()
            .filter(|e| e.in_place.is_some())
            .count();
        assert!(
            joins > 0,
            "rank {rank}: no S all-gather is gathered in place"
        );
        // Devices with memory of their own all-gather S's parts on the device.
        let on_devices = RankGraph::of(&whole, layout, false);
        assert!(on_devices.exchanges.iter().all(|e| e.in_place.is_none()));
        let all_gathers = |g: &SweepGraph| g.tasks().filter(|t| t.op == Op::AllGather).count();
        assert!(all_gathers(&on_devices.graph) > all_gathers(&part.graph));
    }
    let inputs = whole
        .tasks()
        .filter(|t| matches!(t.op, Op::ReadSite { .. } | Op::UploadPart))
        .count();
    assert_eq!(
        tasks + inputs,
        whole.task_count(),
        "every task but the inputs' runs on one rank"
    );
    assert_eq!(sent, received);
    assert!(sent.iter().any(|id| matches!(id, DataId::Sketch { .. })));
    let input = |id: &DataId| {
        matches!(id, DataId::Core { .. })
            || matches!(
                id,
                DataId::Part {
                    of: srcflow::graph::Shared::Core { .. },
                    ..
                }
            )
    };
    assert!(!sent.iter().any(input), "input cores crossed ranks");
}

/// True for a replica of an S that ranks gather in place (`Exchange::in_place`), which a receive
/// task makes.
fn lands_in_place(id: &DataId) -> bool {
    matches!(
        id,
        DataId::Replica {
            of: srcflow::graph::Shared::Proj { .. },
            ..
        }
    )
}

/// The values receive task `task` of `rank` brings: its own, or every other rank's row
/// blocks of the S whose replicas it makes.
fn brought(task: &srcflow::graph::Task, exchanges: &[Exchange], rank: usize) -> Vec<DataId> {
    if !lands_in_place(&task.outputs[0]) {
        return vec![task.outputs[0]];
    }
    let DataId::Replica { of, .. } = task.outputs[0] else {
        unreachable!()
    };
    let exchange = exchanges.iter().find(|e| {
        e.in_place.is_some() && matches!(e.values[0].id, DataId::Part { of: o, .. } if o == of)
    });
    let values = exchange
        .expect("an exchange gathered in place")
        .values
        .iter();
    values.filter(|c| c.from != rank).map(|c| c.id).collect()
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_be_one_of_several_ranks() {
    let mpirun = [("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "2")];
    let srun = [("PMIX_RANK", "1"), ("SLURM_STEP_NUM_TASKS", "3")];
    let pmix_alone = [("PMIX_RANK", "1")];
    let launches: [(&[(&str, &str)], &str); 3] = [
        (&mpirun, "started 2 ranks"),
        (&srun, "started 3 ranks"),
        (&pmix_alone, "as rank 1"),
    ];
    for (launcher, said) in launches {
        let dir = tempfile::tempdir().unwrap();
        let problem = common::problem_dir(dir.path());
        let out = dir.path().join("out");
        let output = common::srcflow(&["run", &problem, "--chi-out", "8", "--out"])
            .arg(&out)
            .env_remove("OMPI_COMM_WORLD_RANK")
            .env_remove("PMI_RANK")
            .env_remove("PMIX_RANK")
            .envs(launcher.iter().copied())
            .output()
            .unwrap();
        assert!(!output.status.success());
        let err = common::stderr(&output);
        assert!(
            err.contains(said) && err.contains("--features mpi"),
            "{err}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn ranks_refuse_the_cuda_backend_by_name() {
    let transports = InProcessRanks::group(2);
    let err = EngineBuilder::new(on_devices(2, 8, None))
        .backend(srcflow::backend::BackendKind::Cuda)
        .ranks(transports[0].clone())
        .build()
        .err()
        .expect("accepted");
    assert!(err.to_string().contains("CPU backend only"), "{err}");
}

/// Runs `stack` as 2 ranks keeping a checkpoint in `checkpoint`, with the device failure
/// `fault` (`(rank, "D:N")`) failing every rank midway.
fn fail_keeping_a_checkpoint(
    checkpoint: &Path,
    options: Options,
    stack: &Stack,
    fault: (usize, &str),
) {
    let failing = |rank: usize, builder: EngineBuilder| {
        let tiering = Tiering::default().with_device(
            DeviceOptions::default()
                .with_inject_failure((rank == fault.0).then(|| fault.1.parse().unwrap())),
        );
        builder.checkpoint(checkpoint).tiering(tiering)
    };
    let failed = run_ranks_then(2, options, stack, failing, |_, run| Ok(run));
    assert!(failed.iter().all(Result::is_err), "a rank finished");
}

#[test]
fn ranks_resume_together_from_the_checkpoint_a_failure_left_and_remove_it() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("checkpoint");
    let (stack, options) = (common::problem(), on_devices(3, 24, None));
    let reference = run_ranks(2, options, &stack, |_| Tiering::default());
    let reference = reference.into_iter().next().unwrap().unwrap().output;
    fail_keeping_a_checkpoint(&checkpoint, options, &stack, (1, "2:40"));
    for rank in 0..2 {
        let journal = checkpoint.join(format!("rank-{rank}/journal.jsonl"));
        let kept = std::fs::read_to_string(&journal).unwrap_or_default();
        assert!(kept.lines().count() > 0, "rank {rank} kept nothing");
    }
    let resuming = |_, builder: EngineBuilder| builder.checkpoint(&checkpoint);
    let resumed = run_ranks_then(2, options, &stack, resuming, |_, run| Ok(run));
    for (rank, run) in resumed.into_iter().enumerate() {
        let run = run.unwrap_or_else(|e| panic!("rank {rank}: {e}"));
        assert_eq!(run.output.cores(), reference.cores(), "rank {rank}");
        let used = run.report.checkpoint.expect("a checkpoint use");
        assert!(used.resumed.skipped_tasks > 0, "rank {rank}: {used:?}");
        assert!(used.dir.ends_with(&format!("rank-{rank}")), "{}", used.dir);
    }
    assert!(!checkpoint.exists(), "the finished run left its checkpoint");
}

#[test]
fn a_checkpoint_of_other_ranks_is_refused_by_every_rank_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("checkpoint");
    let (stack, options) = (mpo_mps(), on_devices(3, 8, None));
    fail_keeping_a_checkpoint(&checkpoint, options, &stack, (0, "0:9"));
    let listing = || -> Vec<String> {
        let mut names: Vec<String> = walk(&checkpoint);
        names.sort();
        names
    };
    let before = listing();
    let with_checkpoint = |_, builder: EngineBuilder| builder.checkpoint(&checkpoint);
    let three = run_ranks_then(3, options, &stack, with_checkpoint, |_, run| Ok(run));
    for (rank, run) in three.into_iter().enumerate() {
        let error = run.expect_err("a rank resumed").to_string();
        assert!(
            error.contains("ranks 2 there, 3 here"),
            "rank {rank}: {error}"
        );
    }
    assert_eq!(listing(), before, "the refusal changed the checkpoint");
    let alone = EngineBuilder::new(options).checkpoint(&checkpoint).build();
    let error = alone.unwrap().run(&stack).expect_err("one process resumed");
    assert!(error.to_string().contains("several ranks"), "{error}");
    assert_eq!(listing(), before, "the refusal changed the checkpoint");
}

/// The paths of every file and folder under `dir`, relative to it (lock files left out).
fn walk(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            found.extend(
                walk(&entry.path())
                    .into_iter()
                    .map(|f| format!("{name}/{f}")),
            );
            found.push(format!("{name}/"));
        } else if name != ".lock" {
            found.push(name);
        }
    }
    found
}

#[test]
fn a_checkpoint_kept_by_time_is_refused_under_ranks_by_name() {
    let every = srcflow::checkpoint::CheckpointEvery::Interval(Duration::from_secs(60));
    let transport = InProcessRanks::group(2).remove(0);
    let built = EngineBuilder::new(on_devices(2, 8, None))
        .checkpoint("unused")
        .checkpoint_paced(every)
        .ranks(transport)
        .build();
    let error = built
        .err()
        .expect("a time interval was taken under ranks")
        .to_string();
    assert!(
        error.contains("`EngineBuilder::checkpoint_every`"),
        "{error}"
    );
    assert!(error.contains("number of sites"), "{error}");
}
