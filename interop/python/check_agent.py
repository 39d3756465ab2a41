"""A small stdio agent written with the official Python SDK, for `acp check agent` (see
acp-cli/tests/cli/check_agent.rs).

Usage: check_agent.py
  A prompt whose text has an absolute path: a tool call, a permission ask, then (allowed) the
  file read through the client when it advertised fs.readTextFile. A prompt with the word
  `slow` waits (up to 30 s) for session/cancel. Anything else is echoed. Sessions have two
  modes, and can be listed, resumed and closed. A relative cwd is refused (-32602).
"""

import asyncio
import os

import acp
from acp.exceptions import RequestError
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    InitializeResponse,
    ListSessionsResponse,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionModeResponse,
)

from read_permission import ask_to_read

MODES = SessionModeState(
    current_mode_id="ask",
    available_modes=[SessionMode(id="ask", name="Ask"), SessionMode(id="code", name="Code")],
)


class Agent:
    def __init__(self):
        self.conn = None
        self.sessions = {}  # id -> cwd
        self.cancelled = {}  # id -> asyncio.Event of the running turn
        self.fs_read = False

    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        fs = getattr(client_capabilities, "fs", None)
        self.fs_read = bool(fs and fs.read_text_file)
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                )
            ),
            agent_info=acp.schema.Implementation(name="python-check-agent", version="1"),
        )

    def known(self, session_id):
        if session_id not in self.sessions:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session"})

    async def new_session(self, cwd, additional_directories=None, mcp_servers=None, **kwargs):
        if not os.path.isabs(cwd):
            raise RequestError.invalid_params({"cwd": cwd, "reason": "cwd must be absolute"})
        session_id = f"py-{len(self.sessions) + 1}"
        self.sessions[session_id] = cwd
        return NewSessionResponse(session_id=session_id, modes=MODES)

    async def list_sessions(self, cursor=None, cwd=None, **kwargs):
        infos = [SessionInfo(session_id=s, cwd=c) for s, c in self.sessions.items() if cwd in (None, c)]
        return ListSessionsResponse(sessions=infos)

    async def resume_session(self, cwd, session_id, mcp_servers=None, **kwargs):
        self.known(session_id)
        return ResumeSessionResponse(modes=MODES)

    async def close_session(self, session_id, **kwargs):
        self.known(session_id)
        await self.cancel(session_id)
        del self.sessions[session_id]
        return CloseSessionResponse()

    async def set_session_mode(self, mode_id, session_id, **kwargs):
        self.known(session_id)
        return SetSessionModeResponse()

    async def say(self, session_id, text):
        await self.conn.session_update(session_id=session_id, update=acp.update_agent_message_text(text))

    async def prompt(self, prompt, session_id, **kwargs):
        self.known(session_id)
        text = " ".join(block.text for block in prompt if getattr(block, "type", "") == "text")
        event = self.cancelled[session_id] = asyncio.Event()
        await self.say(session_id, f"echo: {text}")
        if "slow" in text.split():
            try:
                await asyncio.wait_for(event.wait(), 30)
            except asyncio.TimeoutError:
                pass
            return PromptResponse(stop_reason="cancelled" if event.is_set() else "end_turn")
        path = next((word for word in text.split() if os.path.isabs(word)), None)
        if path is None:
            return PromptResponse(stop_reason="end_turn")
        return await self.read(session_id, path, event)

    async def read(self, session_id, path, event):
        outcome = await ask_to_read(self.conn, session_id, path)
        if event.is_set() or getattr(outcome, "outcome", "") == "cancelled":
            return PromptResponse(stop_reason="cancelled")
        if outcome.option_id != "allow":
            # A refused tool call is settled, not left pending (acp check:
            # agent.turn.refused-tool-call-settles).
            await self.tool_status(session_id, "failed")
            return PromptResponse(stop_reason="end_turn")
        if self.fs_read:
            read = await self.conn.read_text_file(session_id=session_id, path=path)
            await self.say(session_id, f"it says: {read.content.strip()}")
        await self.tool_status(session_id, "completed")
        return PromptResponse(stop_reason="cancelled" if event.is_set() else "end_turn")

    async def tool_status(self, session_id, status):
        await self.conn.session_update(session_id=session_id, update=acp.update_tool_call("read-1", status=status))

    async def cancel(self, session_id, **kwargs):
        event = self.cancelled.get(session_id)
        if event is not None:
            event.set()


if __name__ == "__main__":
    # session/close and session/resume are routed by SDK 0.12.1 only with the unstable
    # protocol enabled (without it they are -32601 although advertised: acp check caught it).
    asyncio.run(acp.run_agent(Agent(), use_unstable_protocol=True))
