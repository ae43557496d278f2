//! A minimal SVG writer: shapes, text and marks, each optionally with a `<title>` (the
//! tooltip a browser shows on hover).

use std::fmt::Write as _;

pub(super) const FONT: &str = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\"";
pub(super) const INK: &str = "#222222";

/// The shape of a point's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// A filled dot.
    Dot,
    /// A larger dot with a ring: a front point.
    Ring,
    /// A hollow square (over the GPU budget).
    Square,
    /// A hollow diamond (infeasible).
    Diamond,
    /// A diagonal cross (failed).
    Cross,
    /// An upright cross (unsupported).
    Plus,
    /// A wide open ring around a point's mark (over a bound of the SLA no axis shows).
    Breach,
    /// An open dot (a comparison's candidate below its sweep's goodput floor).
    Hollow,
}

/// Escapes text for SVG content and attribute values; control characters are dropped.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A tooltip: `<title>` with one line per entry of `lines` (escaped, newlines kept).
fn title_element(lines: &str) -> String {
    let text: Vec<String> = lines.lines().map(escape).collect();
    format!("<title>{}</title>", text.join("\n"))
}

pub(super) struct Svg {
    width: f64,
    height: f64,
    pub(super) body: String,
}

impl Svg {
    pub(super) fn new(width: f64, height: f64) -> Svg {
        Svg {
            width,
            height,
            body: String::new(),
        }
    }

    /// The chart's title (bold) and subtitle, centred, shrunk to fit the width.
    pub(super) fn heading(&mut self, title: &str, subtitle: &str) {
        let fit = |size: f64, text: &str| {
            size.min(size * (self.width - 40.0) / super::axis::text_width(text, size).max(1.0))
        };
        let size = fit(17.0, title);
        let _ = writeln!(
            self.body,
            "<text x=\"{:.1}\" y=\"28\" {FONT} font-size=\"{size:.1}\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
            self.width / 2.0,
            escape(title)
        );
        if !subtitle.is_empty() {
            let size = fit(12.5, subtitle);
            let _ = writeln!(
                self.body,
                "<text x=\"{:.1}\" y=\"49\" {FONT} font-size=\"{size:.1}\" text-anchor=\"middle\" fill=\"#555555\">{}</text>",
                self.width / 2.0,
                escape(subtitle)
            );
        }
    }

