# Benchmark comprehensions: list, dict and set comprehensions and generator sums, Python's idiomatic bulk loops.


def one_round(n: int, r: int) -> int:
    xs = [(i * i + r) % 1000 for i in range(n)]
    evens = [x for x in xs if x % 2 == 0]
    index = {i: x for i, x in enumerate(evens) if x > 500}
    residues = {x % 97 for x in xs}
    pairs = [(a, b) for a in range(40) for b in range(a) if (a + b) % 3 == 0]
    grid = [[a * b % 10 for b in range(20)] for a in range(20)]
    # Generator expressions as call arguments: no intermediate list in CPython, none should be needed in Kora.
    s1 = sum(x for x in xs if x % 3 == 0)
    s2 = sum(v for v in index.values())
    s3 = sum(len(row) + row[-1] for row in grid)
    hits = any(x == 999 for x in xs) and all(x < 1000 for x in xs)
    return s1 + s2 + s3 + len(residues) * 7 + len(pairs) + (1 if hits else 0)


def main() -> None:
    total = 0
    for r in range(100):
        total = (total + one_round(10000, r)) % 1000000007
    words = [f"w{i % 50}" for i in range(5000)]
    lengths = {w: len(w) for w in words}
    unique = sorted({w for w in words if w.endswith("7")})
    print(f"total = {total}")
    print(f"lengths = {sum(lengths.values())} unique = {unique}")


main()
