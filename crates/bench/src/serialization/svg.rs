//! A grouped bar chart of a [`Report`] as a standalone SVG document, written by hand (no
//! plotting dependency): one panel per benchmark with time per iteration for every (mode, reuse)
//! row — Kestrel's ratio to Cap'n Proto printed above each group — and a last panel with the
//! mean bytes per message, relative to Cap'n Proto's.

use std::fmt::Write as _;

use super::report::Report;
use super::{Implementation, Mode};

const WIDTH: f64 = 960.0;
const PANEL_HEIGHT: f64 = 250.0;
const MARGIN_LEFT: f64 = 80.0;
const MARGIN_RIGHT: f64 = 20.0;
const PLOT_TOP: f64 = 40.0;
const PLOT_BOTTOM: f64 = 50.0;
const HEADER_HEIGHT: f64 = 60.0;

fn color(implementation: Implementation) -> &'static str {
    match implementation {
        Implementation::Kestrel => "#2b6cb0",
        Implementation::Capnp => "#dd6b20",
        Implementation::CapnpPacked => "#f6ad55",
    }
}

/// A round axis maximum and tick step for values up to `max`: steps of 1, 2 or 5 times a power
/// of ten, about five ticks.
fn nice_axis(max: f64) -> (f64, f64) {
    if !(max.is_finite() && max > 0.0) {
        return (1.0, 0.2);
    }
    let rough_step = max / 5.0;
    let magnitude = 10_f64.powf(rough_step.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|factor| factor * magnitude)
        .find(|step| *step >= rough_step)
        .unwrap_or(10.0 * magnitude);
    ((max / step).ceil() * step, step)
}

/// Picks the time unit for an axis whose maximum is `max_seconds`.
fn time_unit(max_seconds: f64) -> (&'static str, f64) {
    if max_seconds >= 1e-3 {
        ("ms", 1e3)
    } else if max_seconds >= 1e-6 {
        ("µs", 1e6)
    } else {
        ("ns", 1e9)
    }
}

/// Trims a tick label: `2.50` → `2.5`, `10.00` → `10`.
fn tick_label(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One panel of grouped bars. `groups` are (label, note above the group, one value per series).
struct Panel<'a> {
    title: String,
    axis_label: String,
    series: &'a [Implementation],
    groups: Vec<(String, String, Vec<Option<f64>>)>,
}

fn draw_panel(out: &mut String, top: f64, panel: &Panel<'_>) {
    let plot_left = MARGIN_LEFT;
    let plot_right = WIDTH - MARGIN_RIGHT;
    let plot_top = top + PLOT_TOP;
    let plot_bottom = top + PANEL_HEIGHT - PLOT_BOTTOM;
    let plot_height = plot_bottom - plot_top;
    let max = panel
        .groups
        .iter()
        .flat_map(|(_, _, values)| values.iter().flatten().copied())
        .fold(0.0_f64, f64::max);
    let (axis_max, step) = nice_axis(max);
    let _ = writeln!(
        out,
        r#"<text x="{plot_left}" y="{:.1}" font-size="15" font-weight="bold">{}</text>"#,
        top + 22.0,
        panel.title
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle" font-size="12">{}</text>"#,
        (plot_top + plot_bottom) / 2.0,
        panel.axis_label
    );
    let mut tick = 0.0;
    while tick <= axis_max + step / 2.0 {
        let y = plot_bottom - tick / axis_max * plot_height;
        let _ = writeln!(
            out,
            "<line x1=\"{plot_left}\" x2=\"{plot_right}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e2e8f0\"/>"
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"#,
            plot_left - 6.0,
            y + 4.0,
            tick_label(tick)
        );
        tick += step;
    }
    let group_count = panel.groups.len().max(1) as f64;
    let group_width = (plot_right - plot_left) / group_count;
    let bar_width = group_width * 0.8 / panel.series.len().max(1) as f64;
    for (index, (label, note, values)) in panel.groups.iter().enumerate() {
        let group_left = plot_left + index as f64 * group_width + group_width * 0.1;
        for (series_index, value) in values.iter().enumerate() {
            let Some(value) = value else { continue };
            let height = value / axis_max * plot_height;
            let _ = writeln!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                group_left + series_index as f64 * bar_width,
                plot_bottom - height,
                bar_width * 0.92,
                height,
                color(panel.series[series_index]),
                panel.series[series_index].name(),
                tick_label(*value)
            );
        }
        let center = plot_left + (index as f64 + 0.5) * group_width;
        for (line, text) in label.split('\n').enumerate() {
            let _ = writeln!(
                out,
                r#"<text x="{center:.1}" y="{:.1}" text-anchor="middle" font-size="11">{text}</text>"#,
                plot_bottom + 15.0 + line as f64 * 13.0
            );
        }
        if !note.is_empty() {
            let _ = writeln!(
                out,
                "<text x=\"{center:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#4a5568\">{note}</text>",
                plot_top - 6.0
            );
        }
    }
    let _ = writeln!(
        out,
        "<line x1=\"{plot_left}\" x2=\"{plot_right}\" y1=\"{plot_bottom:.1}\" y2=\"{plot_bottom:.1}\" stroke=\"#2d3748\"/>"
    );
}

