"""A small stdio agent written with the official Python SDK that advertises `loadSession` and
`sessionCapabilities.list` (acp-rs's REPL tests point `acp client` at it for `/sessions` and
`/load`, which the reference agent does not offer).

Usage: sessions_agent.py
  `session/new` opens `py-1`, `py-2`, … in memory; a prompt is echoed (`python echo SESSION: TEXT`) and
  remembered; `session/list` lists the open sessions with their first prompt as the title;
  `session/load` replays the session's conversation (user and agent message chunks), then
  answers. A prompt with the word `slow` in it takes 1.5 s. It does not advertise the
  `_session/steering` extension, so a client queues what is typed during a turn. Everything
  is forgotten when stdin ends.
"""

import asyncio

import acp
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
)


class Agent:
    def __init__(self):
        self.conn = None
        self.sessions = {}

    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        caps = AgentCapabilities(load_session=True, session_capabilities=SessionCapabilities(list=SessionListCapabilities()))
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=caps,
            agent_info=acp.schema.Implementation(name="python-sessions-agent", version="1"),
        )

    async def new_session(self, cwd, additional_directories=None, mcp_servers=None, **kwargs):
        session_id = f"py-{len(self.sessions) + 1}"
        self.sessions[session_id] = {"cwd": cwd, "turns": []}
        return NewSessionResponse(session_id=session_id)

    async def list_sessions(self, cwd=None, cursor=None, **kwargs):
        infos = []
        for session_id, session in self.sessions.items():
            if cwd is not None and session["cwd"] != cwd:
                continue
            title = session["turns"][0][0] if session["turns"] else None
            infos.append(SessionInfo(session_id=session_id, cwd=session["cwd"], title=title))
        return ListSessionsResponse(sessions=infos)

    async def load_session(self, cwd, session_id, mcp_servers=None, additional_directories=None, **kwargs):
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(session_id)
        for asked, answered in session["turns"]:
            await self.conn.session_update(session_id=session_id, update=acp.update_user_message_text(asked))
            await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(answered))
        return LoadSessionResponse()

    async def prompt(self, session_id, prompt, **kwargs):
        text = " ".join(block.text for block in prompt if getattr(block, "type", "") == "text")
        answer = f"python echo {session_id}: {text}"
        if "slow" in text.split():
            await asyncio.sleep(1.5)
        self.sessions.setdefault(session_id, {"cwd": "/", "turns": []})["turns"].append((text, answer))
        await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(answer))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id, **kwargs):
        pass


if __name__ == "__main__":
    asyncio.run(acp.run_agent(Agent()))
