//! What an image costs in input tokens, for the context fence's estimate: read from the
//! image's own width and height by the tile rule vision models publish.
//!
//! The rule (OpenAI's high-detail accounting, which other providers approximate): the
//! image is scaled down to fit a 2048 × 2048 square, then down again until its shorter
//! side is at most 768 pixels; each 512 × 512 tile of the result costs 170 tokens, and
//! every image 85 more. An image whose size cannot be read is charged as a 1024 × 1024
//! one (765 tokens), so an unreadable header never makes the estimate smaller.

use crate::request::ImageData;

const TILE: u64 = 512;
const PER_TILE: u64 = 170;
const PER_IMAGE: u64 = 85;
const FIT: f64 = 2048.0;
const SHORT_SIDE: f64 = 768.0;

/// The estimate for one image.
pub fn image_tokens(image: &ImageData) -> u64 {
    match imagesize::blob_size(&image.bytes) {
        Ok(size) if size.width > 0 && size.height > 0 => {
            tokens_for(size.width as u64, size.height as u64)
        }
        _ => tokens_for(1024, 1024),
    }
}

/// The tile rule for an image of `width` × `height` pixels (0 counts as 1).
pub fn tokens_for(width: u64, height: u64) -> u64 {
    let (mut w, mut h) = (width.max(1) as f64, height.max(1) as f64);
    let fit = (FIT / w.max(h)).min(1.0);
    w *= fit;
    h *= fit;
    let short = (SHORT_SIDE / w.min(h)).min(1.0);
    w *= short;
    h *= short;
    let tiles = (w.ceil() as u64).div_ceil(TILE) * (h.ceil() as u64).div_ceil(TILE);
    tiles * PER_TILE + PER_IMAGE
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_published_examples() {
        // 1024 × 1024: scaled to 768 × 768 by the short-side step, 4 tiles.
        assert_eq!(tokens_for(1024, 1024), 765);
        // 2048 × 4096: fits to 1024 × 2048, then 768 × 1536, 6 tiles.
        assert_eq!(tokens_for(2048, 4096), 1105);
        // A small image is never scaled up: one tile.
        assert_eq!(tokens_for(100, 80), 255);
    }

    #[test]
    fn a_png_header_gives_its_size_and_garbage_the_fallback() {
        // A PNG signature and IHDR chunk for a 600 × 400 image.
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        png.extend_from_slice(&[0, 0, 0, 13]);
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&600u32.to_be_bytes());
        png.extend_from_slice(&400u32.to_be_bytes());
        png.extend_from_slice(&[8, 6, 0, 0, 0]);
        let image = |bytes: Vec<u8>| ImageData {
            mime: "image/png".into(),
            bytes,
        };
        assert_eq!(image_tokens(&image(png)), tokens_for(600, 400));
        assert_ne!(
            tokens_for(600, 400),
            765,
            "the size was read, not defaulted"
        );
        assert_eq!(image_tokens(&image(b"not an image".to_vec())), 765);
    }

    proptest! {
        #[test]
        fn any_bytes_give_an_estimate_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let n = image_tokens(&ImageData { mime: "image/png".into(), bytes });
            prop_assert!(n > PER_IMAGE);
        }

        #[test]
        fn no_image_costs_more_than_the_largest_scaled_one(w in 0u64..100_000, h in 0u64..100_000) {
            // After scaling, an image fits 768 × 2048 at most: 2 × 4 tiles.
            prop_assert!(tokens_for(w, h) <= 8 * PER_TILE + PER_IMAGE);
        }
    }
}
