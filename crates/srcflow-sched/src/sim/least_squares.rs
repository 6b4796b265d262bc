//! `NormalEquations`: a weighted least-squares fit kept as its normal equations, so that a fit
//! can be refined by more observations later (a model file keeps them), solved with
//! non-negative coefficients (Lawson and Hanson's active-set method): a time is a sum of
//! costs, none of which may be negative.

use faer::linalg::solvers::Solve;
use faer::Mat;
use serde::{Deserialize, Serialize};

/// `XᵀWX` and `XᵀWy` of the observations added so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NormalEquations {
    /// `XᵀWX`, row by row.
    pub gram: Vec<Vec<f64>>,
    /// `XᵀWy`.
    pub moment: Vec<f64>,
    /// Observations added.
    pub observations: usize,
}

impl NormalEquations {
    /// Equations of `unknowns` coefficients with no observation yet.
    pub fn new(unknowns: usize) -> Self {
        NormalEquations {
            gram: vec![vec![0.0; unknowns]; unknowns],
            moment: vec![0.0; unknowns],
            observations: 0,
        }
    }

    /// Number of coefficients.
    pub fn unknowns(&self) -> usize {
        self.moment.len()
    }

    /// Adds the observation `y ≈ x · coefficients` with weight `weight` on its square error.
    pub fn add(&mut self, x: &[f64], y: f64, weight: f64) {
        for (i, &xi) in x.iter().enumerate() {
            self.moment[i] += weight * xi * y;
            for (j, &xj) in x.iter().enumerate() {
                self.gram[i][j] += weight * xi * xj;
            }
        }
        self.observations += 1;
    }

    /// The non-negative coefficients of least weighted square error (0 for a coefficient no
    /// observation has a say in).
    pub fn solve_nonnegative(&self) -> Vec<f64> {
        // Scale each unknown to a unit diagonal: features span twenty orders of magnitude.
        let scale: Vec<f64> = (0..self.unknowns())
            .map(|i| match self.gram[i][i].sqrt() {
                s if s > 0.0 => s,
                _ => 0.0,
            })
            .collect();
        let used: Vec<usize> = (0..self.unknowns()).filter(|&i| scale[i] > 0.0).collect();
        let gram =
            |i: usize, j: usize| self.gram[used[i]][used[j]] / (scale[used[i]] * scale[used[j]]);
        let moment: Vec<f64> = used.iter().map(|&i| self.moment[i] / scale[i]).collect();
        let scaled = active_set(used.len(), &gram, &moment);
        let mut coefficients = vec![0.0; self.unknowns()];
        for (k, &i) in used.iter().enumerate() {
            coefficients[i] = scaled[k] / scale[i];
        }
        coefficients
    }
}

/// Tolerance on the gradient and on coefficients, relative to the unit-scaled problem.
const TOLERANCE: f64 = 1e-10;

/// Lawson and Hanson's active-set method for `min ½xᵀGx − bᵀx` over `x ≥ 0`. An unknown that
/// enters and at once falls back to zero is not tried again until the solution moves, so the
/// loop cannot cycle on it; every step keeps `x` finite and non-negative.
fn active_set(n: usize, gram: &dyn Fn(usize, usize) -> f64, moment: &[f64]) -> Vec<f64> {
    let mut x = vec![0.0; n];
    let mut passive = vec![false; n];
    let mut rejected = vec![false; n];
    for _ in 0..3 * n + 3 {
        let gradient: Vec<f64> = (0..n)
            .map(|i| moment[i] - (0..n).map(|j| gram(i, j) * x[j]).sum::<f64>())
            .collect();
        let entering = (0..n)
            .filter(|&i| !passive[i] && !rejected[i] && gradient[i] > TOLERANCE)
            .max_by(|&a, &b| gradient[a].total_cmp(&gradient[b]));
        let Some(entering) = entering else { break };
        passive[entering] = true;
        let moved = loop {
            let s = solve_passive(n, gram, moment, &passive);
            if (0..n).all(|i| !passive[i] || s[i] > 0.0) {
                break std::mem::replace(&mut x, s) != x;
            }
            // Step from x towards s until the first passive unknown reaches zero.
            let (mut alpha, mut limit) = (1.0, None);
            for i in (0..n).filter(|&i| passive[i] && s[i] <= 0.0) {
                let step = if x[i] > s[i] {
                    x[i] / (x[i] - s[i])
                } else {
                    0.0
                };
                if step < alpha || limit.is_none() {
                    (alpha, limit) = (step.min(alpha), Some(i));
                }
            }
            for i in 0..n {
                x[i] = (x[i] + alpha * (s[i] - x[i])).max(0.0);
                if passive[i] && (x[i] <= TOLERANCE || Some(i) == limit) {
                    passive[i] = false;
                    x[i] = 0.0;
                }
            }
        };
        if moved {
            rejected = vec![false; n];
        } else {
            rejected[entering] = !passive[entering];
        }
    }
    x
}

/// The unconstrained minimiser over the passive unknowns, the others held at 0.
fn solve_passive(
    n: usize,
    gram: &dyn Fn(usize, usize) -> f64,
    moment: &[f64],
    passive: &[bool],
) -> Vec<f64> {
    let free: Vec<usize> = (0..n).filter(|&i| passive[i]).collect();
    // A small ridge keeps the system solvable when two features always come together.
    let g = Mat::from_fn(free.len(), free.len(), |a, b| {
        gram(free[a], free[b]) + if a == b { 1e-12 } else { 0.0 }
    });
    let b = Mat::from_fn(free.len(), 1, |a, _| moment[free[a]]);
    let solved = g.partial_piv_lu().solve(&b);
    let mut s = vec![0.0; n];
    for (a, &i) in free.iter().enumerate() {
        s[i] = solved[(a, 0)];
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_fit_is_found_and_a_negative_coefficient_is_held_at_zero() {
        let mut exact = NormalEquations::new(2);
        for x in [[1.0, 0.0], [0.0, 1.0], [1.0, 2.0], [3.0, 1.0]] {
            exact.add(&x, 2.0 * x[0] + 5e-9 * x[1], 1.0);
        }
        let c = exact.solve_nonnegative();
        assert!(
            (c[0] - 2.0).abs() < 1e-9 && (c[1] / 5e-9 - 1.0).abs() < 1e-3,
            "{c:?}"
        );
        // An unknown that enters and must leave again: y = x0 + x1 fitted where x2 only
        // hurts, then y = x0 − x1, best fitted with x1's coefficient at 0, not below.
        let mut leaving = NormalEquations::new(3);
        for x in [
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0],
            [2.0, 1.0, 0.0],
        ] {
            leaving.add(&x, x[0] + x[1] - 0.5 * x[2], 1.0);
        }
        let c = leaving.solve_nonnegative();
        assert!(c.iter().all(|v| v.is_finite() && *v >= 0.0), "{c:?}");
        assert_eq!(c[2], 0.0, "{c:?}");
        let mut clipped = NormalEquations::new(3);
        for x in [
            [1.0, 1.0, 0.0],
            [2.0, 0.5, 0.0],
            [1.0, 0.0, 0.0],
            [3.0, 2.0, 0.0],
        ] {
            clipped.add(&x, x[0] - x[1], 1.0);
        }
        let c = clipped.solve_nonnegative();
        assert_eq!((c[1], c[2]), (0.0, 0.0), "{c:?}");
        assert!(c[0] > 0.0);
    }
}
