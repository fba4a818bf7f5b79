# Benchmark loops: nested while/for loops over integer arithmetic, the interpreter's dispatch floor.


def grid(n: int) -> int:
    total = 0
    i = 0
    while i < n:
        for j in range(n):
            # Mixed //, % and * keep the work on int paths without overflowing 64 bits.
            total = (total + i * j + (i + 3) // (j + 1)) % 1000003
            if (i + j) % 7 == 0:
                total += 1
            elif j % 5 == 0:
                total -= 2
        i += 1
    return total


def collatz_steps(limit: int) -> int:
    # A while loop whose trip count is data-dependent, so no loop shape can be special-cased.
    longest = 0
    best = 0
    for start in range(1, limit):
        x = start
        steps = 0
        while x != 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            steps += 1
        if steps > longest:
            longest = steps
            best = start
    return best * 1000 + longest


def main() -> None:
    print(f"grid = {grid(600)}")
    print(f"collatz = {collatz_steps(30000)}")


main()