/// The chart of `report` as an SVG document.
pub fn render(report: &Report) -> String {
    let series: Vec<Implementation> = report.options.implementations.clone();
    let benchmarks = report.benchmarks();
    let mut panels = Vec::new();
    for &benchmark in &benchmarks {
        let rows: Vec<(Mode, bool)> = report
            .options
            .modes
            .iter()
            .flat_map(|&mode| [(mode, false), (mode, true)])
            .collect();
        let max_seconds = rows
            .iter()
            .flat_map(|&(mode, reuse)| {
                series
                    .iter()
                    .filter_map(move |&i| report.seconds_per_iteration(benchmark, i, mode, reuse))
            })
            .fold(0.0_f64, f64::max);
        let (unit, factor) = time_unit(max_seconds);
        let groups = rows
            .iter()
            .map(|&(mode, reuse)| {
                let values = series
                    .iter()
                    .map(|&i| {
                        report
                            .seconds_per_iteration(benchmark, i, mode, reuse)
                            .map(|seconds| seconds * factor)
                    })
                    .collect();
                let note = report
                    .ratio(benchmark, Implementation::Capnp, mode, reuse)
                    .map_or_else(String::new, |ratio| format!("k/capnp {ratio:.2}"));
                let label = format!(
                    "{}\n{}",
                    mode.name(),
                    if reuse { "reuse" } else { "no reuse" }
                );
                (label, note, values)
            })
            .collect();
        panels.push(Panel {
            title: format!(
                "{} — time per iteration ({} iterations, median of {})",
                benchmark.name(),
                report.options.iterations(benchmark),
                report.options.rounds
            ),
            axis_label: format!("{unit} per iteration (lower is better)"),
            series: &series,
            groups,
        });
    }
    // Sizes differ by three orders of magnitude between benchmarks, so each group is scaled to
    // Cap'n Proto's size (1.0) and the note gives the absolute means.
    let size_groups: Vec<(String, String, Vec<Option<f64>>)> = benchmarks
        .iter()
        .filter_map(|&benchmark| {
            let capnp = report
                .sizes(benchmark, Implementation::Capnp)?
                .per_message_bytes();
            let values: Vec<Option<f64>> = series
                .iter()
                .map(|&i| {
                    report
                        .sizes(benchmark, i)
                        .map(|s| s.per_message_bytes() / capnp)
                })
                .collect();
            let note = report
                .sizes(benchmark, Implementation::Kestrel)
                .map_or_else(String::new, |k| {
                    format!("kestrel {:.0} B, capnp {capnp:.0} B", k.per_message_bytes())
                });
            Some((benchmark.name().to_string(), note, values))
        })
        .collect();
    if !size_groups.is_empty() {
        panels.push(Panel {
            title: "bytes per message relative to capnp (mean of request and response, framing included)"
                .into(),
            axis_label: "× capnp size (lower is better)".into(),
            series: &series,
            groups: size_groups,
        });
    }
    let height = HEADER_HEIGHT + PANEL_HEIGHT * panels.len() as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{MARGIN_LEFT}" y="24" font-size="17" font-weight="bold">Serialization benchmarks: Kestrel encoding vs Cap'n Proto (capnp crate)</text>"#
    );
    let mut legend_x = MARGIN_LEFT;
    for &implementation in &series {
        let _ = writeln!(
            out,
            r#"<rect x="{legend_x}" y="36" width="14" height="14" fill="{}"/><text x="{}" y="48" font-size="13">{}</text>"#,
            color(implementation),
            legend_x + 20.0,
            implementation.name()
        );
        legend_x += 140.0;
    }
    for (index, panel) in panels.iter().enumerate() {
        draw_panel(&mut out, HEADER_HEIGHT + index as f64 * PANEL_HEIGHT, panel);
    }
    let _ = writeln!(out, "</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axis_rounds_up_to_a_step() {
        for (max, expected) in [
            (0.93, (1.0, 0.2)),
            (7.0, (8.0, 2.0)),
            (12.0, (15.0, 5.0)),
            (0.0, (1.0, 0.2)),
        ] {
            let (axis_max, step) = nice_axis(max);
            assert!((axis_max - expected.0).abs() < 1e-9, "{max}: {axis_max}");
            assert!((step - expected.1).abs() < 1e-9, "{max}: {step}");
        }
    }

    #[test]
    fn tick_labels_are_trimmed() {
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(tick_label(10.0), "10");
        assert_eq!(tick_label(0.25), "0.25");
    }
}
