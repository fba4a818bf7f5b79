//! `kora-pdf`: the `pdf` module's helper. It reads requests from stdin (stdio/v1), each
//! carrying the PDF's bytes as payload, and answers `pages`, `text` and `render`. It never
//! opens a file: confined without `write` or `net`, it computes on what it is sent.

mod render;
mod text;

use serde_json::{json, Value as Json};

/// The document of the last request, kept so a program asking for each page in turn does not
/// pay a parse per page. Compared by its bytes: the helper never sees a name for a document.
struct Cache {
    text: Option<(Vec<u8>, text::Doc)>,
}

fn page_arg(header: &Json) -> Result<u32, String> {
    let p = header
        .get("page")
        .and_then(Json::as_i64)
        .ok_or("the request names no page")?;
    u32::try_from(p).map_err(|_| format!("page {p} is not a page number (pages count from 0)"))
}

fn handle(
    cache: &mut Cache,
    op: &str,
    header: &Json,
    data: &[u8],
) -> Result<(Json, Vec<u8>), String> {
    match op {
        "pages" => {
            let doc = cached(cache, data)?;
            Ok((json!({"pages": doc.pages()}), Vec::new()))
        }
        "text" => {
            let page = page_arg(header)?;
            let doc = cached(cache, data)?;
            let t = doc.text(page)?;
            Ok((json!({}), t.into_bytes()))
        }
        "render" => {
            let page = page_arg(header)?;
            let dpi = header.get("dpi").and_then(Json::as_f64).unwrap_or(72.0);
            let png = render::page_png(data, page, dpi)?;
            Ok((json!({"width": png.width, "height": png.height}), png.bytes))
        }
        other => Err(format!("`{other}` is not an operation of the pdf helper")),
    }
}

fn cached<'c>(cache: &'c mut Cache, data: &[u8]) -> Result<&'c text::Doc, String> {
    let hit = matches!(&cache.text, Some((bytes, _)) if bytes.as_slice() == data);
    if !hit {
        let doc = text::Doc::load(data)?;
        cache.text = Some((data.to_vec(), doc));
    }
    match &cache.text {
        Some((_, doc)) => Ok(doc),
        None => Err("no document".into()),
    }
}

fn main() {
    let mut cache = Cache { text: None };
    if let Err(e) = kora_helper::serve::serve(|op, header, payload| {
        // A panic inside a parser is the document's fault, not the helper's: answer it as an
        // error and keep serving.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handle(&mut cache, op, header, payload)
        }))
        .unwrap_or_else(|_| Err("the PDF could not be read (the parser gave up on it)".into()))
    }) {
        eprintln!("kora-pdf: {e}");
        std::process::exit(1);
    }
}
