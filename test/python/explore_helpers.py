"""A PolyBlocks explorer server on a free port of 127.0.0.1, for the API and
browser tests. Its compiles run in a child that crashes (SIGSEGV) on a
program holding CRASH_MARKER, else in the real worker: the server must
report the crash and keep serving."""
from __future__ import annotations

import json
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

from polyblocks.explore.server import Explorer, serve

ROOT = Path(__file__).resolve().parents[2]
MATMUL = (ROOT / "examples" / "matmul_bias_relu.mlir").read_text()
CRASH_MARKER = "// explore-test: crash the compiler"
INVALID = """func.func @bad(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %undefined : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

# The crashing child: a compiler crash, as S1 had one (repro/), at will.
CRASHING_WORKER = f"""
import os, signal, sys, json
from polyblocks.explore import worker
request = json.load(sys.stdin)
if {CRASH_MARKER!r} in request.get("source", ""):
    os.kill(os.getpid(), signal.SIGSEGV)
sys.stdout.write(json.dumps(worker.run(request)))
"""


class Server:
    def __init__(self):
        self.explorer = Explorer(timeout_s=600, max_request_bytes=1 << 20,
                                 worker_command=[sys.executable, "-c", CRASHING_WORKER])
        self.httpd = serve(self.explorer, "127.0.0.1", 0)
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def get(self, path: str):
        return _read(urllib.request.Request(self.url + path))

    def post(self, path: str, body: bytes, headers=None):
        request = urllib.request.Request(self.url + path, data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  **(headers or {})})
        return _read(request)

    def compile(self, **request):
        return self.post("/api/compile", json.dumps(request).encode())


def _read(request):
    try:
        with urllib.request.urlopen(request, timeout=900) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
