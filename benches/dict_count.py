# Benchmark dict_count: counting words and numbers in dicts, the get/update/lookup mix of every report an agent writes.


def make_words(n: int) -> list[str]:
    stems = ["alpha", "beta", "gamma", "delta", "error", "warn", "info", "retry", "timeout", "ok"]
    words: list[str] = []
    seed = 12345
    for _ in range(n):
        # A small LCG instead of random, so Kora and CPython see the same stream.
        seed = (seed * 1103515245 + 12345) % 2147483648
        words.append(stems[seed % len(stems)] + str(seed // 65536 % 50))
    return words


def count_words(words: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return counts


def count_numbers(n: int) -> dict[int, int]:
    # The membership-test-then-update form, the other common counting idiom.
    buckets: dict[int, int] = {}
    for i in range(n):
        k = (i * i + 7 * i) % 1013
        if k in buckets:
            buckets[k] += 1
        else:
            buckets[k] = 1
    return buckets


def group_by_stem(counts: dict[str, int]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for word, c in counts.items():
        stem = word.rstrip("0123456789")
        groups.setdefault(stem, []).append(c)
    return groups


def main() -> None:
    words = make_words(300000)
    counts = count_words(words)
    buckets = count_numbers(400000)
    groups = group_by_stem(counts)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    print(f"distinct words = {len(counts)}, top = {top}")
    print(f"buckets = {len(buckets)}, max = {max(buckets.values())}, weight = {sum(k * v for k, v in buckets.items())}")
    print({stem: sum(cs) for stem, cs in sorted(groups.items())})


main()
