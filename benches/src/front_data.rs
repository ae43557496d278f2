//! The four datasets of the front benchmarks, row-major `n × d`, every column maximized.
//!
//! - `uniform`: `U[0,1]^d`.
//! - `correlated`: a shared level `t ~ U[0,1]` per row plus independent N(0, 0.05²) per
//!   column (rows hug the diagonal, so the front is tiny): `x_j = t + e_j`.
//! - `anticorrelated`: `U[0,1]^d` projected onto the hyperplane sum = d/2, plus independent
//!   N(0, 0.01²) per column (a large front that grows quickly with d).
//! - `sphere`: |N(0,1)|^d normalized to unit length (every row is on the front).

/// A small seeded generator (`SplitMix64`, Steele, Lea and Flood 2014): fast, and good
/// enough for benchmark data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box–Muller, one of the pair).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.uniform();
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A dataset kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist {
    /// `U[0,1]^d`.
    Uniform,
    /// Rows near the diagonal.
    Correlated,
    /// Rows near the plane sum = d/2.
    Anticorrelated,
    /// Rows on the positive unit sphere.
    Sphere,
}

impl Dist {
    /// All four, in table order.
    pub const ALL: [Dist; 4] = [
        Dist::Uniform,
        Dist::Correlated,
        Dist::Anticorrelated,
        Dist::Sphere,
    ];

    /// The name used in file names and tables.
    pub fn name(self) -> &'static str {
        match self {
            Dist::Uniform => "uniform",
            Dist::Correlated => "correlated",
            Dist::Anticorrelated => "anticorrelated",
            Dist::Sphere => "sphere",
        }
    }

    /// Parses [`Dist::name`].
    pub fn from_name(s: &str) -> Option<Dist> {
        Dist::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// `n` rows of `d` columns of `dist`, from `seed`.
pub fn generate(dist: Dist, n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed ^ (d as u64) << 32 ^ n as u64);
    let mut v = Vec::with_capacity(n * d);
    let mut row = vec![0.0; d];
    for _ in 0..n {
        match dist {
            Dist::Uniform => {
                for x in &mut row {
                    *x = rng.uniform();
                }
            }
            Dist::Correlated => {
                let t = rng.uniform();
                for x in &mut row {
                    *x = t + 0.05 * rng.normal();
                }
            }
            Dist::Anticorrelated => {
                for x in &mut row {
                    *x = rng.uniform();
                }
                let shift = (row.iter().sum::<f64>() - d as f64 / 2.0) / d as f64;
                for x in &mut row {
                    *x = *x - shift + 0.01 * rng.normal();
                }
            }
            Dist::Sphere => {
                for x in &mut row {
                    *x = rng.normal().abs();
                }
                let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
                for x in &mut row {
                    *x /= norm;
                }
            }
        }
        v.extend_from_slice(&row);
    }
    v
}
