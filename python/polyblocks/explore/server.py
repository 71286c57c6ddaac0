"""The explorer's HTTP server: the page, its static files and the JSON API.

GET  /                     the page
GET  /static/<file>        its script and style
GET  /api/targets          {"targets": [...], "host": resolved cpu-host}
GET  /api/models           {"models": [...]} (names the API accepts)
GET  /api/target?name=T    {"name": T, "text": pb-opt --print-target=T}
GET  /api/initial          the program given on the command line and its
                           result (waits for its compile), or {}
POST /api/compile          {"source": MLIR | "model": NAME, "target": T,
                            "measure": bool} -> {"id", "ok", "error",
                            "stages": [{"name", "size"}], "decisions",
                            "kernels", "diagnostics", "notes", ...}
GET  /api/stage?id=ID&name=S   {"name", "text", "truncated"}

Each compile runs in a child process (polyblocks.explore.worker) with a
time limit; a crash or a timeout is an error in the reply, never the
server's end. The API takes program text or the names of models it knows,
never a path. Results are kept in memory (the last few), keyed by program,
target and measurement, so that the same request is answered at once.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import subprocess
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

STATIC = Path(__file__).with_name("static")
_CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                  ".css": "text/css; charset=utf-8"}


class Explorer:
    """What the handler serves: settings, the result cache, the compiles."""

    def __init__(self, max_request_bytes: int = 4 << 20, timeout_s: float = 900,
                 keep_results: int = 8, initial: dict | None = None,
                 worker_command: list[str] | None = None):
        # The child that compiles: reads the request as JSON on stdin and
        # writes the result as JSON on stdout (polyblocks.explore.worker).
        self.worker_command = worker_command or [sys.executable, "-m",
                                                 "polyblocks.explore.worker"]
        self.max_request_bytes = max_request_bytes
        self.timeout_s = timeout_s
        self.keep_results = keep_results
        self.initial = initial
        self._results: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}
        self._target_text: dict[str, str] = {}
        from .. import _capi
        self.targets = _capi.target_names()

    # -- what the API knows -------------------------------------------------
    def models(self) -> list[str]:
        from ..bench import models
        return sorted(models.MODELS)

    def check_request(self, request: dict) -> str | None:
        """Why `request` is refused, or None."""
        if not isinstance(request, dict):
            return "the request must be a JSON object"
        target = request.get("target", "cpu-host")
        if target not in self.targets:
            return f"unknown target {target!r}; known: {', '.join(self.targets)}"
        has_source = isinstance(request.get("source"), str)
        has_model = isinstance(request.get("model"), str)
        if has_source == has_model:
            return "give exactly one of 'source' (MLIR text) and 'model' (a model name)"
        if has_model:
            name = request["model"]
            if name not in self.models() and not (
                    name.startswith("torchvision:") and name[12:].isidentifier()):
                return (f"unknown model {name!r}; known: {', '.join(self.models())} "
                        "and torchvision:ARCH")
        if "python" in request:
            return "the API takes program text or model names, not files"
        return None

    def target_text(self, name: str) -> str:
        if name not in self.targets:
            raise KeyError(name)
        if name not in self._target_text:
            from .worker import find_tool
            proc = subprocess.run([find_tool("pb-opt"), f"--print-target={name}"],
                                  capture_output=True, text=True, timeout=60)
            self._target_text[name] = proc.stdout or proc.stderr
        return self._target_text[name]

    def host_chip(self) -> str | None:
        """The chip cpu-host resolves to on this machine."""
        for line in self.target_text("cpu-host").splitlines():
            if "resolves on this machine to:" in line:
                return line.split(":", 1)[1].strip()
        return None

    # -- compiles -----------------------------------------------------------
    @staticmethod
    def key(request: dict) -> str:
        fields = {k: request.get(k) for k in ("source", "model", "python", "target", "measure")}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]

    def compile(self, request: dict) -> dict:
        """The result of `request` (from the cache, or a child process)."""
        request = dict(request)
        request.setdefault("target", "cpu-host")
        request.setdefault("measure", True)
        key = self.key(request)
        while True:
            with self._lock:
                if key in self._results:
                    self._results.move_to_end(key)
                    return self._results[key]
                event = self._inflight.get(key)
                if event is None:
                    event = self._inflight[key] = threading.Event()
                    break
            event.wait()  # the same program is being compiled: share it
        try:
            result = self._run_worker(request)
            result["id"] = key
            with self._lock:
                self._results[key] = result
                while len(self._results) > self.keep_results:
                    self._results.popitem(last=False)
            return result
        finally:
            with self._lock:
                self._inflight.pop(key, None)
            event.set()

    def _run_worker(self, request: dict) -> dict:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
        try:
            proc = subprocess.run(self.worker_command,
                                  input=json.dumps(request), capture_output=True,
                                  text=True, timeout=self.timeout_s, env=env)
        except subprocess.TimeoutExpired:
            return _failure(f"the compile took longer than {self.timeout_s:.0f} s "
                            "and was stopped (--timeout)")
        if proc.returncode != 0 or not proc.stdout.strip():
            how = (f"signal {-proc.returncode}" if proc.returncode < 0
                   else f"exit code {proc.returncode}")
            return _failure(f"the compiler crashed ({how}); the server lives on. "
                            f"Its last output:\n{proc.stderr[-4000:]}")
        try:
            return json.loads(proc.stdout)
        except json.JSONDecodeError:
            return _failure("the compile process wrote no valid result:\n" +
                            proc.stderr[-4000:])

    def result(self, key: str) -> dict | None:
        with self._lock:
            return self._results.get(key)


def _failure(message: str) -> dict:
    return {"ok": False, "error": message, "stages": [], "decisions": [], "kernels": [],
            "notes": [], "diagnostics": []}


def summary(result: dict) -> dict:
    """A result without its stage texts (the page asks for those one by one)."""
    out = {k: v for k, v in result.items() if k != "stages"}
    out["stages"] = [{"name": s["name"], "label": s.get("label", s["name"]),
                      "size": len(s["text"]), "truncated": s.get("truncated", False)}
                     for s in result.get("stages", [])]
    return out


def make_handler(explorer: Explorer):
    class Handler(BaseHTTPRequestHandler):
        server_version = "polyblocks-explore"

        def log_message(self, fmt, *args):  # quiet: errors go to the page
            pass

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value) -> None:
            self._send(status, json.dumps(value).encode(), "application/json")

        def do_GET(self):
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path in ("/", "/index.html"):
                return self._static("index.html")
            if url.path.startswith("/static/"):
                return self._static(url.path[len("/static/"):])
            if url.path == "/api/targets":
                return self._json(200, {"targets": explorer.targets,
                                        "host": explorer.host_chip()})
            if url.path == "/api/models":
                return self._json(200, {"models": explorer.models(),
                                        "also": "torchvision:ARCH"})
            if url.path == "/api/target":
                try:
                    return self._json(200, {"name": query.get("name"),
                                            "text": explorer.target_text(query.get("name", ""))})
                except KeyError:
                    return self._json(404, {"error": f"unknown target {query.get('name')!r}"})
            if url.path == "/api/initial":
                # The program of the command line: its result, once compiled.
                if not explorer.initial:
                    return self._json(200, {})
                request = {k: v for k, v in explorer.initial.items()
                           if k in ("model", "target")}
                return self._json(200, {"request": request,
                                        "result": summary(explorer.compile(explorer.initial))})
            if url.path == "/api/stage":
                result = explorer.result(query.get("id", ""))
                if result is None:
                    return self._json(404, {"error": "no such result (compile again)"})
                for stage in result.get("stages", []):
                    if stage["name"] == query.get("name"):
                        return self._json(200, stage)
                return self._json(404, {"error": f"no stage {query.get('name')!r}"})
            return self._json(404, {"error": f"no such page: {url.path}"})

        def do_POST(self):
            url = urlparse(self.path)
            if url.path != "/api/compile":
                return self._json(404, {"error": f"no such endpoint: {url.path}"})
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                return self._json(411, {"error": "Content-Length is required"})
            if length > explorer.max_request_bytes:
                # Read what the client sends (up to a bound) before refusing:
                # a reply while it still writes resets its connection, and it
                # sees a broken pipe instead of the 413.
                remaining = min(length, 8 * explorer.max_request_bytes)
                while remaining > 0:
                    chunk = self.rfile.read(min(remaining, 1 << 16))
                    if not chunk:
                        break
                    remaining -= len(chunk)
                self.close_connection = True
                return self._json(413, {"error": f"the request is {length} bytes; the limit "
                                                 f"is {explorer.max_request_bytes}"})
            try:
                request = json.loads(self.rfile.read(length) or b"null")
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                return self._json(400, {"error": f"the request is not JSON: {e}"})
            why = explorer.check_request(request)
            if why:
                return self._json(400, {"error": why})
            return self._json(200, summary(explorer.compile(request)))

        def _static(self, name: str):
            path = (STATIC / name).resolve()
            if path.parent != STATIC.resolve() or not path.is_file():
                return self._json(404, {"error": "no such file"})
            self._send(200, path.read_bytes(),
                       _CONTENT_TYPES.get(path.suffix, "application/octet-stream"))

    return Handler


def serve(explorer: Explorer, host: str = "127.0.0.1", port: int = 8765) -> ThreadingHTTPServer:
    """A server bound to host:port (port 0: any free one), not yet serving."""
    server = ThreadingHTTPServer((host, port), make_handler(explorer))
    server.daemon_threads = True
    return server
