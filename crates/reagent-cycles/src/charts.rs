//! The report's charts (plotters: PNG through its bitmap backend, SVG) and the HTML page that
//! shows them. Text is drawn with DejaVu Sans, embedded (the `dejavu` crate), so no system
//! font or fontconfig is needed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use image::ImageEncoder;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::Report;
use crate::CyclesError;

/// Width and height of every chart, in pixels.
pub const SIZE: (u32, u32) = (720, 480);

/// The lightest and darkest colours of the similarity scale (0 and 1).
pub const SCALE_LOW: (u8, u8, u8) = (247, 251, 255);
/// The darkest colour of the similarity scale (similarity 1, the diagonal).
pub const SCALE_HIGH: (u8, u8, u8) = (8, 48, 107);

/// The charts of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// The heatmap of the reflections' similarity matrix.
    Similarity,
    /// Tool calls, memory operations and operator messages per cycle.
    ToolUse,
    /// Tokens per cycle.
    Tokens,
    /// Duration per cycle.
    Duration,
}

impl Chart {
    /// Every chart, in the page's order.
    pub const ALL: [Chart; 4] = [
        Chart::Similarity,
        Chart::ToolUse,
        Chart::Tokens,
        Chart::Duration,
    ];

    /// Its file name without extension.
    pub fn name(self) -> &'static str {
        match self {
            Chart::Similarity => "similarity",
            Chart::ToolUse => "tool_use",
            Chart::Tokens => "tokens",
            Chart::Duration => "duration",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Chart::Similarity => "Reflection similarity (cycle × cycle)",
            Chart::ToolUse => "Tool use per cycle",
            Chart::Tokens => "Tokens per cycle",
            Chart::Duration => "Duration per cycle (seconds)",
        }
    }
}

fn fonts() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // The embedded font is valid; if registering ever failed, text would be left out.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

fn chart_error(e: impl std::fmt::Display) -> CyclesError {
    CyclesError::Other(format!("cannot draw a chart: {e}"))
}

/// The colour of similarity `x` (0–1) on the scale.
pub fn scale(x: f64) -> RGBColor {
    let t = x.clamp(0.0, 1.0);
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
    RGBColor(
        mix(SCALE_LOW.0, SCALE_HIGH.0),
        mix(SCALE_LOW.1, SCALE_HIGH.1),
        mix(SCALE_LOW.2, SCALE_HIGH.2),
    )
}

fn draw<DB: DrawingBackend>(
    chart: Chart,
    report: &Report,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), CyclesError> {
    root.fill(&WHITE).map_err(chart_error)?;
    let cycles: Vec<u32> = report.cycles.iter().map(|c| c.cycle).collect();
    let last = cycles.last().copied().unwrap_or(1).max(1);
    match chart {
        Chart::Similarity => {
            let n = report.matrix.len() as u32;
            let mut c = ChartBuilder::on(root)
                .caption(chart.title(), ("sans-serif", 20))
                .margin(12)
                .x_label_area_size(36)
                .y_label_area_size(44)
                // Segmented: each cycle's label sits under the middle of its cells.
                .build_cartesian_2d(
                    (1u32..n.max(1)).into_segmented(),
                    (1u32..n.max(1)).into_segmented(),
                )
                .map_err(chart_error)?;
            c.configure_mesh()
                .disable_mesh()
                .x_desc("cycle")
                .y_desc("cycle")
                .draw()
                .map_err(chart_error)?;
            let m = &report.matrix;
            c.draw_series((0..m.len()).flat_map(|i| {
                (0..m.len()).map(move |j| {
                    let (x, y) = (i as u32 + 1, j as u32 + 1);
                    let at = |v| SegmentValue::Exact(v);
                    Rectangle::new(
                        [(at(x), at(y)), (at(x + 1), at(y + 1))],
                        scale(m[i][j]).filled(),
                    )
                })
            }))
            .map_err(chart_error)?;
        }
        Chart::ToolUse => {
            let series = [
                (
                    "tool calls",
                    RGBColor(31, 119, 180),
                    report
                        .cycles
                        .iter()
                        .map(|c| c.tool_calls as f64)
                        .collect::<Vec<_>>(),
                ),
                (
                    "memory operations",
                    RGBColor(44, 160, 44),
                    report.cycles.iter().map(|c| c.memory_ops as f64).collect(),
                ),
                (
                    "operator messages",
                    RGBColor(214, 39, 40),
                    report
                        .cycles
                        .iter()
                        .map(|c| c.operator_messages as f64)
                        .collect(),
                ),
            ];
            lines(chart, root, &cycles, last, "count", &series)?;
        }
        Chart::Tokens => {
            let series = [(
                "tokens",
                RGBColor(148, 103, 189),
                report
                    .cycles
                    .iter()
                    .map(|c| c.tokens as f64)
                    .collect::<Vec<_>>(),
            )];
            lines(chart, root, &cycles, last, "tokens", &series)?;
        }
        Chart::Duration => {
            let series = [(
                "seconds",
                RGBColor(255, 127, 14),
                report
                    .cycles
                    .iter()
                    .map(|c| c.duration_ms as f64 / 1000.0)
                    .collect::<Vec<_>>(),
            )];
            lines(chart, root, &cycles, last, "seconds", &series)?;
        }
    }
    root.present().map_err(chart_error)
}

