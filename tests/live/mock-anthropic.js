// A small mock of the Anthropic Messages API on 127.0.0.1, for running the real
// Claude Code offline. Each request of the agent's own loop (one that offers
// tools) is answered with the next scripted step; any other request (titles,
// summaries) gets a short text. Streaming (SSE) and plain JSON both work.
//
//   const model = await startAnthropicMock();
//   model.next({ tool: "Bash", input: { command: "ls", description: "List" } });
//   model.next({ text: "Shall I go on?" });
//   model.next({ tool: "Bash", input: {…} }, { asked: "Remove the build" });
//   model.next((request) => ({ tool: "Write", input: {…from request…} }));
//
// A step with `asked` answers only a request whose user messages' own text
// (not tool results) holds that text: the way to script a subagent, whose
// requests run beside its parent's (a backgrounded Agent), apart from the
// parent's, which carry that text only inside the Agent tool's call.
import { jsonServer } from "./steps.js";

export async function startAnthropicMock() {
  const steps = [];
  const requests = [];
  let ids = 0;
  const server = jsonServer((req, res, path, json) => {
    if (path.endsWith("/count_tokens")) return send(res, 200, { input_tokens: 100 });
    if (!path.endsWith("/v1/messages")) return send(res, 200, {});
    const main = Array.isArray(json.tools) && json.tools.length > 0;
    if (main) requests.push(json);
    const said = (json.messages ?? [])
      .filter((m) => m.role === "user")
      .flatMap((m) => (typeof m.content === "string" ? [m.content] : (m.content ?? []).filter((b) => b.type === "text").map((b) => b.text)))
      .join("\n");
    const at = steps.findIndex((s) => !s.asked || said.includes(s.asked));
    const queued = main ? (at >= 0 ? steps.splice(at, 1)[0].step : { text: "Done." }) : { text: "Title" };
    // A step may be made from the request it answers (a path only it names).
    const step = typeof queued === "function" ? queued(json) : queued;
    const content = step.tool
      ? [{ type: "tool_use", id: `toolu_${++ids}`, name: step.tool, input: step.input ?? {} }]
      : [{ type: "text", text: step.text }];
    const message = {
      id: `msg_${++ids}`, type: "message", role: "assistant", model: json.model ?? "claude-mock",
      content, stop_reason: step.tool ? "tool_use" : "end_turn", stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 10 },
    };
    if (!json.stream) return send(res, 200, message);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event("message_start", { message: { ...message, content: [], stop_reason: null } });
    const block = content[0];
    if (block.type === "text") {
      event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: block.text } });
    } else {
      event("content_block_start", { index: 0, content_block: { ...block, input: {} } });
      event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    event("content_block_stop", { index: 0 });
    event("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 10 } });
    event("message_stop", {});
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** What the agent's loop sent, oldest first. */
    requests,
    /** Queues the model's next answer: `{text}` or `{tool, input}`, for any request or only one that `asked`. */
    next: (step, { asked } = {}) => steps.push({ step, asked }),
    stop: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}

function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
