//! With the block cache as the global allocator (as in the binary), a CPU backend's pool
//! threads reserve the GEMM library's per-thread workspace when the pool starts: a GEMM on any
//! of them later takes no fresh memory, so what a call holds does not depend on which threads
//! its GEMMs ran on.

use faer::{c64, Accum, Mat, Par};
use srcflow::backend::{Backend, CpuBackend, Stream};
use srcflow_tensor::alloc::{take_mapped_here, BlockCache};

#[global_allocator]
static ALLOCATOR: BlockCache = BlockCache;

/// Blocks of fresh memory the calling thread takes for one 64 × 64 × 64 complex GEMM (whose
/// operands are too small to be blocks themselves).
fn fresh_blocks_of_a_gemm() -> usize {
    let a = Mat::<c64>::from_fn(64, 64, |i, j| c64::new(i as f64, j as f64));
    let mut out = Mat::<c64>::zeros(64, 64);
    take_mapped_here();
    faer::linalg::matmul::matmul(
        out.as_mut(),
        Accum::Replace,
        &a,
        &a,
        c64::new(1.0, 0.0),
        Par::Seq,
    );
    take_mapped_here()
}

#[test]
fn pool_threads_hold_their_gemm_workspace_from_the_start() {
    let fresh_thread = std::thread::spawn(fresh_blocks_of_a_gemm).join().unwrap();
    assert_eq!(
        fresh_thread, 1,
        "a thread's first GEMM reserves its workspace"
    );
    let backend = CpuBackend::new(2).unwrap();
    let mut on_pool = Vec::new();
    backend.within(Stream::Compute, &mut || {
        on_pool = rayon::broadcast(|_| fresh_blocks_of_a_gemm())
    });
    assert_eq!(
        on_pool,
        vec![0, 0],
        "the pool's threads reserved theirs when it started"
    );
}
