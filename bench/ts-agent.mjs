#!/usr/bin/env node
// The workloads' agent (shared/bench/WORKLOADS.md) written against the official TypeScript SDK,
// @agentclientprotocol/sdk 2.4.0 as installed in interop/ (`cd interop && npm ci`):
//
//   node bench/ts-agent.mjs --updates N
//
// session/new answers sess-0, sess-1, ... in arrival order; session/prompt sends N
// agent_message_chunk updates with the 64-byte chunk, each awaited (`client.notify` resolves
// once the frame is written: the SDK's flow control), then answers end_turn. Exits when stdin
// ends. Our client measures it: `acp-bench client --workload w1 -- node bench/ts-agent.mjs`.
import { Readable, Writable } from "node:stream";

// The SDK lives in interop/node_modules; import it from there by path (this file is not part
// of that package, so bare-specifier resolution would not find it).
const acp = await import(new URL("../interop/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js", import.meta.url));

const CHUNK = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ._";
const at = process.argv.indexOf("--updates");
const updates = at >= 0 ? Number(process.argv[at + 1]) : 0;
let nextSession = 0;

const app = acp
  .agent({ name: "acp-bench-ts-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `sess-${nextSession++}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    for (let i = 0; i < updates; i++) {
      await client.notify(acp.methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: CHUNK } },
      });
    }
    return { stopReason: "end_turn" };
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
