//! With the block cache as the global allocator (as in the binary), each task's trace slice
//! counts the blocks it took from fresh memory, and those counts add up to no more than
//! the cache's own.

use srcflow::alloc::{stats, BlockCache};
use srcflow::engine::{MemorySink, MemorySource};
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::graph::Op;
use srcflow::{Engine, Options};

#[global_allocator]
static ALLOCATOR: BlockCache = BlockCache;

#[test]
fn tasks_count_the_blocks_they_map_and_the_first_of_a_size_maps_new_memory() {
    // Environments of 96 columns × bond 96 × MPO bond 16: 2.4 MB each, blocks of the cache.
    // Bonds grow from the edges (2, 4, …), reaching 96 at site 6.
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
}
