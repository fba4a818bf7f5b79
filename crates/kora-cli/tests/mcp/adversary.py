"""An MCP server that misbehaves on purpose, for kora's end-to-end tests.

python3 adversary.py MODE STATE_DIR

It shakes hands and lists two tools, `ping(x: str)` and `shout(x: str)`, like a real server
(sending `notifications/tools/list_changed` before its `initialize` answer, as real ones do,
and the list in two pages joined by a `nextCursor`).
Each `tools/call` it receives is counted in STATE_DIR/calls, and the request id of each
`notifications/cancelled` is appended to STATE_DIR/cancelled; then, by MODE:
  silent   never answers a tool call
  late     answers the first tool call 3 s late, later ones at once
  garbage  writes a line that is not JSON instead of answering
  die      exits in the middle of the first call of its first life; later lives answer
  ok       answers at once
"""
import json
import os
import sys
import time

mode, state = sys.argv[1], sys.argv[2]
os.makedirs(state, exist_ok=True)
life_file = os.path.join(state, "lives")
lives = int(open(life_file).read()) if os.path.exists(life_file) else 0
open(life_file, "w").write(str(lives + 1))


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def count_call():
    path = os.path.join(state, "calls")
    n = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(n + 1))
    return n + 1


calls_this_life = 0
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "adversary", "version": "1"}}})
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
        if (msg.get("params") or {}).get("cursor") == "page-2":
            page = {"tools": [{"name": "shout", "description": "Answers x in capitals.", "inputSchema": schema}]}
        else:
            page = {"tools": [{"name": "ping", "description": "Answers pong.", "inputSchema": schema}],
                    "nextCursor": "page-2"}
        send({"jsonrpc": "2.0", "id": rid, "result": page})
    elif method == "notifications/cancelled":
        with open(os.path.join(state, "cancelled"), "a") as f:
            f.write(str(msg["params"]["requestId"]) + "\n")
    elif method == "tools/call":
        n = count_call()
        calls_this_life += 1
        x = msg["params"]["arguments"].get("x")
        text = x.upper() if msg["params"]["name"] == "shout" else "pong %s #%d" % (x, n)
        reply = {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}
        if mode == "silent":
            continue
        if mode == "late" and n == 1:
            time.sleep(3)
        if mode == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        if mode == "die" and lives == 0:
            os._exit(3)
        send(reply)
