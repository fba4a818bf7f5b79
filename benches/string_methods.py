# Benchmark string_methods: split, join, replace, strip, case and search methods, the parsing an agent does on text.


def make_lines(n: int) -> list[str]:
    levels = ["INFO", "WARN", "ERROR", "DEBUG"]
    services = ["api", "db", "Auth", "queue", "cache"]
    lines: list[str] = []
    for i in range(n):
        level = levels[i % 4 if i % 9 != 0 else 2]
        svc = services[(i * 7) % 5]
        lines.append(f"  2024-05-{i % 28 + 1:02d} {i % 24:02d}:{i % 60:02d} | {level} | svc={svc} | latency={(i * 37) % 900}ms | msg=Request {i} took a while, retry=no  ")
    return lines


def parse(line: str) -> tuple[str, str, int, str]:
    parts = [p.strip() for p in line.strip().split("|")]
    level = parts[1].lower()
    svc = parts[2].split("=")[1].lower()
    latency = int(parts[3].replace("latency=", "").replace("ms", ""))
    msg = parts[4][len("msg="):]
    return (level, svc, latency, msg)


def main() -> None:
    lines = make_lines(50000)
    slow: list[str] = []
    errors = 0
    total_latency = 0
    words = 0
    for line in lines:
        level, svc, latency, msg = parse(line)
        total_latency += latency
        words += len(msg.split()) + sum(1 for w in msg.split() if w.rstrip(",").isdigit())
        if level == "error":
            errors += 1
        if latency > 800 and svc.startswith("a"):
            slow.append(svc.upper() + ":" + msg.replace("Request ", "#").split(",")[0])
    report = "\n".join(slow)
    print(f"lines = {len(lines)} errors = {errors} latency = {total_latency} words = {words}")
    print(f"slow = {len(slow)} report chars = {len(report)} hash4 = {report.count('#4')} first = {report.find('#')}")
    tags = ",".join(w.capitalize() for w in report.splitlines()[-1].split(":")[0].lower().split())
    print(report.splitlines()[:3], " / ".join(slow[-2:]), tags, sum(1 for s in slow if s.endswith("while")))


main()
