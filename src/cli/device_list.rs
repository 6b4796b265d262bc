//! `DeviceList`: the value of `--devices`, a count (`4`) or a list of device ids (`0,2`).

use srcflow::graph::MOST_DEVICES;
use srcflow::Error;
use std::str::FromStr;

/// The devices a run shares its sweep between.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceList {
    /// The first N devices.
    Count(usize),
    /// These devices, by id. On the CPU backend only their number matters; on CUDA they name
    /// the GPUs.
    Ids(Vec<usize>),
}

impl DeviceList {
    /// How many devices.
    pub fn count(&self) -> usize {
        match self {
            DeviceList::Count(n) => *n,
            DeviceList::Ids(ids) => ids.len(),
        }
    }

    /// The ids of the devices: the first N, or those listed.
    pub fn ids(&self) -> Vec<usize> {
        match self {
            DeviceList::Count(n) => (0..*n).collect(),
            DeviceList::Ids(ids) => ids.clone(),
        }
    }
}

impl FromStr for DeviceList {
    type Err = Error;

    /// Parses a count, or ids joined by commas (a list has at least one comma: `0,2`, or `1,`
    /// for device 1 alone).
    fn from_str(text: &str) -> Result<Self, Error> {
        let bad = |why: &str| {
            Error::Invalid(format!(
                "cannot read --devices '{text}': {why}; expected a count (2) or ids like 0,2"
            ))
        };
        if !text.contains(',') {
            let count: usize = text.trim().parse().map_err(|_| bad("not a count"))?;
            if count > MOST_DEVICES {
                return Err(bad(&format!("more than {MOST_DEVICES} devices")));
            }
            return Ok(DeviceList::Count(count));
        }
        let mut ids: Vec<usize> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let id = part
                .parse()
                .map_err(|_| bad(&format!("'{part}' is not a device id")))?;
            if !seen.insert(id) {
                return Err(bad(&format!("device {id} is listed twice")));
            }
            if ids.len() == MOST_DEVICES {
                return Err(bad(&format!("more than {MOST_DEVICES} devices")));
            }
            ids.push(id);
        }
        if ids.is_empty() {
            return Err(bad("no device listed"));
        }
        Ok(DeviceList::Ids(ids))
    }
}

#[cfg(test)]
mod tests {
    use super::DeviceList;

    #[test]
    fn counts_and_lists_parse_and_bad_lists_are_named() {
        assert_eq!("3".parse::<DeviceList>().unwrap().count(), 3);
        assert_eq!(
            "0,2".parse::<DeviceList>().unwrap(),
            DeviceList::Ids(vec![0, 2])
        );
        assert_eq!("1,".parse::<DeviceList>().unwrap().count(), 1);
        for (bad, why) in [
            ("0,0", "listed twice"),
            ("a,1", "'a'"),
            (",", "no device"),
            ("x", "count"),
        ] {
            let err = bad.parse::<DeviceList>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
