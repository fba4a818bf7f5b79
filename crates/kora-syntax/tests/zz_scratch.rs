mod common;
#[test]
fn scratch() {
    let src = std::fs::read_to_string("/tmp/scratch.ko").unwrap();
    let t = std::time::Instant::now();
    let p = kora_syntax::parse(&src);
    println!("parsed in {:?}", t.elapsed());
    for s in &p.module.stmts {
        println!(
            "{}   @{:?} {:?}",
            common::stmt(s),
            s.span,
            &src[s.span.range()].chars().take(40).collect::<String>()
        );
    }
    for d in &p.diagnostics {
        println!(
            "{}",
            kora_syntax::diagnostic::render(
                d,
                &kora_syntax::SourceFile {
                    path: "s.ko",
                    text: &src
                },
                false
            )
        );
    }
}
