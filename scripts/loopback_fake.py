#!/usr/bin/env python3
"""A loopback stand-in for an OpenAI-style endpoint, used to record the cassettes of examples 09, 10 and 12.

Answers by keyword, so the recorded outcomes do not depend on which branch of a
`parallel for` asks first. Usage: `python3 scripts/loopback_fake.py 18765`, then point
`[models] default` at http://127.0.0.1:18765/v1 (api = "openai", name = "gpt-4o-mini").
"""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def reply(prompt, data):
    d = data.lower()
    if "triage" in prompt.lower():
        if "charged" in d or "refund" in d or "invoice" in d:
            return {"ok": {"category": "billing", "priority": "medium", "summary": "a billing problem"}, "uncertain": None}
        if "crash" in d or "error" in d or "broken" in d:
            return {"ok": {"category": "bug", "priority": "high", "summary": "a crash to fix"}, "uncertain": None}
        if "password" in d or "login" in d:
            return {"ok": {"category": "account", "priority": "low", "summary": "locked out of the account"}, "uncertain": None}
        return {"ok": None, "uncertain": "nothing to triage in this message"}
    if "review this expense" in prompt.lower():
        if "flight" in d or "dinner" in d:
            return {"ok": {"verdict": "check", "reason": "needs a receipt and the guest list"}, "uncertain": None}
        return {"ok": {"verdict": "ok", "reason": "within policy"}, "uncertain": None}
    if "summar" in prompt.lower():
        return {"ok": "Two billing issues and one crash; the crash is urgent.", "uncertain": None}
    return {"ok": "fast answer", "uncertain": None}

class H(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(n))
        msgs = body.get("messages", [])
        text = " ".join(m.get("content", "") if isinstance(m.get("content"), str) else json.dumps(m.get("content")) for m in msgs)
        prompt, data = text, ""
        for m in msgs:
            c = m.get("content", "")
            if isinstance(c, str) and c.startswith('"'):
                data = c
        if not data:
            data = text
        r = reply(prompt, data)
        typed = "response_format" in body or "JSON" in text
        out = json.dumps(r) if typed else r["ok"]
        resp = json.dumps({"id": "x", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": out}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30}}).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(resp))); self.end_headers(); self.wfile.write(resp)
    def log_message(self, *a): pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
