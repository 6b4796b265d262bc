//! Reading and writing single cores as NumPy `.npy` files.
//!
//! Reads float32/float64/complex64/complex128 (either byte order, C or Fortran order) in the
//! file's type; writes any of them in C order. A header's claimed size is checked against the
//! file's real size before any allocation.

use npyz::{DType as NpyDType, NpyFile, NpyHeader, Order, TypeChar, TypeWrite, WriterBuilder};
use num_complex::Complex32;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, Array, DType, Scalar, Typed, C64};
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

/// What a `.npy` header says: shape, element type and order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Dimensions.
    pub shape: Vec<usize>,
    /// NumPy type string, e.g. `<c16`.
    pub dtype: String,
    /// True for Fortran (column-major) order.
    pub fortran: bool,
}

/// The header of the `.npy` file at `path`; the message says what is wrong.
pub fn read_header(path: &Path) -> std::result::Result<Header, String> {
    let file = srcflow_tensor::files::open_regular(path).map_err(|e| e.to_string())?;
    let npy =
        NpyFile::new(BufReader::new(file)).map_err(|e| format!("not a valid .npy file: {e}"))?;
    header_of(&npy)
}

/// Shape, type and order of an opened file, refusing types srcflow cannot read.
fn header_of<R: std::io::Read>(npy: &NpyFile<R>) -> std::result::Result<Header, String> {
    let NpyDType::Plain(ts) = npy.dtype() else {
        return Err("structured arrays are not supported; expected float64 or complex128".into());
    };
    let supported = matches!(
        (ts.type_char(), ts.size_field()),
        (TypeChar::Float, 4 | 8) | (TypeChar::Complex, 8 | 16)
    );
    if !supported {
        return Err(format!(
            "unsupported dtype '{ts}'; expected float32/64 or complex64/128"
        ));
    }
    let shape = npy
        .shape()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("dimension {d} too large")))
        .collect::<std::result::Result<_, _>>()?;
    Ok(Header {
        shape,
        dtype: ts.to_string(),
        fortran: npy.order() == Order::Fortran,
    })
}

/// Bytes per element of a supported type string (`<c16` → 16).
fn item_size(dtype: &str) -> usize {
    dtype[2..].parse().expect("checked type string")
}

/// Reads the array at `path` in C order, in the element type of the file; the message says
/// what is wrong. Data in this machine's byte order is read straight into the array's buffer.
pub fn read(path: &Path) -> std::result::Result<AnyTensor, String> {
    let file = srcflow_tensor::files::open_regular(path).map_err(|e| e.to_string())?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let npy =
        NpyFile::new(BufReader::new(file)).map_err(|e| format!("not a valid .npy file: {e}"))?;
    let header = header_of(&npy)?;
    let npy_header = npy.header().clone();
    let mut payload = npy.into_inner();
    let start = payload.stream_position().map_err(|e| e.to_string())?;
    let found = size.saturating_sub(start);
    let count = header
        .shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or("shape overflows")?;
    let expected = count
        .checked_mul(item_size(&header.dtype))
        .ok_or("shape overflows")?;
    if found != expected as u64 {
        return Err(format!(
            "{} data: shape {:?} of {} needs {expected} bytes, found {found}",
            if found < expected as u64 {
                "truncated"
            } else {
                "corrupt"
            },
            header.shape,
            header.dtype,
        ));
    }
    let data = Payload {
        reader: payload,
        npy_header,
        count,
    };
    let tensor = match DType::from_descr(&header.dtype).expect("checked type string") {
        DType::Float32 => decode::<f32>(data, &header)?,
        DType::Float64 => decode::<f64>(data, &header)?,
        DType::Complex64 => decode::<Complex32>(data, &header)?,
        DType::Complex128 => decode::<C64>(data, &header)?,
    };
    Ok(tensor)
}

/// A `.npy` file's data, its reader at the first element: its header and element count.
struct Payload {
    reader: BufReader<std::fs::File>,
    npy_header: NpyHeader,
    count: usize,
}

