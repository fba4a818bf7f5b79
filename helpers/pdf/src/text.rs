//! Page count and per-page text, with pdf-extract over lopdf.

use pdf_extract::{Document, PlainTextOutput};

pub struct Doc {
    doc: Document,
    /// lopdf's page numbers (from 1), in page order.
    numbers: Vec<u32>,
}

impl Doc {
    pub fn load(data: &[u8]) -> Result<Doc, String> {
        let doc = Document::load_mem(data).map_err(|e| format!("not a readable PDF: {e}"))?;
        if doc.is_encrypted() {
            return Err("the PDF is encrypted; Kora reads only unencrypted PDFs".into());
        }
        let numbers = doc.get_pages().keys().copied().collect();
        Ok(Doc { doc, numbers })
    }

    pub fn pages(&self) -> usize {
        self.numbers.len()
    }

    /// The text of page `page` (from 0).
    pub fn text(&self, page: u32) -> Result<String, String> {
        let Some(&n) = self.numbers.get(page as usize) else {
            return Err(out_of_range(page, self.pages()));
        };
        let mut s = String::new();
        {
            let mut out = PlainTextOutput::new(&mut s);
            pdf_extract::output_doc_page(&self.doc, &mut out, n)
                .map_err(|e| format!("page {page}: {e}"))?;
        }
        Ok(s)
    }
}

pub fn out_of_range(page: u32, pages: usize) -> String {
    format!("page {page} is past the end: the PDF has {pages} page(s), numbered from 0")
}
