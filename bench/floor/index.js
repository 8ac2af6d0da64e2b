// The floor: read the body, one D1 insert, answer JSON. Nothing else.
export default {
  async fetch(request, env) {
    const body = await request.text();
    await env.DB.prepare("INSERT INTO reports (body, at) VALUES (?1, ?2)").bind(body, Date.now()).run();
    return Response.json({ applied: true });
  },
};
