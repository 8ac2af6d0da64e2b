#!/usr/bin/env python3
"""A benchmark sink on 127.0.0.1: answers 200 to every request and, with
--record FILE, appends one JSON line per request (arrival time in ms, path,
body). Prints its port on stdout, then serves until killed."""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    lock = threading.Lock()
    out = open(args.record, "a", encoding="utf-8") if args.record else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            if out:
                line = json.dumps({"at": time.time() * 1000, "method": self.command, "path": self.path,
                                   "body": body.decode("utf-8", "replace")})
                with lock:
                    out.write(line + "\n")
                    out.flush()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_POST = do_PUT = do_GET = _answer

        def log_message(self, *a):
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request, client_address):
            pass  # a client that hung up early (a detached sender's deadline) is no news

    server = Server(("127.0.0.1", args.port), Handler)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
