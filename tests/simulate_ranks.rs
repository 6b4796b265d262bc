//! The simulator across ranks (`srcflow simulate --ranks`): the whole run as one graph in which
//! each value that crosses ranks is a message on the reading rank's network lane, one message
//! at a time, timed by the model's bandwidth and latency; every rank reads its own input cores;
//! the exchanges it reports are those a run of as many ranks makes; and its trace has a host
//! per rank.

mod common;

use common::{problem_dir, srcflow, stderr};
use srcflow::graph::{DataId, GraphOptions, Lane, Op, Shared, SweepGraph};
use srcflow::ranks::{
    across_nodes, AcrossNodes, ExchangeUse, InProcessRanks, RankGraph, RankLayout,
};
use srcflow::sched::RunLog;
use srcflow::sim::MachineModel;
use srcflow::trace::{chrome_trace, TraceSummary};
use srcflow::{Engine, EngineBuilder, Options, Report, Stack};
use std::collections::BTreeMap;

const DEVICES: usize = 4;
const CHI_OUT: usize = 16;

/// Random MPO · MPS on 10 sites.
fn problem() -> Stack {
    let spec = srcflow::gen::ProblemSpec {
        sites: 10,
        bond: 16,
        mpo_bond: 3,
        ..Default::default()
    };
    srcflow::gen::generate(srcflow::gen::ProblemKind::Random, &spec).unwrap()
}

fn options() -> Options {
    Options::new(CHI_OUT)
        .with_graph(GraphOptions::new(CHI_OUT).with_devices(DEVICES))
        .with_threads(DEVICES)
}

/// A machine computing at 10 GFLOP/s and moving 1 GB/s on every lane, with a network of
/// `network` bytes per second and `latency` seconds per message.
fn machine(network: f64, latency: f64) -> MachineModel {
    let kernels = ["env", "sketch", "qr", "project", "first", "exact"];
    let lanes = Lane::ALL.iter().filter(|&&l| l.modelled());
    let mut bytes_per_s: BTreeMap<String, f64> =
        lanes.map(|l| (l.name().to_string(), 1e9)).collect();
    bytes_per_s.insert("network".into(), network);
    MachineModel {
        name: "test machine".into(),
        gflops: kernels.iter().map(|k| (k.to_string(), 10.0)).collect(),
        bytes_per_s,
        network_latency_s: latency,
        task_overhead_s: 1e-5,
        kernel_overhead_s: BTreeMap::new(),
        compute: vec![],
        disk_requests: None,
        assumed: false,
        device_has_own_memory: false,
        notes: vec![],
    }
}

/// The graph of `problem` on [`DEVICES`] devices, as `ranks` ranks run it.
fn ranked(ranks: usize) -> AcrossNodes {
    let graph = SweepGraph::build(&problem().shape(), &options().graph).unwrap();
    across_nodes(&graph, ranks).unwrap()
}

/// Simulates the graph of `ranks` ranks on `machine`.
fn simulate(ranks: usize, machine: &MachineModel) -> (Report, RunLog, SweepGraph) {
    let ranked = ranked(ranks);
    let (report, log) = Engine::new(options())
        .unwrap()
        .simulate_across_nodes(&ranked, machine)
        .unwrap();
    (report, log, ranked.graph)
}

/// True for the tasks that bring input cores in.
fn brings_input(task: &srcflow::graph::Task) -> bool {
    matches!(task.op, Op::ReadSite { .. } | Op::UploadPart)
}

