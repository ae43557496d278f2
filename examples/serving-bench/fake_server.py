#!/usr/bin/env python3
"""A stand-in for a serving engine, for testing bench.py without GPUs: after --warmup
seconds it answers GET /health with 200 on --port, until SIGTERM. With --fail it exits at
once with an out-of-memory message, as a server whose weights do not fit does."""
import argparse
import http.server
import signal
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--warmup", type=float, default=1.0)
ap.add_argument("--fail", action="store_true")
args = ap.parse_args()
if args.fail:
    print("torch.OutOfMemoryError: CUDA out of memory (fake)", flush=True)
    sys.exit(1)
time.sleep(args.warmup)


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *a):
        pass


server = http.server.HTTPServer(("127.0.0.1", args.port), Health)
signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=server.shutdown).start())
print(f"fake server up on {args.port}", flush=True)
server.serve_forever()
print("fake server stopped", flush=True)
