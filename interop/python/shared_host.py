"""The official Python SDK's WebSocket client as the host of a shared session (acp-rs's tests
point it at `acp serve --share -- acp agent`, and attach `acp client --attach` to its session).

Usage: shared_host.py URL
  initialize, session/new; prints `session ID` on stdout; then for each line on stdin runs a
  prompt turn with that text in its session (permission asks answered with the first `allow`
  option), printing `turn STOP_REASON` after each; at the end of stdin prints one JSON summary
  line and closes. Exits 1 with the reason on stderr if anything is off.
"""

import asyncio
import json
import sys

import acp
from acp.schema import AllowedOutcome, ClientCapabilities, RequestPermissionResponse
from acp.ws import create_websocket_stream


class Client:
    def __init__(self):
        self.texts = []
        self.permissions = 0

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions += 1
        allow = next(o for o in options if o.kind.startswith("allow"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id))

    async def session_update(self, session_id, update, **kwargs):
        if update.session_update == "agent_message_chunk":
            self.texts.append(getattr(update.content, "text", ""))

    def on_connect(self, conn):
        pass


def fail(reason):
    print(reason, file=sys.stderr)
    sys.exit(1)


async def main(url):
    client = Client()
    conn = acp.connect_to_agent(client, await create_websocket_stream(url))
    init = await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
    if init.protocol_version != 1:
        fail(f"negotiated {init.protocol_version}")
    session = await conn.new_session(cwd="/tmp")
    print(f"session {session.session_id}", flush=True)
    reasons = []
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        turn = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(line.strip())])
        reasons.append(turn.stop_reason)
        print(f"turn {turn.stop_reason}", flush=True)
    await conn.close()
    seen = "".join(client.texts)
    print(json.dumps({"stop_reasons": reasons, "permissions": client.permissions, "texts": seen}), flush=True)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1]), 60))
