"""A small agent written with the official Python SDK, served by the SDK's ASGI app under
uvicorn: over WebSocket (ws://127.0.0.1:PORT/acp) and Streamable HTTP (http://…, HTTP/1.1, as
uvicorn speaks no HTTP/2); acp-rs's tests point `acp client --connect` at both.

Usage: ws_agent.py PORT
  Prints `listening PORT` on stdout once it accepts connections. A prompt `read PATH` asks
  permission, reads PATH through the client (fs/read_text_file), and answers with the text;
  `slow` waits for session/cancel; anything else is echoed. Every turn streams its answer as
  agent_message_chunk updates.
"""

import asyncio
import sys

import uvicorn

import acp
from acp.http.asgi import create_asgi_app
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
)

from read_permission import ask_to_read


class Agent:
    def __init__(self, conn):
        self.conn = conn
        self.sessions = 0
        self.cancelled = {}

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            agent_info=acp.schema.Implementation(name="python-ws-agent", version="1"),
        )

    async def new_session(self, cwd, additional_directories=None, mcp_servers=None, **kwargs):
        self.sessions += 1
        return NewSessionResponse(session_id=f"py-{self.sessions}")

    async def say(self, session_id, text):
        await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))

    async def prompt(self, session_id, prompt, **kwargs):
        text = " ".join(block.text for block in prompt if getattr(block, "type", "") == "text")
        if text.startswith("read "):
            path = text[len("read "):].strip()
            outcome = await ask_to_read(self.conn, session_id, path)
            if getattr(outcome, "outcome", "") != "selected" or outcome.option_id != "allow":
                await self.say(session_id, "not allowed to read")
                return PromptResponse(stop_reason="end_turn")
            read = await self.conn.read_text_file(session_id=session_id, path=path)
            await self.say(session_id, f"python agent read: {read.content.strip()}")
            return PromptResponse(stop_reason="end_turn")
        if text == "slow":
            event = self.cancelled.setdefault(session_id, asyncio.Event())
            await self.say(session_id, "waiting for cancel")
            await asyncio.wait_for(event.wait(), 30)
            return PromptResponse(stop_reason="cancelled")
        await self.say(session_id, f"python agent echo: {text}")
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id, **kwargs):
        self.cancelled.setdefault(session_id, asyncio.Event()).set()


async def main(port):
    app = create_asgi_app(Agent)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    print(f"listening {port}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
