//! `fs.Image`: a raster image as a value, known by its first bytes, and the images a model call's data carries.
//!
//! Kept narrow on purpose (the record's "Images are values"): PNG, JPEG, GIF
//! and WebP only. The format is read from the magic bytes, never the file
//! name, so `receipt.png` that is really a PDF is refused with the format it
//! really has. The pixels never enter the data's JSON: `analyze` puts an
//! `<image>` marker in each image's place and sends the bytes beside it, so
//! the cassette key holds a fingerprint (SHA-256 of the bytes), not a path.

use std::sync::Arc;

use kora_check::hir::Program;
use kora_models::ImageData;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use std::cmp::Ordering;

use kora_check::std_api::StdType;

use crate::durable::effect::Recordable;
use crate::value::native::{Native, NativeObject, PortableNative};
use crate::value::{Key, Value};

/// What a data argument shows in each image's place.
pub const MARKER: &str = "<image>";

/// One loaded image. Shared by `Arc`, so it crosses a `parallel for` boundary without copying pixels.
#[derive(Clone, Debug)]
pub struct Image {
    pub data: Arc<ImageData>,
    /// Lower-case hex SHA-256 of the bytes: the cassette key's image fingerprint.
    pub fingerprint: String,
}

impl Image {
    /// Sniffs the format; `Err` names what the bytes are when they are not an image Kora reads.
    pub fn from_bytes(path: &str, bytes: Vec<u8>) -> Result<Image, String> {
        let Some(format) = raster_format(&bytes) else {
            return Err(match other_format(&bytes) {
                Some(what) => {
                    format!("`{path}` is {what}, not an image Kora reads (PNG, JPEG, GIF or WebP)")
                }
                None if bytes.is_empty() => format!("`{path}` is empty, not an image"),
                None => {
                    let head: Vec<String> =
                        bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
                    format!(
                        "`{path}` is not an image Kora reads (PNG, JPEG, GIF or WebP): it starts with bytes {}",
                        head.join(" ")
                    )
                }
            });
        };
        let fingerprint = format!("{:x}", Sha256::digest(&bytes));
        Ok(Image {
            data: Arc::new(ImageData {
                mime: format!("image/{format}"),
                bytes,
            }),
            fingerprint,
        })
    }

    /// `"png"`, `"jpeg"`, `"gif"` or `"webp"`.
    pub fn format(&self) -> &str {
        self.data.mime.trim_start_matches("image/")
    }

    pub fn repr(&self, out: &mut String) {
        out.push_str(&format!(
            "<fs.Image {}, {} bytes>",
            self.format(),
            self.data.bytes.len()
        ));
    }
}

impl NativeObject for Image {
    fn std_type(&self) -> StdType {
        StdType::Image
    }

    fn repr(&self, out: &mut String) {
        Image::repr(self, out)
    }

    /// Images are equal when their bytes are; they have no order.
    fn compare(&self, other: &Native) -> Option<Ordering> {
        let other = other.downcast_ref::<Image>()?;
        (other.fingerprint == self.fingerprint).then_some(Ordering::Equal)
    }

    /// The pixels ride beside the JSON (`images_in`), never inside it.
    fn json_marker(&self) -> Option<&'static str> {
        Some(MARKER)
    }

    /// Data, not a connection, so it crosses; the pixels are shared, not copied.
    fn portable(&self) -> Option<Arc<dyn PortableNative>> {
        Some(Arc::new(self.clone()))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl PortableNative for Image {
    fn revive(&self) -> Native {
        Native::new(self.clone())
    }
}

impl Recordable for Image {
    // The record names the image, never its pixels: a journal line is no place for a megabyte.
    fn to_record(&self) -> Json {
        serde_json::json!({
            "format": self.format(),
            "size": self.data.bytes.len(),
            "sha256": self.fingerprint,
        })
    }

    // A read is re-read on resume and compared by digest, never replayed, so no record
    // needs to become an image again.
    fn from_record(_: &Json) -> Option<Image> {
        None
    }
}

/// The raster formats `analyze` can send, by magic bytes.
fn raster_format(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("png")
    } else if b.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("jpeg")
    } else if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        Some("gif")
    } else if b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        Some("webp")
    } else {
        None
    }
}