/// A line (with points) per series over the cycles.
fn lines<DB: DrawingBackend>(
    chart: Chart,
    root: &DrawingArea<DB, Shift>,
    cycles: &[u32],
    last: u32,
    y_desc: &str,
    series: &[(&str, RGBColor, Vec<f64>)],
) -> Result<(), CyclesError> {
    let top = series
        .iter()
        .flat_map(|(_, _, v)| v.iter().copied())
        .fold(0.0f64, f64::max);
    let mut c = ChartBuilder::on(root)
        .caption(chart.title(), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5f64..f64::from(last) + 0.5, 0.0f64..(top * 1.1).max(1.0))
        .map_err(chart_error)?;
    // Cycles are whole numbers: ticks between them stay unlabelled.
    let whole = |x: &f64| {
        if x.fract().abs() < 1e-9 {
            format!("{x:.0}")
        } else {
            String::new()
        }
    };
    c.configure_mesh()
        .x_desc("cycle")
        .y_desc(y_desc)
        .x_label_formatter(&whole)
        .draw()
        .map_err(chart_error)?;
    for (label, colour, values) in series {
        let points: Vec<(f64, f64)> = cycles
            .iter()
            .zip(values)
            .map(|(c, v)| (f64::from(*c), *v))
            .collect();
        let colour = *colour;
        c.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
            .map_err(chart_error)?
            .label(*label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2)));
        c.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 4, colour.filled())),
        )
        .map_err(chart_error)?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(chart_error)
}

/// `chart` as an SVG document.
pub fn svg(chart: Chart, report: &Report) -> Result<String, CyclesError> {
    fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(chart, report, &root)?;
    }
    Ok(out)
}

/// `chart` as a PNG image.
pub fn png(chart: Chart, report: &Report) -> Result<Vec<u8>, CyclesError> {
    fonts();
    let (w, h) = SIZE;
    let mut pixels = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
        draw(chart, report, &root)?;
    }
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out)
        .write_image(&pixels, w, h, image::ColorType::Rgb8)
        .map_err(chart_error)?;
    Ok(out)
}

/// Write every chart as `DIR/NAME.png`; the files written.
pub fn write_pngs(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, CyclesError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CyclesError::Other(format!("cannot create {}: {e}", dir.display())))?;
    Chart::ALL
        .iter()
        .map(|chart| {
            let path = dir.join(format!("{}.png", chart.name()));
            std::fs::write(&path, png(*chart, report)?)
                .map_err(|e| CyclesError::Other(format!("cannot write {}: {e}", path.display())))?;
            Ok(path)
        })
        .collect()
}

/// `text` safe inside HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Standard base64 (for the PNGs embedded in the page).
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The report as one self-contained HTML page: the charts (SVG inline, with the PNG beside
/// each), the per-cycle table, the memory at the end.
pub fn html(report: &Report) -> Result<String, CyclesError> {
    let e = &report.experiment;
    let mut out = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>reagent cycles: {id}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:4px 8px;vertical-align:top}}\
         td.r{{text-align:right}}pre{{white-space:pre-wrap;margin:0}}figure{{display:inline-block}}\
         img{{width:360px}}</style></head><body>\
         <h1>Experiment {id}</h1><p>model {model} · status {status} · cycles {done}/{total}</p>",
        id = escape(&e.id),
        model = escape(&e.model),
        status = escape(&e.status),
        done = e.cycles_done,
        total = e.cycles,
    );
    out.push_str("<h2>Charts</h2>");
    for chart in Chart::ALL {
        out.push_str(&format!(
            "<figure id=\"{name}\">{svg}<figcaption>{title} <img alt=\"{title} (PNG)\" src=\"data:image/png;base64,{png}\"></figcaption></figure>",
            name = chart.name(),
            svg = svg(chart, report)?,
            title = escape(chart.title()),
            png = base64(&png(chart, report)?),
        ));
    }
    out.push_str(
        "<h2>Cycles</h2><table><tr><th>cycle</th><th>outcome</th><th>tools</th><th>memory ops</th>\
         <th>operator</th><th>tokens</th><th>seconds</th><th>similarity</th><th>reflection</th></tr>",
    );
    for c in &report.cycles {
        out.push_str(&format!(
            "<tr><td class=r>{}</td><td>{}{}</td><td class=r>{}</td><td class=r>{}</td><td class=r>{}</td>\
             <td class=r>{}</td><td class=r>{:.1}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            c.cycle,
            escape(&c.outcome),
            if c.cut_short { " (cut short)" } else { "" },
            c.tool_calls,
            c.memory_ops,
            c.operator_messages,
            c.tokens,
            c.duration_ms as f64 / 1000.0,
            c.similarity_max
                .map_or("-".to_owned(), |s| format!("{s:.2} {}", c.similarity_level)),
            escape(&c.reflection),
        ));
    }
    out.push_str("</table><h2>Memory at the end</h2><table><tr><th>key</th><th>value</th></tr>");
    for m in &report.memory {
        out.push_str(&format!(
            "<tr><td>{}</td><td><pre>{}</pre></td></tr>",
            escape(&m.key),
            escape(&m.value)
        ));
    }
    out.push_str("</table></body></html>\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{base64, escape};

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<script>alert("x&'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&amp;&#39;y&#39;)&lt;/script&gt;"
        );
    }

    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
