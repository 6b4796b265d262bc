//! NumPy arrays to srcflow's tensors and back, for each of the four element types.

use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{Element, IntoPyArray, PyArrayDyn, PyArrayMethods};
use pyo3::prelude::*;
use srcflow::tensor::{AnyTensor, Array, DType, Typed};

/// Calls `$body` with `$t` bound to the element type of `$dtype`.
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            DType::Float32 => {
                type $t = f32;
                $body
            }
            DType::Float64 => {
                type $t = f64;
                $body
            }
            DType::Complex64 => {
                type $t = num_complex::Complex32;
                $body
            }
            DType::Complex128 => {
                type $t = num_complex::Complex64;
                $body
            }
        }
    };
}

/// The elements of `array` (a NumPy array of `dtype`, any strides) as a tensor of its shape.
pub fn to_tensor(array: &Bound<'_, PyAny>, dtype: DType) -> PyResult<AnyTensor> {
    with_element!(dtype, T => read::<T>(array))
}

/// The tensor of a NumPy array whose elements are `T`.
fn read<T: Element + Typed + Copy>(array: &Bound<'_, PyAny>) -> PyResult<AnyTensor> {
    let array = array.cast::<PyArrayDyn<T>>()?.readonly();
    let view = array.as_array();
    let elements: Vec<T> = view.iter().copied().collect();
    let tensor = Array::new(view.shape().to_vec(), elements).map_err(crate::errors::to_python)?;
    Ok(T::wrap(tensor))
}

/// A NumPy array of `shape` holding the elements of `tensor`, in its element type (the
/// tensor's buffer itself when nothing else shares it).
pub fn to_numpy(
    py: Python<'_>,
    tensor: AnyTensor,
    shape: Vec<usize>,
) -> PyResult<Bound<'_, PyAny>> {
    with_element!(tensor.dtype(), T => write::<T>(py, tensor, shape))
}

/// The NumPy array of `shape` over the elements of `tensor`, whose type is `T`.
fn write<T: Element + Typed + Clone>(
    py: Python<'_>,
    tensor: AnyTensor,
    shape: Vec<usize>,
) -> PyResult<Bound<'_, PyAny>> {
    let elements = tensor
        .into_array::<T>(&"the output core")
        .expect("the element type matched")
        .into_data();
    let array = ArrayD::from_shape_vec(IxDyn(&shape), elements)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok(array.into_pyarray(py).into_any())
}
