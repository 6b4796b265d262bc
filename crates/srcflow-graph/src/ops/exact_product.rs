//! The exact product of a stack as one train (bonds multiply): the reference for small problems.

use crate::train::{Stack, Train};
use srcflow_tensor::backend::{Backend, BackendTensor, CpuBackend};
use srcflow_tensor::error::Result;
use srcflow_tensor::kernels::{legs, site_product};
use srcflow_tensor::tensor::{Labeled, Meter};

/// The uncompressed product of all layers, with bond = product of the layers' bonds.
pub fn exact_product(stack: &Stack) -> Result<Train> {
    exact_product_with(stack, &mut |_| {})
}

/// [`exact_product`], calling `site_done` with each site as it is contracted (for progress).
pub fn exact_product_with(stack: &Stack, site_done: &mut dyn FnMut(usize)) -> Result<Train> {
    let cpu = CpuBackend::new(0)?;
    let cores = (0..stack.shape().sites())
        .map(|site| {
            let core = site_of_product(&cpu, stack, site)?;
            site_done(site);
            Ok(core)
        })
        .collect::<Result<_>>()?;
    Train::new(stack.shape().output_kind(), cores)
}

/// Site `site` of the exact product, `[l, r, u, d]`.
fn site_of_product(cpu: &CpuBackend, stack: &Stack, site: usize) -> Result<srcflow_tensor::Tensor> {
    let k = stack.layers().len();
    let operands = stack
        .layers()
        .iter()
        .enumerate()
        .map(|(i, layer)| {
            let tensor = cpu.upload(&layer.train.core_c64(site).into())?;
            Ok(Labeled {
                legs: legs::core(i, k),
                value: BackendTensor::new(cpu, tensor),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let product = site_product(&operands, &mut Meter::default())?;
    let s = product.value.tensor.dims().to_vec();
    let left: usize = s[..k].iter().product();
    let right: usize = s[k..2 * k].iter().product();
    let shape = vec![left, right, s[2 * k], s[2 * k + 1]];
    Ok(cpu.download(product.value.tensor.reshaped(shape))?.to_c64())
}
