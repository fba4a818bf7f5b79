# Benchmark indexing: list indexing, index assignment, negative indices and slices with steps on hot paths.


def sieve(limit: int) -> list[int]:
    is_prime = [True] * (limit + 1)
    is_prime[0] = False
    is_prime[1] = False
    i = 2
    while i * i <= limit:
        if is_prime[i]:
            for j in range(i * i, limit + 1, i):
                is_prime[j] = False
        i += 1
    return [n for n in range(limit + 1) if is_prime[n]]


def matmul(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    n = len(a)
    m = len(b[0])
    k = len(b)
    out = [[0] * m for _ in range(n)]
    for i in range(n):
        row = a[i]
        target = out[i]
        for j in range(m):
            s = 0
            for t in range(k):
                s += row[t] * b[t][j]
            target[j] = s % 1000003
    return out


def prefix_sums(xs: list[int]) -> list[int]:
    sums = [0] * (len(xs) + 1)
    for i in range(len(xs)):
        sums[i + 1] = sums[i] + xs[i]
    return sums


def slices(xs: list[int], rounds: int) -> int:
    # Slicing copies in CPython; the checksum reads every slice so none can be skipped.
    acc = 0
    for r in range(rounds):
        window = xs[r:r + 50]
        evens = xs[r:r + 200:2]
        back = xs[-(r + 1):-(r + 101):-3]
        acc = (acc + window[-1] + evens[len(evens) // 2] + back[0] + sum(back[::4]) + len(xs[::-50])) % 1000000007
    return acc


def main() -> None:
    primes = sieve(1000000)
    n = 100
    a = [[(i * j + 1) % 17 for j in range(n)] for i in range(n)]
    b = [[(i + 2 * j) % 13 for j in range(n)] for i in range(n)]
    c = matmul(a, b)
    sums = prefix_sums(primes)
    print(f"primes = {len(primes)} last = {primes[-1]} sum = {sums[-1]}")
    print(f"matmul = {sum(sum(row) for row in c)} corner = {c[0][0]} {c[-1][-1]}")
    print(f"slices = {slices(primes, 30000)}")
    print(primes[:8], primes[-3:], primes[10:40:7])


main()
