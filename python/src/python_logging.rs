//! The engine's `tracing` events as records of Python's `logging`, under the logger `srcflow`.
//!
//! Events are forwarded only at the levels the logger has enabled when a run starts
//! ([`set_level_from_python`]), so a run whose logger is quiet never takes the GIL to log.

use pyo3::prelude::*;
use std::fmt::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// The lowest Python level forwarded now (Python's numbers: 10 debug … 50 critical).
static LOWEST_LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);

/// Python's number for `level`.
fn python_level(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

/// Makes the engine's events reach Python's `logging` (once per process; a process whose
/// `tracing` already has a subscriber keeps it).
pub fn install() {
    let subscriber = tracing_subscriber::registry().with(ToPythonLogging);
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Forwards from now on the levels the logger `srcflow` has enabled.
pub fn set_level_from_python(py: Python<'_>) -> PyResult<()> {
    let logger = py
        .import("logging")?
        .call_method1("getLogger", ("srcflow",))?;
    let level: u32 = logger.call_method0("getEffectiveLevel")?.extract()?;
    LOWEST_LEVEL.store(level.min(u8::MAX as u32) as u8, Ordering::Relaxed);
    Ok(())
}

/// The layer that forwards events.
struct ToPythonLogging;

impl<S: Subscriber> Layer<S> for ToPythonLogging {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>, _: Context<'_, S>) -> bool {
        python_level(metadata.level()) >= LOWEST_LEVEL.load(Ordering::Relaxed)
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut text = EventText::default();
        event.record(&mut text);
        let level = python_level(event.metadata().level());
        Python::attach(|py| {
            let logged = py
                .import("logging")
                .and_then(|logging| logging.call_method1("getLogger", ("srcflow",)))
                .and_then(|logger| logger.call_method1("log", (level, text.0)));
            if let Err(e) = logged {
                e.print(py);
            }
        });
    }
}

/// An event's message followed by its fields as `name=value`.
#[derive(Default)]
struct EventText(String);

impl Visit for EventText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let separator = if self.0.is_empty() { "" } else { " " };
        let _ = if field.name() == "message" {
            write!(self.0, "{separator}{value:?}")
        } else {
            write!(self.0, "{separator}{}={value:?}", field.name())
        };
    }
}
