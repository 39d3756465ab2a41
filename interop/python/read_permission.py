"""The permission ask the interop agents make before reading a file of the client's.

`ask_to_read` reports the read as tool call `read-1` and asks to allow or reject it once;
it returns the client's outcome (`selected` with its option id, or `cancelled`).
"""

import acp
from acp.schema import PermissionOption


async def ask_to_read(conn, session_id, path):
    tool = acp.start_read_tool_call("read-1", f"Read {path}", path)
    await conn.session_update(session_id=session_id, update=tool)
    options = [
        PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    ]
    answer = await conn.request_permission(
        session_id=session_id, tool_call=acp.update_tool_call("read-1", status="pending"), options=options
    )
    return answer.outcome