#[test]
fn values_cross_ranks_only_as_messages_and_every_rank_reads_its_own_inputs() {
    for ranks in [2, 3] {
        let alone = SweepGraph::build(&problem().shape(), &options().graph).unwrap();
        let whole = ranked(ranks).graph;
        assert_eq!(whole.ranks, ranks);
        let layout = RankLayout::new(0, ranks, DEVICES).unwrap();
        for edge in whole.dependencies() {
            let (from, to) = (&whole[edge.from], &whole[edge.to]);
            for task in [from, to] {
                assert_eq!(task.rank, layout.owner(task.device, DEVICES), "{task}");
            }
            let chained = from.op == Op::Receive && to.op == Op::Receive;
            let message = from.op == Op::Send && to.op == Op::Receive;
            assert!(
                from.rank == to.rank || brings_input(from) || message || chained,
                "{ranks} ranks: {from} feeds {to} across ranks"
            );
        }
        // As many sends, receives and copies of input tasks on each rank as the rank's own
        // graph in a run of as many ranks.
        for rank in 0..ranks {
            let own = RankGraph::of(&alone, RankLayout::new(rank, ranks, DEVICES).unwrap(), true);
            let count = |graph: &SweepGraph, pick: &dyn Fn(&srcflow::graph::Task) -> bool| {
                graph.tasks().filter(|t| pick(t)).count()
            };
            let copied = |n: srcflow::graph::TaskId| {
                let task = &own.graph[n];
                let original = alone.task(n);
                brings_input(task)
                    && original.is_some_and(|t| layout.owner(t.device, DEVICES) != rank)
            };
            let copies = own.graph.task_ids().filter(|&n| copied(n)).count();
            let added = |t: &srcflow::graph::Task| t.rank == rank && brings_input(t);
            let inputs_here = count(&whole, &added);
            let inputs_own = count(&alone, &|t| {
                layout.owner(t.device, DEVICES) == rank && brings_input(t)
            });
            assert_eq!(
                inputs_here,
                inputs_own + copies,
                "rank {rank} of {ranks}: input tasks"
            );
            // A message per send and receive, but the receive of an S gathered in place,
            // which brings a message from each other rank's row blocks.
            let messages = |t: &srcflow::graph::Task| match t.outputs.first() {
                Some(&DataId::Replica { of, .. }) => own
                    .exchanges
                    .iter()
                    .find(|e| {
                        e.in_place.is_some()
                            && e.values[0].id
                                == DataId::Part {
                                    of,
                                    device: e.values[0].device,
                                }
                    })
                    .map_or(1, |e| e.values.iter().filter(|c| c.from != rank).count()),
                _ => 1,
            };
            for op in [Op::Send, Op::Receive] {
                let here = count(&whole, &|t| t.op == op && t.rank == rank);
                let tasks = own.graph.tasks().filter(|t| t.op == op);
                let there: usize = tasks.map(|t| messages(t)).sum();
                assert_eq!(here, there, "rank {rank} of {ranks}: {op:?} tasks");
                assert!(here > 0, "rank {rank} of {ranks} has no {op:?} task");
            }
        }
    }
}

#[test]
fn a_half_batch_node_stays_on_its_rank() {
    let mut whole = ranked(2).graph;
    let sketch = whole
        .task_ids()
        .find(|&n| whole[n].op == Op::Sketch && whole[n].rank == 1)
        .unwrap();
    for half in whole.split_in_halves(sketch).unwrap() {
        assert_eq!(whole[half].rank, 1);
    }
}

/// Every receive of `log` on `rank`, as (start, end, bytes), in start order.
fn receives(log: &RunLog, rank: usize) -> Vec<(f64, f64, u64)> {
    let mut received: Vec<_> = log
        .events
        .iter()
        .filter(|e| e.op == Op::Receive && e.rank == rank)
        .map(|e| (e.start, e.end, e.bytes))
        .collect();
    received.sort_by(|a, b| a.0.total_cmp(&b.0));
    received
}

#[test]
fn each_rank_receives_one_message_at_a_time_at_the_models_bandwidth_and_latency() {
    let (network, latency) = (1e6, 1e-3);
    let (_, log, graph) = simulate(2, &machine(network, latency));
    assert_eq!(log.events.len(), graph.task_count());
    for rank in 0..2 {
        let received = receives(&log, rank);
        assert!(!received.is_empty());
        for pair in received.windows(2) {
            assert!(
                pair[1].0 >= pair[0].1 - 1e-9,
                "rank {rank}: {pair:?} overlap"
            );
        }
        for &(start, end, bytes) in &received {
            let modelled = 1e-5 + latency + bytes as f64 / network;
            assert!(
                (end - start - modelled).abs() < 1e-8,
                "{end} - {start} vs {modelled}"
            );
        }
    }
    // Each rank reads on its own io lane: reads of the two ranks run at the same time.
    let reads = |rank: usize| {
        let reads = log.events.iter();
        reads.filter(move |e| matches!(e.op, Op::ReadSite { .. }) && e.rank == rank)
    };
    let overlap = reads(0).any(|a| reads(1).any(|b| a.start < b.end && b.start < a.end));
    assert!(overlap, "the ranks' reads never overlap");
}

