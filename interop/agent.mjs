#!/usr/bin/env node
// An ACP agent on stdio written against the official TypeScript SDK (@agentclientprotocol/sdk),
// behaving like acp-rs's reference agent where that is useful for interop tests:
//
//   prompt TEXT (text blocks joined by spaces), PATH = first absolute path in TEXT:
//   agent_message_chunk "echo: TEXT"; if TEXT has the word "slow", wait 5 s unless cancelled;
//   agent_thought_chunk; tool_call (read, pending, locations [PATH]); one
//   session/request_permission (allow-once / reject-once); rejected -> tool_call_update failed,
//   end_turn; cancelled -> cancelled; allowed -> in_progress, fs/read_text_file of PATH when the
//   client advertised fs.readTextFile, completed with the text; "done"; end_turn.
//
//   `run CMD ARGS...` runs the command in a client terminal; `append PATH TEXT...` appends a line to
//   PATH (read, diff, permission, write). _test/echo answers its params verbatim. Logs go to stderr.
import { Readable, Writable } from "node:stream";
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const log = (...args) => console.error("sdk agent:", ...args);

let clientCapabilities = {};
let nextSession = 0;
let nextCall = 0;
/** sessionId -> AbortController of the running turn (or null when idle) */
const sessions = new Map();

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => resolve(true), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

/** Asks permission for a tool call; true when allowed. */
async function allowed(client, sessionId, toolCall, signal) {
  const options = [
    { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
    { optionId: "reject-once", name: "Reject", kind: "reject_once" },
  ];
  const answer = await client.request(
    acp.methods.client.session.requestPermission,
    { sessionId, toolCall, options },
    { cancellationSignal: signal },
  );
  return answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow-once";
}

/**
 * `run CMD ARGS...`: runs the command in a client terminal (when the client advertised
 * `terminal`). `append PATH TEXT...`: appends a line to PATH through fs/read_text_file and
 * fs/write_text_file, showing the change as a diff.
 */
async function tool(text, { sessionId, client, update, signal }) {
  const [verb, target, ...rest] = text.split(/\s+/);
  const toolCallId = `sdk-call-${++nextCall}`;
  if (verb === "run") {
    if (!clientCapabilities.terminal) return { stopReason: "refusal" };
    const title = `Run ${[target, ...rest].join(" ")}`;
    await update({ sessionUpdate: "tool_call", toolCallId, title, kind: "execute", status: "pending" });
    if (!(await allowed(client, sessionId, { toolCallId, title, kind: "execute" }, signal))) return { stopReason: "end_turn" };
    const terminal = await client.createTerminal({ sessionId, command: target, args: rest });
    await update({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress", content: [{ type: "terminal", terminalId: terminal.id }] });
    const exit = await terminal.waitForExit();
    const output = await terminal.currentOutput();
    await terminal.release();
    await update({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: exit.exitCode === 0 ? "completed" : "failed",
      content: [{ type: "content", content: { type: "text", text: `${output.output}[exit code ${exit.exitCode}]` } }],
    });
    return { stopReason: "end_turn" };
  }
  if (!clientCapabilities.fs?.readTextFile || !clientCapabilities.fs?.writeTextFile) return { stopReason: "refusal" };
  const oldText = (await client.request(acp.methods.client.fs.readTextFile, { sessionId, path: target })).content;
  const newText = `${oldText}${rest.join(" ")}\n`;
  const diff = [{ type: "diff", path: target, oldText, newText }];
  const title = `Append to ${target}`;
  await update({ sessionUpdate: "tool_call", toolCallId, title, kind: "edit", status: "pending", locations: [{ path: target }], content: diff });
  if (!(await allowed(client, sessionId, { toolCallId, title, kind: "edit", content: diff }, signal))) return { stopReason: "end_turn" };
  await client.request(acp.methods.client.fs.writeTextFile, { sessionId, path: target, content: newText });
  await update({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
  return { stopReason: "end_turn" };
}

const app = acp
  .agent({ name: "sdk-interop-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    clientCapabilities = params.clientCapabilities ?? {};
    log("initialize, client asked for version", params.protocolVersion);
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false, promptCapabilities: { image: false, audio: false, embeddedContext: false } },
      agentInfo: { name: "sdk-interop-agent", version: "1.0.0" },
      authMethods: [],
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    if (!isAbsolute(params.cwd)) {
      throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be absolute");
    }
    const sessionId = `sdk-sess-${++nextSession}`;
    sessions.set(sessionId, null);
    return { sessionId };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.abort();
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    if (!sessions.has(sessionId)) throw acp.RequestError.sessionNotFound(sessionId);
    const turn = new AbortController();
    sessions.set(sessionId, turn);
    const update = (u) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
    const cancelled = { stopReason: "cancelled" };
    try {
      const text = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ");
      const path = text.split(/\s+/).find((w) => isAbsolute(w));
      await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `echo: ${text}` } });
      if (text.startsWith("run ") || text.startsWith("append ")) {
        return await tool(text, { sessionId, client, update, signal: turn.signal });
      }
      if (/(^|[^A-Za-z0-9])slow([^A-Za-z0-9]|$)/i.test(text) && !(await sleep(5000, turn.signal))) return cancelled;
      if (turn.signal.aborted) return cancelled;
      await update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking about it" } });
      const toolCallId = `sdk-call-${++nextCall}`;
      const locations = path ? [{ path }] : [];
      const title = `Read ${path ?? "(no file)"}`;
      await update({ sessionUpdate: "tool_call", toolCallId, title, kind: "read", status: "pending", locations });
      const answer = await client.request(
        acp.methods.client.session.requestPermission,
        {
          sessionId,
          toolCall: { toolCallId, title, kind: "read", status: "pending", locations },
          options: [
            { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
            { optionId: "reject-once", name: "Reject", kind: "reject_once" },
          ],
        },
        // session/cancel sends $/cancel_request for the question.
        { cancellationSignal: turn.signal },
      );
      if (answer.outcome.outcome === "cancelled" || turn.signal.aborted) return cancelled;
      if (answer.outcome.optionId !== "allow-once") {
        await update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
        return { stopReason: "end_turn" };
      }
      await update({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
      let status = "completed";
      let result = "nothing to read";
      if (path && clientCapabilities.fs?.readTextFile) {
        try {
          const read = { sessionId, path };
          result = (await client.request(acp.methods.client.fs.readTextFile, read, { cancellationSignal: turn.signal })).content;
        } catch (error) {
          if (turn.signal.aborted) return cancelled;
          status = "failed";
          result = `the client refused: ${error.message} (${error.code})`;
        }
      }
      if (turn.signal.aborted) return cancelled;
      await update({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status,
        content: [{ type: "content", content: { type: "text", text: result } }],
      });
      await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } });
      return { stopReason: "end_turn" };
    } finally {
      sessions.set(sessionId, null);
    }
  })
  .onRequest("_test/echo", (raw) => raw, ({ params }) => params);

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
log("connection closed, exiting");
process.exit(0);
