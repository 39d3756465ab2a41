"""The official Python SDK's remote clients against a remote ACP agent (acp-rs's tests point
them at `acp serve -- acp agent`).

Usage: ws_client.py [--http] URL FILE
  WebSocket by default; `--http`: the Streamable HTTP client (POST + SSE streams).
  Runs: initialize (fs read advertised), two sessions opened at once, a turn on each at once
  (`read FILE`: the agent asks permission, which is granted, and reads FILE through this
  client), then a `slow` turn cancelled with session/cancel. Prints one JSON summary line on
  stdout; exits 1 with the reason on stderr if anything is off.
"""

import asyncio
import json
import sys

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
)
from acp.http import create_http_stream
from acp.ws import create_websocket_stream


class Client:
    def __init__(self, files):
        self.files = files
        self.updates = {}
        self.permissions = []
        self.reads = []

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        allow = next(o for o in options if o.kind.startswith("allow"))
        self.permissions.append((session_id, tool_call.tool_call_id))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id))

    async def session_update(self, session_id, update, **kwargs):
        self.updates.setdefault(session_id, []).append(update.session_update)

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads.append((session_id, path))
        return ReadTextFileResponse(content=self.files[path])

    def on_connect(self, conn):
        pass


def fail(reason):
    print(reason, file=sys.stderr)
    sys.exit(1)


async def main(url, path, http):
    client = Client({path: "python was here\n"})
    transport = create_http_stream(url) if http else await create_websocket_stream(url)
    conn = acp.connect_to_agent(client, transport)
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=False))
    init = await conn.initialize(protocol_version=1, client_capabilities=caps)
    if init.protocol_version != 1:
        fail(f"negotiated {init.protocol_version}")
    first, second = await asyncio.gather(conn.new_session(cwd="/tmp"), conn.new_session(cwd="/tmp"))
    if first.session_id == second.session_id:
        fail("two sessions got one id")
    prompt = [acp.text_block(f"read {path}")]
    turns = await asyncio.gather(
        conn.prompt(session_id=first.session_id, prompt=prompt),
        conn.prompt(session_id=second.session_id, prompt=prompt),
    )
    if [t.stop_reason for t in turns] != ["end_turn", "end_turn"]:
        fail(f"stop reasons {[t.stop_reason for t in turns]}")
    if sorted(s for s, _ in client.reads) != sorted([first.session_id, second.session_id]):
        fail(f"reads {client.reads}")
    if len(client.permissions) != 2:
        fail(f"permissions {client.permissions}")
    for session in (first.session_id, second.session_id):
        if "agent_message_chunk" not in client.updates.get(session, []):
            fail(f"no message chunk for {session}: {client.updates}")
    slow = asyncio.ensure_future(conn.prompt(session_id=first.session_id, prompt=[acp.text_block("slow")]))
    await asyncio.sleep(0.3)
    await conn.cancel(session_id=first.session_id)
    cancelled = await asyncio.wait_for(slow, 10)
    if cancelled.stop_reason != "cancelled":
        fail(f"the cancelled turn ended {cancelled.stop_reason}")
    await conn.close()
    summary = {
        "sessions": 2,
        "stop_reasons": [t.stop_reason for t in turns] + [cancelled.stop_reason],
        "permissions": len(client.permissions),
        "reads": len(client.reads),
        "updates": {k: len(v) for k, v in client.updates.items()},
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    args = sys.argv[1:]
    http = args[0] == "--http"
    if http:
        args = args[1:]
    asyncio.run(asyncio.wait_for(main(args[0], args[1], http), 60))
