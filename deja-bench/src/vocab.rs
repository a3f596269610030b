//! Deterministic randomness and the word distribution the corpus generator draws from.
//!
//! `words.txt` holds about 4,500 English words ranked by how often they occur in the
//! doc comments and READMEs of the crates deja builds on — developer prose, most
//! frequent first. Words are drawn with a Zipf–Mandelbrot law over that rank, so a
//! generated corpus has the long tail real conversation text has: a few words in
//! almost every turn, thousands that appear a handful of times.

use deja_core::synth::splitmix64;

const WORDS: &str = include_str!("words.txt");

/// A small, fast, seedable generator (SplitMix64). Not for anything but test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for one item of a family, independent of every other item.
    pub fn derive(seed: u64, stream: u64, item: u64) -> Rng {
        Rng(splitmix64(seed ^ splitmix64(stream.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ item)))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix64(self.0)
    }

    /// Uniform in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (((self.next_u64() >> 11) as u128 * n as u128) >> 53) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Word ranks drawn with probability ∝ 1 / (rank + q)^s.
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    pub fn new(n: usize, s: f64, q: f64) -> Zipf {
        let mut cdf = Vec::with_capacity(n);
        let mut total = 0.0;
        for r in 0..n {
            total += 1.0 / (r as f64 + 1.0 + q).powf(s);
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        Zipf { cdf }
    }

    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|c| *c < u).min(self.cdf.len().saturating_sub(1))
    }
}

/// The ranked vocabulary with its Zipf sampler.
pub struct Vocab {
    pub words: Vec<&'static str>,
    zipf: Zipf,
}

impl Default for Vocab {
    fn default() -> Self {
        let words: Vec<&'static str> = WORDS.lines().map(str::trim).filter(|w| !w.is_empty()).collect();
        let zipf = Zipf::new(words.len(), 1.0, 2.7);
        Vocab { words, zipf }
    }
}

impl Vocab {
    /// A word drawn from the Zipf law.
    pub fn word(&self, rng: &mut Rng) -> &'static str {
        self.words[self.zipf.sample(rng)]
    }

    /// A word drawn uniformly among ranks `lo..hi` (clamped to the vocabulary): for
    /// topic words and query terms of a chosen rarity.
    pub fn ranked(&self, rng: &mut Rng, lo: usize, hi: usize) -> &'static str {
        let hi = hi.min(self.words.len());
        let lo = lo.min(hi.saturating_sub(1));
        self.words[lo + rng.below(hi - lo)]
    }

    pub fn contains(&self, w: &str) -> bool {
        self.words.contains(&w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let mut a = Rng::derive(7, 1, 42);
        let mut b = Rng::derive(7, 1, 42);
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(Rng::derive(7, 1, 43).next_u64(), xs[0]);
        let mut r = Rng::derive(1, 0, 0);
        for _ in 0..1000 {
            let v = r.range(5, 9);
            assert!((5..=9).contains(&v));
        }
    }

    #[test]
    fn zipf_favours_low_ranks_with_a_long_tail() {
        let vocab = Vocab::default();
        assert!(vocab.words.len() > 4000, "{}", vocab.words.len());
        let mut rng = Rng::derive(3, 0, 0);
        let mut counts = vec![0u32; vocab.words.len()];
        for _ in 0..200_000 {
            counts[vocab.zipf.sample(&mut rng)] += 1;
        }
        // Rank 1 is (10 + 2.7) / (1 + 2.7) ≈ 3.4 times as frequent as rank 10…
        let ratio = counts[0] as f64 / counts[9] as f64;
        assert!((2.5..6.0).contains(&ratio), "{ratio}");
        // …and the tail is still reached.
        assert!(counts[vocab.words.len() / 2..].iter().filter(|c| **c > 0).count() > 1000);
    }
}
