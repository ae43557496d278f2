//! The three benchmark problems, defined exactly as in issue 4 (so that
//! `benches/peers/optuna_sampler.py` runs the same definitions).

use std::f64::consts::PI;

use sweeper_goal::{Direction, SamplerMetric};
use sweeper_sampler::{ParamSpec, ParamValue, SearchSpace};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Problem {
    Zdt1,
    Dtlz2,
    Serving,
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

impl Problem {
    pub(super) const ALL: [Problem; 3] = [Problem::Zdt1, Problem::Dtlz2, Problem::Serving];

    pub(super) fn name(self) -> &'static str {
        match self {
            Problem::Zdt1 => "zdt1",
            Problem::Dtlz2 => "dtlz2",
            Problem::Serving => "serving",
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
            Problem::Zdt1 | Problem::Dtlz2 => {
                for i in 0..6 {
                    s.add(format!("x{i}"), unit()).expect("valid");
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
            Problem::Serving => (&["per_gpu", "per_user"], Direction::Maximize),
        }
    }

    pub(super) fn metrics(self) -> Vec<SamplerMetric> {
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
        let (names, _) = self.metric_names();
        let values: Vec<f64> = match self {
            Problem::Zdt1 | Problem::Dtlz2 => {
                let x: Vec<f64> = (0..6)
                    .map(|i| get(params, &format!("x{i}")).unwrap_or(0.0))
                    .collect();
                if self == Problem::Zdt1 {
                    let f1 = x[0];
                    let g = 1.0 + 9.0 * x[1..].iter().sum::<f64>() / 5.0;
                    vec![f1, g * (1.0 - (f1 / g).sqrt())]
                } else {
                    let g: f64 = x[2..].iter().map(|v| (v - 0.5) * (v - 0.5)).sum();
                    let a = x[0] * PI / 2.0;
                    let b = x[1] * PI / 2.0;
                    vec![
                        (1.0 + g) * a.cos() * b.cos(),
                        (1.0 + g) * a.cos() * b.sin(),
                        (1.0 + g) * a.sin(),
                    ]
                }
            }
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
            _ => values.iter().map(|v| v.1).collect(),
        }
    }

    pub(super) fn reference(self) -> Vec<f64> {
        match self {
            Problem::Zdt1 => vec![1.1, 3.0],
            Problem::Dtlz2 => vec![1.1, 1.1, 1.1],
            Problem::Serving => vec![-0.1, -10.0 / 150.0],
        }
    }

    pub(super) fn true_hypervolume(self) -> f64 {
        match self {
            Problem::Zdt1 => 3.3 - 1.0 / 3.0,
            Problem::Dtlz2 => 1.1f64.powi(3) - PI / 6.0,
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
