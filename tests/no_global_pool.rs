//! Parallel work only in the pool of the thread that asks for it: the library's permutes and
//! matrix factorisations called from a thread outside every pool (an I/O lane's output forms,
//! a program using the library) never start rayon's global pool, which would run beside the
//! device pools on the cores they were sized for.

use srcflow_tensor::tensor::{matrix, Array};

/// A row-major array of `shape` whose elements are their own indices.
fn counting(shape: Vec<usize>) -> Array<f64> {
    let len = shape.iter().product::<usize>();
    Array::new(shape, (0..len).map(|i| i as f64).collect()).unwrap()
}

#[test]
fn permutes_and_factorisations_outside_a_pool_leave_the_global_pool_unstarted() {
    // Large enough for the row copy's many tasks and for the tiled copy.
    let rows = counting(vec![64, 4, 4096]).permute(&[1, 0, 2]);
    assert_eq!(
        rows.data()[4096],
        4.0 * 4096.0,
        "element (0, 1, 0) is input (1, 0, 0)"
    );
    let tiled = counting(vec![512, 512]).permute(&[1, 0]);
    assert_eq!(tiled.data()[1], 512.0, "element (0, 1) is input (1, 0)");
    let a: Vec<f64> = (0..512 * 384).map(|i| ((i * 7919) % 1009) as f64).collect();
    let (q, r, rank) = matrix::thin_qr_row_major(&a, 512, 384);
    assert_eq!((q.len(), r.len(), rank), (512 * 384, 384 * 384, 384));
    let (_, singular_values, _, _) = matrix::thin_svd(&a, 512, 384).unwrap();
    assert!(singular_values.windows(2).all(|s| s[0] >= s[1]));
    let product = matrix::product(matrix::view(&a, 512, 384), matrix::view(&r, 384, 384));
    assert_eq!(product.len(), 512 * 384);

    let global = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global();
    assert!(
        global.is_ok(),
        "rayon's global pool was started by work outside a pool"
    );
}
