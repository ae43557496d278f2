//! PNG output: an SVG of this module rasterized by resvg, its text set in the embedded
//! `DejaVu Sans` subset (regular and bold, `assets/fonts/`), never a system font, so that a
//! PNG is the same on every machine.

use std::sync::{Arc, OnceLock};

/// The regular face: `DejaVu Sans`, Latin-1, punctuation, arrows and a few math signs.
const REGULAR: &[u8] = include_bytes!("../assets/fonts/DejaVuSans-subset.ttf");
/// The bold face, same subset.
const BOLD: &[u8] = include_bytes!("../assets/fonts/DejaVuSans-Bold-subset.ttf");
/// Pixels per SVG unit: twice the size, sharp on high-density screens.
const SCALE: f32 = 2.0;

use crate::PlotError as PngError;

/// The font database: the two embedded faces, also standing in for `sans-serif`.
fn fonts() -> Arc<resvg::usvg::fontdb::Database> {
    static DB: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(REGULAR.to_vec());
        db.load_font_data(BOLD.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    })
    .clone()
}

/// Renders an SVG (a plot of this module, or any SVG without external resources) as a
/// PNG at twice its size, white background as the SVG draws it.
pub fn png_from_svg(svg: &str) -> Result<Vec<u8>, PngError> {
    let options = resvg::usvg::Options {
        font_family: "DejaVu Sans".to_owned(),
        fontdb: fonts(),
        ..resvg::usvg::Options::default()
    };
    let tree =
        resvg::usvg::Tree::from_str(svg, &options).map_err(|e| PngError::Svg(e.to_string()))?;
    let size = tree.size();
    let (width, height) = (
        (size.width() * SCALE).ceil() as u32,
        (size.height() * SCALE).ceil() as u32,
    );
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(width, height).ok_or(PngError::Size { width, height })?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(SCALE, SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| PngError::Encode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_text_with_the_embedded_font() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><text x=\"2\" y=\"15\" font-family=\"sans-serif\" font-size=\"14\">Ab ↑</text></svg>";
        let png = png_from_svg(svg).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        // 80x40 pixels: the IHDR chunk holds the size
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 80);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 40);
        // the text drew dark pixels (the font was found): the same SVG without text is
        // smaller once compressed
        let blank = png_from_svg(&svg.replace("Ab ↑", "")).unwrap();
        assert!(png.len() > blank.len(), "{} vs {}", png.len(), blank.len());
        assert!(matches!(png_from_svg("<svg"), Err(PngError::Svg(_))));
    }
}
