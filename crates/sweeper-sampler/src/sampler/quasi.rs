//! Quasi-random search: a scrambled Halton sequence.
//!
//! Each dimension uses the radical inverse in its own prime base, with an independent
//! random permutation of the digits at each digit position (Owen-style digit scrambling,
//! as in the scrambled Halton samplers of OSS Vizier and Optuna's `QMCSampler`; idea only).

use serde::{Deserialize, Serialize};

use super::{History, Sampler, fill_unique};
use crate::rng::Rng;

const PRIMES: [u64; 40] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
    101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173,
];

/// Digit positions scrambled; beyond them the sequence is fine enough for any budget here.
const DIGITS: u64 = 12;

/// The scrambled Halton sequence; its state is the seed and the next index.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct QuasiSampler {
    seed: u64,
    index: u64,
    /// Random draws for dimensions beyond the prime table.
    rng: Rng,
}

impl QuasiSampler {
    pub(crate) fn new(seed: u64) -> Self {
        QuasiSampler {
            seed,
            index: 1,
            rng: Rng::new(seed, 2),
        }
    }

    fn digit_perm(&self, dim: usize, pos: u64, base: u64) -> Vec<u64> {
        let mut rng = Rng::new(self.seed, 1000 + dim as u64 * 64 + pos);
        let mut perm: Vec<u64> = (0..base).collect();
        for i in (1..perm.len()).rev() {
            let j = rng.below(i + 1);
            perm.swap(i, j);
        }
        perm
    }

    /// The next unit-cube vector of `dims` coordinates.
    pub(crate) fn next_unit(&mut self, dims: usize) -> Vec<f64> {
        let i = self.index;
        self.index += 1;
        (0..dims)
            .map(|d| {
                let Some(&base) = PRIMES.get(d) else {
                    return self.rng.uniform();
                };
                let mut n = i;
                let mut f = 1.0 / base as f64;
                let mut x = 0.0;
                for pos in 0..DIGITS {
                    let perm = self.digit_perm(d, pos, base);
                    x += perm[(n % base) as usize] as f64 * f;
                    n /= base;
                    f /= base as f64;
                }
                x.min(1.0 - 1e-12)
            })
            .collect()
    }
}

impl Sampler for QuasiSampler {
    fn suggest(&mut self, history: &History<'_>, count: usize) -> Vec<Vec<f64>> {
        let dims = history.domain.len();
        fill_unique(history, &[], count, || {
            let u = self.next_unit(dims);
            history.domain.at_unit(&u)
        })
    }

    fn save(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::QuasiSampler;

    #[test]
    fn halton_fills_the_square_evenly() {
        let mut q = QuasiSampler::new(3);
        let mut cells = [0usize; 16];
        for _ in 0..160 {
            let u = q.next_unit(2);
            let c = (u[0] * 4.0) as usize * 4 + (u[1] * 4.0) as usize;
            cells[c] += 1;
        }
        assert!(cells.iter().all(|&c| (6..=14).contains(&c)), "{cells:?}");
    }
}