/// True when a NumPy type string (`<c16`) is in this machine's byte order.
fn native_order(dtype: &str) -> bool {
    let native = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    dtype.starts_with(native)
}

/// The elements of `payload` as an array of `T` in C order.
fn decode<T: Typed>(
    mut payload: Payload,
    header: &Header,
) -> std::result::Result<AnyTensor, String> {
    let cannot = |e: std::io::Error| format!("cannot decode data: {e}");
    let data = if native_order(&header.dtype) {
        let mut data = vec![T::zeroed(); payload.count];
        payload
            .reader
            .read_exact(bytemuck::cast_slice_mut(&mut data))
            .map_err(cannot)?;
        data
    } else {
        let mut bytes = Vec::new();
        payload.reader.read_to_end(&mut bytes).map_err(cannot)?;
        NpyFile::with_header(payload.npy_header, &bytes[..])
            .into_vec::<T>()
            .map_err(cannot)?
    };
    if !header.fortran {
        return Array::new(header.shape.clone(), data)
            .map(T::wrap)
            .map_err(|e| e.to_string());
    }
    let reversed: Vec<usize> = header.shape.iter().rev().copied().collect();
    let rank = reversed.len();
    let t = Array::new(reversed, data).map_err(|e| e.to_string())?;
    Ok(T::wrap(t.permute(&(0..rank).rev().collect::<Vec<_>>())))
}

/// Writes `tensor` as a C-order `.npy` file of its element type, in npyz's default byte order
/// for it: npyz writes the header, and the elements go out as the bytes they are in memory
/// where that order is this machine's, else through npyz's element-by-element encoding.
pub fn write<T: Scalar>(path: &Path, tensor: &Array<T>) -> Result<()> {
    let io = |e| Error::io(path, e);
    let file = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    let raw = native_order(&T::default_dtype().descr());
    write_to(file, tensor, raw).map_err(io)
}

/// Writes the header, then the elements: their bytes as they are in memory when `raw` (right
/// only where npyz's default byte order is this machine's), else encoded one by one by npyz.
fn write_to<T: Scalar, W: Write>(out: W, tensor: &Array<T>, raw: bool) -> std::io::Result<()> {
    let dtype = T::default_dtype();
    let shape: Vec<u64> = tensor.shape().iter().map(|&d| d as u64).collect();
    let mut out = npyz::WriteOptions::<T>::new()
        .dtype(dtype.clone())
        .shape(&shape)
        .writer(out)
        .write_header_only()?;
    if raw {
        out.write_all(bytemuck::cast_slice(tensor.data()))?;
    } else {
        let encoder = T::writer(&dtype).map_err(std::io::Error::other)?;
        for value in tensor.data() {
            encoder.write_one(&mut out, value)?;
        }
    }
    out.flush()
}

/// Writes `tensor` as a C-order `.npy` file of its element type.
pub fn write_any(path: &Path, tensor: &AnyTensor) -> Result<()> {
    srcflow_tensor::with_array!(tensor, a => write(path, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64;

    /// The bytes of `tensor` written raw or encoded.
    fn bytes<T: Scalar>(tensor: &Array<T>, raw: bool) -> Vec<u8> {
        let mut out = Vec::new();
        write_to(&mut out, tensor, raw).unwrap();
        out
    }

    #[test]
    fn raw_and_encoded_writes_give_the_same_file_in_every_element_type() {
        fn same<T: Scalar>(values: impl Fn(usize) -> T) {
            let tensor = Array::new(vec![2, 3, 4], (0..24).map(values).collect()).unwrap();
            let raw = bytes(&tensor, true);
            assert_eq!(raw, bytes(&tensor, false), "{}", T::DTYPE);
        }
        same(|i| i as f32 - 0.5);
        same(|i| i as f64 * 1e-300);
        same(|i| Complex32::new(i as f32, -(i as f32)));
        same(|i| Complex64::new(i as f64 + 0.25, 1.0 / (i as f64 + 1.0)));
    }
}
