# Benchmark strings: building a large string with += and f-strings, the path an in-place append must keep linear.


def build_log(n: int) -> str:
    log = ""
    for i in range(n):
        # Several format specs per line so f-string rendering, not just appending, is measured.
        log += f"{i:06d} user{i % 97:<3} score={(i * 37) % 1000 / 10:.1f} ok={i % 3 == 0}"
        if i % 4 == 0:
            log += " flagged"
        log = log + "\n"
    return log


def build_csv(n: int) -> str:
    out = ""
    for i in range(n):
        out += str(i) + "," + str(i * i % 1009) + "," + f"{i:x}" + ";"
    return out


def main() -> None:
    log = build_log(100000)
    csv = build_csv(140000)
    print(f"log chars = {len(log)}, flagged = {log.count('flagged')}")
    print(f"csv chars = {len(csv)}, total = {len(log) + len(csv)}")
    print(f"tail = {log[-40:]!r}")


main()
