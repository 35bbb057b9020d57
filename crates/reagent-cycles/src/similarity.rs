//! The similarity monitor: after each cycle, the new reflection's cosine similarity to every
//! earlier one, from the provider's embeddings when it serves them, else lexical (TF-IDF
//! cosine); above `strong`/`moderate` an advisory goes into the next cycle's prompt.

use std::collections::HashMap;

use reagent_providers::Embedder;
use serde::Serialize;

use crate::config::SimilarityConfig;
use crate::prompts;

/// How far the newest reflection is from the earlier ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assessment {
    /// `embeddings` or `tfidf`.
    pub method: String,
    /// Why embeddings were not used, when they were asked for and failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    /// `[cycle, similarity]` to each earlier reflection, in cycle order.
    pub scores: Vec<(u32, f64)>,
    /// The largest score (none in the first cycle).
    pub max: Option<f64>,
    /// `strong`, `moderate` or `none`.
    pub level: &'static str,
    /// The advisory for the next cycle, if any.
    pub advisory: Option<String>,
}

/// Keeps the reflections' vectors between cycles.
pub struct Monitor {
    thresholds: SimilarityConfig,
    embedder: Option<Embedder>,
    /// Why embeddings failed (then the lexical method is used from there on).
    failed: Option<String>,
    /// Embeddings of the reflections so far, by position.
    vectors: Vec<Vec<f32>>,
}

impl Monitor {
    /// A monitor with these thresholds, using `embedder` when given.
    pub fn new(thresholds: SimilarityConfig, embedder: Option<Embedder>) -> Self {
        Monitor {
            thresholds,
            embedder,
            failed: None,
            vectors: Vec::new(),
        }
    }

    /// Assess the last of `reflections` (`(cycle, text)`, in order) against the others.
    pub async fn assess(&mut self, reflections: &[(u32, String)]) -> Assessment {
        let Some((_, earlier)) = reflections.split_last() else {
            return self.judge("tfidf", None, Vec::new());
        };
        if let Some(scores) = self.embedding_scores(reflections).await {
            let scores = earlier.iter().map(|(c, _)| *c).zip(scores).collect();
            return self.judge("embeddings", None, scores);
        }
        let texts: Vec<&str> = reflections.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = tfidf(&texts);
        let newest = &vectors[vectors.len() - 1];
        let scores = earlier
            .iter()
            .zip(&vectors)
            .map(|((c, _), v)| (*c, dot(newest, v)))
            .collect();
        let reason = self.failed.clone();
        self.judge("tfidf", reason, scores)
    }

    /// Cosine similarities of the last reflection to the others by embeddings, or `None`
    /// (no embedder, or it failed: the reason is kept).
    async fn embedding_scores(&mut self, reflections: &[(u32, String)]) -> Option<Vec<f64>> {
        let embedder = self.embedder.as_ref()?;
        if self.failed.is_some() {
            return None;
        }
        let missing: Vec<String> = reflections[self.vectors.len().min(reflections.len())..]
            .iter()
            .map(|(_, t)| t.clone())
            .collect();
        if !missing.is_empty() {
            match embedder.embed(&missing).await {
                Ok(v) => self.vectors.extend(v),
                Err(e) => {
                    self.failed = Some(format!("embeddings from {}: {e}", embedder.url()));
                    return None;
                }
            }
        }
        let (newest, earlier) = self.vectors[..reflections.len()].split_last()?;
        Some(earlier.iter().map(|v| cosine(newest, v)).collect())
    }

    fn judge(&self, method: &str, reason: Option<String>, scores: Vec<(u32, f64)>) -> Assessment {
        let max = scores.iter().map(|(_, s)| *s).reduce(f64::max);
        let level = match max {
            Some(m) if m > self.thresholds.strong => "strong",
            Some(m) if m > self.thresholds.moderate => "moderate",
            _ => "none",
        };
        Assessment {
            method: method.to_owned(),
            fallback_reason: reason,
            scores,
            max,
            level,
            advisory: prompts::advisory(level).map(str::to_owned),
        }
    }
}

/// The cosine similarity of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        (ab / (aa.sqrt() * bb.sqrt())).clamp(-1.0, 1.0)
    }
}

fn dot(a: &HashMap<String, f64>, b: &HashMap<String, f64>) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small
        .iter()
        .filter_map(|(k, x)| large.get(k).map(|y| x * y))
        .sum::<f64>()
        .clamp(0.0, 1.0)
}

/// Lowercased words of two or more letters or digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_lowercase)
}

/// TF-IDF vectors of `texts` (smoothed idf `ln((1+n)/(1+df)) + 1`, as scikit-learn), each of
/// length 1 (or empty for a text without words).
pub fn tfidf(texts: &[&str]) -> Vec<HashMap<String, f64>> {
    let counts: Vec<HashMap<String, f64>> = texts
        .iter()
        .map(|t| {
            let mut m = HashMap::new();
            for w in words(t) {
                *m.entry(w).or_insert(0.0) += 1.0;
            }
            m
        })
        .collect();
    let mut df: HashMap<&str, f64> = HashMap::new();
    for m in &counts {
        for k in m.keys() {
            *df.entry(k.as_str()).or_insert(0.0) += 1.0;
        }
    }
    let n = texts.len() as f64;
    counts
        .iter()
        .map(|m| {
            let mut v: HashMap<String, f64> = m
                .iter()
                .map(|(k, tf)| {
                    let d = df.get(k.as_str()).copied().unwrap_or(1.0);
                    (k.clone(), tf * (((1.0 + n) / (1.0 + d)).ln() + 1.0))
                })
                .collect();
            let norm = v.values().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 0.0 {
                v.values_mut().for_each(|x| *x /= norm);
            }
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor() -> Monitor {
        Monitor::new(
            SimilarityConfig {
                strong: 0.8,
                moderate: 0.5,
            },
            None,
        )
    }

    fn r(items: &[&str]) -> Vec<(u32, String)> {
        items
            .iter()
            .enumerate()
            .map(|(i, t)| (i as u32 + 1, (*t).to_owned()))
            .collect()
    }

    #[tokio::test]
    async fn identical_reflections_give_the_strong_advisory() {
        let a = monitor()
            .assess(&r(&[
                "I explored prime numbers today",
                "I explored prime numbers today",
            ]))
            .await;
        assert_eq!(a.method, "tfidf");
        assert_eq!(a.level, "strong");
        assert!((a.max.expect("max") - 1.0).abs() < 1e-9);
        assert!(a.advisory.expect("advisory").contains("high similarity"));
    }

    #[tokio::test]
    async fn unrelated_reflections_give_none_and_partly_shared_words_moderate() {
        let mut m = monitor();
        let a = m
            .assess(&r(&["poetry about the ocean", "compilers parse tokens"]))
            .await;
        assert_eq!((a.level, a.max), ("none", Some(0.0)));
        assert_eq!(a.scores, vec![(1, 0.0)]);
        let b = m
            .assess(&r(&[
                "memory tools store notes about poetry",
                "zebra",
                "memory tools store notes about music",
            ]))
            .await;
        let max = b.max.expect("max");
        assert!(max > 0.5 && max <= 0.8, "{max}");
        assert_eq!(b.level, "moderate");
        assert_eq!(b.scores.len(), 2);
    }

    #[tokio::test]
    async fn the_first_cycle_has_nothing_to_compare() {
        let a = monitor().assess(&r(&["alone"])).await;
        assert_eq!((a.max, a.level, a.advisory), (None, "none", None));
    }

    #[test]
    fn cosine_of_vectors() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-9);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
        assert_eq!(cosine(&[0.0], &[1.0]), 0.0);
    }
}