/// Formats people hand over by mistake, named so the error says what the file is.
fn other_format(b: &[u8]) -> Option<&'static str> {
    let ftyp = |brand: &[u8]| b.len() >= 12 && &b[4..8] == b"ftyp" && &b[8..12] == brand;
    let text = String::from_utf8_lossy(&b[..b.len().min(256)]).to_ascii_lowercase();
    if b.starts_with(b"%PDF") {
        Some("a PDF document")
    } else if b.starts_with(b"BM") && b.len() > 14 {
        Some("a BMP image")
    } else if b.starts_with(b"II*\0") || b.starts_with(b"MM\0*") {
        Some("a TIFF image")
    } else if ftyp(b"heic") || ftyp(b"heix") || ftyp(b"mif1") {
        Some("a HEIC image")
    } else if ftyp(b"avif") {
        Some("an AVIF image")
    } else if b.starts_with(&[0, 0, 1, 0]) {
        Some("an ICO icon")
    } else if b.starts_with(b"PK\x03\x04") {
        Some("a ZIP archive")
    } else if text.contains("<svg") {
        Some("an SVG drawing (vector, not raster)")
    } else {
        None
    }
}

/// The data's images in the order their markers appear in its JSON text.
///
/// `to_json` writes object keys sorted (serde_json's map), so dict entries and
/// record fields are visited by key here too; a unit test pins the agreement.
pub fn images_in(p: &Program, v: &Value, out: &mut Vec<Arc<ImageData>>, fps: &mut Vec<String>) {
    match v {
        // A label is checked before the data is sent (declassify.rs); the image inside still goes.
        Value::Labeled(l) => images_in(p, &l.value, out, fps),
        // An int or a bool holds no image.
        Value::LabeledSmall(_) => {}
        Value::Native(n) => {
            if let Some(img) = n.downcast_ref::<Image>() {
                out.push(img.data.clone());
                fps.push(img.fingerprint.clone());
            }
        }
        Value::List(l) => {
            for x in l.borrow().iter() {
                images_in(p, x, out, fps);
            }
        }
        Value::Tuple(t) => {
            for x in t.iter() {
                images_in(p, x, out, fps);
            }
        }
        Value::Set(s) => {
            for Key(x) in s.borrow().iter() {
                images_in(p, x, out, fps);
            }
        }
        Value::Dict(d) => {
            let d = d.borrow();
            let mut entries: Vec<(String, &Value)> = d
                .iter()
                .map(|(k, x)| {
                    let key = match &*crate::labels::label::plain(&k.0) {
                        Value::Str(s) => s.as_str().to_string(),
                        other => {
                            let mut s = String::new();
                            crate::value::format::to_str(p, other, &mut s);
                            s
                        }
                    };
                    (key, x)
                })
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (_, x) in entries {
                images_in(p, x, out, fps);
            }
        }
        Value::Record(r) => {
            let rec = p.record(r.ty);
            let fields = r.fields.borrow();
            let mut entries: Vec<(&str, &Value)> = rec
                .fields
                .iter()
                .zip(fields.iter())
                .map(|(f, x)| (p.name(f.name), x))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            for (_, x) in entries {
                images_in(p, x, out, fps);
            }
        }
        Value::Outcome(o) => images_in(p, &o.payload, out, fps),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn formats_are_sniffed_from_bytes() {
        let ok = |b: &[u8]| Image::from_bytes("x", b.to_vec()).map(|i| i.format().to_string());
        assert_eq!(ok(PNG).as_deref(), Ok("png"));
        assert_eq!(
            ok(&[0xff, 0xd8, 0xff, 0xe0, 0, 0x10]).as_deref(),
            Ok("jpeg")
        );
        assert_eq!(ok(b"GIF89a\x01\0\x01\0").as_deref(), Ok("gif"));
        assert_eq!(ok(b"RIFF\x24\0\0\0WEBPVP8 ").as_deref(), Ok("webp"));
        let err = ok(b"%PDF-1.7\n").expect_err("a pdf");
        assert!(
            err.contains("`x` is a PDF document") && err.contains("PNG, JPEG, GIF or WebP"),
            "{err}"
        );
        assert!(ok(b"RIFF\x24\0\0\0WAVEfmt ")
            .expect_err("a wav")
            .contains("starts with bytes 52 49 46 46"));
        assert!(ok(b"").expect_err("empty").contains("is empty"));
        assert!(ok(b"<?xml version=\"1.0\"?><svg xmlns=\"\">")
            .expect_err("svg")
            .contains("SVG"));
    }

    #[test]
    fn fingerprint_is_the_sha256_of_the_bytes() {
        let img = Image::from_bytes("a.png", PNG.to_vec()).expect("png");
        assert_eq!(img.fingerprint.len(), 64);
        let same = Image::from_bytes("renamed.png", PNG.to_vec()).expect("png");
        assert_eq!(img.fingerprint, same.fingerprint);
        let mut s = String::new();
        img.repr(&mut s);
        assert_eq!(s, "<fs.Image png, 16 bytes>");
    }
}
