//! The CUDA backend's copies: permutes, slices, joins and places as strided gathers and
//! scatters, and the element-wise conjugate, scale and conversion.

use super::loaded_kernels::covering;
use super::memory::{buffer, buffer_mut, synchronize, tensor_over, DeviceBuffer};
use super::strided::Strided;
use super::{cuda_error, kernels, CudaBackend};
use crate::backend::{checks, placeable, DeviceTensor};
use crate::error::{Error, Result};
use crate::tensor::{Array, DType, Typed};
use cudarc::driver::PushKernelArg;
use std::ops::Range;

impl CudaBackend {
    /// A new tensor of `dims`: the elements of `tensor` where `layout` reads them.
    fn gather(
        &self,
        tensor: &DeviceTensor,
        layout: Strided,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        let stream = self.stream();
        let len: usize = dims.iter().product();
        let mut out = DeviceBuffer::uninit(stream, len, tensor.dtype())?;
        if len > 0 {
            let (input, output) = (
                buffer(tensor, stream)?.address(stream),
                out.address_mut(stream),
            );
            let n = len as i64;
            let function = self.kernels.get(&kernels::gather(tensor.dtype()))?;
            let mut launch = stream.launch_builder(function);
            launch.arg(&input).arg(&output).arg(&n).arg(&layout);
            // SAFETY: the layout reads within `tensor` and writes `len` elements of `out`.
            unsafe { launch.launch(covering(len)) }.map_err(|e| cuda_error("gather", e))?;
        }
        synchronize(stream)?;
        Ok(tensor_over(dims, tensor.dtype(), out))
    }

    /// Writes `part` into `whole` where `layout` places it.
    fn scatter(
        &self,
        part: &DeviceTensor,
        whole: &mut DeviceTensor,
        layout: Strided,
    ) -> Result<()> {
        let stream = self.stream();
        let len = part.len();
        if len > 0 {
            let input = buffer(part, stream)?.address(stream);
            let output = buffer_mut(whole, stream)?.address_mut(stream);
            let n = len as i64;
            let function = self.kernels.get(&kernels::scatter(part.dtype()))?;
            let mut launch = stream.launch_builder(function);
            launch.arg(&input).arg(&output).arg(&n).arg(&layout);
            // SAFETY: the layout writes within `whole`, reading `len` elements of `part`.
            unsafe { launch.launch(covering(len)) }.map_err(|e| cuda_error("scatter", e))?;
        }
        synchronize(stream)
    }

    /// Runs the element-wise kernel `name` (input, output, count, the factors if any, then
    /// `extra`) over `tensor`
    /// into a new tensor of `dtype`.
    fn elementwise(
        &self,
        name: &str,
        tensor: &DeviceTensor,
        dtype: DType,
        extra: &[i64],
        factors: Option<&DeviceBuffer>,
    ) -> Result<DeviceTensor> {
        let stream = self.stream();
        let len = tensor.len();
        let mut out = DeviceBuffer::uninit(stream, len, dtype)?;
        if len > 0 {
            let (input, output) = (
                buffer(tensor, stream)?.address(stream),
                out.address_mut(stream),
            );
            let factors = factors.map(|f| f.address(stream));
            let n = len as i64;
            let function = self.kernels.get(name)?;
            let mut launch = stream.launch_builder(function);
            launch.arg(&input).arg(&output).arg(&n);
            if let Some(factors) = &factors {
                launch.arg(factors);
            }
            for value in extra {
                launch.arg(value);
            }
            // SAFETY: the kernel reads and writes `len` elements of `tensor` and `out`.
            unsafe { launch.launch(covering(len)) }.map_err(|e| cuda_error(name, e))?;
        }
        synchronize(stream)?;
        Ok(tensor_over(tensor.dims().to_vec(), dtype, out))
    }

    /// [`Backend::permute`](crate::backend::Backend::permute).
    pub(super) fn permuted(&self, tensor: &DeviceTensor, perm: &[usize]) -> Result<DeviceTensor> {
        let dims = perm.iter().map(|&p| tensor.dims()[p]).collect();
        self.gather(tensor, Strided::permuted(tensor.dims(), perm)?, dims)
    }

    /// [`Backend::conj`](crate::backend::Backend::conj).
    pub(super) fn conjugated(&self, tensor: &DeviceTensor) -> Result<DeviceTensor> {
        self.elementwise(
            &kernels::conj(tensor.dtype()),
            tensor,
            tensor.dtype(),
            &[],
            None,
        )
    }

    /// [`Backend::cast`](crate::backend::Backend::cast).
    pub(super) fn converted(&self, tensor: &DeviceTensor, dtype: DType) -> Result<DeviceTensor> {
        if tensor.dtype() == dtype {
            return Ok(tensor.clone());
        }
        self.elementwise(
            &kernels::cast(tensor.dtype(), dtype),
            tensor,
            dtype,
            &[],
            None,
        )
    }

    /// [`Backend::scale`](crate::backend::Backend::scale).
    pub(super) fn scaled(
        &self,
        tensor: &DeviceTensor,
        axis: usize,
        factors: &[f64],
    ) -> Result<DeviceTensor> {
        checks::scale_factors(tensor, axis, factors)?;
        let dims = tensor.dims();
        let inner: usize = dims[axis + 1..].iter().product();
        let host = <f64 as Typed>::wrap(Array::new(vec![factors.len()], factors.to_vec())?);
        let on_device = super::memory::upload(self.stream(), &host)?;
        let factors = buffer(&on_device, self.stream())?;
        let extra = [dims[axis] as i64, inner as i64];
        self.elementwise(
            &kernels::scale(tensor.dtype()),
            tensor,
            tensor.dtype(),
            &extra,
            Some(factors),
        )
    }

    /// [`Backend::slice`](crate::backend::Backend::slice).
    pub(super) fn sliced(
        &self,
        tensor: &DeviceTensor,
        axis: usize,
        range: Range<usize>,
    ) -> Result<DeviceTensor> {
        let dims = tensor.dims();
        if axis >= dims.len() || range.end > dims[axis] || range.start > range.end {
            return Err(Error::Invalid(format!(
                "cannot slice {range:?} of axis {axis} of {tensor:?}"
            )));
        }
        let mut sliced = dims.to_vec();
        sliced[axis] = range.len();
        self.gather(tensor, Strided::along(dims, axis, range)?, sliced)
    }

    /// [`Backend::join`](crate::backend::Backend::join).
    pub(super) fn joined(&self, parts: &[DeviceTensor], axis: usize) -> Result<DeviceTensor> {
        let first = parts
            .first()
            .ok_or_else(|| Error::Invalid("nothing to join".into()))?;
        let mut dims = first.dims().to_vec();
        dims[axis] = parts.iter().map(|p| p.dims()[axis]).sum();
        let len = dims.iter().product();
        let out = DeviceBuffer::uninit(self.stream(), len, first.dtype())?;
        let mut whole = tensor_over(dims, first.dtype(), out);
        let mut start = 0;
        for part in parts {
            self.placed(&mut whole, axis, start, part)?;
            start += part.dims()[axis];
        }
        Ok(whole)
    }

    /// [`Backend::place`](crate::backend::Backend::place).
    pub(super) fn placed(
        &self,
        whole: &mut DeviceTensor,
        axis: usize,
        start: usize,
        part: &DeviceTensor,
    ) -> Result<()> {
        placeable(whole, axis, start, part)?;
        let layout = Strided::along(whole.dims(), axis, start..start + part.dims()[axis])?;
        self.scatter(part, whole, layout)
    }
}