    pub(super) fn text(
        &mut self,
        x: f64,
        y: f64,
        text: &str,
        size: f64,
        anchor: &str,
        color: &str,
    ) {
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" {FONT} font-size=\"{size}\" text-anchor=\"{anchor}\" fill=\"{color}\">{}</text>",
            escape(text)
        );
    }

    /// Text with a white halo, so that it stays legible over points and lines.
    pub(super) fn halo_text(&mut self, x: f64, y: f64, text: &str, size: f64, anchor: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" {FONT} font-size=\"{size}\" text-anchor=\"{anchor}\" fill=\"#333333\" stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\">{}</text>",
            escape(text)
        );
    }

    /// A point's label (`class="label"`): haloed text starting at `x`, baseline `y`.
    pub(super) fn label(&mut self, x: f64, y: f64, text: &str, size: f64) {
        let _ = writeln!(
            self.body,
            "<text class=\"label\" x=\"{x:.1}\" y=\"{y:.1}\" {FONT} font-size=\"{size}\" fill=\"#333333\" stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\">{}</text>",
            escape(text)
        );
    }

    pub(super) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, color: &str, width: f64) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{color}\" stroke-width=\"{width}\"/>"
        );
    }

    pub(super) fn dashed(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, color: &str) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{color}\" stroke-width=\"1.6\" stroke-dasharray=\"6 4\"/>"
        );
    }

    pub(super) fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, opacity: f64) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\" fill-opacity=\"{opacity}\"/>"
        );
    }

    pub(super) fn frame(&mut self, x: f64, y: f64, w: f64, h: f64) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"none\" stroke=\"{INK}\" stroke-width=\"1\"/>"
        );
    }

    pub(super) fn polyline(&mut self, points: &[(f64, f64)], color: &str, width: f64) {
        if points.len() < 2 {
            return;
        }
        let mut pts = String::new();
        for (x, y) in points {
            let _ = write!(pts, "{x:.1},{y:.1} ");
        }
        let _ = writeln!(
            self.body,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"/>",
            pts.trim_end()
        );
    }

    /// A point's mark of `shape` centred at `(x, y)`, with a tooltip when `tip` is not empty.
    /// Every mark is one element with the attribute `class="mark <kind>"`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mark(
        &mut self,
        shape: Shape,
        x: f64,
        y: f64,
        color: &str,
        kind: &str,
        tip: &str,
        outline: Option<&str>,
    ) {
        let tip = if tip.is_empty() {
            String::new()
        } else {
            title_element(tip)
        };
        let class = format!("class=\"mark {kind}\"");
        let close = |body: &mut String, open: String| {
            if tip.is_empty() {
                let _ = writeln!(body, "{open}/>");
            } else {
                let name = open[1..].split(' ').next().unwrap_or("g").to_owned();
                let _ = writeln!(body, "{open}>{tip}</{name}>");
            }
        };
        match shape {
            Shape::Dot => close(
                &mut self.body,
                format!(
                    "<circle {class} cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.2\" fill=\"{color}\" fill-opacity=\"0.75\""
                ),
            ),
            Shape::Ring => close(
                &mut self.body,
                format!(
                    "<circle {class} cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{color}\" stroke=\"{}\" stroke-width=\"1.4\"",
                    outline.unwrap_or("#ffffff")
                ),
            ),
            Shape::Square => close(
                &mut self.body,
                format!(
                    "<rect {class} x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" fill=\"#ffffff\" fill-opacity=\"0.6\" stroke=\"{color}\" stroke-width=\"1.5\"",
                    x - 3.5,
                    y - 3.5
                ),
            ),
            Shape::Diamond => close(
                &mut self.body,
                format!(
                    "<path {class} d=\"M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z\" fill=\"#ffffff\" fill-opacity=\"0.6\" stroke=\"{color}\" stroke-width=\"1.5\"",
                    y - 4.5,
                    x + 4.5,
                    y + 4.5,
                    x - 4.5
                ),
            ),
            Shape::Cross => close(
                &mut self.body,
                format!(
                    "<path {class} d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\" stroke=\"{color}\" stroke-width=\"1.8\" fill=\"none\"",
                    x - 3.5,
                    y - 3.5,
                    x + 3.5,
                    y + 3.5,
                    x - 3.5,
                    y + 3.5,
                    x + 3.5,
                    y - 3.5
                ),
            ),
            Shape::Plus => close(
                &mut self.body,
                format!(
                    "<path {class} d=\"M{:.1} {y:.1}L{:.1} {y:.1}M{x:.1} {:.1}L{x:.1} {:.1}\" stroke=\"{color}\" stroke-width=\"1.8\" fill=\"none\"",
                    x - 4.0,
                    x + 4.0,
                    y - 4.0,
                    y + 4.0
                ),
            ),
            Shape::Hollow => close(
                &mut self.body,
                format!(
                    "<circle {class} cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.4\" fill=\"#ffffff\" fill-opacity=\"0.6\" stroke=\"{color}\" stroke-width=\"1.4\""
                ),
            ),
            Shape::Breach => close(
                &mut self.body,
                format!(
                    "<circle {class} cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"7.5\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.6\""
                ),
            ),
        }
    }

    pub(super) fn finish(self) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{}</svg>\n",
            self.body,
            w = self.width,
            h = self.height
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(escape("a\u{1b}[2Jb"), "a[2Jb");
    }

    #[test]
    fn marks_carry_tooltips() {
        let mut svg = Svg::new(10.0, 10.0);
        svg.mark(
            Shape::Dot,
            1.0,
            2.0,
            "#000",
            "feasible",
            "trial 3\ntp=<2>",
            None,
        );
        svg.mark(Shape::Cross, 1.0, 2.0, "#000", "failed", "", None);
        let text = svg.finish();
        assert!(
            text.contains("<title>trial 3\ntp=&lt;2&gt;</title></circle>"),
            "{text}"
        );
        assert!(text.contains("class=\"mark failed\""));
    }
}
