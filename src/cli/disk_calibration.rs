//! The disk part of `srcflow calibrate`: how the scratch filesystem answers requests — the
//! latency of each, the bandwidth of one, the bandwidth of many and the depth where it
//! saturates — measured with the spill files a run writes, direct where the filesystem
//! allows.

use srcflow::store::{DiskIo, DiskRequests, DEFAULT_IO_DEPTH};
use srcflow::tensor::{Tensor, C64};
use srcflow::CancelToken;
use srcflow::Result;
use srcflow_sched::store::SpillFile;
use std::path::Path;
use std::time::Instant;

/// Bytes of the file read at every depth.
const DEPTH_PROBE_BYTES: usize = 64 << 20;

/// The depths tried.
const DEPTHS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Times each small transfer is repeated (the median is kept).
const REPEATS: usize = 5;

/// The fraction of the best bandwidth at which the filesystem counts as saturated.
const SATURATED: f64 = 0.9;

/// What the disk probe measured.
pub struct DiskCalibration {
    /// Latency, bandwidth of one request and of all together.
    pub requests: DiskRequests,
    /// Bytes per second reading a file at the default depth.
    pub read_bytes_per_s: f64,
    /// Bytes per second writing a file at the default depth.
    pub write_bytes_per_s: f64,
    /// Bytes per second reading at each depth tried.
    pub by_depth: Vec<(usize, f64)>,
    /// The least depth reaching 90 % of the best bandwidth.
    pub saturating_depth: usize,
}

impl DiskCalibration {
    /// The note a machine model keeps of it.
    pub fn note(&self) -> String {
        let by_depth: Vec<String> = self
            .by_depth
            .iter()
            .map(|(d, rate)| format!("{d}: {:.0} MB/s", rate / 1e6))
            .collect();
        format!(
            "disk: requests of 1 and 8 MiB read one at a time give the latency ({:.2} ms) and one request's bandwidth; a {} MiB file read at depths {} gives {}; bandwidth saturates (90 % of the best) at depth {}; disk lanes rated at the default depth {DEFAULT_IO_DEPTH}",
            self.requests.latency_s * 1e3,
            DEPTH_PROBE_BYTES >> 20,
            DEPTHS.map(|d| d.to_string()).join(", "),
            by_depth.join(", "),
            self.saturating_depth
        )
    }
}

/// Measures the filesystem of `dir` (in files made there and removed), as a run moving bytes
/// as `io` says (its depth aside) would reach it: emulated, if `io` emulates one.
pub fn calibrate_disk(dir: &Path, io: &DiskIo) -> Result<DiskCalibration> {
    let at = |depth: usize| DiskIo { depth, ..*io }.accesses();
    let cancel = CancelToken::new();
    let (_, writes) = at(DEFAULT_IO_DEPTH);
    let write = |name: &str, tensor: Tensor| {
        SpillFile::write(dir.join(name), &tensor.into(), &writes, None, &cancel)
    };
    let large = probe(DEPTH_PROBE_BYTES)?;
    let start = Instant::now();
    let large = write("srcflow-disk-probe-large.bin", large)?;
    let write_bytes_per_s = DEPTH_PROBE_BYTES as f64 / start.elapsed().as_secs_f64();
    let small = write("srcflow-disk-probe-1.bin", probe(1 << 20)?)?;
    let block = write("srcflow-disk-probe-8.bin", probe(8 << 20)?)?;
    let read_seconds = |file: &SpillFile, depth: usize| -> Result<f64> {
        let (reads, _) = at(depth);
        let start = Instant::now();
        std::hint::black_box(file.read(&reads, &cancel)?);
        Ok(start.elapsed().as_secs_f64())
    };
    let median = |file: &SpillFile| -> Result<f64> {
        let mut times = (0..REPEATS)
            .map(|_| read_seconds(file, 1))
            .collect::<Result<Vec<f64>>>()?;
        times.sort_by(f64::total_cmp);
        Ok(times[REPEATS / 2])
    };
    let (one, eight) = (median(&small)?, median(&block)?);
    let by_depth = DEPTHS
        .iter()
        .map(|&d| Ok((d, DEPTH_PROBE_BYTES as f64 / read_seconds(&large, d)?)))
        .collect::<Result<Vec<(usize, f64)>>>()?;
    let best = by_depth.iter().map(|&(_, rate)| rate).fold(0.0, f64::max);
    let saturating_depth = by_depth
        .iter()
        .find(|&&(_, rate)| rate >= SATURATED * best)
        .map_or(1, |&(d, _)| d);
    let read_bytes_per_s = by_depth
        .iter()
        .find(|&&(d, _)| d == DEFAULT_IO_DEPTH)
        .map_or(best, |&(_, rate)| rate);
    let stream = ((7 << 20) as f64 / (eight - one).max(1e-9)).min(best);
    let requests = DiskRequests {
        latency_s: (one - (1 << 20) as f64 / stream).max(0.0),
        stream_bytes_per_s: stream,
        total_bytes_per_s: best,
    };
    Ok(DiskCalibration {
        requests,
        read_bytes_per_s,
        write_bytes_per_s,
        by_depth,
        saturating_depth,
    })
}

/// A tensor of `bytes` bytes of complex numbers.
fn probe(bytes: usize) -> Result<Tensor> {
    let len = bytes / std::mem::size_of::<C64>();
    let data = (0..len).map(|i| C64::new(i as f64, 1.0)).collect();
    Tensor::new(vec![len], data)
}
