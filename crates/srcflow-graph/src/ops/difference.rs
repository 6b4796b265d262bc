//! The train of `a − b`: block-diagonal bonds, so its norm is the distance.

use srcflow_tensor::tensor::{Tensor, C64};

/// Cores of `a − b` (both `[l, r, u, d]`, same physical legs), with bonds `la + lb` and `ra + rb`.
pub(crate) fn difference(a: &[Tensor], b: &[Tensor]) -> Vec<Tensor> {
    let n = a.len();
    (0..n)
        .map(|site| {
            let sign = if site == 0 { -1.0 } else { 1.0 };
            block_core(&a[site], &b[site], site == 0, site + 1 == n, sign)
        })
        .collect()
}

/// One core of the difference train; `b`'s block is scaled by `sign` (−1 at the first site).
fn block_core(a: &Tensor, b: &Tensor, first: bool, last: bool, sign: f64) -> Tensor {
    let [la, ra, u, d] = <[usize; 4]>::try_from(a.shape()).expect("rank 4");
    let [lb, rb, _, _] = <[usize; 4]>::try_from(b.shape()).expect("rank 4");
    let (l, r) = (
        if first { 1 } else { la + lb },
        if last { 1 } else { ra + rb },
    );
    let mut out = Tensor::zeros(vec![l, r, u, d]);
    let phys = u * d;
    let (b_l0, b_r0) = (if first { 0 } else { la }, if last { 0 } else { ra });
    let data = out.data_mut();
    for (src, rows, cols, l0, r0, factor) in [(a, la, ra, 0, 0, 1.0), (b, lb, rb, b_l0, b_r0, sign)]
    {
        for i in 0..rows {
            for j in 0..cols {
                let from = &src.data()[(i * cols + j) * phys..][..phys];
                let to = ((l0 + i) * r + r0 + j) * phys;
                for (x, v) in data[to..to + phys].iter_mut().zip(from) {
                    *x = *v * C64::new(factor, 0.0);
                }
            }
        }
    }
    out
}
