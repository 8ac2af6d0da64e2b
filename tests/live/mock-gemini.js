// A small mock of the Gemini API (generativelanguage's `models/*:
// streamGenerateContent` and `:generateContent`) on 127.0.0.1, for running
// Gemini CLI offline (GOOGLE_GEMINI_BASE_URL). Each request of the main
// conversation (one that offers tools) is answered with the next scripted
// step, `{text}` or `{tool: "name", input: {...}}`, or `{chunks: [..]}`, a
// reply streamed in several pieces; such a request waits for a step when
// none is queued yet. Gemini CLI's side requests (its JSON checks of who
// speaks next, which model to route to) and token counts get a fitting
// answer at once.
import { jsonServer, stepQueue } from "./steps.js";

const usage = { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 };

/** The parts of a model turn for `step`. */
function partsOf(step) {
  if (step.tool) {
    // Gemini 3 models sign their calls; this value is the documented way
    // for a client that has no signature to pass its check.
    return [{ functionCall: { name: step.tool, args: step.input ?? {} }, thoughtSignature: "skip_thought_signature_validator" }];
  }
  return [{ text: step.text }];
}

/**
 * What Gemini CLI's own JSON questions to the model get (who speaks next,
 * how complex the request is, which model serves it): an object that fits
 * the schema asked for, in which the person speaks next and the fast model
 * serves. Any other side request gets a short text.
 */
function sideAnswer(json) {
  const schema = json.generationConfig?.responseJsonSchema;
  if (!schema?.properties) return "Title";
  const chosen = { next_speaker: "user", model_choice: "flash" };
  const value = (name, type) => chosen[name] ?? (/^(INTEGER|NUMBER|integer|number)$/.test(type) ? 10 : "mock");
  return JSON.stringify(Object.fromEntries(Object.entries(schema.properties).map(([k, p]) => [k, value(k, p.type)])));
}

export async function startGeminiMock() {
  const steps = stepQueue();
  const requests = [];
  const server = jsonServer(async (req, res, path, json) => {
    const send = (status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (path.endsWith(":countTokens")) return send(200, { totalTokens: 10 });
    const stream = path.endsWith(":streamGenerateContent");
    if (!stream && !path.endsWith(":generateContent")) {
      return send(404, { error: { code: 404, message: `mock: no ${path}`, status: "NOT_FOUND" } });
    }
    const main = (json.tools ?? []).length > 0;
    if (process.env.MOCK_LOG) console.error("MOCK", path, main, JSON.stringify({...json, contents: json.contents?.map((c) => JSON.stringify(c).slice(-300))}).slice(0, 3000));
    if (main) requests.push(json);
    const step = main ? await steps.take() : { text: sideAnswer(json) };
    const candidate = (parts, last = true) => ({
      candidates: [{ content: { role: "model", parts }, index: 0, ...(last && { finishReason: "STOP" }) }],
      usageMetadata: usage, modelVersion: "mock",
    });
    if (!stream) return send(200, candidate(partsOf(step)));
    res.writeHead(200, { "content-type": "text/event-stream" });
    const pieces = step.chunks ? step.chunks.map((text) => [{ text }]) : [partsOf(step)];
    pieces.forEach((parts, i) => res.write(`data: ${JSON.stringify(candidate(parts, i === pieces.length - 1))}\r\n\r\n`));
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    waiting: steps.waiting,
    queued: steps.queued,
    next: steps.next,
    stop: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
