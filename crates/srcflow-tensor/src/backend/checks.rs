//! The checks of a primitive's operands, one for every backend: a backend method called with
//! operands that do not fit returns an error naming them, and never a result with memory
//! left unwritten.

use super::{DeviceTensor, Gemm};
use crate::error::{Error, Result};

/// Checks that `a` and `b` hold the operands of `gemm`, of one element type, and that `dims`
/// holds its product.
pub(crate) fn gemm_operands(
    a: &DeviceTensor,
    b: &DeviceTensor,
    gemm: &Gemm,
    dims: &[usize],
) -> Result<()> {
    let Gemm { batch, m, n, k, .. } = *gemm;
    let sizes_agree = Some(a.len()) == batch.checked_mul(m).and_then(|x| x.checked_mul(k))
        && Some(b.len()) == batch.checked_mul(k).and_then(|x| x.checked_mul(n))
        && Some(dims.iter().product::<usize>())
            == batch.checked_mul(m).and_then(|x| x.checked_mul(n))
        && a.dtype() == b.dtype();
    if sizes_agree {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "a batched GEMM {gemm:?} into {dims:?} cannot take {a:?} and {b:?}"
        )))
    }
}

/// Checks that `perm` reorders the axes of `tensor`, each once.
pub(crate) fn axis_order(tensor: &DeviceTensor, perm: &[usize]) -> Result<()> {
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted.into_iter().eq(0..tensor.dims().len()) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{perm:?} is not an order of the axes of {tensor:?}"
        )))
    }
}

/// Checks that `factors` hold one factor for each entry along axis `axis` of `tensor`.
pub(crate) fn scale_factors(tensor: &DeviceTensor, axis: usize, factors: &[f64]) -> Result<()> {
    if tensor.dims().get(axis) == Some(&factors.len()) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "cannot scale axis {axis} of {tensor:?} by {} factors",
            factors.len()
        )))
    }
}
