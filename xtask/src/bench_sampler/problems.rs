//! The benchmark problems: ZDT1, DTLZ2 and serving as defined in issue 4, and the two of
//! issue 16 (DTLZ2 with four objectives, and `kernel`, a GPU-kernel tuning model whose
//! space is integers, discrete sets and categoricals only). `benches/peers/sampler_peers.py`
//! runs the same definitions.

use std::f64::consts::PI;

use sweeper_goal::{Direction, SamplerMetric};
use sweeper_sampler::{ParamSpec, ParamValue, SearchSpace};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Problem {
    Zdt1,
    Dtlz2,
    Dtlz2x4,
    Serving,
    Kernel,
}

const ROUTERS: [&str; 3] = ["round_robin", "kv_aware", "random"];

fn get(params: &[(String, ParamValue)], name: &str) -> Option<f64> {
    params.iter().find(|(n, _)| n == name)?.1.as_f64()
}

/// The serving model: `None` when over 16 GPUs, else `(per_gpu, per_user)`.
pub(super) fn serving(tp: f64, replicas: f64, router: usize, r: f64) -> Option<(f64, f64)> {
    let gpus = tp * replicas;
    if gpus > 16.0 {
        return None;
    }
    let imb = [1.10, 1.03, 1.25][router];
    let u = 96.0 / replicas * imb;
    let kv = tp * 72.0 - 30.0;
    let cap = 1.0 + kv * r / 1.5;
    let b = (u.powi(-4) + cap.powi(-4)).powf(-0.25);
    let single = 60.0 * tp.powf(0.7);
    let speed = single / (1.0 + b / 24.0);
    let pre = 1.0 / (1.0 + ((r - 0.92) / 0.02).exp());
    let hit = [0.10, 0.40, 0.05][router] * (1.0 - r);
    let boost = (0.6 + 0.4 * pre) / (1.0 - 0.5 * hit);
    let eff = [0.93, 0.99 - 0.015 * replicas, 0.85][router];
    let per_gpu = replicas * b * speed * boost * eff / gpus;
    let lat = [1.0, 0.97, 1.0][router];
    let per_user = speed * boost * lat * (b / u).powf(0.3);
    Some((per_gpu, per_user))
}

const TILES: [f64; 5] = [16.0, 32.0, 64.0, 128.0, 256.0];
const TILE_K: [f64; 3] = [16.0, 32.0, 64.0];
const WARPS: [f64; 4] = [1.0, 2.0, 4.0, 8.0];
const SWIZZLE: [&str; 3] = ["none", "xor", "diagonal"];
const EPILOGUE: [&str; 3] = ["direct", "staged", "split_k"];
/// The kernel model's peak, TFLOP/s (the hypervolume's scale).
const KERNEL_PEAK: f64 = 400.0;

/// DTLZ2 with `m` objectives over `x` (the first `m − 1` coordinates place the point on
/// the front, the rest are the distance variables, best at 0.5).
fn dtlz2(x: &[f64], m: usize) -> Vec<f64> {
    let g: f64 = x[m - 1..].iter().map(|v| (v - 0.5) * (v - 0.5)).sum();
    (0..m)
        .map(|i| {
            // f_i = (1+g) · Π_{j < m−1−i} cos(x_j π/2) · (sin(x_{m−1−i} π/2) when i > 0)
            let upto = m - 1 - i;
            let mut f = 1.0 + g;
            for v in &x[..upto] {
                f *= (v * PI / 2.0).cos();
            }
            if i > 0 {
                f *= (x[upto] * PI / 2.0).sin();
            }
            f
        })
        .collect()
}

