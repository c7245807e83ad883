"""An in-process fake of the master's /api/v1 endpoints the harness calls; it records every
request so tests can assert on exact paths, headers and JSON bodies."""

import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple


class Request:
    def __init__(self, method: str, path: str, query: Dict[str, List[str]], headers: Dict[str, str],
                 body: Any) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return f"Request({self.method} {self.path} {self.body!r})"


Handler = Callable[[Request], Tuple[int, Any]]


class FakeMaster:
    def __init__(self) -> None:
        self.requests: List[Request] = []
        self.lock = threading.Lock()
        self.preempt = False
        self.preempt_changed = threading.Event()
        self.best_validation: Optional[float] = None
        self.checkpoints: Dict[str, Dict[str, Any]] = {}
        self.routes: List[Tuple[str, "re.Pattern[str]", Handler]] = []
        self.fail_next: List[Tuple[str, int, Any]] = []  # (path regex, status, body)
        self._install_defaults()
        fake = self

        class _H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parsed = urllib.parse.urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw  # not JSON (a multipart upload): the bytes as sent
                req = Request(self.command, parsed.path, urllib.parse.parse_qs(parsed.query),
                              {k.lower(): v for k, v in self.headers.items()}, body)
                status, out = fake.dispatch(req)
                data = b"" if out is None else json.dumps(out).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client (e.g. a finished task's long-poll) went away

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        """Add (or override: later routes win) a handler."""
        self.routes.insert(0, (method, re.compile("^" + pattern + "$"), handler))

    def set_preempt(self, value: bool) -> None:
        with self.lock:
            self.preempt = value
        self.preempt_changed.set()

    def dispatch(self, req: Request) -> Tuple[int, Any]:
        if not req.path.endswith("/signals/preemption"):
            with self.lock:
                self.requests.append(req)
        with self.lock:
            for i, (pat, status, body) in enumerate(self.fail_next):
                if re.search(pat, req.path):
                    del self.fail_next[i]
                    return status, body
        for method, pattern, handler in self.routes:
            if method == req.method and pattern.match(req.path):
                return handler(req)
        return 404, {"error": {"code": "not_found", "message": f"no route {req.method} {req.path}"}}

    def calls(self, method: str, pattern: str) -> List[Request]:
        rx = re.compile("^" + pattern + "$")
        with self.lock:
            return [r for r in self.requests if r.method == method and rx.match(r.path)]

    def _install_defaults(self) -> None:
        ok: Handler = lambda req: (200, {})
        self.route("POST", r"/api/v1/trials/\d+/metrics", ok)
        self.route("POST", r"/api/v1/trials/\d+/progress", ok)
        self.route("POST", r"/api/v1/trials/\d+/early_exit", ok)
        self.route("POST", r"/api/v1/trials/\d+/runner/metadata", ok)
        self.route("POST", r"/api/v1/allocations/[^/]+/signals/ack_preemption", ok)
        self.route("POST", r"/api/v1/runs/start", lambda req: (200, {"storageId": 7}))

        def report_ckpt(req: Request) -> Tuple[int, Any]:
            self.checkpoints[req.body["uuid"]] = req.body
            return 200, {}

        self.route("POST", r"/api/v1/checkpoints", report_ckpt)
        self.route("PATCH", r"/api/v1/checkpoints", ok)

        def get_ckpt(req: Request) -> Tuple[int, Any]:
            uuid = req.path.rsplit("/", 1)[1]
            c = self.checkpoints.get(uuid)
            if c is None:
                return 404, {"error": {"code": "not_found", "message": "checkpoint not found"}}
            return 200, {"checkpoint": {"uuid": uuid, "metadata": c["metadata"]}}

        self.route("GET", r"/api/v1/checkpoints/[^/]+", get_ckpt)

        def best(req: Request) -> Tuple[int, Any]:
            if self.best_validation is None:
                return 404, {"error": {"code": "not_found", "message": "no validations yet"}}
            return 200, {"metric": self.best_validation}

        self.route("GET", r"/api/v1/experiments/\d+/searcher/best_searcher_validation_metric", best)

        def preemption(req: Request) -> Tuple[int, Any]:
            timeout = int((req.query.get("timeout_seconds") or ["0"])[0])
            with self.lock:
                self.requests.append(req)
                value = self.preempt
            if not value and timeout > 0:
                # Hold the long-poll briefly (not the full timeout, to keep tests fast).
                self.preempt_changed.wait(0.2)
                with self.lock:
                    value = self.preempt
            return 200, {"preempt": value}

        self.route("GET", r"/api/v1/allocations/[^/]+/signals/preemption", preemption)
