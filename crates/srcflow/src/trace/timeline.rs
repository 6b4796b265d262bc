//! `timeline_svg`: a trace drawn as a Gantt chart of its lanes, with the bytes on each tier
//! underneath (`srcflow report TRACE --svg FILE`).

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Width of the drawing area for time, in pixels.
const WIDTH: f64 = 1100.0;
/// Left margin for lane names.
const LEFT: f64 = 150.0;
/// Height of one lane.
const ROW: f64 = 22.0;
/// Height of the memory chart.
const CHART: f64 = 140.0;

/// Colours of task kinds (by the slice's category) and of the tiers' memory lines.
fn colour(kind: &str) -> &'static str {
    match kind {
        "env" => "#4e79a7",
        "sketch" => "#59a14f",
        "fold" => "#8cd17d",
        "qr" => "#b07aa1",
        "project" => "#76b7b2",
        "first" | "exact" => "#9c755f",
        "read" | "write" => "#bab0ac",
        "spill-host" | "fetch-host" => "#f28e2b",
        "spill-disk" | "fetch-disk" => "#e15759",
        "stall" => "#ff9da7",
        "device bytes" => "#4e79a7",
        "host bytes" => "#f28e2b",
        "disk bytes" => "#e15759",
        _ => "#888888",
    }
}

/// The SVG of a trace written by `chrome_trace`.
pub fn timeline_svg(trace: &Value) -> Result<String, String> {
    let events = trace["traceEvents"]
        .as_array()
        .ok_or("no traceEvents array")?;
    let tracks: BTreeMap<(u64, u64), String> =
        super::slices::lane_names(events)?.into_iter().collect();
    let end = events
        .iter()
        .filter_map(|e| Some(e["ts"].as_f64()? + e["dur"].as_f64().unwrap_or(0.0)))
        .fold(1.0_f64, f64::max);
    let x = |ts: f64| LEFT + WIDTH * ts / end;
    let rows: Vec<(u64, u64)> = tracks.keys().copied().collect();
    let lanes_height = ROW * rows.len() as f64;
    let height = lanes_height + CHART + 60.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n",
        LEFT + WIDTH + 20.0
    );
    for (i, key) in rows.iter().enumerate() {
        let y = ROW * i as f64;
        let _ = writeln!(
            svg,
            "<text x=\"4\" y=\"{}\">{}</text>",
            y + 15.0,
            escape(&tracks[key])
        );
    }
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let (Some(pid), Some(tid), Some(ts), Some(dur)) = (
            e["pid"].as_u64(),
            e["tid"].as_u64(),
            e["ts"].as_f64(),
            e["dur"].as_f64(),
        ) else {
            return Err(format!("a slice without ids, ts or dur: {e}"));
        };
        let row = rows
            .iter()
            .position(|&r| r == (pid, tid))
            .ok_or("a slice on an unnamed track")?;
        let kind = e["cat"].as_str().unwrap_or("");
        let _ = writeln!(
            svg,
            "<rect x=\"{:.2}\" y=\"{}\" width=\"{:.2}\" height=\"{}\" fill=\"{}\"><title>{} ({:.3} ms)</title></rect>",
            x(ts),
            ROW * row as f64 + 3.0,
            (WIDTH * dur / end).max(0.5),
            ROW - 6.0,
            colour(kind),
            escape(e["name"].as_str().unwrap_or("")),
            dur / 1e3
        );
    }
    draw_memory(&mut svg, events, lanes_height + 20.0, &x);
    let _ = writeln!(
        svg,
        "<text x=\"{LEFT}\" y=\"{}\">0 s</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.3} s</text>\n</svg>",
        height - 8.0,
        LEFT + WIDTH,
        height - 8.0,
        end / 1e6
    );
    Ok(svg)
}

/// The memory counters as one line per tier, scaled to the largest value.
fn draw_memory(svg: &mut String, events: &[Value], top: f64, x: &dyn Fn(f64) -> f64) {
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "memory")
    {
        let Some(ts) = e["ts"].as_f64() else { continue };
        for (tier, bytes) in e["args"].as_object().into_iter().flatten() {
            lines
                .entry(tier.clone())
                .or_default()
                .push((ts, bytes.as_f64().unwrap_or(0.0)));
        }
    }
    let most = lines
        .values()
        .flatten()
        .map(|p| p.1)
        .fold(1.0_f64, f64::max);
    let _ = writeln!(
        svg,
        "<text x=\"4\" y=\"{}\">memory</text><text x=\"4\" y=\"{}\">max {:.1} MB</text>",
        top + 15.0,
        top + 30.0,
        most / 1e6
    );
    for (i, (tier, points)) in lines.iter().enumerate() {
        let path: Vec<String> = points
            .iter()
            .map(|&(ts, bytes)| format!("{:.2},{:.2}", x(ts), top + CHART * (1.0 - bytes / most)))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\
             <text x=\"4\" y=\"{}\" fill=\"{}\">{}</text>",
            colour(tier),
            path.join(" "),
            top + 50.0 + 14.0 * i as f64,
            colour(tier),
            escape(tier)
        );
    }
}

/// Text made safe for SVG.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
