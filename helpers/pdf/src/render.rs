//! One page rendered to PNG with hayro, a pure-Rust rasteriser (no PDFium to ship).

use std::sync::Arc;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::Pdf;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{PixmapSettings, RenderCache, RenderSettings};

/// The largest side a rendered page may have (the pixmap's u16 bound, with room to spare).
const MAX_SIDE: f32 = 16_000.0;

pub struct Png {
    pub width: u32,
    pub height: u32,
    pub bytes: Vec<u8>,
}

pub fn page_png(data: &[u8], page: u32, dpi: f64) -> Result<Png, String> {
    if !(dpi.is_finite() && dpi > 0.0 && dpi <= 1200.0) {
        return Err(format!(
            "dpi {dpi} is out of range: use a value from 1 to 1200"
        ));
    }
    let pdf =
        Pdf::new(Arc::new(data.to_vec())).map_err(|e| format!("not a readable PDF: {e:?}"))?;
    let pages = pdf.pages();
    let Some(p) = pages.get(page as usize) else {
        return Err(crate::text::out_of_range(page, pages.len()));
    };
    let scale = (dpi / 72.0) as f32;
    let (w, h) = p.render_dimensions();
    if w * scale > MAX_SIDE || h * scale > MAX_SIDE || w * scale < 1.0 || h * scale < 1.0 {
        return Err(format!(
            "page {page} at {dpi} dpi would be {:.0}×{:.0} pixels: choose a dpi that keeps each side between 1 and {MAX_SIDE}",
            w * scale,
            h * scale
        ));
    }
    let cache = RenderCache::new();
    let pixmap = hayro::render(
        p,
        &cache,
        &InterpreterSettings::default(),
        &RenderSettings::default(),
        &PixmapSettings {
            x_scale: scale,
            y_scale: scale,
            bg_color: WHITE,
        },
    );
    let (width, height) = (u32::from(pixmap.width()), u32::from(pixmap.height()));
    let bytes = pixmap
        .into_png()
        .map_err(|e| format!("encoding the page as PNG: {e}"))?;
    Ok(Png {
        width,
        height,
        bytes,
    })
}
