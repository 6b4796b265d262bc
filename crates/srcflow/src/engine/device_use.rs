//! `DeviceUse`: what each device of a node did in a run — its compute, its share of the QR and
//! of the collectives, and how long it sat idle.

use serde::Serialize;
use srcflow_graph::graph::{Lane, Op};
use srcflow_sched::sched::RunLog;

/// The busy and idle time of one device.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceUse {
    /// The device.
    pub device: usize,
    /// Seconds its compute lane was busy.
    pub compute_busy_s: f64,
    /// Seconds of that spent in QR tasks.
    pub qr_s: f64,
    /// Seconds its collective lane was busy (gathers, scatters, all-gathers).
    pub collective_s: f64,
    /// Seconds of the run its compute lane was idle.
    pub idle_s: f64,
}

impl DeviceUse {
    /// The use of each of `devices` devices in `log`, a run of `wall_s` seconds.
    pub fn of(log: &RunLog, devices: usize, wall_s: f64) -> Vec<DeviceUse> {
        (0..devices)
            .map(|device| {
                let on = |lane: Lane| {
                    move |e: &srcflow_sched::sched::TaskEvent| e.lane == lane && e.device == device
                };
                let compute_busy_s = log.busy(on(Lane::Compute));
                DeviceUse {
                    device,
                    compute_busy_s,
                    qr_s: log.busy(|e| on(Lane::Compute)(e) && e.op == Op::Qr),
                    collective_s: log.busy(on(Lane::Collective)),
                    idle_s: (wall_s - compute_busy_s).max(0.0),
                }
            })
            .collect()
    }
}
