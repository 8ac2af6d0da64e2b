// A small mock of the OpenAI chat-completions API on 127.0.0.1, for running
// OpenCode and Hermes offline (both take an OpenAI-compatible server). Each
// request that offers tools is answered, streaming or not, with the next
// scripted step: `{text}`, `{tool: "name", input: {...}}`, or `{partial: [..]}`,
// which streams those pieces of text and then never finishes (a reply for
// the person to interrupt); such a request
// waits for a step when none is queued yet. Other requests (titles) get a
// short text at once.
import { jsonServer, stepQueue } from "./steps.js";

export async function startChatMock() {
  const steps = stepQueue();
  const requests = [];
  let ids = 0;
  const server = jsonServer(async (req, res, path, json) => {
    if (!path.endsWith("/chat/completions")) {
      // Only an OpenAI-compatible server's model list: Hermes takes a server
      // that answers its other probes for LM Studio or Ollama.
      if (path === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data: [{ id: "mock-model", object: "model" }] }));
      } else {
        res.writeHead(404, { "content-type": "application/json" }).end("{}");
      }
      return;
    }
    const main = (json.tools ?? []).length > 0;
    if (main) requests.push(json);
    const step = main ? await steps.take() : { text: "Title" };
    const id = `chatcmpl-${++ids}`;
    const call = step.tool
      ? { index: 0, id: `call_${ids}`, type: "function", function: { name: step.tool, arguments: JSON.stringify(step.input ?? {}) } }
      : null;
    const finish = call ? "tool_calls" : "stop";
    const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: json.model ?? "mock-model" };
    if (!json.stream) {
      const message = call ? { role: "assistant", content: null, tool_calls: [call] } : { role: "assistant", content: step.text };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
        ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunk = (delta, finish_reason = null, extra = {}) =>
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`);
    chunk({ role: "assistant", content: "" });
    if (step.partial) {
      for (const piece of step.partial) {
        chunk({ content: piece });
        await new Promise((r) => setTimeout(r, 300));
      }
      return; // left open: the client gives up on it
    }
    if (call) chunk({ tool_calls: [call] });
    else chunk({ content: step.text });
    chunk({}, finish, { usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } });
    res.write("data: [DONE]\n\n");
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    /** How many of the agent's requests wait for a step. */
    waiting: steps.waiting,
    /** Steps queued and not yet taken. */
    queued: steps.queued,
    /** The tool names the agent offered in its last request. */
    tools: () => (requests.at(-1)?.tools ?? []).map((t) => t.function?.name ?? t.name),
    next: steps.next,
    stop: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
