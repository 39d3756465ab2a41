"""A deliberately broken ACP agent on stdio, without any SDK, for acp-cli/tests/cli/check_agent.rs:
`acp check agent` must fail exactly the checks it breaks, and pass the rest.

What it breaks (and the check that must catch it):
  * it echoes any protocolVersion it is asked for          agent.init.future-version
  * it accepts a relative cwd in session/new                agent.session.relative-cwd
  * it ignores session/cancel (a `slow` turn ends end_turn)  agent.cancel.mid-turn
  * it writes a debug line to stdout                        agent.stdio.clean-stdout
  * it calls fs/read_text_file even when not advertised     agent.capability.fs
  * it answers unknown methods with a result                agent.rpc.unknown-method
Everything else follows the protocol: $/cancel_request of a slow prompt is answered -32800,
invalid JSON -32700, and it exits when stdin ends.
"""

import json
import os
import select
import sys
import time

SLOW_SECONDS = 1.0


class Broken:
    def __init__(self):
        self.sessions = 0
        self.next_request = 0
        self.reads = {}  # our request id -> (prompt id, session id)
        self.slow = None  # (prompt id, session id, deadline)
        self.initialized = False

    def send(self, message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def result(self, id, result):
        self.send({"jsonrpc": "2.0", "id": id, "result": result})

    def error(self, id, code, message):
        self.send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})

    def say(self, session, text):
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}})

    def handle(self, message):
        method, id, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None:
            self.answered(id, message)
        elif method != "initialize" and not self.initialized and id is not None:
            self.error(id, -32600, "initialize first")
        elif method == "initialize":
            self.initialized = True
            caps = {"loadSession": False}
            info = {"name": "broken-agent", "version": "0"}
            self.result(id, {"protocolVersion": params.get("protocolVersion"), "agentCapabilities": caps, "agentInfo": info})
        elif method == "session/new":
            if not isinstance(params.get("cwd"), str):
                return self.error(id, -32602, "cwd must be a string")
            self.sessions += 1
            self.result(id, {"sessionId": f"broken-{self.sessions}"})
        elif method == "session/prompt":
            self.prompt(id, params)
        elif method == "$/cancel_request":
            if self.slow and self.slow[0] == params.get("requestId"):
                self.error(self.slow[0], -32800, "Request cancelled")
                self.slow = None
        elif method == "session/cancel":
            pass  # broken: the turn runs on
        elif id is not None:
            self.result(id, {})  # broken: should be -32601

    def prompt(self, id, params):
        session = params.get("sessionId")
        text = " ".join(b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text")
        sys.stdout.write(f"debug: prompt {id}\n")  # broken: not a JSON-RPC message
        self.say(session, f"echo: {text}")
        if "slow" in text.split():
            self.slow = (id, session, time.monotonic() + SLOW_SECONDS)
            return
        path = next((w for w in text.split() if os.path.isabs(w)), None)
        if path is None:
            return self.result(id, {"stopReason": "end_turn"})
        self.next_request += 1
        rid = f"read-{self.next_request}"
        self.reads[rid] = (id, session)
        # broken: reads whether or not the client advertised fs.readTextFile
        self.send({"jsonrpc": "2.0", "id": rid, "method": "fs/read_text_file", "params": {"sessionId": session, "path": path}})

    def answered(self, rid, message):
        if rid not in self.reads:
            return
        id, session = self.reads.pop(rid)
        if "result" in message:
            self.say(session, f"it says: {message['result'].get('content', '')}")
        self.result(id, {"stopReason": "end_turn"})

    def run(self):
        buffered = b""
        while True:
            wait = None if self.slow is None else max(0.0, self.slow[2] - time.monotonic())
            ready, _, _ = select.select([sys.stdin.buffer], [], [], wait)
            if self.slow and time.monotonic() >= self.slow[2]:
                id, _, _ = self.slow
                self.slow = None
                self.result(id, {"stopReason": "end_turn"})
            if not ready:
                continue
            chunk = os.read(sys.stdin.fileno(), 65536)
            if not chunk:
                return
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    self.error(None, -32700, "Parse error")
                    continue
                if isinstance(message, dict):
                    self.handle(message)


if __name__ == "__main__":
    Broken().run()