#[test]
fn values_are_copied_on_the_host_as_the_transport_copies_them() {
    // Host copies rated: each send packs its value, and each receive decodes it, but where
    // devices compute in host memory a send's value is handed over as it is, and an S that
    // every rank reading it receives whole arrives in place, with no all-gather after.
    let (network, latency, host_copy) = (1e6, 1e-3, 4e6);
    let mut in_host = machine(network, latency);
    in_host
        .bytes_per_s
        .insert(srcflow::sim::HOST_COPY.into(), host_copy);
    let mut on_gpus = in_host.clone();
    on_gpus.device_has_own_memory = true;
    // What a run of two ranks in host memory receives in place: the S whose replicas on a
    // rank's devices one receive task makes.
    let alone = SweepGraph::build(&problem().shape(), &options().graph).unwrap();
    let rank_0 = RankGraph::of(&alone, RankLayout::new(0, 2, DEVICES).unwrap(), true);
    let receives = rank_0.graph.tasks().filter(|t| t.op == Op::Receive);
    let in_place_s: Vec<Shared> = receives
        .filter_map(|t| match t.outputs.first() {
            Some(&DataId::Replica { of, .. }) => Some(of),
            _ => None,
        })
        .collect();
    assert!(!in_place_s.is_empty());
    let of_in_place_s = |id: DataId| match id {
        DataId::Part { of, .. } | DataId::Replica { of, .. } => in_place_s.contains(&of),
        _ => false,
    };
    for (model, in_host_memory) in [(&in_host, true), (&on_gpus, false)] {
        let (_, log, whole) = simulate(2, model);
        let mut timed = BTreeMap::<(String, bool), usize>::new();
        for e in &log.events {
            let task = &whole[e.node];
            let bytes = task.moved_bytes as f64;
            let value = match e.op {
                Op::Receive | Op::Send => task.inputs.first(),
                Op::AllGather => task.outputs.first(),
                _ => continue,
            };
            let in_place = in_host_memory && value.is_some_and(|&id| of_in_place_s(id));
            let modelled = match (e.op, in_place) {
                (Op::Receive, true) => 1e-5 + latency + bytes / network,
                (Op::Receive, false) => 1e-5 + latency + bytes / network + bytes / host_copy,
                (Op::Send, _) if in_host_memory => 1e-5 + bytes / host_copy,
                (Op::Send, _) => 1e-5 + bytes / host_copy + bytes / 1e9,
                (Op::AllGather, true) => 0.0,
                (Op::AllGather, false) => 1e-5 + bytes / 1e9,
                _ => continue,
            };
            let took = e.end - e.start;
            assert!(
                (took - modelled).abs() < 1e-8,
                "{e:?}: {took} vs {modelled}"
            );
            *timed.entry((format!("{:?}", e.op), in_place)).or_default() += 1;
        }
        let has = |op: &str, in_place: bool| timed.contains_key(&(op.to_string(), in_place));
        assert!(has("Receive", false) && has("Send", false) && has("AllGather", false));
        let arrived_in_place = has("Receive", true) && has("AllGather", true);
        assert_eq!(arrived_in_place, in_host_memory, "{timed:?}");
    }
}

#[test]
fn a_slow_network_slows_several_ranks_and_a_fast_one_costs_little() {
    // Without fixed costs per task, which the sends and receives on the chain of each site
    // would add.
    let fast = MachineModel {
        task_overhead_s: 0.0,
        ..machine(1e15, 0.0)
    };
    let one = simulate(1, &fast).0.wall_s;
    let two_fast = simulate(2, &fast).0.wall_s;
    let two_slow = simulate(2, &machine(1e5, 1e-3)).0.wall_s;
    assert!(
        two_fast <= 1.2 * one,
        "two ranks on a fast network take {two_fast} s, one {one} s"
    );
    assert!(
        two_slow > 2.0 * two_fast,
        "a slow network: {two_slow} s, a fast one {two_fast} s"
    );
}

#[test]
fn the_simulated_exchanges_are_those_a_run_of_as_many_ranks_makes() {
    let ranks = 2;
    let stack = problem();
    let mut runs = vec![];
    std::thread::scope(|scope| {
        let handles: Vec<_> = InProcessRanks::group(ranks)
            .into_iter()
            .map(|transport| {
                let stack = &stack;
                scope.spawn(move || {
                    let options = options().with_threads(2);
                    let engine = EngineBuilder::new(options).ranks(transport).build();
                    engine.and_then(|e| e.run(stack)).unwrap()
                })
            })
            .collect();
        runs = handles.into_iter().map(|h| h.join().unwrap()).collect();
    });
    let ran = &runs[0].report.network;
    let graph = SweepGraph::build(&stack.shape(), &options().graph).unwrap();
    let exchanges = across_nodes(&graph, ranks).unwrap().exchanges;
    let (_, log, whole) = simulate(ranks, &machine(1e9, 1e-6));
    let simulated = ExchangeUse::simulated(&exchanges, &whole, &log);
    let kinds = |uses: &[ExchangeUse]| -> Vec<(String, usize, u64)> {
        uses.iter()
            .map(|u| (u.what.clone(), u.count, u.bytes))
            .collect()
    };
    assert_eq!(kinds(&simulated), kinds(ran));
    let gathers = simulated
        .iter()
        .find(|u| u.what == "sketch blocks (gather)");
    assert!(gathers.unwrap().seconds > 0.0, "{simulated:?}");
}

