"""A small JSON-over-HTTP client for the master's /api/v1, built on urllib.

Tasks authenticate with their allocation token, sent as
``Grpc-Metadata-x-allocation-token: Bearer <DET_SESSION_TOKEN>``.
"""

import json
import logging
import math
import os
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional

from determined.common.api import errors

logger = logging.getLogger("determined.common.api")

# Statuses that mean "the master (or a proxy in front of it) is briefly unavailable".
RETRY_STATUSES = (502, 503, 504)


# The exceptions are Determined's (determined.common.api.errors); these names stay for the
# harness's own code. NotFoundException is an APIException; ForbiddenException and
# UnauthenticatedException are not, as in Determined.
APIException = errors.APIException
NotFoundException = errors.NotFoundException
UnauthenticatedException = errors.UnauthenticatedException
ForbiddenException = errors.ForbiddenException
MasterNotFoundException = errors.MasterNotFoundException


def _exception_for(method: str, path: str, status: int, raw: bytes) -> errors.BadRequestException:
    body: Any = None
    message = ""
    try:
        body = json.loads(raw.decode("utf-8")) if raw else None
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            message = str(err.get("message") or err.get("error") or "")
        elif isinstance(err, str):
            message = err
        if not message and isinstance(body.get("message"), str):
            message = body["message"]
    if not message:
        message = raw.decode("utf-8", "replace").strip()[:500] or "(empty response)"
    return errors.for_status(method, path, status, message, body)


def _sanitize(obj: Any) -> Any:
    """Make a value JSON-safe: non-finite floats become strings, numpy/torch scalars and arrays
    become plain Python values."""
    if isinstance(obj, float):
        if math.isnan(obj):
            return "NaN"
        if math.isinf(obj):
            return "Infinity" if obj > 0 else "-Infinity"
        return obj
    if obj is None or isinstance(obj, (str, bool, int)):
        return obj
    if isinstance(obj, dict):
        return {str(k): _sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_sanitize(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", 0) == 0:
        try:
            return _sanitize(obj.item())
        except Exception:
            pass
    if hasattr(obj, "tolist") and callable(obj.tolist):
        return _sanitize(obj.tolist())
    if hasattr(obj, "isoformat") and callable(obj.isoformat):
        return obj.isoformat()
    if hasattr(obj, "__fspath__"):
        return os.fspath(obj)
    return str(obj)


def json_encode(obj: Any) -> str:
    return json.dumps(_sanitize(obj), allow_nan=False)


class Response:
    def __init__(self, status: int, raw: bytes) -> None:
        self.status_code = status
        self.content = raw

    def json(self) -> Any:
        if not self.content:
            return None
        return json.loads(self.content.decode("utf-8"))


def _ssl_context(master_url: str) -> Optional[ssl.SSLContext]:
    if not master_url.startswith("https://"):
        return None
    cert_file = os.environ.get("DET_MASTER_CERT_FILE")
    if cert_file == "noverify":
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    if cert_file and os.path.exists(cert_file):
        ctx = ssl.create_default_context(cafile=cert_file)
        if os.environ.get("DET_MASTER_CERT_NAME"):
            # The certificate names a host other than the one we dial; we still verify the chain.
            ctx.check_hostname = False
        return ctx
    return ssl.create_default_context()


class Session:
    """Sends JSON requests to the master with the task's allocation token.

    Connection errors and 502/503/504 answers are retried with exponential backoff (from
    ``backoff`` up to ``max_backoff`` seconds between tries) for ``retry_seconds`` (default
    ``DET_MASTER_RETRY_SECONDS`` or 300), and at most ``max_retries`` times when that is set: a
    master restarting, or restarting its database (503 meanwhile), is waited for, so the task
    loses nothing. Any other error status raises an :class:`APIException` carrying the master's
    ``{"error": {"message"}}``.
    """

    def __init__(
        self,
        master_url: str,
        token: Optional[str],
        *,
        max_retries: Optional[int] = None,
        backoff: float = 0.5,
        max_backoff: float = 5.0,
        retry_seconds: Optional[float] = None,
        timeout: float = 60.0,
    ) -> None:
        if "://" not in master_url:
            master_url = "http://" + master_url
        self.master_url = master_url.rstrip("/")
        self.token = token
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        if retry_seconds is None:
            retry_seconds = float(os.environ.get("DET_MASTER_RETRY_SECONDS") or 300)
        self.retry_seconds = retry_seconds
        self.timeout = timeout
        self._ssl = _ssl_context(self.master_url)

    def _headers(self) -> Dict[str, str]:
        h = {"Accept": "application/json"}
        if self.token:
            h["Grpc-Metadata-x-allocation-token"] = f"Bearer {self.token}"
        return h

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
    ) -> Response:
        if not path.startswith("/"):
            path = "/" + path
        url = self.master_url + path
        if params:
            url += "?" + urllib.parse.urlencode(
                {k: [str(x) for x in v] if isinstance(v, (list, tuple)) else str(v)
                 for k, v in params.items()},
                doseq=True,
            )
        data = None
        headers = self._headers()
        if json_body is not None:
            data = json_encode(json_body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif method in ("POST", "PUT", "PATCH"):
            data = b"{}"
            headers["Content-Type"] = "application/json"
        retries = self.max_retries if max_retries is None else max_retries
        deadline = time.monotonic() + self.retry_seconds
        attempt = 0
        warned = False
        while True:
            delay = min(self.max_backoff, self.backoff * (2**attempt))
            # Another try only when it would start before the deadline.
            may_retry = (retries is None or attempt < retries) and time.monotonic() + delay < deadline
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(
                    req, timeout=timeout or self.timeout, context=self._ssl
                ) as resp:
                    if warned:
                        logger.info(f"{method} {path}: the master answers again")
                    return Response(resp.status, resp.read())
            except urllib.error.HTTPError as e:
                raw = e.read() if e.fp is not None else b""
                if e.code not in RETRY_STATUSES or not may_retry:
                    raise _exception_for(method, path, e.code, raw) from None
                why = f"HTTP {e.code}"
            except (urllib.error.URLError, ConnectionError, socket.timeout, OSError) as e:
                if not may_retry:
                    raise MasterNotFoundException(
                        f"{method} {path}: cannot reach the master at {self.master_url}: {e}"
                    ) from e
                why = str(e)
            if not warned:
                # Once per call: an outage of a minute is not a page of warnings.
                logger.warning(f"{method} {path}: {why}; retrying for up to {self.retry_seconds:g}s")
                warned = True
            attempt += 1
            time.sleep(delay)

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json: Any = None, **kwargs: Any) -> Response:
        return self.request("POST", path, json_body=json, **kwargs)

    def patch(self, path: str, json: Any = None, **kwargs: Any) -> Response:
        return self.request("PATCH", path, json_body=json, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Response:
        return self.request("DELETE", path, **kwargs)
