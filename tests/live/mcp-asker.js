#!/usr/bin/env node
// A small MCP server (stdio, newline-delimited JSON-RPC) for the live suite:
// each of its tools asks the person through the client (`elicitation/create`:
// a message and a form), `choose_environment` a form of one choice,
// `choose_replicas` one of a typed whole number, and returns what came back. Each answer the client gave is appended, one JSON line, to the
// file named by its first argument, so a test sees what the server received.
//
//   node tests/live/mcp-asker.js /tmp/answers.jsonl
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

export const MESSAGE = "Which environment should I deploy to?";
export const SCHEMA = {
  type: "object",
  properties: {
    environment: { type: "string", title: "Environment", enum: ["staging", "production"] },
  },
  required: ["environment"],
};

/** Each tool's question: its description, message and form. */
const TOOLS = {
  choose_environment: { description: "Asks the person which environment to deploy to.", message: MESSAGE, schema: SCHEMA },
  choose_replicas: {
    description: "Asks the person how many replicas to run.",
    message: "How many replicas should run?",
    schema: { type: "object", properties: { replicas: { type: "integer", title: "Replicas" } }, required: ["replicas"] },
  },
};

const answers = process.argv[2];
const waiting = new Map(); // our request id -> the tools/call it serves
let ids = 0;

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);

function handle(m) {
  // A response to our elicitation: finish the tool call it belongs to.
  if (m.method === undefined && waiting.has(m.id)) {
    const call = waiting.get(m.id);
    waiting.delete(m.id);
    const result = m.result ?? { action: "error", error: m.error };
    if (answers) appendFileSync(answers, `${JSON.stringify(result)}\n`);
    const said = result.action === "accept" ? `The person chose ${JSON.stringify(result.content)}` : `The person answered: ${result.action}`;
    send({ id: call, result: { content: [{ type: "text", text: said }] } });
    return;
  }
  switch (m.method) {
    case "initialize":
      return send({ id: m.id, result: {
        protocolVersion: m.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "asker", version: "1.0.0" },
      } });
    case "tools/list":
      return send({ id: m.id, result: { tools: Object.entries(TOOLS).map(([name, t]) => ({
        name, description: t.description, inputSchema: { type: "object", properties: {} },
      })) } });
    case "tools/call": {
      const tool = TOOLS[m.params?.name];
      if (!tool) return send({ id: m.id, error: { code: -32602, message: `no tool ${m.params?.name}` } });
      const id = `elicit-${++ids}`;
      waiting.set(id, m.id);
      return send({ id, method: "elicitation/create", params: { message: tool.message, requestedSchema: tool.schema } });
    }
    case "ping":
      return send({ id: m.id, result: {} });
    default:
      // Notifications need no answer; any other request is not ours.
      if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  createInterface({ input: process.stdin }).on("line", (line) => {
    try {
      handle(JSON.parse(line));
    } catch {
      // not a message of ours
    }
  });
}
