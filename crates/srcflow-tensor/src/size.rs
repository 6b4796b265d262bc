//! Sizes, rates and times as users type them: `36GB` (decimal), `36GiB` or `36G` (binary),
//! `200MB/s`, `20ms`.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// A number of bytes, parsed from text like `36GB`, `36GiB`, `36G`, `512MiB`, `1.5TB` or
/// `4096`: a unit of one letter is binary (`36G` is `36GiB`), as coreutils and Slurm read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

/// A transfer rate in bytes per second, parsed from text like `200MB/s` or `1GiB/s`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Bandwidth(pub f64);

/// Units a size may carry, with their multipliers (matched case-insensitively).
const UNITS: [(&str, f64); 16] = [
    ("b", 1.0),
    ("kb", 1e3),
    ("mb", 1e6),
    ("gb", 1e9),
    ("tb", 1e12),
    ("pb", 1e15),
    ("kib", 1024.0),
    ("mib", 1024.0 * 1024.0),
    ("gib", 1024.0 * 1024.0 * 1024.0),
    ("tib", 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("pib", 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("k", 1024.0),
    ("m", 1024.0 * 1024.0),
    ("g", 1024.0 * 1024.0 * 1024.0),
    ("t", 1024.0 * 1024.0 * 1024.0 * 1024.0),
    ("p", 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0),
];

/// The smallest number a budget may be given as without a unit: below it, a bare number (`60`
/// bytes) is a unit forgotten, not a budget meant.
const UNITLESS_BUDGET_MIN: f64 = 1e6;

impl ByteSize {
    /// A memory or disk budget from text: a size as [`ByteSize`] reads it, where a bare number
    /// under a million (`--host-memory 60`) is refused as a unit left out.
    pub fn budget(text: &str) -> Result<ByteSize> {
        let size: ByteSize = text.parse()?;
        let unitless = text.trim().chars().all(|c| c.is_ascii_digit() || c == '.');
        if unitless && (size.0 as f64) < UNITLESS_BUDGET_MIN {
            return Err(Error::Invalid(format!(
                "'{text}' has no unit, and {text} bytes cannot be meant as a budget: give one, \
                 as in {text}MB, {text}GB or {text}GiB"
            )));
        }
        Ok(size)
    }
}

impl FromStr for ByteSize {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let bytes = parse_amount(text, "a size like 36GB, 36GiB, 36G or 4096")?;
        Ok(ByteSize(bytes.round() as u64))
    }
}

impl FromStr for Bandwidth {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let expected = "a rate like 200MB/s, 1GiB/s or 500B/s";
        let amount = text
            .trim()
            .strip_suffix("/s")
            .ok_or_else(|| bad(text, expected))?;
        let rate = parse_amount(amount, expected).map_err(|_| bad(text, expected))?;
        if rate <= 0.0 {
            return Err(bad(text, expected));
        }
        Ok(Bandwidth(rate))
    }
}

/// Units a time may carry, in seconds (longer suffixes first, so `ms` is not read as `s`).
const TIME_UNITS: [(&str, f64); 6] = [
    ("µs", 1e-6),
    ("us", 1e-6),
    ("ms", 1e-3),
    ("s", 1.0),
    ("m", 60.0),
    ("h", 3600.0),
];

/// Seconds from a non-negative number with a unit: `150us`, `20ms`, `30s`, `10m`, `1.5h`.
pub fn seconds(text: &str) -> Option<f64> {
    let (number, scale) = TIME_UNITS
        .iter()
        .find_map(|&(unit, scale)| Some((text.trim().strip_suffix(unit)?, scale)))?;
    let seconds = number.trim().parse::<f64>().ok()? * scale;
    (seconds.is_finite() && seconds >= 0.0).then_some(seconds)
}

/// Parses a non-negative number with an optional unit into bytes.
fn parse_amount(text: &str, expected: &str) -> Result<f64> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad(text, expected))?;
    let unit = unit.trim().to_ascii_lowercase();
    let scale = if unit.is_empty() {
        1.0
    } else {
        UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|&(_, scale)| scale)
            .ok_or_else(|| bad(text, expected))?
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes > u64::MAX as f64 / 2.0 {
        return Err(bad(text, expected));
    }
    Ok(bytes)
}

/// The error for unreadable size text.
fn bad(text: &str, expected: &str) -> Error {
    Error::Invalid(format!("cannot read '{text}': expected {expected}"))
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0 as f64;
        let (value, unit) = [
            (1e15, "PB"),
            (1e12, "TB"),
            (1e9, "GB"),
            (1e6, "MB"),
            (1e3, "kB"),
        ]
        .into_iter()
        .find(|&(scale, _)| bytes >= scale)
        .map_or((bytes, "B"), |(scale, unit)| (bytes / scale, unit));
        if unit == "B" {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{value:.2} {unit}")
        }
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", ByteSize(self.0 as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_binary_units() {
        let size = |t: &str| t.parse::<ByteSize>().unwrap().0;
        assert_eq!(size("36GB"), 36_000_000_000);
        assert_eq!(size("36GiB"), 36 * (1 << 30));
        assert_eq!(size("1.5 kB"), 1500);
        assert_eq!(size("4096"), 4096);
        assert_eq!(size("2mib"), 2 << 20);
        assert_eq!(size("2PB"), 2_000_000_000_000_000);
        assert_eq!(size("1PiB"), 1 << 50);
        assert_eq!(size("60M"), 60 << 20);
        assert_eq!(size("60m"), 60 << 20);
        assert_eq!(size("2G"), 2 << 30);
        assert_eq!(size("1k"), 1024);
    }

    #[test]
    fn a_budget_without_a_unit_is_refused_below_a_million() {
        let err = ByteSize::budget("60").unwrap_err().to_string();
        assert!(
            err.contains("'60' has no unit") && err.contains("60MB"),
            "{err}"
        );
        assert_eq!(ByteSize::budget("60B").unwrap().0, 60);
        assert_eq!(ByteSize::budget("2000000").unwrap().0, 2_000_000);
        assert_eq!(ByteSize::budget("60MB").unwrap().0, 60_000_000);
    }

    #[test]
    fn rates_need_per_second() {
        assert_eq!("200MB/s".parse::<Bandwidth>().unwrap().0, 200e6);
        assert_eq!("500B/s".parse::<Bandwidth>().unwrap().0, 500.0);
        assert!("200MB".parse::<Bandwidth>().is_err());
        assert!("0B/s".parse::<Bandwidth>().is_err());
    }

    #[test]
    fn bad_text_is_named() {
        for text in ["", "GB", "12XB", "-5GB", "1e400", "1.2.3GB"] {
            let err = text.parse::<ByteSize>().unwrap_err().to_string();
            assert!(err.contains(&format!("'{text}'")), "{err}");
        }
    }
}
