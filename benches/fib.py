# Benchmark fib: naive recursion, so almost all the time is the cost of one Kora call and return.


def fib(n: int) -> int:
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main() -> None:
    # Two depths, so a regression in deep frames and in shallow hot frames both show.
    total = 0
    for n in range(20, 26):
        total += fib(n)
    print(f"fib(31) = {fib(31)}")
    print(f"sum fib(20..25) = {total}")


main()
