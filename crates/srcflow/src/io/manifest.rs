//! `manifest.json`: the layers of a problem directory, in mathematical order.

use serde::{Deserialize, Serialize};
use srcflow_graph::train::Kind;
use srcflow_tensor::error::{Error, Result};
use std::collections::HashSet;
use std::path::Path;

/// The format tag every manifest carries.
pub const FORMAT: &str = "srcflow/1";

/// One layer entry: its folder name and kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerEntry {
    /// Folder holding `<site:05>.npy` files.
    pub name: String,
    /// `"mps"` or `"mpo"`.
    pub kind: Kind,
}

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// Layers in mathematical order (the last acts first).
    pub layers: Vec<LayerEntry>,
}

impl Manifest {
    /// Reads and checks `<dir>/manifest.json`.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join("manifest.json");
        let text = srcflow_tensor::files::read_regular_to_string(&path)
            .map_err(|e| Error::io(&path, e))?;
        let bad = |message: String| Error::Manifest {
            path: path.clone(),
            message,
        };
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| bad(format!("invalid manifest: {e}")))?;
        if manifest.format != FORMAT {
            return Err(bad(format!(
                "expected format \"{FORMAT}\", found \"{}\"",
                manifest.format
            )));
        }
        if manifest.layers.is_empty() {
            return Err(bad("the manifest lists no layers".into()));
        }
        let mut seen = HashSet::new();
        for layer in &manifest.layers {
            check_name(&layer.name).map_err(bad)?;
            if !seen.insert(&layer.name) {
                return Err(bad(format!("layer '{}' is listed twice", layer.name)));
            }
        }
        Ok(manifest)
    }

    /// Writes `<dir>/manifest.json`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join("manifest.json");
        let text = serde_json::to_string_pretty(self).expect("manifest serialises") + "\n";
        std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
    }
}

/// Layer names are plain folder names: no separators, no `..`, nothing hidden.
fn check_name(name: &str) -> std::result::Result<(), String> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    if name.is_empty() || !plain || name.starts_with('.') {
        return Err(format!(
            "layer name '{name}' must be a plain folder name (letters, digits, '_', '-', '.', not starting with '.')"
        ));
    }
    Ok(())
}