#[test]
fn the_trace_has_a_host_per_rank_and_the_report_reads_it() {
    let (_, log, graph) = simulate(2, &machine(1e9, 1e-6));
    let trace = chrome_trace(&graph, &log);
    let events = trace["traceEvents"].as_array().unwrap();
    let processes: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    for name in ["host of rank 0", "host of rank 1", "device 3 of rank 1"] {
        assert!(processes.contains(&name), "{processes:?}");
    }
    let summary = TraceSummary::of(&trace).unwrap();
    let lanes: Vec<&str> = summary.lanes.iter().map(|l| l.lane.as_str()).collect();
    for lane in ["host of rank 0 network", "host of rank 1 io"] {
        assert!(lanes.contains(&lane), "{lanes:?}");
    }
}

#[test]
fn a_model_without_a_network_and_too_few_devices_are_refused_by_name() {
    let mut model = machine(1e9, 0.0);
    model.bytes_per_s.remove("network");
    let err = model.check_network().unwrap_err().to_string();
    assert!(err.contains("bytes_per_s.network"), "{err}");
    let graph = SweepGraph::build(&problem().shape(), &options().graph).unwrap();
    let err = across_nodes(&graph, DEVICES + 1).unwrap_err().to_string();
    assert!(err.contains("5 ranks need at least 5 devices"), "{err}");
    let err = across_nodes(&graph, 0).unwrap_err().to_string();
    assert!(err.contains("at least one rank"), "{err}");
}

#[test]
fn simulate_ranks_reports_the_network_and_refuses_bad_ranks_and_models_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = problem_dir(tmp.path());
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/graphs/leonardo-a100.json");
    let trace = tmp.path().join("trace.json");
    let simulate = |ranks: &str, model: &str| {
        srcflow(&["simulate", &dir, "--chi-out", "32", "--devices", "4"])
            .args(["--ranks", ranks, "--model", model, "--json", "--trace"])
            .arg(&trace)
            .output()
            .unwrap()
    };
    let done = simulate("2", model);
    assert!(done.status.success(), "{}", stderr(&done));
    let report: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    let kinds: Vec<&str> = report["network"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["what"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"S parts (all-gather)"), "{kinds:?}");
    assert!(std::fs::read_to_string(&trace)
        .unwrap()
        .contains("host of rank 1"));
    std::fs::remove_file(&trace).unwrap();
    let mut unnetworked: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap();
    unnetworked["bytes_per_s"]
        .as_object_mut()
        .unwrap()
        .remove("network");
    let path = tmp.path().join("no-network.json");
    std::fs::write(&path, unnetworked.to_string()).unwrap();
    for (ranks, model, says) in [
        ("2", path.to_str().unwrap(), "no-network.json"),
        ("2", path.to_str().unwrap(), "bytes_per_s.network"),
        ("0", model, "at least one rank"),
        ("5", model, "5 ranks need at least 5 devices"),
    ] {
        let refused = simulate(ranks, model);
        let message = stderr(&refused);
        assert!(
            !refused.status.success() && message.contains(says),
            "{message}"
        );
        assert!(!trace.exists(), "no trace on an error");
    }
}

#[test]
fn the_checkpoint_writes_of_ranks_are_modelled_on_each_rank_s_disk() {
    let graph = SweepGraph::build(&problem().shape(), &options().graph).unwrap();
    let plain = across_nodes(&graph, 2).unwrap();
    let checkpointed = across_nodes(&graph.with_checkpoint_writes(1), 2).unwrap();
    let writes = checkpointed.graph.tasks();
    let writes: Vec<_> = writes.filter(|t| t.op == Op::Checkpoint).collect();
    let ranks: std::collections::BTreeSet<usize> = writes.iter().map(|t| t.rank).collect();
    assert_eq!(ranks, [0, 1].into(), "every rank writes its own values");
    assert!(writes.iter().all(|t| t.lane == Lane::DiskWrite));
    let slow_disk = {
        let mut machine = machine(1e9, 1e-6);
        machine
            .bytes_per_s
            .insert(Lane::DiskWrite.name().into(), 1e6);
        machine
    };
    let engine = Engine::new(options()).unwrap();
    let (without, _) = engine.simulate_across_nodes(&plain, &slow_disk).unwrap();
    let (with, _) = engine
        .simulate_across_nodes(&checkpointed, &slow_disk)
        .unwrap();
    assert!(
        with.wall_s > without.wall_s,
        "writes at 1 MB/s cost nothing: {} against {} s",
        with.wall_s,
        without.wall_s
    );
}
