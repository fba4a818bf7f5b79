//! Prints a file's layout without the safety check, to study a layout `kora fmt` refused:
//! `cargo run -p kora-fmt --example layout -- FILE [WIDTH]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: layout FILE [WIDTH]");
        std::process::exit(2);
    };
    let src = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let mut opts = kora_fmt::Options::default();
    if let Some(w) = args.next().and_then(|w| w.parse().ok()) {
        opts.line_length = w;
    }
    print!("{}", kora_fmt::layout_unchecked(&src, &opts));
}
