//! End to end: `fs.image` values inside `analyze`'s data, in both wire formats, against the loopback fake.
//!
//! The fake records each request, so these tests read what really went out:
//! the data's JSON with an `<image>` marker, and the pixels beside it.

mod support;

use std::path::PathBuf;

use support::{kora_main as kora, temp_dir};

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};
use kora_testkit::{Behaviour, FakeProvider};

/// A PNG's signature and header chunk: `fs.image` knows a format by its first bytes.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";
const GIF: &[u8] = b"GIF89a\x01\0\x01\0\x80\0\0\0\0\0\xff\xff\xff!";

fn setup(name: &str, fake: &FakeProvider, api: &str, program: &str) -> PathBuf {
    let d = temp_dir("kora-images", name);
    let endpoint = if api == "ollama" {
        fake.url()
    } else {
        fake.openai_endpoint()
    };
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"vision\", endpoint = \"{endpoint}\", api = \"{api}\" }}\ntimeout_secs = 2\n"
        ),
    )
    .expect("kora.toml");
    std::fs::write(d.join("main.ko"), program).expect("program");
    std::fs::write(d.join("receipt.png"), PNG).expect("png");
    std::fs::write(d.join("stamp.gif"), GIF).expect("gif");
    std::fs::write(d.join("scan.pdf"), b"%PDF-1.7\n%\xe2\xe3").expect("pdf");
    d
}

/// Two images in a dict: the markers appear in the JSON in key order, and the pixels follow in that order.
const TWO_IMAGES: &str = r#"use fs

def main() -> None:
    stamp: fs.Image = fs.image("stamp.gif") else:
        print("no stamp")
        return
    receipt: fs.Image = fs.image("receipt.png") else:
        print("no receipt")
        return
    print(receipt, receipt.format, receipt.size)
    total: Result[float] = analyze({"b_stamp": stamp, "a_receipt": receipt, "note": "lunch"}, "What is the total?")
    match total:
        case Ok(t):
            print("total", t)
        case Uncertain(why) | Failed(why) | Exhausted(why):
            print("no total:", why)

main()
"#;

fn user_text_of_openai(body: &serde_json::Value) -> (String, Vec<String>) {
    let parts = body["messages"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_array())
        .cloned()
        .expect("the user message is a list of content parts");
    let text = parts[0]["text"].as_str().expect("text part").to_string();
    let urls = parts[1..]
        .iter()
        .map(|p| {
            assert_eq!(p["type"], "image_url");
            p["image_url"]["url"].as_str().expect("url").to_string()
        })
        .collect();
    (text, urls)
}

