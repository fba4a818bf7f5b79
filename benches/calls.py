# Benchmark calls: many small nested calls with defaults and keyword arguments, the binding cost a helper-heavy program pays.


def clamp(x: int, lo: int = 0, hi: int = 1000) -> int:
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def scale(x: int, factor: int = 3, offset: int = 1) -> int:
    return x * factor + offset


def weigh(value: int, weight: int = 2, bonus: int = 0, penalty: int = 0) -> int:
    return value * weight + bonus - penalty


def is_odd(n: int) -> bool:
    return n % 2 == 1


def score(i: int) -> int:
    # Mixes positional, keyword, out-of-order keyword and defaulted arguments in one expression.
    a = clamp(scale(i % 400, offset=i % 5), hi=999)
    b = weigh(a, bonus=3) if is_odd(i) else weigh(a, penalty=1, weight=3)
    c = clamp(b - 500, 0, 2500)
    return c + weigh(value=i % 10)


def run(n: int) -> int:
    total = 0
    for i in range(n):
        total = (total + score(i)) % 1000000007
    return total


def main() -> None:
    print(f"calls = {run(350000)}")
    args = [3, 4]
    print(f"star = {weigh(*args)} {clamp(*[-5])} {scale(*args, offset=0)}")


main()
