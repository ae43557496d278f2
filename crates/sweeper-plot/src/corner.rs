//! The best corner of a two-objective panel: where a point better in both objectives would
//! sit (bottom right for a cost against tok/s/user, top right for tok/s/gpu against
//! tok/s/user), marked so that a reader sees at once which way the front improves.

use crate::PlotObjective;
use crate::style::Rect;
use crate::svg::Svg;

/// The arrow and the place of the best corner: right when x is maximized, top when y is.
pub(crate) fn best_corner(x: &PlotObjective, y: &PlotObjective) -> (&'static str, bool, bool) {
    let (right, top) = (!x.minimize, !y.minimize);
    let arrow = match (right, top) {
        (true, true) => "↗",
        (true, false) => "↘",
        (false, true) => "↖",
        (false, false) => "↙",
    };
    (arrow, right, top)
}

/// Writes `best corner ↗` (the arrow pointing into it) inside the plot, in the corner
/// better on both axes.
pub(crate) fn draw_best_corner(svg: &mut Svg, plot: Rect, x: &PlotObjective, y: &PlotObjective) {
    let (arrow, right, top) = best_corner(x, y);
    let text = if right {
        format!("best corner {arrow}")
    } else {
        format!("{arrow} best corner")
    };
    let (tx, anchor) = if right {
        (plot.x + plot.w - 6.0, "end")
    } else {
        (plot.x + 6.0, "start")
    };
    let ty = if top {
        plot.y + 30.0
    } else {
        plot.y + plot.h - 8.0
    };
    svg.halo_text(tx, ty, &text, 11.0, anchor);
}
