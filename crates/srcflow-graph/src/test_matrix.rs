//! The random test matrices Ω_j: seeded, drawn on the host, independent of batching.
//!
//! Generator: PCG64 (`rand_pcg::Pcg64`, XSL-RR 128/64) with state = seed and stream = site,
//! drawing standard normals (`rand_distr::StandardNormal`) in f64, column after column, real
//! part then imaginary part. Column `a` of site `j` is therefore the same whatever range of
//! columns a task asks for, whatever the thread or device count. The draws are then cast to the
//! run's element type: complex types keep both parts (a complex Ginibre sketch), real types the
//! real part, so a seed gives the same sketch, rounded, in every precision.

use crate::graph::Cols;
use rand::Rng;
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;
use srcflow_tensor::tensor::{Array, Scalar, C64};

/// Ω_j restricted to `cols`, as `[Up, Down, Col]`: Gaussian test vectors of site `site` in the
/// element type `T`.
pub fn test_matrix<T: Scalar>(
    seed: u64,
    site: usize,
    up: usize,
    down: usize,
    cols: Cols,
) -> Array<T> {
    let phys = up * down;
    let mut rng = Pcg64::new(seed as u128, site as u128);
    for _ in 0..cols.start * phys * 2 {
        let _: f64 = rng.sample(StandardNormal);
    }
    let width = cols.len();
    let mut data = vec![T::zero(); phys * width];
    for a in 0..width {
        for p in 0..phys {
            let re: f64 = rng.sample(StandardNormal);
            let im: f64 = rng.sample(StandardNormal);
            data[p * width + a] = T::from_c64(C64::new(re, im));
        }
    }
    Array::new(vec![up, down, width], data).expect("sizes agree")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_range_sees_the_same_draws_as_the_whole() {
        let whole = test_matrix::<C64>(7, 3, 2, 1, Cols { start: 0, end: 10 });
        let part = test_matrix::<C64>(7, 3, 2, 1, Cols { start: 4, end: 7 });
        for p in 0..2 {
            for a in 0..3 {
                assert_eq!(part.data()[p * 3 + a], whole.data()[p * 10 + 4 + a]);
            }
        }
        assert_ne!(
            test_matrix::<C64>(8, 3, 2, 1, Cols { start: 0, end: 10 }),
            whole
        );
        let single = test_matrix::<num_complex::Complex32>(7, 3, 2, 1, Cols { start: 0, end: 10 });
        let real = test_matrix::<f64>(7, 3, 2, 1, Cols { start: 0, end: 10 });
        for ((z, s), r) in whole.data().iter().zip(single.data()).zip(real.data()) {
            assert_eq!(s.re, z.re as f32);
            assert_eq!(s.im, z.im as f32);
            assert_eq!(*r, z.re);
        }
    }
}
