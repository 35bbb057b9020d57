//! How much a pass rate moves between samples: each seed's runs are one sample of the suite (or
//! of a category), and the spread of their pass rates says whether a change is beyond noise.

use serde::{Deserialize, Serialize};

use crate::result::TaskRun;

/// The pass rates of the samples (one per seed) of a set of runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Samples (distinct seeds) among the runs.
    pub samples: u32,
    /// Mean of the samples' pass rates.
    pub mean: f64,
    /// Their standard deviation (the sample standard deviation, n − 1; 0 for one sample).
    pub std: f64,
    /// The lowest sample pass rate.
    pub min: f64,
    /// The highest.
    pub max: f64,
}

impl Spread {
    /// The spread of `runs`' pass rates across their seeds.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a TaskRun>) -> Spread {
        // (seed, runs, passed), seeds in order of first appearance.
        let mut samples: Vec<(i64, u32, u32)> = Vec::new();
        for r in runs {
            let index = match samples.iter().position(|s| s.0 == r.seed) {
                Some(i) => i,
                None => {
                    samples.push((r.seed, 0, 0));
                    samples.len() - 1
                }
            };
            samples[index].1 += 1;
            samples[index].2 += u32::from(r.passed);
        }
        if samples.is_empty() {
            return Spread::default();
        }
        let rates: Vec<f64> = samples
            .iter()
            .map(|&(_, n, passed)| f64::from(passed) / f64::from(n))
            .collect();
        let n = rates.len() as f64;
        let mean = rates.iter().sum::<f64>() / n;
        let std = if rates.len() < 2 {
            0.0
        } else {
            (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        };
        Spread {
            samples: u32::try_from(rates.len()).unwrap_or(u32::MAX),
            mean,
            std,
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max: rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::tests::run;

    fn seeded(seed: i64, passed: bool) -> TaskRun {
        TaskRun {
            seed,
            ..run("a", "read", "auto", passed, 1)
        }
    }

    #[test]
    fn the_spread_is_over_the_pass_rates_of_each_seed() {
        // Seed 1: 2 of 2, seed 2: 1 of 2, seed 3: 0 of 2.
        let runs = [
            seeded(1, true),
            seeded(2, true),
            seeded(3, false),
            seeded(1, true),
            seeded(2, false),
            seeded(3, false),
        ];
        let s = Spread::of(&runs);
        assert_eq!(s.samples, 3);
        assert_eq!((s.min, s.max), (0.0, 1.0));
        assert!((s.mean - 0.5).abs() < 1e-12, "{s:?}");
        assert!((s.std - 0.5).abs() < 1e-12, "{s:?}");
        let one = Spread::of(&runs[..1]);
        assert_eq!((one.samples, one.mean, one.std), (1, 1.0, 0.0));
        assert_eq!(Spread::of([]), Spread::default());
    }
}
