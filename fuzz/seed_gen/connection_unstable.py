"""Writes the unstable-* seed inputs of the `connection` fuzz target (proptests::fuzzing::connection):
the unstable client -> agent requests of today's table (session/set_title, session/status,
session/archive, session/unarchive, session/fork), sent to an agent.

With `--features proptests/unstable` the fuzz agent advertises their gates (see
`fuzzing::initialize_answer`) and its application answers them; the `-refused` seeds set the
client's `_meta.acpFuzzNoUnstable`, so the agent advertises nothing and refuses them `-32601`.
A stable build does not know the methods and answers `-32601` too: both builds replay every
seed (proptests/tests/fuzz_corpus.rs). Wire names only, so new table rows do not shift them.

Run: python3 fuzz/seed_gen/connection_unstable.py fuzz/corpus/connection
"""
import json, os, sys

out = sys.argv[1]


def feed(frame):
    b = (json.dumps(frame, separators=(",", ":")) + "\n").encode()
    ops = b""
    for i in range(0, len(b), 255):
        chunk = b[i:i + 255]
        ops += bytes([0, len(chunk)]) + chunk   # op 0: feed `len` raw bytes
    return ops


ANSWER = bytes([5, 0])              # op 5: answer the first inbound request
TICK = bytes([4, 0xff, 0])          # op 4: advance time
CANCEL_TURN = bytes([7])            # op 7 with nothing outbound: cancel the turn of s0
EOF_ = bytes([8, 0])                # op 8 with 0: EOF


def init(refused):
    params = {"protocolVersion": 1, "clientCapabilities": {}}
    if refused:
        params["_meta"] = {"acpFuzzNoUnstable": True}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def req(i, method, params):
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


calls = {
    "set-title": req(3, "session/set_title", {"sessionId": "s0", "title": "Renamed"}),
    "status": req(3, "session/status", {"sessionId": "s0"}),
    "archive": req(3, "session/archive", {"sessionId": "s0"}),
    "unarchive": req(3, "session/unarchive", {"sessionId": "s0", "_meta": {"why": "back"}}),
    "fork": req(3, "session/fork", {"sessionId": "s0", "cwd": "/w", "mcpServers": []}),
    "fork-bad-params": req(3, "session/fork", {"sessionId": 7}),
}
new_session = req(2, "session/new", {"cwd": "/", "mcpServers": []})
prefix = {r: bytes([0]) + feed(init(r)) + ANSWER + feed(new_session) + ANSWER for r in (False, True)}

seeds = {}
for name, call in calls.items():
    seeds[f"unstable-{name}"] = prefix[False] + feed(call) + ANSWER + EOF_
    seeds[f"unstable-{name}-refused"] = prefix[True] + feed(call) + ANSWER + EOF_
# All of them in flight at once (ids 3..), answered in order, with a cancel and a tick between.
batch = b"".join(feed(dict(c, id=3 + i)) for i, c in enumerate(calls.values()))
seeds["unstable-all-in-flight"] = prefix[False] + batch + ANSWER + CANCEL_TURN + TICK + ANSWER * 6 + EOF_
# The same request before the handshake completes: refused, not dispatched.
seeds["unstable-before-initialize"] = bytes([0]) + feed(calls["status"]) + feed(init(False)) + ANSWER + EOF_

for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(len(seeds), "seeds")
