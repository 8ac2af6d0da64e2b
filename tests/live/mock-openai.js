// A small mock of OpenAI's Responses API on 127.0.0.1, for running the real
// Codex offline. Each request of the agent's loop (one that offers tools) is
// answered, streaming, with the next scripted step: `{text}`, or
// `{shell: "command"}`, which calls the shell tool that the request offers.
// Such a request waits for a step when none is queued yet, so a test can
// script each turn as it goes. Other requests (a session's title) get a
// short text at once.
import { jsonServer, stepQueue } from "./steps.js";

export async function startResponsesMock() {
  const steps = stepQueue();
  const requests = [];
  let ids = 0;
  const server = jsonServer(async (req, res, path, json) => {
    if (!path.endsWith("/responses")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(path.endsWith("/models") ? { data: [], models: [] } : {}));
      return;
    }
    const main = (json.tools ?? []).length > 0;
    if (main) requests.push(json);
    // What the person (or, for a subagent, its parent) said in this
    // conversation: a step queued `asked` answers only where it was said.
    const said = (Array.isArray(json.input) ? json.input : [])
      .filter((i) => i.role === "user")
      .flatMap((i) => (typeof i.content === "string" ? [i.content] : (i.content ?? []).map((c) => c.text ?? "")))
      .join("\n");
    const step = main ? await steps.take(said) : { text: "Title" };
    const rid = `resp_${++ids}`;
    let item;
    if (step.call) {
      // Any tool the request offers, by name (and namespace, for a tool
      // offered inside one, as Codex's sub-agent tools are).
      const { name, namespace, args } = step.call;
      item = { type: "function_call", id: `fc_${ids}`, call_id: `call_${ids}`, name, ...(namespace ? { namespace } : {}),
        arguments: JSON.stringify(args ?? {}), status: "completed" };
    } else if (step.shell) {
      const tools = (json.tools ?? []).map((t) => t.name ?? t.type);
      const name = ["exec_command", "shell", "shell_command"].find((n) => tools.includes(n)) ?? "shell";
      const args = name === "exec_command" ? { cmd: step.shell } : name === "shell_command" ? { command: step.shell } : { command: ["bash", "-lc", step.shell] };
      item = { type: "function_call", id: `fc_${ids}`, call_id: `call_${ids}`, name, arguments: JSON.stringify(args), status: "completed" };
    } else {
      item = { type: "message", id: `msg_${ids}`, role: "assistant", status: "completed",
        content: [{ type: "output_text", text: step.text, annotations: [] }] };
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const event = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event("response.created", { response: { id: rid, object: "response", status: "in_progress", output: [] } });
    event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", ...(item.content ? { content: [] } : {}) } });
    if (item.type === "message") {
      event("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: step.text });
    }
    event("response.output_item.done", { output_index: 0, item });
    event("response.completed", { response: { id: rid, object: "response", status: "completed", output: [item],
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 20 } } });
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    /** Queues the model's next answer: `{text}`, `{shell: "command"}` or `{call: {name, namespace, args}}`, for any request or only one that `asked`. */
    next: steps.next,
    /** Forgets the steps queued and not yet taken. */
    clear: steps.clear,
    stop: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