/// A made-up but shaped model of a tiled matrix-multiply kernel (M = N = K = 4096 on 108
/// SMs with 160 KiB of shared memory each): `(TFLOP/s, shared memory KiB per block)`, or
/// `None` when the block does not fit (shared memory, or more than 255 accumulator
/// registers a thread). Bigger tiles and more pipeline stages buy arithmetic intensity and
/// latency hiding with shared memory, so the two objectives trade off; the swizzle, the
/// epilogue and the warp count interact with the tile shape.
pub(super) fn kernel(
    tm: f64,
    tn: f64,
    tk: f64,
    stages: f64,
    warps: f64,
    swizzle: usize,
    epilogue: usize,
) -> Option<(f64, f64)> {
    let mut smem = (tm + tn) * tk * 2.0 * stages / 1024.0;
    if epilogue == 1 {
        smem += tm * tn * 2.0 / 1024.0;
    }
    let threads = warps * 32.0;
    let acc = tm * tn / threads;
    if smem > 160.0 || !(1.0..=255.0).contains(&acc) {
        return None;
    }
    let intensity = tm * tn / (tm + tn);
    let feed = (intensity / 40.0).min(1.0);
    let hide = 1.0 - 0.55f64.powf(stages * tk / 32.0);
    let bank = match swizzle {
        0 => 0.72,
        1 => 1.0,
        _ => {
            if tk <= 16.0 {
                1.02
            } else {
                0.9
            }
        }
    };
    let per_thread = acc / (acc + 12.0);
    let blocks_per_sm = (160.0 / smem).floor().min(32.0 / warps).max(1.0);
    let tiles = (4096.0 / tm).ceil() * (4096.0 / tn).ceil();
    let split = if epilogue == 2 { 4.0 } else { 1.0 };
    let slots = 108.0 * blocks_per_sm;
    let work = tiles * split;
    let waves = (work / slots).ceil();
    let wave_eff = work / (waves * slots);
    let occupancy = (blocks_per_sm * warps / 8.0).min(1.0).sqrt();
    let epi = [1.0, 1.06, if tm * tn <= 4096.0 { 0.98 } else { 0.93 }][epilogue];
    let tflops = KERNEL_PEAK * feed * hide * bank * per_thread * wave_eff * occupancy * epi;
    Some((tflops, smem))
}

