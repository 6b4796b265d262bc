//! The kernels of `kernels/` compiled for one device and loaded into its context, by name.

use super::kernel_cache::KernelCache;
use super::{cuda_error, kernels};
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, LaunchConfig};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::Arc;

/// Threads per block of every element-wise launch.
const BLOCK: u32 = 256;
/// The most blocks of a launch; each thread then loops over elements a grid apart.
const MAX_BLOCKS: usize = 1 << 16;

/// Every kernel the backend launches, loaded into one context.
pub(crate) struct LoadedKernels {
    functions: HashMap<String, CudaFunction>,
}

impl LoadedKernels {
    /// Loads every kernel of `kernels/` into `context`, compiled for its device's architecture
    /// (by this process before, kept on disk, or now: [`KernelCache`]).
    pub fn load(context: &Arc<CudaContext>) -> Result<Self> {
        let (major, minor) = context
            .compute_capability()
            .map_err(|e| cuda_error("cuDeviceGetAttribute", e))?;
        let arch = format!("sm_{major}{minor}");
        let mut functions = HashMap::new();
        for file in kernels::FILES {
            let cubin = KernelCache::process().cubin(file, &arch)?;
            let module = context
                .load_module(Ptx::from_binary(cubin.to_vec()))
                .map_err(|e| cuda_error(&format!("cuModuleLoadData (kernels/{})", file.name), e))?;
            for (_, name) in kernels::entries()
                .into_iter()
                .filter(|(f, _)| *f == file.name)
            {
                let function = module
                    .load_function(&name)
                    .map_err(|e| cuda_error(&format!("cuModuleGetFunction ({name})"), e))?;
                functions.insert(name, function);
            }
        }
        Ok(LoadedKernels { functions })
    }

    /// The kernel `name`.
    pub fn get(&self, name: &str) -> Result<&CudaFunction> {
        self.functions
            .get(name)
            .ok_or_else(|| Error::Invalid(format!("no CUDA kernel named {name} was loaded")))
    }
}

/// A one-dimensional launch with enough threads for `n` elements (grid-stride beyond
/// [`MAX_BLOCKS`] blocks).
pub(crate) fn covering(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, MAX_BLOCKS);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}
