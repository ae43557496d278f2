//! The crate's one error type: why a comparison cannot be drawn, or (feature `png`) why an
//! SVG could not be turned into a PNG.

/// Why a chart could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// A comparison was given no series.
    #[error("nothing to compare: give two or more sweeps")]
    NoSeries,
    /// A series of a comparison has other objectives than the first one.
    #[error(
        "`{name}` has the objectives {found}, `{first}` has {expected}: a comparison draws \
         sweeps with the same objectives; plot them alone, or pick the same axes for each \
         (with -o NAME:max|min for tables and score/front output)"
    )]
    Objectives {
        /// The series' position among the inputs (0-based).
        series: usize,
        /// Its name.
        name: String,
        /// Its objectives, `name:max` joined by `, `.
        found: String,
        /// The first series' name.
        first: String,
        /// The first series' objectives, written the same way.
        expected: String,
    },
    /// A series of a comparison has a single objective (a scalar goal).
    #[error(
        "`{name}` has one objective ({objective}): a comparison draws fronts of two or more \
         objectives; plot a scalar sweep alone"
    )]
    Scalar {
        /// The series' name.
        name: String,
        /// Its objective.
        objective: String,
    },
    /// A comparison mixes `min_gpus` sweeps (GPUs against goodput) with other ones.
    #[error(
        "`{name}` is a `min_gpus` sweep (GPUs against goodput) and `{other}` is not: a \
         comparison draws `min_gpus` sweeps only with other `min_gpus` sweeps; plot them apart"
    )]
    Floor {
        /// The first series with a goodput floor.
        name: String,
        /// The first series without one.
        other: String,
    },
    /// The SVG did not parse.
    #[cfg(feature = "png")]
    #[error("the SVG cannot be read: {0}")]
    Svg(String),
    /// Its size is zero or too large for a pixmap.
    #[cfg(feature = "png")]
    #[error("the image size {width}x{height} cannot be rendered")]
    Size {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
    /// PNG encoding failed.
    #[cfg(feature = "png")]
    #[error("PNG encoding failed: {0}")]
    Encode(String),
}