/// Every point of the kernel space, feasible ones only.
fn kernel_space(mut visit: impl FnMut(f64, f64)) {
    for tm in TILES {
        for tn in TILES {
            for tk in TILE_K {
                for stages in 1..=5 {
                    for warps in WARPS {
                        for sw in 0..SWIZZLE.len() {
                            for ep in 0..EPILOGUE.len() {
                                if let Some((t, s)) =
                                    kernel(tm, tn, tk, f64::from(stages), warps, sw, ep)
                                {
                                    visit(t, s);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

impl Problem {
    /// Unit-interval coordinates of the continuous problems.
    fn n_unit(self) -> usize {
        match self {
            Problem::Dtlz2x4 => 7,
            _ => 6,
        }
    }

    pub(super) const ALL: [Problem; 5] = [
        Problem::Zdt1,
        Problem::Dtlz2,
        Problem::Dtlz2x4,
        Problem::Serving,
        Problem::Kernel,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Problem::Zdt1 => "zdt1",
            Problem::Dtlz2 => "dtlz2",
            Problem::Dtlz2x4 => "dtlz2_4",
            Problem::Serving => "serving",
            Problem::Kernel => "kernel",
        }
    }

    pub(super) fn from_name(s: &str) -> Option<Problem> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }

    pub(super) fn space(self) -> SearchSpace {
        let mut s = SearchSpace::new();
        let unit = || ParamSpec::Float {
            lo: 0.0,
            hi: 1.0,
            log: false,
        };
        match self {
            Problem::Zdt1 | Problem::Dtlz2 | Problem::Dtlz2x4 => {
                for i in 0..self.n_unit() {
                    s.add(format!("x{i}"), unit()).expect("valid");
                }
            }
            Problem::Kernel => {
                let pow2 = |v: &[f64]| ParamSpec::Discrete {
                    values: v.to_vec(),
                    log: true,
                };
                let cat = |c: &[&str]| ParamSpec::Categorical {
                    choices: c.iter().map(|s| (*s).to_owned()).collect(),
                };
                let specs = [
                    ("tile_m", pow2(&TILES)),
                    ("tile_n", pow2(&TILES)),
                    ("tile_k", pow2(&TILE_K)),
                    (
                        "stages",
                        ParamSpec::Int {
                            lo: 1,
                            hi: 5,
                            log: false,
                        },
                    ),
                    ("warps", pow2(&WARPS)),
                    ("swizzle", cat(&SWIZZLE)),
                    ("epilogue", cat(&EPILOGUE)),
                ];
                for (n, spec) in specs {
                    s.add(n, spec).expect("valid");
                }
            }
            Problem::Serving => {
                let specs = [
                    (
                        "tp",
                        ParamSpec::Discrete {
                            values: vec![1.0, 2.0, 4.0, 8.0],
                            log: true,
                        },
                    ),
                    (
                        "replicas",
                        ParamSpec::Int {
                            lo: 1,
                            hi: 8,
                            log: false,
                        },
                    ),
                    (
                        "router",
                        ParamSpec::Categorical {
                            choices: ROUTERS.iter().map(|r| (*r).to_owned()).collect(),
                        },
                    ),
                    ("kv_load_ratio", unit()),
                ];
                for (n, spec) in specs {
                    s.add(n, spec).expect("valid");
                }
            }
        }
        s
    }

    fn metric_names(self) -> (&'static [&'static str], Direction) {
        match self {
            Problem::Zdt1 => (&["f1", "f2"], Direction::Minimize),
            Problem::Dtlz2 => (&["f1", "f2", "f3"], Direction::Minimize),
            Problem::Dtlz2x4 => (&["f1", "f2", "f3", "f4"], Direction::Minimize),
            Problem::Serving => (&["per_gpu", "per_user"], Direction::Maximize),
            Problem::Kernel => unreachable!("kernel metrics have two directions"),
        }
    }

    pub(super) fn metrics(self) -> Vec<SamplerMetric> {
        if self == Problem::Kernel {
            return vec![
                SamplerMetric {
                    name: "tflops".to_owned(),
                    direction: Direction::Maximize,
                },
                SamplerMetric {
                    name: "smem_kib".to_owned(),
                    direction: Direction::Minimize,
                },
            ];
        }
        let (names, direction) = self.metric_names();
        names
            .iter()
            .map(|n| SamplerMetric {
                name: (*n).to_owned(),
                direction,
            })
            .collect()
    }

    /// The metrics of a trial, `None` when infeasible.
    pub(super) fn evaluate(self, params: &[(String, ParamValue)]) -> Option<Vec<(String, f64)>> {
        if self == Problem::Kernel {
            let cat = |name: &str, choices: &[&str]| {
                params.iter().find_map(|(n, v)| match v {
                    ParamValue::Str(s) if n == name => choices.iter().position(|c| c == s),
                    _ => None,
                })
            };
            let (tflops, smem) = kernel(
                get(params, "tile_m")?,
                get(params, "tile_n")?,
                get(params, "tile_k")?,
                get(params, "stages")?,
                get(params, "warps")?,
                cat("swizzle", &SWIZZLE)?,
                cat("epilogue", &EPILOGUE)?,
            )?;
            return Some(vec![
                ("tflops".to_owned(), tflops),
                ("smem_kib".to_owned(), smem),
            ]);
        }
        let (names, _) = self.metric_names();
        let values: Vec<f64> = match self {
            Problem::Zdt1 | Problem::Dtlz2 | Problem::Dtlz2x4 => {
                let x: Vec<f64> = (0..self.n_unit())
                    .map(|i| get(params, &format!("x{i}")).unwrap_or(0.0))
                    .collect();
                if self == Problem::Zdt1 {
                    let f1 = x[0];
                    let g = 1.0 + 9.0 * x[1..].iter().sum::<f64>() / 5.0;
                    vec![f1, g * (1.0 - (f1 / g).sqrt())]
                } else {
                    dtlz2(&x, names.len())
                }
            }
            Problem::Kernel => unreachable!("returned above"),
            Problem::Serving => {
                let router = params.iter().find_map(|(n, v)| match v {
                    ParamValue::Str(s) if n == "router" => ROUTERS.iter().position(|r| r == s),
                    _ => None,
                })?;
                let (g, u) = serving(
                    get(params, "tp")?,
                    get(params, "replicas")?,
                    router,
                    get(params, "kv_load_ratio")?,
                )?;
                vec![g, u]
            }
        };
        Some(names.iter().map(|n| (*n).to_owned()).zip(values).collect())
    }

    /// The point in the minimization space of the hypervolume.
    pub(super) fn hv_point(self, values: &[(String, f64)]) -> Vec<f64> {
        match self {
            Problem::Serving => vec![-values[0].1 / 1000.0, -values[1].1 / 150.0],
            Problem::Kernel => vec![-values[0].1 / KERNEL_PEAK, values[1].1 / 256.0],
            _ => values.iter().map(|v| v.1).collect(),
        }
    }

    pub(super) fn reference(self) -> Vec<f64> {
        match self {
            Problem::Zdt1 => vec![1.1, 3.0],
            Problem::Dtlz2 => vec![1.1, 1.1, 1.1],
            Problem::Dtlz2x4 => vec![1.1; 4],
            Problem::Serving => vec![-0.1, -10.0 / 150.0],
            Problem::Kernel => vec![0.0, 1.0],
        }
    }

    pub(super) fn true_hypervolume(self) -> f64 {
        match self {
            Problem::Zdt1 => 3.3 - 1.0 / 3.0,
            Problem::Dtlz2 => 1.1f64.powi(3) - PI / 6.0,
            // the front is the unit sphere's positive orthant: 1/16 of the 4-ball, π²/32
            Problem::Dtlz2x4 => 1.1f64.powi(4) - PI * PI / 32.0,
            Problem::Kernel => {
                let mut pts = Vec::new();
                kernel_space(|tflops, smem| pts.push(vec![-tflops / KERNEL_PEAK, smem / 256.0]));
                hypervolume(&pts, &self.reference())
            }
            Problem::Serving => {
                let mut pts = Vec::new();
                for tp in [1.0, 2.0, 4.0, 8.0] {
                    for replicas in 1..=8 {
                        for router in 0..3 {
                            for k in 0..=2000 {
                                let r = f64::from(k) / 2000.0;
                                if let Some((g, u)) = serving(tp, f64::from(replicas), router, r) {
                                    pts.push(vec![-g / 1000.0, -u / 150.0]);
                                }
                            }
                        }
                    }
                }
                hypervolume(&pts, &self.reference())
            }
        }
    }
}

/// The hypervolume of `points` (every objective minimized) against `reference`: sweeper's
/// own exact kernel ([`sweeper_score::front::hypervolume`]); points that do not beat the
/// reference in every objective contribute nothing.
pub(super) fn hypervolume(points: &[Vec<f64>], reference: &[f64]) -> f64 {
    let d = reference.len();
    let flat: Vec<f64> = points.iter().flatten().copied().collect();
    let directions = vec![sweeper_goal::Direction::Minimize; d];
    sweeper_score::front::hypervolume(&flat, d, &directions, reference)
        .expect("benchmark points are finite and of the reference's length")
        .max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtlz2_of_three_is_the_issue_4_formula() {
        let x = [0.3, 0.7, 0.1, 0.5, 0.9, 0.45];
        let g: f64 = x[2..].iter().map(|v| (v - 0.5) * (v - 0.5)).sum();
        let (a, b) = (x[0] * PI / 2.0, x[1] * PI / 2.0);
        let want = [
            (1.0 + g) * a.cos() * b.cos(),
            (1.0 + g) * a.cos() * b.sin(),
            (1.0 + g) * a.sin(),
        ];
        assert_eq!(dtlz2(&x, 3), want);
        // on the front (distance variables at 0.5) the four objectives lie on the sphere
        let f = dtlz2(&[0.2, 0.6, 0.9, 0.5, 0.5, 0.5, 0.5], 4);
        assert!(
            (f.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12,
            "{f:?}"
        );
    }

    #[test]
    fn the_kernel_space_trades_shared_memory_for_speed() {
        let mut n = 0;
        let mut pts = Vec::new();
        kernel_space(|t, s| {
            n += 1;
            assert!(
                t > 0.0 && t <= KERNEL_PEAK && s > 0.0 && s <= 160.0,
                "{t} {s}"
            );
            pts.push(vec![-t, s]);
        });
        let flat: Vec<f64> = pts.iter().flatten().copied().collect();
        let dirs = [Direction::Minimize; 2];
        let front = sweeper_score::front::nondominated(&flat, 2, &dirs).expect("finite");
        // a real trade-off: many feasible points, a front of several, some infeasible
        assert!(n > 3000 && n < 13_500, "{n} feasible");
        assert!(front.len() >= 8, "{} on the front", front.len());
        assert!(Problem::Kernel.true_hypervolume() > 0.0);
    }

    /// The values `benches/peers/sampler_peers.py` computes for the same inputs (printed
    /// from its functions with `repr`): the Python peers run the same problems.
    #[test]
    fn the_models_match_the_python_peers() {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
        let kernels = [
            (
                (128.0, 64.0, 32.0, 3.0, 4.0, 1, 0),
                Some((266.239_999_999_999_95, 36.0)),
            ),
            (
                (256.0, 128.0, 16.0, 2.0, 8.0, 2, 1),
                Some((168.708_388_571_428_57, 88.0)),
            ),
            (
                (64.0, 64.0, 64.0, 4.0, 2.0, 0, 2),
                Some((133.064_038_734_054_3, 64.0)),
            ),
            (
                (16.0, 256.0, 32.0, 5.0, 1.0, 2, 2),
                Some((40.693_270_831_073_34, 85.0)),
            ),
            ((256.0, 256.0, 64.0, 5.0, 8.0, 1, 1), None),
            (
                (32.0, 32.0, 16.0, 1.0, 8.0, 0, 0),
                Some((7.426_842_804_811_343, 2.0)),
            ),
        ];
        for ((tm, tn, tk, st, w, sw, ep), want) in kernels {
            let got = kernel(tm, tn, tk, st, w, sw, ep);
            match (got, want) {
                (Some(g), Some(w)) => assert!(close(g.0, w.0) && close(g.1, w.1), "{g:?} {w:?}"),
                (None, None) => {}
                _ => panic!("{got:?} vs {want:?}"),
            }
        }
        let f = dtlz2(&[0.2, 0.6, 0.9, 0.3, 0.5, 0.7, 0.1], 4);
        let want = [
            0.108_437_410_334_668_93,
            0.684_646_863_747_954_9,
            0.954_081_896_524_328_5,
            0.383_181_073_024_934_76,
        ];
        assert!(f.iter().zip(want).all(|(a, b)| close(*a, b)), "{f:?}");
        let (g, u) = serving(4.0, 3.0, 1, 0.37).expect("feasible");
        assert!(close(g, 590.303_650_680_139_4) && close(u, 74.380_594_592_333_54));
        for (p, want) in [
            (Problem::Serving, 0.456_418_613_838_239_95),
            (Problem::Kernel, 0.765_646_079_491_566_9),
            (Problem::Dtlz2x4, 1.155_674_862_465_958),
        ] {
            let got = p.true_hypervolume();
            assert!(close(got, want), "{}: {got} vs {want}", p.name());
        }
    }
}
