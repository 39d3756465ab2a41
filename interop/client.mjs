#!/usr/bin/env node
// An ACP client written against the official TypeScript SDK (@agentclientprotocol/sdk). It
// spawns the agent command given after `--`, runs scripted scenarios and prints one JSON line
// per scenario on stdout for a test to assert on:
//
//   node client.mjs --dir DIR --file PATH -- AGENT_CMD [ARGS...]
//
// DIR is the sessions' cwd; PATH a file inside it that the agent is asked to read. The agent is
// expected to behave like acp-rs's reference agent (`acp agent`).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split < 0 || split === argv.length - 1) {
  console.error("usage: client.mjs --dir DIR --file PATH -- AGENT_CMD [ARGS...]");
  process.exit(2);
}
const option = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 && i < split ? argv[i + 1] : undefined;
};
const dir = option("--dir");
const file = option("--file");
const [command, ...args] = argv.slice(split + 1);

const emit = (scenario, fields) => console.log(JSON.stringify({ scenario, ...fields }));

const agentProcess = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => agentProcess.on("exit", (code, signal) => resolve({ code, signal })));

/** sessionId -> updates received */
const updates = new Map();
/** what the client's handlers saw */
const seen = { permissions: [], reads: [] };
/** how the next permission requests are answered: "allow-once", "reject-once" or "hold" */
let permissionAnswer = "allow-once";
let onPermissionAsked = () => {};
let releaseHeld = () => {};

const app = acp
  .client({ name: "sdk-interop-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    if (!updates.has(params.sessionId)) updates.set(params.sessionId, []);
    updates.get(params.sessionId).push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
    seen.permissions.push(params);
    onPermissionAsked(params);
    if (permissionAnswer === "hold") {
      // Until the turn is cancelled: by us (a client that sends session/cancel must answer its
      // pending permission requests `cancelled`) or by the agent's $/cancel_request.
      await new Promise((resolve) => {
        signal.addEventListener("abort", resolve);
        releaseHeld = resolve;
      });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: permissionAnswer } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    seen.reads.push(params.path);
    return { content: readFileSync(params.path, "utf8") };
  });

const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));

const errorCode = async (promise) => {
  try {
    await promise;
    return null;
  } catch (error) {
    return error.code ?? String(error);
  }
};

const kinds = (sessionId) => (updates.get(sessionId) ?? []).map((u) => u.sessionUpdate);
const textOf = (u) => (u.content && u.content.type === "text" ? u.content.text : undefined);

await app.connectWith(stream, async (ctx) => {
  // 1. Handshake.
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false },
    clientInfo: { name: "sdk-interop-client", version: "1.0.0" },
  });
  emit("handshake", {
    protocolVersion: init.protocolVersion,
    agentCapabilities: init.agentCapabilities,
    authMethods: init.authMethods,
    agentInfo: init.agentInfo,
  });

  const newSession = async () => (await ctx.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] })).sessionId;
  const prompt = (sessionId, text) =>
    ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

  // 2. A prompt turn with a permission ask (allowed) and an fs read.
  {
    const sessionId = await newSession();
    const response = await prompt(sessionId, `read ${file}`);
    const list = updates.get(sessionId) ?? [];
    const done = list.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    emit("prompt", {
      stopReason: response.stopReason,
      kinds: kinds(sessionId),
      echo: textOf(list[0]),
      last: textOf(list[list.length - 1]),
      toolCall: list.find((u) => u.sessionUpdate === "tool_call"),
      permissions: seen.permissions.map((p) => ({ toolCallId: p.toolCall.toolCallId, options: p.options.map((o) => [o.optionId, o.kind]) })),
      reads: [...seen.reads],
      completedText: done?.content?.[0]?.content?.text,
    });
  }

  // 3. The same, rejected.
  {
    seen.permissions.length = 0;
    seen.reads.length = 0;
    permissionAnswer = "reject-once";
    const sessionId = await newSession();
    const response = await prompt(sessionId, `read ${file}`);
    const list = updates.get(sessionId) ?? [];
    emit("reject", { stopReason: response.stopReason, kinds: kinds(sessionId), lastStatus: list[list.length - 1]?.status, reads: [...seen.reads] });
  }

  // 4. Cancel mid-turn: during the slow wait, and during the permission question.
  {
    permissionAnswer = "allow-once";
    const sessionId = await newSession();
    const started = Date.now();
    const turn = prompt(sessionId, "a slow turn");
    while (kinds(sessionId).length === 0) await new Promise((r) => setTimeout(r, 5));
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    const response = await turn;
    emit("cancel_slow", { stopReason: response.stopReason, kinds: kinds(sessionId), elapsedMs: Date.now() - started });

    permissionAnswer = "hold";
    seen.permissions.length = 0;
    seen.reads.length = 0;
    const other = await newSession();
    const asked = new Promise((resolve) => (onPermissionAsked = resolve));
    const held = prompt(other, `read ${file}`);
    await asked;
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: other });
    releaseHeld();
    const heldResponse = await held;
    emit("cancel_permission", { stopReason: heldResponse.stopReason, kinds: kinds(other), reads: [...seen.reads] });
    permissionAnswer = "allow-once";
    onPermissionAsked = () => {};
  }

  // 5. Unknown methods, the echo extension, bad params, unknown sessions.
  {
    const params = { nested: { list: [1, "two", null, { three: 3.5 }] }, text: "é" };
    emit("errors", {
      unknownMethod: await errorCode(ctx.request("session/teleport", { sessionId: "x" })),
      unknownExtension: await errorCode(ctx.request("_nobody/knows", {})),
      echo: await ctx.request("_test/echo", params),
      echoMatches: JSON.stringify(await ctx.request("_test/echo", params)) === JSON.stringify(params),
      relativeCwd: await errorCode(ctx.request(acp.methods.agent.session.new, { cwd: "relative", mcpServers: [] })),
      unknownSession: await errorCode(prompt("no-such-session", "hello")),
    });
  }

  // 6. Concurrent sessions: prompts on several sessions at once, each with its own updates.
  {
    seen.reads.length = 0;
    const ids = await Promise.all([1, 2, 3, 4].map(() => newSession()));
    const responses = await Promise.all(ids.map((id, i) => prompt(id, `turn ${i} ${file}`)));
    emit("concurrent", {
      sessions: ids.length,
      distinct: new Set(ids).size,
      stopReasons: responses.map((r) => r.stopReason),
      echoes: ids.map((id) => textOf((updates.get(id) ?? [])[0])),
      reads: seen.reads.length,
    });
  }
});

// 7. The agent exits soon after its stdin ends.
const closedAt = Date.now();
agentProcess.stdin.end();
const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 3000));
const exit = await Promise.race([exited, timeout]);
emit("exit", { exit, elapsedMs: Date.now() - closedAt });
if (!exit) agentProcess.kill("SIGKILL");
process.exit(0);
