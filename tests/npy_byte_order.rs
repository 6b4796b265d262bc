//! `.npy` files in either byte order and either element order read as the same array: this
//! machine's order straight into the array's buffer, the other through npyz's decoding.

use srcflow::io::npy;
use srcflow::tensor::AnyTensor;

/// A version-1 `.npy` file of complex128 elements `values` (given in the file's element order)
/// with `shape`, in big- or little-endian byte order.
fn npy_bytes(shape: &[usize], values: &[(f64, f64)], big_endian: bool, fortran: bool) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| format!("{d}, ")).collect();
    let header = format!(
        "{{'descr': '{}c16', 'fortran_order': {}, 'shape': ({}), }}",
        if big_endian { '>' } else { '<' },
        if fortran { "True" } else { "False" },
        dims.concat()
    );
    let padded = format!("{header:<117}\n");
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    for &(re, im) in values {
        for part in [re, im] {
            bytes.extend(if big_endian {
                part.to_be_bytes()
            } else {
                part.to_le_bytes()
            });
        }
    }
    bytes
}

/// The array read from a file of these bytes.
fn read(bytes: Vec<u8>) -> AnyTensor {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("core.npy");
    std::fs::write(&path, bytes).unwrap();
    npy::read(&path).unwrap()
}

#[test]
fn both_byte_orders_and_both_element_orders_read_as_the_same_array() {
    let shape = [2, 3];
    let c_order: Vec<(f64, f64)> = (0..6)
        .map(|i| (i as f64 + 0.25, -(i as f64) * 1e-300))
        .collect();
    let fortran_order: Vec<(f64, f64)> = (0..3)
        .flat_map(|j| (0..2).map(move |i| i * 3 + j))
        .map(|k| c_order[k])
        .collect();
    let expected = read(npy_bytes(&shape, &c_order, false, false)).to_c64();
    assert_eq!(expected.shape(), &shape);
    let first: Vec<(f64, f64)> = expected.data().iter().map(|z| (z.re, z.im)).collect();
    assert_eq!(first, c_order);
    for (big_endian, fortran) in [(true, false), (false, true), (true, true)] {
        let values = if fortran { &fortran_order } else { &c_order };
        let got = read(npy_bytes(&shape, values, big_endian, fortran)).to_c64();
        assert_eq!(
            got, expected,
            "big-endian {big_endian}, Fortran order {fortran}"
        );
    }
}

#[test]
fn a_file_with_more_data_than_its_shape_is_refused() {
    let mut bytes = npy_bytes(&[2], &[(1.0, 2.0), (3.0, 4.0)], false, false);
    bytes.extend([0u8; 16]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("core.npy");
    std::fs::write(&path, bytes).unwrap();
    let message = npy::read(&path).unwrap_err();
    assert!(
        message.contains("corrupt data") && message.contains("needs 32 bytes, found 48"),
        "{message}"
    );
}
