//! With the block cache as the global allocator (as in the binary), each task's trace slice
//! counts the blocks it took from fresh memory, and those counts add up to no more than
//! the cache's own; once a pass is past the sites where its working set grows, its tasks reuse
//! memory and take none.

use srcflow::alloc::{stats, BlockCache};
use srcflow::engine::{MemorySink, MemorySource};
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::graph::Op;
use srcflow::{Engine, Options};

#[global_allocator]
static ALLOCATOR: BlockCache = BlockCache;

#[test]
fn tasks_count_the_blocks_they_map_and_after_the_widest_sites_map_none() {
    // Environments of 96 columns × bond 96 × MPO bond 16: 2.4 MB each, blocks of the cache.
    // Bonds grow from the edges (2, 4, …), reaching 96 at site 6 and leaving it after site 9.
    let spec = ProblemSpec {
        sites: 16,
        bond: 96,
        mpo_bond: 16,
        ..ProblemSpec::default()
    };
    let stack = generate(ProblemKind::Random, &spec).unwrap();
    let engine = Engine::new(Options::new(96)).unwrap();
    let (graph, _) = engine.prepare(&stack.shape()).unwrap();
    let sink = MemorySink::new(graph.output_kind(), graph.sites());
    let before = stats().mapped;
    let (_, log) = engine
        .run_graph_logged(&graph, &MemorySource::new(&stack), &sink)
        .unwrap();
    let mapped = stats().mapped - before;
    let by_tasks: usize = log.events.iter().map(|e| e.primitives.blocks_mapped).sum();
    assert!(by_tasks > 0 && by_tasks <= mapped, "{by_tasks} of {mapped}");
    let first_env = log
        .events
        .iter()
        .find(|e| matches!(e.op, Op::Env) && e.site == 6)
        .expect("an environment task at site 6");
    assert!(
        first_env.primitives.blocks_mapped > 0,
        "the first environment of bond 96 is new memory: {:?}",
        first_env.primitives
    );

    // Past the widest sites each pass's working set only shrinks, and the sketch, QR and
    // projection tasks of the right-to-left pass fit in memory freed before them at every site.
    let steady = |op: Op, site: usize| match op {
        Op::Env => site > 9,
        Op::Fold => site < 6,
        Op::Sketch | Op::Qr | Op::Project => true,
        _ => false,
    };
    let fresh: Vec<(Op, usize, usize)> = log
        .events
        .iter()
        .filter(|e| steady(e.op, e.site) && e.primitives.blocks_mapped > 0)
        .map(|e| (e.op, e.site, e.primitives.blocks_mapped))
        .collect();
    assert!(fresh.is_empty(), "tasks that took fresh memory: {fresh:?}");
}
