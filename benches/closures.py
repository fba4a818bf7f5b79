# Benchmark closures: closure creation, captured-variable reads, nonlocal writes and higher-order calls.
# Function types are written Callable[[A], R]; the CPython twin differs from this file only by importing Callable.
from typing import Callable


def make_adder(k: int) -> Callable[[int], int]:
    def add(x: int) -> int:
        return x + k
    return add


def make_counter(start: int) -> Callable[[int], int]:
    # nonlocal state: the closure must write the captured cell, not a copy of it.
    count = start

    def bump(by: int) -> int:
        nonlocal count
        count += by
        return count
    return bump


def compose(f: Callable[[int], int], g: Callable[[int], int]) -> Callable[[int], int]:
    return lambda x: g(f(x))


def apply_n(f: Callable[[int], int], n: int, x: int) -> int:
    for _ in range(n):
        x = f(x) % 1000003
    return x


def run(rounds: int) -> int:
    total = 0
    counter = make_counter(0)
    for r in range(rounds):
        # A fresh closure each round, so creation is measured as well as calling.
        add_r = make_adder(r % 17)
        twice = compose(add_r, lambda x: x * 2)
        total = (total + apply_n(twice, 20, r)) % 1000000007
        counter(r % 3)
    evens = list(filter(lambda x: x % 2 == 0, map(lambda x: x * 3 + 1, range(rounds))))
    return total + counter(0) + len(evens)


def main() -> None:
    print(f"closures = {run(60000)}")
    adders = [make_adder(i) for i in range(5)]
    print([f(10) for f in adders])


main()