#[test]
fn openai_gets_markers_in_the_json_and_content_parts_beside_it() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer(
        r#"{"ok": 12.5, "uncertain": null}"#.into(),
    ));
    let d = setup("openai", &fake, "openai", TWO_IMAGES);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let n = PNG.len();
    assert_eq!(
        r.stdout,
        format!("<fs.Image png, {n} bytes> png {n}\ntotal 12.5\n")
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    let (text, urls) = user_text_of_openai(&reqs[0].body);
    assert!(
        text.contains(r#"{"a_receipt":"<image>","b_stamp":"<image>","note":"lunch"}"#),
        "{text}"
    );
    assert_eq!(
        urls,
        vec![
            format!("data:image/png;base64,{}", B64.encode(PNG)),
            format!("data:image/gif;base64,{}", B64.encode(GIF)),
        ]
    );
    // The pixels are never inside the JSON text.
    assert!(!text.contains(&B64.encode(PNG)));
}

#[test]
fn ollama_gets_the_images_field() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer(r#"{"ok": 3.0}"#.into()));
    let d = setup("ollama", &fake, "ollama", TWO_IMAGES);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.ends_with("total 3.0\n"), "{}", r.stdout);
    let reqs = fake.requests();
    assert_eq!(reqs[0].path, "/api/chat");
    let user = reqs[0]
        .messages()
        .into_iter()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    let content = user["content"].as_str().expect("text content");
    assert!(content.contains(r#""a_receipt":"<image>""#), "{content}");
    assert_eq!(
        user["images"],
        serde_json::json!([B64.encode(PNG), B64.encode(GIF)])
    );
}

#[test]
fn a_file_that_is_not_an_image_is_err_naming_its_format() {
    let fake = FakeProvider::start();
    let program = "use fs\n\nmatch fs.image(\"scan.pdf\"):\n    case Ok(img):\n        print(img)\n    case Err(why):\n        print(why)\nmatch fs.image(\"missing.png\"):\n    case Ok(img):\n        print(img)\n    case Err(why):\n        print(why)\n";
    let d = setup("notimage", &fake, "openai", program);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "`scan.pdf` is a PDF document, not an image Kora reads (PNG, JPEG, GIF or WebP)\n`missing.png`: not found\n"
    );
    assert_eq!(fake.count(), 0);
}

#[test]
fn the_cassette_key_holds_the_fingerprint_not_the_file_name() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer(
        r#"{"ok": 7.0, "uncertain": null}"#.into(),
    ));
    let program = "use fs\n\ndef main() -> None:\n    img: fs.Image = fs.image(\"receipt.png\") else:\n        return\n    t: float = analyze([img], \"Total?\") else:\n        return\n    print(t)\n\nmain()\n";
    let d = setup("cassette", &fake, "openai", program);
    let r = kora(&d, &["run", "--record"]);
    assert_eq!(r.stdout, "7.0\n", "{}", r.stderr);
    let cassette = std::fs::read_to_string(d.join("main.cassette.json")).expect("recorded");
    let json: serde_json::Value = serde_json::from_str(&cassette).expect("json");
    let entry = &json["entries"][0];
    assert_eq!(entry["data"], "[\"<image>\"]");
    let fp = entry["images"][0].as_str().expect("a fingerprint");
    assert_eq!(fp.len(), 64, "{fp}");
    assert!(!cassette.contains(&B64.encode(PNG)), "no pixels on disk");
    drop(fake);

    // A renamed file with the same bytes replays; changed bytes miss, naming the images.
    std::fs::rename(d.join("receipt.png"), d.join("renamed.png")).expect("rename");
    let renamed = program.replace("receipt.png", "renamed.png");
    std::fs::write(d.join("main.ko"), &renamed).expect("program");
    let r = kora(&d, &["run", "--replay"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "7.0\n"), "{}", r.stderr);
    let mut other = PNG.to_vec();
    other.push(0);
    std::fs::write(d.join("renamed.png"), other).expect("png");
    let r = kora(&d, &["run", "--replay"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("images differ"), "{}", r.stderr);
}

#[test]
fn images_cross_a_parallel_for_boundary() {
    let fake = FakeProvider::with_default(Behaviour::Answer(
        r#"{"ok": 1.0, "uncertain": null}"#.into(),
    ));
    let program = "use fs\n\ndef main() -> None:\n    a: fs.Image = fs.image(\"receipt.png\") else:\n        return\n    b: fs.Image = fs.image(\"stamp.gif\") else:\n        return\n    sizes = parallel for img in [a, b]:\n        return img.size\n    print(sizes)\n\nmain()\n";
    let d = setup("parallel", &fake, "openai", program);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, format!("[{}, {}]\n", PNG.len(), GIF.len()));
}

/// A PNG header for a 2048 × 4096 image: the tile rule charges it 1,105 tokens.
fn tall_png() -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&2048u32.to_be_bytes());
    png.extend_from_slice(&4096u32.to_be_bytes());
    png.extend_from_slice(b"\x08\x02\0\0\0");
    png
}

#[test]
fn the_context_fence_counts_an_image_by_its_pixels() {
    let fake = FakeProvider::with_default(Behaviour::Answer(r#"{"ok": 3.5}"#.into()));
    let program = r#"use fs

def ask(room: int) -> None:
    tall: fs.Image = fs.image("tall.png") else:
        print("no image")
        return
    with context(max_input_tokens=room, reserve_output_tokens=0):
        r: Result[float] = analyze(tall, "What is the total?")
        match r:
            case Ok(t):
                print(room, "sent", t)
            case Failed(why) | Uncertain(why) | Exhausted(why):
                print(room, why)

ask(1000)
ask(1400)
"#;
    let d = setup("fence", &fake, "openai", program);
    std::fs::write(d.join("tall.png"), tall_png()).expect("png");
    let out = kora(&d, &["run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    // The request's bytes are a few dozen tokens; the image alone is 1,105.
    assert!(
        lines[0].starts_with("1000 context: the prompt, data and tool definitions need about 1"),
        "{}",
        out.stdout
    );
    assert_eq!(lines[1], "1400 sent 3.5", "{}", out.stdout);
    assert_eq!(fake.count(), 1, "only the call that fits is sent");
}
