#!/usr/bin/env python3
"""A deliberately broken ACP client (no SDK), for `acp check client` to catch.

It takes the agent's command line from $ACP_CHECK_AGENT (a JSON array), or from its arguments
after `--`, and runs one prompt. It breaks exactly two rules:

* it calls `session/load` although the agent did not advertise `loadSession`;
* it answers `session/request_permission` with an optionId the agent did not offer.

Everything else is right: `initialize` first, an absolute cwd, -32601 for every other request
of the agent (it advertises no fs or terminal), unknown notifications ignored, and it exits
when the turn ends or the agent's output ends.
"""
import json
import os
import subprocess
import sys


def agent_command():
    if "--" in sys.argv:
        return sys.argv[sys.argv.index("--") + 1 :]
    return json.loads(os.environ["ACP_CHECK_AGENT"])


agent = subprocess.Popen(agent_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = 0


def send(message):
    message["jsonrpc"] = "2.0"
    agent.stdin.write((json.dumps(message) + "\n").encode())
    agent.stdin.flush()


def answer(request):
    if request["method"] == "session/request_permission":
        # Broken on purpose: not one of the offered options.
        send({"id": request["id"], "result": {"outcome": {"outcome": "selected", "optionId": "yes-please"}}})
    else:
        send({"id": request["id"], "error": {"code": -32601, "message": "Method not found"}})


def call(method, params):
    global next_id
    next_id += 1
    my_id = next_id
    send({"id": my_id, "method": method, "params": params})
    for line in agent.stdout:
        message = json.loads(line)
        if "method" in message and "id" in message:
            answer(message)
        elif "method" not in message and message.get("id") == my_id:
            return message
    sys.exit(7)  # the agent's output ended


call("initialize", {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "broken", "version": "0"}})
session = call("session/new", {"cwd": os.getcwd(), "mcpServers": []})["result"]["sessionId"]
# Broken on purpose: loadSession was not advertised.
call("session/load", {"sessionId": session, "cwd": os.getcwd(), "mcpServers": []})
result = call("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
agent.stdin.close()
agent.wait()
print(result.get("result", {}).get("stopReason"))
