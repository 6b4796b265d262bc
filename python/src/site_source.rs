//! `SiteSource`: the engine's cores read from the user's Python objects one site at a time,
//! when the graph needs them (`numpy.asarray` on each site; a memmap reads only that site).

use crate::arrays::to_tensor;
use crate::request::Request;
use pyo3::prelude::*;
use srcflow::engine::CoreSource;
use srcflow::tensor::{AnyTensor, DType};
use srcflow::train::{Orientation, StackShape};
use srcflow::{Error, Result};
use std::sync::Mutex;

/// One train's sites, as the ket form runs them.
struct TrainSites {
    /// Its name in messages ("train 0", as given).
    name: String,
    /// The site objects.
    sites: Vec<Py<PyAny>>,
    /// The type each site is read as.
    dtypes: Vec<DType>,
}

/// The sites of a stack in its ket form (a bra stack's trains reversed, its MPOs transposed as
/// they are read).
pub struct SiteSource {
    trains: Vec<TrainSites>,
    shape: StackShape,
    orientation: Orientation,
    /// The first exception a site raised when read, raised again when the run stops.
    failure: Mutex<Option<PyErr>>,
}

impl SiteSource {
    /// The source of `request`'s trains, whose checked shape as given is `given`.
    pub fn new(request: &Request, given: &StackShape) -> Result<Self> {
        let orientation = given.orientation();
        let trains = (0..request.trains.len())
            .map(|index| {
                Ok(TrainSites {
                    name: Request::train_name(index),
                    sites: Python::attach(|py| {
                        request.trains[index]
                            .iter()
                            .map(|site| site.clone_ref(py))
                            .collect()
                    }),
                    dtypes: request.site_dtypes(index)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SiteSource {
            trains: orientation.ket_form(trains, |train| train),
            shape: given.clone().into_ket_form(),
            orientation,
            failure: Mutex::new(None),
        })
    }

    /// The shapes of the stack in ket form.
    pub fn shape(&self) -> &StackShape {
        &self.shape
    }

    /// The exception the first failed read raised (its class kept: an `OSError` stays one).
    pub fn take_failure(&self) -> Option<PyErr> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Keeps `error`, unless an earlier read failed first.
    fn keep_failure(&self, error: PyErr) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(error);
    }
}

impl CoreSource for SiteSource {
    fn read(&self, layer: usize, site: usize) -> Result<AnyTensor> {
        let train = &self.trains[layer];
        let bad = |why: String| Error::Shape(format!("{}, site {site}: {why}", train.name));
        let dtype = train.dtypes[site];
        let core = Python::attach(|py| {
            // Looked up at each read (a dictionary lookup, no once-cell: one being filled by a
            // run's thread when the process forks would stay locked in the child).
            let asarray = py.import("numpy")?.getattr("asarray")?;
            let array = asarray.call1((train.sites[site].bind(py), dtype.name()))?;
            to_tensor(&array, dtype)
        })
        .map_err(|e| {
            let why = format!("reading it failed: {e}");
            self.keep_failure(e);
            bad(why)
        })?;
        self.orientation
            .ket_core(&self.shape.layers[layer], site, core, false)
            .map_err(bad)
    }
}
