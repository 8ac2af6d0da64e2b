#!/usr/bin/env python3
"""The one local HTTP sink of the Python tests and the benchmarks: a real
server on 127.0.0.1 that answers 200 to every request and records it.

From Python: ``start_sink()`` returns a running sink whose ``received`` list
holds one dict per request (``at`` in ms, ``method``, ``path``, ``headers``,
``body`` as text). From the shell (the benchmarks): prints its port on stdout,
then serves until killed; ``--record FILE`` appends one JSON line per request,
``--delay-ms N`` makes it a slow server.
"""

import argparse
import contextlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Sink(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port=0, record=None, delay_ms=0):
        self.received = []
        self.delay_s = delay_ms / 1000
        self._lock = threading.Lock()
        self._record = record
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def keep(self, entry):
        with self._lock:
            self.received.append(entry)
            if self._record:
                self._record.write(json.dumps(entry) + "\n")
                self._record.flush()

    def handle_error(self, request, client_address):
        pass  # a client that hung up early (a detached sender's deadline) is no news

    def stop(self):
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.keep({"at": time.time() * 1000, "method": self.command, "path": self.path,
                          "headers": {k.lower(): v for k, v in self.headers.items()},
                          "body": body.decode("utf-8", "replace")})
        if self.server.delay_s:
            time.sleep(self.server.delay_s)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_PUT = do_GET = do_DELETE = _answer

    def log_message(self, *args):
        pass


def start_sink(record=None, delay_ms=0):
    """A sink serving on a background thread; call ``stop()`` when done."""
    sink = Sink(record=record, delay_ms=delay_ms)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    return sink


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay-ms", type=int, default=0, help="answer each request this late")
    args = parser.parse_args()
    with contextlib.ExitStack() as files:
        record = files.enter_context(open(args.record, "a", encoding="utf-8")) if args.record else None
        sink = Sink(port=args.port, record=record, delay_ms=args.delay_ms)
        print(sink.server_address[1], flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            sink.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
