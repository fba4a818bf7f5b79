# Benchmark match_tuples: match/case over tuples with literal, capture and guarded arms, run as a tiny stack machine.


def execute(program: list[tuple[str, int]], arg: int) -> int:
    stack: list[int] = [arg]
    pc = 0
    steps = 0
    while pc < len(program):
        steps += 1
        # Arms are ordered as a real dispatcher would be; guards fall through to the next arm.
        match program[pc]:
            case ("push", v):
                stack.append(v)
            case ("add", _):
                b = stack.pop()
                stack.append(stack.pop() + b)
            case ("mul", _):
                b = stack.pop()
                stack.append(stack.pop() * b % 1000003)
            case ("mod", m) if m > 0:
                stack.append(stack.pop() % m)
            case ("dup", _):
                stack.append(stack[-1])
            case ("over", _):
                stack.append(stack[-2])
            case ("swap", _):
                stack[-1], stack[-2] = stack[-2], stack[-1]
            case ("jnz", target) if stack[-1] != 0:
                stack.pop()
                pc = target
                continue
            case ("jnz", _):
                stack.pop()
            case ("dec", n):
                stack[-1] -= n
            case (op, _):
                print("unknown op", op)
                return -1
        pc += 1
    return stack[-1] * 1000 + steps % 1000


def classify(event: tuple[str, int, int]) -> str:
    match event:
        case ("login", _, 0):
            return "anonymous"
        case ("login", uid, _) if uid < 100:
            return "admin"
        case ("login", _, _):
            return "user"
        case ("error", code, _) if 500 <= code < 600:
            return "server"
        case ("error", _, _):
            return "client"
        case _:
            return "other"


def main() -> None:
    # Computes acc = acc * 31 + counter while counting down from 12000; the stack is [acc, counter].
    program = [
        ("push", 12000),
        ("swap", 0),
        ("push", 31),
        ("mul", 0),
        ("over", 0),
        ("add", 0),
        ("swap", 0),
        ("dec", 1),
        ("dup", 0),
        ("jnz", 1),
        ("add", 0),
        ("mod", 999983),
    ]
    total = 0
    for arg in range(1, 11):
        total += execute(program, arg)
    kinds: dict[str, int] = {}
    for i in range(100000):
        kind = classify(("login" if i % 3 != 0 else "error", i % 700, i % 5))
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"vm = {total}")
    print(f"kinds = {sorted(kinds.items())}")


main()
