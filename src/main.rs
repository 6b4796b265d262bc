//! The `srcflow` command line.

mod cli;

/// Large buffers come from srcflow's block cache (see `srcflow::alloc`).
#[global_allocator]
static ALLOCATOR: srcflow::alloc::BlockCache = srcflow::alloc::BlockCache;

fn main() -> std::process::ExitCode {
    keep_freed_memory();
    cli::closed_pipe_ends_quietly(); // before any other thread exists
    log_to_stderr();
    cli::main()
}

/// Sends `tracing` events to standard error, filtered by `RUST_LOG` (warnings only without it):
/// `RUST_LOG=srcflow=info` shows the plan and each pass, `debug` every memory-governor event,
/// `trace` every task.
fn log_to_stderr() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

/// Keeps freed mid-sized buffers (below the block cache's 1 MiB) in the heap, in few heaps.
///
/// By default glibc serves buffers from 128 KiB up with fresh `mmap`s, which the kernel must
/// zero page by page on first touch. With a high mmap threshold and no trimming, freed buffers
/// are reused as they are. glibc also gives each thread that allocates a heap (an arena) of
/// its own, up to 8 per core, and each keeps what its thread freed: with the lanes' and the
/// kernel pools' threads that held 10 MB beyond the plan on a 40 MB run (peak RSS 3–15 % over
/// `--host-memory`, benches/plan_vs_rss.sh); two arenas keep it within the plan.
fn keep_freed_memory() {
    const ONE_GIB: libc::c_int = 1 << 30;
    const ARENAS: libc::c_int = 2;
    // SAFETY: mallopt only changes allocator tuning; it is called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, ONE_GIB);
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}
