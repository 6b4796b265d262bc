//! The engine's errors as Python exceptions: each variant of [`srcflow::Error`] raises the
//! built-in class that fits it (or a subclass of one), with the engine's message.

use pyo3::exceptions::{
    PyArithmeticError, PyImportError, PyKeyboardInterrupt, PyMemoryError, PyOSError,
    PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use srcflow::Error;

pyo3::create_exception!(
    srcflow,
    OutOfMemoryError,
    PyMemoryError,
    "The run needs more memory than its budgets allow, even after the governor's recovery."
);
pyo3::create_exception!(
    srcflow,
    DoesNotFitError,
    PyValueError,
    "The problem does not fit the memory budgets given, however the sweep is planned: raise \
     the budget the message names, or lower `chi_out`."
);
pyo3::create_exception!(
    srcflow,
    CheckpointMismatchError,
    PyValueError,
    "The checkpoint given is of another call (another problem, options or srcflow): the call \
     does not resume from it and leaves it as it is."
);
pyo3::create_exception!(
    srcflow,
    BackendUnavailableError,
    PyImportError,
    "The backend asked for (`device=\"gpu\"`) cannot run here: no driver, library or device."
);
pyo3::create_exception!(
    srcflow,
    DeviceError,
    PyRuntimeError,
    "A device or its libraries failed during the run."
);

/// Adds the exception classes to `module`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("OutOfMemoryError", py.get_type::<OutOfMemoryError>())?;
    module.add("DoesNotFitError", py.get_type::<DoesNotFitError>())?;
    module.add(
        "CheckpointMismatchError",
        py.get_type::<CheckpointMismatchError>(),
    )?;
    module.add(
        "BackendUnavailableError",
        py.get_type::<BackendUnavailableError>(),
    )?;
    module.add("DeviceError", py.get_type::<DeviceError>())?;
    Ok(())
}

/// The Python exception for `error`, whose message names the arguments a Python user sets.
pub fn to_python(error: Error) -> PyErr {
    let message = srcflow::setting_names::in_python_arguments(&error.to_string());
    match error {
        Error::Io { .. } | Error::Damaged { .. } => PyOSError::new_err(message),
        Error::BadCore { .. } | Error::Shape(_) | Error::Manifest { .. } | Error::Invalid(_) => {
            PyValueError::new_err(message)
        }
        Error::DoesNotFit { .. } => DoesNotFitError::new_err(message),
        Error::CheckpointMismatch { .. } => CheckpointMismatchError::new_err(message),
        Error::Unavailable(_) => BackendUnavailableError::new_err(message),
        Error::Cuda(_) | Error::DeviceFailed { .. } => DeviceError::new_err(message),
        Error::Numeric(_) => PyArithmeticError::new_err(message),
        Error::OutOfMemory { .. } | Error::DeviceOutOfMemory { .. } => {
            OutOfMemoryError::new_err(message)
        }
        Error::Interrupted => PyKeyboardInterrupt::new_err(message),
    }
}
