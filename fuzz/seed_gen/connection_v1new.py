"""Writes the v1new-* seed inputs of the `connection` fuzz target (proptests::fuzzing::connection).

Run: python3 fuzz/seed_gen/connection_v1new.py fuzz/corpus/connection
"""
import json, os, sys

out = sys.argv[1]
T = lambda s: {"type": "text", "text": s}

def feed(frame):
    b = (json.dumps(frame, separators=(",", ":")) + "\n").encode()
    ops = b""
    for i in range(0, len(b), 255):
        chunk = b[i:i + 255]
        ops += bytes([0, len(chunk)]) + chunk   # op 0: feed `len` raw bytes
    return ops

SEND_INIT = bytes([6, 1, 0])        # op 6: send a request, no deadline, initialize
SEND_NEW = bytes([6, 1, 1])         # op 6: send session/new
ANSWER = bytes([5, 0])              # op 5: answer the first inbound request
TICK = bytes([4, 0xff, 0])          # op 4: advance time
EOF_ = bytes([8, 0])                # op 8 with 0: EOF

auth = [{"id": "agent", "name": "Agent"},
        {"type": "terminal", "id": "term", "name": "Log in", "description": "Runs the login",
         "args": ["--login"], "env": {"ACP_LOGIN": "1"}},
        {"type": "terminal", "id": "bare", "name": "Bare"}]
init_result = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "agentCapabilities": {
    "loadSession": True, "sessionCapabilities": {"systemPrompt": {"mode": {"override": {}}}}},
    "authMethods": auth}}
client_prefix = bytes([1]) + SEND_INIT + feed(init_result) + SEND_NEW + feed(
    {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s0"}})

def upd(u):
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s0", "update": u}}

updates = {
    "plan_update_items": {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": [
        {"content": "Read", "priority": "high", "status": "pending"}]}},
    "plan_update_markdown": {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p2",
                                                                      "content": "# Plan", "path": "/PLAN.md"}},
    "plan_removed": {"sessionUpdate": "plan_removed", "planId": "p1"},
    "notice": {"sessionUpdate": "notice", "severity": "warning", "title": "Indexing", "description": "slow"},
    "compaction_update": {"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "completed",
                          "summary": [T("short")], "error": None},
    "compaction_summary_chunk": {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k1",
                                 "content": T("part")},
    "subagent_update": {"sessionUpdate": "subagent_update", "sessionId": "child-1", "title": "Helper",
                        "state": {"state": "idle", "stopReason": "end_turn"}, "cwd": "/w"},
    "session_message": {"sessionUpdate": "session_message", "messageId": "m1", "senderSessionId": "s0",
                        "recipientSessionId": "child-1", "content": [T("hi")]},
    "session_message_chunk": {"sessionUpdate": "session_message_chunk", "messageId": "m1", "content": T("lo")},
}
form = {"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {
    "sessionId": "s0", "message": "Who?", "mode": "form", "requestedSchema": {
        "type": "object", "properties": {"name": {"type": "string", "title": "Name"},
                                         "age": {"type": "integer", "minimum": 0},
                                         "ok": {"type": "boolean"}}, "required": ["name"]}}}
form_request_scope = {"jsonrpc": "2.0", "id": 4, "method": "elicitation/create", "params": {
    "requestId": 2, "message": "Which?", "mode": "form", "requestedSchema": {"type": "object", "properties": {}}}}
url = {"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": {
    "sessionId": "s0", "toolCallId": "t1", "message": "Log in", "mode": "url", "elicitationId": "e1",
    "url": "https://example.com/login"}}
complete = {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": "e1"}}
unknown_mode = {"jsonrpc": "2.0", "id": 6, "method": "elicitation/create", "params": {
    "sessionId": "s0", "message": "?", "mode": "_x/custom"}}

seeds = {"v1new-init-terminal-auth": client_prefix + TICK + EOF_}
for name, u in updates.items():
    seeds[f"v1new-update-{name}"] = client_prefix + feed(upd(u)) + EOF_
seeds["v1new-updates-all"] = client_prefix + b"".join(feed(upd(u)) for u in updates.values()) + EOF_
seeds["v1new-elicitation-form"] = client_prefix + feed(form) + ANSWER + EOF_
seeds["v1new-elicitation-form-request-scope"] = client_prefix + feed(form_request_scope) + ANSWER + EOF_
seeds["v1new-elicitation-url-complete"] = client_prefix + feed(url) + feed(complete) + ANSWER + EOF_
seeds["v1new-elicitation-unknown-mode"] = client_prefix + feed(unknown_mode) + ANSWER + EOF_
seeds["v1new-elicitation-cancelled"] = client_prefix + feed(url) + feed(
    {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}) + TICK + ANSWER + EOF_
# Agent side: a client advertising every opt-in, then session/new with a system prompt.
agent_init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1,
    "clientCapabilities": {"plan": {}, "subagents": {}, "session": {"notices": {}, "compaction": {}},
                           "elicitation": {"form": {}, "url": {}}, "auth": {"terminal": True}}}}
new_sp = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": [],
    "systemPrompt": {"mode": "append", "content": [T("Be brief.")]}}}
seeds["v1new-agent-opt-in-client"] = bytes([0]) + feed(agent_init) + ANSWER + feed(new_sp) + ANSWER + bytes([8, 1]) + EOF_  # op 8, 1: send an update

for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(len(seeds), "seeds")
