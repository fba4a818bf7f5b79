# Benchmark sort: sorting ints, tuples and strings, with key= and reverse=, where comparisons and key calls dominate.


def lcg_list(n: int, seed: int) -> list[int]:
    xs: list[int] = []
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) % 2147483648
        xs.append(seed % 100000)
    return xs


def checksum(xs: list[int]) -> int:
    # Position-weighted, so a sort that is merely a permutation of the right answer still fails.
    h = 0
    for i, x in enumerate(xs):
        h = (h * 31 + x * (i % 7 + 1)) % 1000000007
    return h


def main() -> None:
    xs = lcg_list(100000, 42)
    ints = sorted(xs)
    desc = sorted(xs, reverse=True)
    by_last_digit = sorted(xs, key=lambda x: x % 10)

    # (priority, id, name) records, the shape a task queue sorts.
    tasks = [(x % 5, i, "task" + str(x % 1000)) for i, x in enumerate(xs[:50000])]
    by_priority = sorted(tasks)
    by_name = sorted(tasks, key=lambda t: (t[2], -t[1]))
    tasks.sort(key=lambda t: t[1] % 100, reverse=True)

    words = [str(x) for x in xs[:40000]]
    words.sort()

    print(f"ints = {checksum(ints)} min={ints[0]} max={ints[-1]}")
    print(f"desc = {checksum(desc)} stable = {checksum(by_last_digit)}")
    print(f"tuples = {by_priority[0]} {by_priority[-1]} {by_name[0]} {tasks[0]}")
    print(f"ids = {checksum([t[1] for t in by_name])} {checksum([t[1] for t in tasks])}")
    print(f"words = {words[:3]} {words[-1]}")


main()
