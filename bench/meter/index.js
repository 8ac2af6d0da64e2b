// The Worker as built (build/index.js), with what it costs counted: every D1
// statement's rows read and written, from D1's own result metadata; every
// request to a Durable Object; every subrequest (fetch) it makes. For
// bench/capacity.mjs only, under Miniflare: `GET /__meter` answers the counts
// since the last read and starts them again. Nothing of the Worker changes:
// its bindings are wrapped on their way in.
import Worker, { Live as BuiltLive, Notifier as BuiltNotifier, Relay as BuiltRelay } from "../../build/index.js";

const zero = () => ({ d1_calls: 0, statements: 0, rows_read: 0, rows_written: 0, d1_ms: 0, do_requests: 0, subrequests: 0, by_sql: {} });
let counts = zero();

function tally(sql, meta) {
  counts.statements++;
  counts.rows_read += meta?.rows_read ?? 0;
  counts.rows_written += meta?.rows_written ?? 0;
  counts.d1_ms += meta?.duration ?? 0;
  const key = sql.replace(/\s+/g, " ").trim().slice(0, 90);
  const s = (counts.by_sql[key] ??= { n: 0, rows_read: 0, rows_written: 0 });
  s.n++;
  s.rows_read += meta?.rows_read ?? 0;
  s.rows_written += meta?.rows_written ?? 0;
}

/** A prepared statement that counts what it costs when it runs. */
function statement(inner, sql) {
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "__inner") return target;
      if (prop === "__sql") return sql;
      if (prop === "bind") return (...args) => statement(target.bind(...args), sql);
      if (prop === "all" || prop === "run") {
        return async () => {
          counts.d1_calls++;
          const r = await target[prop]();
          tally(sql, r.meta);
          return r;
        };
      }
      if (prop === "first") {
        // first() hides the metadata: read all() and take its first row.
        return async (column) => {
          counts.d1_calls++;
          const r = await target.all();
          tally(sql, r.meta);
          const row = r.results[0];
          return row === undefined ? null : column === undefined ? row : row[column];
        };
      }
      const v = target[prop];
      return typeof v === "function" && prop !== "constructor" ? v.bind(target) : v;
    },
  });
}

function database(db) {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (sql) => statement(target.prepare(sql), sql);
      if (prop === "batch") {
        return async (stmts) => {
          counts.d1_calls++;
          const results = await target.batch(stmts.map((s) => s.__inner ?? s));
          results.forEach((r, i) => tally(stmts[i].__sql ?? "?", r.meta));
          return results;
        };
      }
      const v = target[prop];
      return typeof v === "function" && prop !== "constructor" ? v.bind(target) : v;
    },
  });
}

function namespace(ns) {
  return new Proxy(ns, {
    get(target, prop) {
      if (prop === "get") {
        return (id, ...rest) => {
          const stub = target.get(id, ...rest);
          return new Proxy(stub, {
            get(s, p) {
              if (p === "fetch") return (...a) => (counts.do_requests++, s.fetch(...a));
              const v = s[p];
              return typeof v === "function" && p !== "constructor" ? v.bind(s) : v;
            },
          });
        };
      }
      const v = target[prop];
      return typeof v === "function" && prop !== "constructor" ? v.bind(target) : v;
    },
  });
}

function metered(env) {
  return new Proxy(env, {
    get(target, prop) {
      if (prop === "DB") return database(target.DB);
      if (prop === "NOTIFIER" || prop === "RELAY" || prop === "LIVE") return namespace(target[prop]);
      return target[prop];
    },
  });
}

const realFetch = globalThis.fetch;
globalThis.fetch = (...args) => {
  counts.subrequests++;
  return realFetch(...args);
};

export class Notifier extends BuiltNotifier {
  constructor(state, env) {
    super(state, metered(env));
  }
}

export class Relay extends BuiltRelay {
  constructor(state, env) {
    super(state, metered(env));
  }
}

export class Live extends BuiltLive {
  constructor(state, env) {
    super(state, metered(env));
  }
}

export default class extends Worker {
  constructor(ctx, env) {
    super(ctx, metered(env));
  }

  async fetch(request) {
    if (new URL(request.url).pathname === "/__meter") {
      const read = counts;
      counts = zero();
      return Response.json(read);
    }
    return super.fetch(request);
  }
}
