//! Device memory behind a CUDA [`DeviceTensor`]: one allocation of the driver's stream-ordered
//! allocator, and the copies between it and host arrays.

use super::cuda_error;
use crate::backend::DeviceTensor;
use crate::error::{Error, Result};
use crate::tensor::{AnyTensor, Array, DType, Typed};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// The bytes of one tensor on the device. Freed (stream-ordered) when the last handle drops.
pub(crate) struct DeviceBuffer {
    bytes: CudaSlice<u8>,
}

impl Drop for DeviceBuffer {
    /// The allocation is freed in its own device's context, whichever thread drops it.
    fn drop(&mut self) {
        let _ = self.bytes.context().bind_to_thread();
    }
}

impl DeviceBuffer {
    /// Room for `len` elements of `dtype` on `stream`, contents undefined.
    pub fn uninit(stream: &Arc<CudaStream>, len: usize, dtype: DType) -> Result<Self> {
        Self::raw(stream, len * dtype.bytes())
    }

    /// Room for `bytes` bytes on `stream` (at least one), contents undefined.
    pub fn raw(stream: &Arc<CudaStream>, bytes: usize) -> Result<Self> {
        // SAFETY: every caller writes all of it before it is read.
        let bytes = unsafe { stream.alloc::<u8>(bytes.max(1)) }.map_err(|e| {
            if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                Error::DeviceOutOfMemory {
                    bytes: crate::ByteSize(bytes as u64),
                    said: format!("{e:?}"),
                }
            } else {
                cuda_error("cuMemAllocAsync", e)
            }
        })?;
        Ok(DeviceBuffer { bytes })
    }

    /// The first four bytes as an `i32` (a library's `info` output), read on `stream`.
    pub fn read_i32(&self, stream: &Arc<CudaStream>) -> Result<i32> {
        let mut value = [0u8; 4];
        stream
            .memcpy_dtoh(&self.bytes.slice(..4), &mut value)
            .map_err(|e| cuda_error("cuMemcpyDtoHAsync", e))?;
        synchronize(stream)?;
        Ok(i32::from_ne_bytes(value))
    }

    /// `len` zeros of `dtype` on `stream`.
    pub fn zeros(stream: &Arc<CudaStream>, len: usize, dtype: DType) -> Result<Self> {
        let mut buffer = Self::uninit(stream, len, dtype)?;
        stream
            .memset_zeros(&mut buffer.bytes)
            .map_err(|e| cuda_error("cuMemsetD8Async", e))?;
        Ok(buffer)
    }

    /// An error unless the buffer is on the device `stream` issues to (`tensor` names it).
    fn on_device_of(&self, stream: &CudaStream, tensor: impl std::fmt::Debug) -> Result<()> {
        let (here, there) = (stream.context().ordinal(), self.bytes.ordinal());
        if here == there {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "the CUDA backend of device {here} was given {tensor:?}, which is on device {there}"
            )))
        }
    }

    /// The device address, for kernels and libraries on `stream`.
    pub fn address(&self, stream: &CudaStream) -> u64 {
        self.bytes.device_ptr(stream).0
    }

    /// The device address to write to, for kernels and libraries on `stream`.
    pub fn address_mut(&mut self, stream: &CudaStream) -> u64 {
        self.bytes.device_ptr_mut(stream).0
    }
}

/// The buffer behind `tensor`, which the CUDA backend of `stream`'s device must have made.
pub fn buffer<'t>(tensor: &'t DeviceTensor, stream: &CudaStream) -> Result<&'t DeviceBuffer> {
    let buffer = tensor
        .memory()
        .downcast_ref::<DeviceBuffer>()
        .ok_or_else(|| {
            Error::Invalid(format!(
                "the CUDA backend was given {tensor:?}, which another backend holds"
            ))
        })?;
    buffer.on_device_of(stream, tensor)?;
    Ok(buffer)
}

/// The buffer behind `tensor` to write into, when no other handle shares it and it is on
/// `stream`'s device.
pub(crate) fn buffer_mut<'t>(
    tensor: &'t mut DeviceTensor,
    stream: &CudaStream,
) -> Result<&'t mut DeviceBuffer> {
    let name = format!("{tensor:?}");
    let buffer = tensor
        .memory_mut()
        .and_then(|m| m.downcast_mut::<DeviceBuffer>())
        .ok_or_else(|| {
            Error::Invalid(format!(
                "the CUDA backend cannot write into {name}: another handle shares it or another \
                 backend holds it"
            ))
        })?;
    buffer.on_device_of(stream, &name)?;
    Ok(buffer)
}

/// A tensor of `dims` and `dtype` over `buffer`.
pub(crate) fn tensor_over(dims: Vec<usize>, dtype: DType, buffer: DeviceBuffer) -> DeviceTensor {
    DeviceTensor::new(dims, dtype, Arc::new(buffer))
}

/// The bytes of `elements`.
fn as_bytes<T: Typed>(elements: &[T]) -> &[u8] {
    // SAFETY: the element types are plain floats or pairs of them, with no padding.
    unsafe { std::slice::from_raw_parts(elements.as_ptr().cast(), std::mem::size_of_val(elements)) }
}

/// The bytes of `elements`, to write.
fn as_bytes_mut<T: Typed>(elements: &mut [T]) -> &mut [u8] {
    let len = std::mem::size_of_val(elements);
    // SAFETY: as in `as_bytes`; every bit pattern is a valid float.
    unsafe { std::slice::from_raw_parts_mut(elements.as_mut_ptr().cast(), len) }
}

/// A copy of `host` on the device, made on `stream` (complete on return).
pub fn upload(stream: &Arc<CudaStream>, host: &AnyTensor) -> Result<DeviceTensor> {
    let dims = host.shape().to_vec();
    for_dtype!(host.dtype(), T => {
        let elements = T::unwrap(host).expect("the dtype matched").data();
        let mut buffer = DeviceBuffer::uninit(stream, elements.len(), host.dtype())?;
        if !elements.is_empty() {
            let mut view = buffer.bytes.slice_mut(..std::mem::size_of_val(elements));
            stream
                .memcpy_htod(as_bytes(elements), &mut view)
                .map_err(|e| cuda_error("cuMemcpyHtoDAsync", e))?;
        }
        synchronize(stream)?;
        Ok(tensor_over(dims, host.dtype(), buffer))
    })
}

/// The elements of `tensor` in host memory, copied on `stream` (complete on return).
pub fn download(stream: &Arc<CudaStream>, tensor: &DeviceTensor) -> Result<AnyTensor> {
    let from = buffer(tensor, stream)?;
    for_dtype!(tensor.dtype(), T => {
        let mut elements = vec![<T as crate::tensor::Scalar>::zero(); tensor.len()];
        if !elements.is_empty() {
            let bytes = as_bytes_mut(&mut elements);
            let view = from.bytes.slice(..bytes.len());
            stream
                .memcpy_dtoh(&view, bytes)
                .map_err(|e| cuda_error("cuMemcpyDtoHAsync", e))?;
        }
        synchronize(stream)?;
        Ok(T::wrap(Array::new(tensor.dims().to_vec(), elements)?))
    })
}

/// Waits until the work issued on `stream` is complete, and reports its errors.
pub(crate) fn synchronize(stream: &CudaStream) -> Result<()> {
    stream
        .synchronize()
        .map_err(|e| cuda_error("cuStreamSynchronize", e))
}
