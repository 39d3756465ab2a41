"""Writes the v2-* seed inputs of the `connection` fuzz target (proptests::fuzzing::connection):
ACP v2 sessions (feature `unstable_protocol_v2`). Bit 1 of the first byte makes the machine list
versions 1 and 2 (first byte 2: agent, 3: client); the v2 commands are in proptests/src/fuzzing_v2.rs.

Agent seeds: a turn (initialize v2, session/new, prompt acknowledged, running / chunk / tool call
/ idle updates), session/cancel while working with a pending ask (the cascade, then the grace
idle), $/cancel_request of a prompt, a v1-only method on v2, a v1 client of a v2 agent.
Client seeds: a turn (v2 initialize, session/new, prompt, stamped updates, tool_call/cancel,
the idle ends it), cancel_turn with an ask arriving after it, a v1 answer to the v2 offer
(close: a client that offers 2 is a `Connection<V2>`, which speaks 2 only; this seed was
`v2-client-fallback-v1` while one engine spoke both), an answer with version 3 (close), a failed prompt (PromptFailed), session/close
ending the open turn (SessionClosed; a later idle ends nothing), terminal/cancel of an advertised
terminal (then refused after its exit), a form and a URL elicitation with elicitation/complete,
a resume with a replayed update, auth/login after an answer listing authMethods.
Agent seeds (more): resume then close (updates of the closed session refused), delete after a
session/cancel (no grace idle may follow), auth/login and auth/logout, terminal/cancel, a form
elicitation answered and one cancelled by session/cancel.
Both sides: JSON-RPC batch arrays (v2-*-batch).

A build without the feature replays them as v1 inputs (bit 1 is ignored): nothing may panic
either way (proptests/tests/fuzz_corpus.rs). Run:
python3 fuzz/seed_gen/connection_v2.py fuzz/corpus/connection
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


ANSWER = bytes([5, 0])              # op 5: answer the first inbound request (with none: op 8, EOF)
TICK = bytes([4, 0xff, 0])          # op 4: advance time (up to 199 ms)
CANCEL_TURN = bytes([7])            # op 7 with nothing outbound: cancel the turn of s0
EOF_ = bytes([8, 0])                # op 8 with 0: EOF
AGENT, CLIENT = bytes([2]), bytes([3])


def send(choice):
    """op 6: a v2 command, no deadline (client: 0 init, 1 session/new, 2 prompt, 4 tool_call/cancel;
    agent: a permission ask in s0)."""
    return bytes([6, 1, choice])


def notify(choice):
    """op 8 (not EOF): an agent update of s0 (0 running, 1 idle, 2 cancellable tool call, 3 chunk)."""
    return bytes([8, 1, choice])


def req(i, method, params):
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def result(i, r):
    return {"jsonrpc": "2.0", "id": i, "result": r}


def note(method, params):
    return {"jsonrpc": "2.0", "method": method, "params": params}


def update(u):
    return note("session/update", {"sessionId": "s0", "update": u})


INIT = req(1, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}})
NEW = req(2, "session/new", {"cwd": "/"})
PROMPT = req(3, "session/prompt", {"sessionId": "s0", "prompt": [{"type": "text", "text": "hi"}]})
agent = AGENT + feed(INIT) + ANSWER + feed(NEW) + ANSWER

seeds = {
    "v2-agent-turn": agent + feed(PROMPT) + ANSWER + notify(0) + notify(3) + notify(2) + notify(1) + notify(1) + EOF_,
    "v2-agent-cancel-cascade-grace": agent + feed(PROMPT) + ANSWER + notify(0) + send(0) + send(0)
    + feed(note("session/cancel", {"sessionId": "s0"})) + send(0) + TICK * 4 + notify(1) + EOF_,
    "v2-agent-cancel-request": agent + feed(PROMPT) + feed(note("$/cancel_request", {"requestId": 3})) + TICK
    + ANSWER + EOF_,
    "v2-agent-v1-method": agent + feed(req(4, "session/load", {"sessionId": "s0", "cwd": "/", "mcpServers": []}))
    + feed(req(5, "tool_call/cancel", {"sessionId": "s0", "toolCallId": "t"})) + ANSWER + EOF_,
    "v2-agent-v1-client": AGENT + feed(req(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    + ANSWER + feed(req(2, "session/new", {"cwd": "/", "mcpServers": []})) + ANSWER + EOF_,
}

INIT_OK = result(1, {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {"session": {}}})
client = CLIENT + send(0) + feed(INIT_OK) + send(1) + feed(result(2, {"sessionId": "s0"})) + send(2)
ASK = req(9, "session/request_permission",
          {"sessionId": "s0", "title": "t", "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}]})
IDLE = update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})
TOOL = update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "capabilities": {"cancel": {}}})
CHUNK = update({"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "x"}})

seeds.update({
    "v2-client-turn": client + feed(result(3, {"messageId": "u"}))
    + feed(update({"sessionUpdate": "state_update", "state": "running"})) + feed(CHUNK) + feed(TOOL) + send(4)
    + send(2) + feed(IDLE) + feed(CHUNK) + feed(result(5, {"messageId": "u2"})) + ANSWER + EOF_,
    "v2-client-cancel-turn": client + feed(result(3, {"messageId": "u"})) + feed(ASK) + CANCEL_TURN
    + feed(dict(ASK, id=10)) + feed(IDLE) + ANSWER + EOF_,
    "v2-client-answered-1": CLIENT + send(0)
    + feed(result(1, {"protocolVersion": 1, "agentCapabilities": {}})) + send(1) + send(2) + EOF_,
    "v2-client-answered-3": CLIENT + send(0) + feed(result(1, {"protocolVersion": 3})) + send(1) + EOF_,
    "v2-client-prompt-failed": client + feed({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "x"}})
    + feed(CHUNK) + send(2) + TICK + EOF_,
})

# The lifecycle, auth, terminal and elicitation flows (send: 5 session/close, 6 terminal/cancel,
# 7 session/resume, 8 auth/login; agent: 5 a form elicitation; notify: 4 a cancellable
# terminal, 5 its exit).
TERMINAL = update({"sessionUpdate": "terminal_update", "terminalId": "x", "capabilities": {"cancel": {}}})
ACK = result(3, {"messageId": "u"})
RUNNING = update({"sessionUpdate": "state_update", "state": "running"})
ELICIT = req(9, "elicitation/create",
             {"mode": "form", "message": "m", "sessionId": "s0", "requestedSchema": {"type": "object", "properties": {}}})
ELICIT_URL = req(10, "elicitation/create",
                 {"mode": "url", "message": "m", "requestId": 1, "elicitationId": "e", "url": "https://x.y/"})
INIT_AUTH = result(1, {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "capabilities": {"session": {}},
                       "authMethods": [{"type": "agent", "methodId": "m", "name": "M"}]})
seeds.update({
    "v2-client-session-close": client + feed(ACK) + feed(RUNNING) + feed(CHUNK) + bytes([6, 1, 5])
    + feed(result(4, {})) + feed(CHUNK) + feed(IDLE) + EOF_,
    "v2-client-terminal-cancel": client + feed(ACK) + feed(TERMINAL) + bytes([6, 1, 6]) + feed(result(4, {}))
    + feed(update({"sessionUpdate": "terminal_update", "terminalId": "x", "exitStatus": {"exitCode": 0}}))
    + bytes([6, 1, 6]) + feed(IDLE) + EOF_,
    "v2-client-elicitation": client + feed(ACK) + feed(ELICIT) + ANSWER + feed(ELICIT_URL) + ANSWER
    + feed(note("elicitation/complete", {"elicitationId": "e"})) + feed(IDLE) + EOF_,
    "v2-client-resume": client + bytes([6, 1, 7]) + feed(CHUNK) + feed(result(4, {})) + feed(ACK) + feed(IDLE) + EOF_,
    "v2-client-auth": CLIENT + send(0) + feed(INIT_AUTH) + bytes([6, 1, 8]) + feed(result(2, {})) + send(1)
    + feed(result(3, {"sessionId": "s0"})) + feed(CHUNK) + EOF_,
})
INIT_ELICIT = req(1, "initialize", {"protocolVersion": 2, "info": {"name": "c", "version": "1"},
                                    "capabilities": {"elicitation": {"form": {}}}})
seeds.update({
    "v2-agent-resume-close": agent + feed(req(4, "session/resume", {"sessionId": "s1", "cwd": "/"})) + ANSWER
    + feed(PROMPT) + ANSWER + notify(0) + feed(req(5, "session/close", {"sessionId": "s0"})) + ANSWER
    + notify(3) + notify(1) + EOF_,
    "v2-agent-close-after-cancel": agent + feed(PROMPT) + ANSWER + notify(0)
    + feed(note("session/cancel", {"sessionId": "s0"})) + feed(req(5, "session/delete", {"sessionId": "s0"}))
    + ANSWER + TICK * 4 + notify(1) + EOF_,
    "v2-agent-auth": AGENT + feed(INIT) + ANSWER + feed(req(4, "auth/login", {"methodId": "m"})) + ANSWER
    + feed(req(5, "auth/logout", {})) + ANSWER + EOF_,
    "v2-agent-terminal-cancel": agent + feed(PROMPT) + ANSWER + notify(4)
    + feed(req(5, "terminal/cancel", {"sessionId": "s0", "terminalId": "x"})) + ANSWER + notify(5) + notify(1) + EOF_,
    "v2-agent-elicitation": AGENT + feed(INIT_ELICIT) + ANSWER + feed(NEW) + ANSWER + feed(PROMPT) + ANSWER
    + bytes([6, 1, 5]) + feed(result(1, {"action": "accept", "content": {}})) + bytes([6, 1, 5])
    + feed(note("session/cancel", {"sessionId": "s0"})) + TICK * 4 + EOF_,
})

# Batch arrays (the connection's `batch` rules): agent side, a prompt, an extension request, an
# unknown method, an invalid entry, a notification and a `$/cancel_request` of the extension
# request in one line, then its answers, an empty array and a response batch to its own ask;
# client side, the prompt's result, a running update and a permission ask in one line.
BATCH = [PROMPT, req(4, "_x/y", {}), req(5, "nope", {}), 1, note("_x/note", {}),
         note("$/cancel_request", {"requestId": 4})]
# Batches whose requests stay open while their refusals (long method names) fill the output
# budget (8 KiB in the target): input pauses until the application answers.
HEAVY = [[req(10 + i, "_x/y", {})] + [req(20 + j, "n" * 550, {}) for j in range(3)] for i in range(5)]
seeds.update({
    "v2-agent-batch-held": agent + b"".join(feed(b) for b in HEAVY) + feed(note("_x/note", {}))
    + ANSWER * 5 + feed(note("_x/note", {})) + EOF_,
    "v2-agent-batch": agent + feed(BATCH) + ANSWER + ANSWER + feed([]) + send(0)
    + feed([result(1, {"outcome": {"outcome": "cancelled"}})]) + notify(1) + EOF_,
    "v2-client-batch": client + feed([result(3, {"messageId": "u"}),
                                      update({"sessionUpdate": "state_update", "state": "running"}), ASK])
    + ANSWER + feed(IDLE) + EOF_,
})

for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(len(seeds), "seeds")
