//! `CoreSink`: where write-site tasks put output cores (memory, or a problem directory).

use srcflow_graph::train::{Kind, Train};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::AnyTensor;
use std::sync::Mutex;

/// Receives output cores in `[l, r, u, d]` form, in any order.
pub trait CoreSink: Sync {
    /// Takes the output core of `site`.
    fn write(&self, site: usize, core: AnyTensor) -> Result<()>;
    /// Keeps a draft of the core of `site` until [`CoreSink::take_draft`] asks for it: an
    /// core before the rounding sweep, or a core of the left edge before its trim (every
    /// run with a bond above what its left side allows uses drafts).
    fn keep_draft(&self, site: usize, core: AnyTensor) -> Result<()>;
    /// Gives back the draft kept for `site`.
    fn take_draft(&self, site: usize) -> Result<AnyTensor>;
}

/// Collects output cores in memory, in the element type the run computed in.
pub struct MemorySink {
    kind: Kind,
    cores: Mutex<Vec<Option<AnyTensor>>>,
    drafts: Mutex<Vec<Option<AnyTensor>>>,
}

impl MemorySink {
    /// A sink for a train of `kind` with `sites` sites.
    pub fn new(kind: Kind, sites: usize) -> Self {
        MemorySink {
            kind,
            cores: Mutex::new(vec![None; sites]),
            drafts: Mutex::new(vec![None; sites]),
        }
    }

    /// The collected train, in the element type the run computed in; fails if a site is
    /// missing.
    pub fn into_train(self) -> Result<Train> {
        let kind = self.kind;
        Train::of_any(kind, self.into_cores()?)
    }

    /// The collected cores in `[l, r, u, d]` form, in the run's element type; fails if a site
    /// is missing.
    pub fn into_cores(self) -> Result<Vec<AnyTensor>> {
        let cores = self.cores.into_inner().expect("no writer panicked");
        cores
            .into_iter()
            .enumerate()
            .map(|(site, c)| {
                c.ok_or_else(|| Error::Invalid(format!("output site {site} was never written")))
            })
            .collect()
    }
}

impl CoreSink for MemorySink {
    fn write(&self, site: usize, core: AnyTensor) -> Result<()> {
        self.cores.lock().expect("no writer panicked")[site] = Some(core);
        Ok(())
    }

    fn keep_draft(&self, site: usize, core: AnyTensor) -> Result<()> {
        self.drafts.lock().expect("no writer panicked")[site] = Some(core);
        Ok(())
    }

    fn take_draft(&self, site: usize) -> Result<AnyTensor> {
        self.drafts.lock().expect("no writer panicked")[site]
            .take()
            .ok_or_else(|| Error::Invalid(format!("no draft of output site {site} was kept")))
    }
}
