#!/usr/bin/env node
// A plain ACP client on the official TypeScript SDK (@agentclientprotocol/sdk), the way an
// editor uses it: it spawns the agent given after `--`, sends one prompt, prints the agent's
// message text, serves fs/read_text_file and fs/write_text_file (no terminals), and exits when
// the turn ends. `acp check client` judges it:
//
//   node prompt_client.mjs [--prompt TEXT] [--hold-permissions] -- AGENT_CMD [ARGS...]
//
// Permission asks are answered with the first allow option, or, with --hold-permissions, left
// to a user who never answers. Ctrl-C (SIGINT) cancels the running turn: session/cancel, and
// every pending permission ask answered `cancelled`; a second Ctrl-C quits.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split < 0 || split === argv.length - 1) {
  console.error("usage: prompt_client.mjs [--prompt TEXT] [--hold-permissions] -- AGENT_CMD [ARGS...]");
  process.exit(2);
}
const own = argv.slice(0, split);
const promptText = own.includes("--prompt") ? own[own.indexOf("--prompt") + 1] : "hello";
const hold = own.includes("--hold-permissions");
const [command, ...args] = argv.slice(split + 1);

const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
agent.on("error", (error) => {
  console.error(`cannot start the agent: ${error.message}`);
  process.exit(1);
});
// The agent dying ends the connection; the pending prompt then fails below.
agent.stdin.on("error", () => {});

/** Resolvers of the permission asks waiting for the user. */
const pending = new Set();
let sessionId = null;
let turnRunning = false;
let ctxRef = null;

const app = acp
  .client({ name: "sdk-prompt-client" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const u = params.update;
    if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") process.stdout.write(u.content.text);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    if (hold) return await new Promise((resolve) => pending.add(resolve));
    const allow = params.options.find((o) => o.kind === "allow_once" || o.kind === "allow_always") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => ({ content: readFileSync(params.path, "utf8") }))
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    writeFileSync(params.path, params.content);
    return {};
  });

let interrupts = 0;
process.on("SIGINT", () => {
  interrupts += 1;
  if (interrupts > 1 || !turnRunning || !ctxRef) {
    agent.kill("SIGTERM");
    process.exit(130);
  }
  ctxRef.notify(acp.methods.agent.session.cancel, { sessionId });
  for (const resolve of pending) resolve({ outcome: { outcome: "cancelled" } });
  pending.clear();
});

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
let stopReason = null;
try {
  await app.connectWith(stream, async (ctx) => {
    ctxRef = ctx;
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "sdk-prompt-client", version: "1.0.0" },
    });
    ({ sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] }));
    turnRunning = true;
    const response = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: promptText }],
    });
    turnRunning = false;
    stopReason = response.stopReason;
  });
} catch (error) {
  console.error(`\nthe connection failed: ${error?.message ?? error}`);
  agent.kill("SIGTERM");
  process.exit(7);
}
console.log(`\n[${stopReason}]`);
agent.stdin.end();
process.exit(stopReason === "end_turn" ? 0 : 3);
