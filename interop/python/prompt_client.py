"""A plain ACP client on the official Python SDK (agent-client-protocol), the way an editor
uses it: it spawns the agent given after `--` (or in $ACP_CHECK_AGENT, a JSON array), sends one
prompt, prints the agent's message text, serves fs/read_text_file and fs/write_text_file (no
terminals), answers permission asks with the first allow option, and exits when the turn ends.
`acp check client` judges it.

Usage: prompt_client.py [-- AGENT_CMD [ARGS...]]
"""

import asyncio
import json
import os
import sys

import acp
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    WriteTextFileResponse,
)


class Client:
    async def request_permission(self, session_id, tool_call, options, **kwargs):
        allow = next((o for o in options if o.kind in ("allow_once", "allow_always")), options[0])
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id))

    async def session_update(self, session_id, update, **kwargs):
        if getattr(update, "session_update", "") == "agent_message_chunk":
            print(getattr(update.content, "text", ""), end="", flush=True)

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        with open(path, encoding="utf-8") as f:
            return ReadTextFileResponse(content=f.read())

    async def write_text_file(self, session_id, path, content, **kwargs):
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        return WriteTextFileResponse()

    def on_connect(self, conn):
        pass


async def main(argv):
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False)
    async with acp.spawn_agent_process(Client(), *argv) as (conn, process):
        await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=caps,
            client_info=Implementation(name="python-prompt-client", version="1"),
        )
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[TextContentBlock(type="text", text="hi")])
        print(f"\n[{response.stop_reason}]")
    return 0 if response.stop_reason == "end_turn" else 3


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else json.loads(os.environ["ACP_CHECK_AGENT"])
    sys.exit(asyncio.run(main(args)))
