//! An out-of-memory from a device's own allocator inside a primitive (as a GPU driver reports
//! it) reaches the memory governor as the task's, which recovers from it as from any failed
//! allocation: the run ends with the result of a run that never ran out.

mod common;

use common::*;
use srcflow::backend::{Backend, CpuBackend, DeviceTensor, Gemm, Stream};
use srcflow::device::{MemoryPool, PoolConfig};
use srcflow::ops::distance;
use srcflow::tensor::{AnyTensor, DType};
use srcflow::{ByteSize, Engine, Error, Result};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The CPU backend, except that its allocator "runs out" for the first `failures` GEMM outputs
/// of `at_least` bytes or more, as a GPU's driver would.
struct RunsOut {
    cpu: CpuBackend,
    failures: AtomicUsize,
    at_least: u64,
}

impl Backend for RunsOut {
    fn name(&self) -> &'static str {
        "runs-out"
    }
    fn threads(&self) -> usize {
        self.cpu.threads()
    }
    fn arithmetic(&self) -> String {
        self.cpu.arithmetic()
    }
    fn shares_host_memory(&self) -> bool {
        true
    }
    fn within(&self, stream: Stream, work: &mut (dyn FnMut() + Send)) {
        self.cpu.within(stream, work)
    }
    fn memory_pool(&self, config: PoolConfig) -> Result<Box<dyn MemoryPool>> {
        self.cpu.memory_pool(config)
    }
    fn upload(&self, host: &AnyTensor) -> Result<DeviceTensor> {
        self.cpu.upload(host)
    }
    fn download(&self, tensor: DeviceTensor) -> Result<AnyTensor> {
        self.cpu.download(tensor)
    }
    fn permute(&self, tensor: &DeviceTensor, perm: &[usize]) -> Result<DeviceTensor> {
        self.cpu.permute(tensor, perm)
    }
    fn conj(&self, tensor: &DeviceTensor) -> Result<DeviceTensor> {
        self.cpu.conj(tensor)
    }
    fn cast(&self, tensor: &DeviceTensor, dtype: DType) -> Result<DeviceTensor> {
        self.cpu.cast(tensor, dtype)
    }
    fn batched_gemm(
        &self,
        a: &DeviceTensor,
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        let bytes = (gemm.batch * gemm.m * gemm.n * a.dtype().bytes()) as u64;
        let fails = bytes >= self.at_least
            && self
                .failures
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
        if fails {
            return Err(Error::DeviceOutOfMemory {
                bytes: ByteSize(bytes),
                said: "CUDA_ERROR_OUT_OF_MEMORY (simulated)".into(),
            });
        }
        self.cpu.batched_gemm(a, b, gemm, dims)
    }
    fn thin_qr(&self, a: &DeviceTensor) -> Result<(DeviceTensor, DeviceTensor)> {
        self.cpu.thin_qr(a)
    }
    fn thin_svd(&self, a: &DeviceTensor) -> Result<(DeviceTensor, Vec<f64>, DeviceTensor)> {
        self.cpu.thin_svd(a)
    }
    fn scale(&self, tensor: &DeviceTensor, axis: usize, factors: &[f64]) -> Result<DeviceTensor> {
        self.cpu.scale(tensor, axis, factors)
    }
    fn slice(
        &self,
        tensor: &DeviceTensor,
        axis: usize,
        range: Range<usize>,
    ) -> Result<DeviceTensor> {
        self.cpu.slice(tensor, axis, range)
    }
    fn join(&self, parts: &[DeviceTensor], axis: usize) -> Result<DeviceTensor> {
        self.cpu.join(parts, axis)
    }
    fn zeros(&self, dims: Vec<usize>, dtype: DType) -> Result<DeviceTensor> {
        self.cpu.zeros(dims, dtype)
    }
    fn place(
        &self,
        whole: &mut DeviceTensor,
        axis: usize,
        start: usize,
        part: &DeviceTensor,
    ) -> Result<()> {
        self.cpu.place(whole, axis, start, part)
    }
}

/// An engine on one device whose allocator runs out `failures` times.
fn running_out(failures: usize) -> Engine {
    let backend = RunsOut {
        cpu: CpuBackend::new(2).unwrap(),
        failures: AtomicUsize::new(failures),
        at_least: 64 << 10,
    };
    Engine::builder(CHI_OUT)
        .graph(options(None).graph)
        .backends(vec![Box::new(backend)])
        .build()
        .unwrap()
}

#[test]
fn a_device_allocators_out_of_memory_is_recovered_by_the_governor() {
    let stack = problem();
    let reference = Engine::new(options(None))
        .unwrap()
        .run(&stack)
        .unwrap()
        .output;
    let run = running_out(3).run(&stack).unwrap();
    let d = distance(&run.output, &reference).unwrap();
    assert!(d <= 1e-12, "distance {d:e} from the run that never ran out");
    let memory = &run.report.memory;
    assert_eq!((memory.out_of_memory, memory.injected), (3, 0));
    assert!(memory.rewrites + memory.retries >= 3, "{memory:?}");
}

#[test]
fn an_allocator_that_never_recovers_ends_in_the_governors_named_error() {
    let error = running_out(usize::MAX).run(&problem()).unwrap_err();
    assert!(error.is_out_of_memory(), "{error}");
    let message = error.to_string();
    assert!(message.contains("watchdog"), "{message}");
}
