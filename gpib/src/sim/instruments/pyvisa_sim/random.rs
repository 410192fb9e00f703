//! pyvisa-sim's `RANDOM` directive: `"{RANDOM(min, max, n):.2f}"` answers `n` values
//! drawn uniformly from `[min, max)`, each formatted with what remains of the
//! template, joined by `", "`. The values come from a fixed generator (SplitMix64),
//! so a simulation gives the same answers every run; pyvisa-sim's come from Python's
//! `random` module, so they are not the same numbers.

use regex::Regex;

use super::format::ValueTemplate;
use super::value::{parse_float, parse_int, PyValue};

/// Most values one `RANDOM` answer may hold.
pub const MAX_RANDOM_VALUES: usize = 10_000;

/// A parsed `RANDOM` response.
#[derive(Debug, Clone)]
pub(crate) struct RandomSpec {
    min: f64,
    max: f64,
    count: usize,
    template: Option<ValueTemplate>,
}

/// True when pyvisa-sim treats `response` as a `RANDOM` response.
pub(crate) fn is_random(response: &str) -> bool {
    response.contains("RANDOM")
}

impl RandomSpec {
    /// Parses a response holding `RANDOM`; `Err` says why pyvisa-sim would raise
    /// when answering it.
    pub(crate) fn parse(response: &str) -> Result<Self, String> {
        let directive =
            Regex::new(r"\{RANDOM\((\d*.\d*), (\d*.\d*), (\d*)\).*\}").expect("valid regex");
        let caps = directive.captures(response).ok_or_else(|| {
            "Wrong RANDOM directive, see documentation for correct usage.".to_string()
        })?;
        let strip = Regex::new(r"RANDOM\((\d*.\d*), (\d*.\d*), (\d*)\)").expect("valid regex");
        let rest = strip.replace_all(response, "");
        let min = parse_float(&caps[1])
            .ok_or_else(|| format!("could not convert {:?} to float", &caps[1]))?;
        let max = parse_float(&caps[2])
            .ok_or_else(|| format!("could not convert {:?} to float", &caps[2]))?;
        let count = parse_int(&caps[3], 10)
            .ok_or_else(|| format!("invalid count {:?} for RANDOM", &caps[3]))?;
        let count = usize::try_from(count.max(0)).unwrap_or(usize::MAX);
        if count > MAX_RANDOM_VALUES {
            return Err(format!(
                "RANDOM asks for {count} values; at most {MAX_RANDOM_VALUES} are answered"
            ));
        }
        // With no values to format, Python never looks at the template.
        let template = if count == 0 {
            None
        } else {
            Some(ValueTemplate::parse(&rest).map_err(|e| e.0)?)
        };
        Ok(Self {
            min,
            max,
            count,
            template,
        })
    }

    /// An answer, drawing from `rng`.
    pub(crate) fn answer(&self, rng: &mut Rng) -> Result<String, String> {
        let mut parts = Vec::with_capacity(self.count);
        if let Some(t) = &self.template {
            for _ in 0..self.count {
                let v = self.min + (self.max - self.min) * rng.unit();
                parts.push(t.render(&PyValue::Float(v)).map_err(|e| e.0)?);
            }
        }
        Ok(parts.join(", "))
    }
}

/// SplitMix64: small, fast, and the same sequence on every machine.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

/// The generator's fixed starting state.
const START: u64 = 0x2545_F491_4F6C_DD1D;

impl Default for Rng {
    fn default() -> Self {
        Self(START)
    }
}

impl Rng {
    /// A value in `[0, 1)` with 53 random bits.
    pub(crate) fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_answers_have_the_asked_shape() {
        let mut rng = Rng::default();
        let r = RandomSpec::parse("{RANDOM(0, 10.5, 5):.2f}").unwrap();
        let a = r.answer(&mut rng).unwrap();
        let values: Vec<f64> = a.split(", ").map(|v| v.parse().unwrap()).collect();
        assert_eq!(values.len(), 5, "{a}");
        assert!(values.iter().all(|v| (0.0..=10.5).contains(v)), "{a}");
        assert!(a
            .split(", ")
            .all(|v| v.split_once('.').unwrap().1.len() == 2));
        let neg = RandomSpec::parse("{RANDOM(-5, 5, 1):.2f}").unwrap();
        let v: f64 = neg.answer(&mut rng).unwrap().parse().unwrap();
        assert!((-5.0..5.0).contains(&v));
        // What pyvisa-sim raises on.
        assert!(RandomSpec::parse("RANDOM(0, 10.5, 5){:.2f}").is_err());
        assert!(RandomSpec::parse("{RANDOM(0, 10.5):.2f}").is_err());
        assert!(RandomSpec::parse("{RANDOM(0, 1, 99999999):.2f}").is_err());
    }
}
