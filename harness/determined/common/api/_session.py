"""Sessions of a signed-in user (or of nobody, for logging in), on top of the harness's
urllib client ``determined._session``: same retries, same errors, a bearer token instead of (or
beside) a task's allocation token, and answers that can be streamed (a checkpoint's tar)."""

import http.client
import os
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, List, Optional, Tuple

from determined import _session
from determined.common.api import errors

#: Where the SDK looks when neither the argument nor DET_MASTER names a master (det's default).
DEFAULT_MASTER = "http://localhost:8080"

#: An SDK call retries a master that is down or restarting this many times (about 12 s), not for
#: the minutes a task waits: a person is looking at the answer.
SDK_MAX_RETRIES = 5


def default_master() -> str:
    """The master from DET_MASTER, else DET_MASTER_ADDR, else http://localhost:8080."""
    return os.environ.get("DET_MASTER") or os.environ.get("DET_MASTER_ADDR") or DEFAULT_MASTER


def canonicalize_master_url(master: str) -> str:
    """The master's address as ``det`` keys its stored logins: a bare host or host:port gets
    http:// in front, and trailing slashes go."""
    master = master.strip()
    if not master:
        raise ValueError("the master address is empty")
    if "://" not in master:
        master = "http://" + master
    parsed = urllib.parse.urlsplit(master)
    if parsed.scheme not in ("http", "https"):
        raise ValueError(f"master address {master!r}: the scheme must be http or https")
    if not parsed.netloc:
        raise ValueError(f"master address {master!r}: no host")
    return master.rstrip("/")


def _tls(master: str, cert_path: Optional[str], cert_name: Optional[str],
         noverify: bool) -> Optional[ssl.SSLContext]:
    if not master.startswith("https://"):
        return None
    if noverify:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    if cert_path:
        ctx = ssl.create_default_context(cafile=cert_path)
        if cert_name:
            ctx.check_hostname = False  # the certificate names another host; the chain is checked
        return ctx
    return _session._ssl_context(master)


class UnauthSession(_session.Session):
    """A session without a user: for logging in and for what anyone may read."""

    def __init__(
        self,
        master: str,
        cert: Optional[ssl.SSLContext] = None,
        max_retries: Optional[int] = SDK_MAX_RETRIES,
    ) -> None:
        super().__init__(canonicalize_master_url(master), None, max_retries=max_retries)
        self.master = self.master_url
        if cert is not None:
            self._ssl = cert

    def _headers(self) -> Dict[str, str]:
        return {"Accept": "application/json", "User-Agent": "determined-sdk (resolute)"}

    def open(self, method: str, path: str, params: Optional[Dict[str, Any]] = None,
             timeout: Optional[float] = None) -> http.client.HTTPResponse:
        """Send a request and return the open answer, to be read as a stream (and closed) by the
        caller. A master that is down is retried as other calls are; an error status raises."""
        if not path.startswith("/"):
            path = "/" + path
        url = self.master_url + path
        if params:
            url += "?" + urllib.parse.urlencode(
                [(k, str(v)) for k, vs in params.items() for v in (vs if isinstance(vs, list) else [vs])]
            )
        retries = self.max_retries if self.max_retries is not None else SDK_MAX_RETRIES
        attempt = 0
        while True:
            req = urllib.request.Request(url, headers=self._headers(), method=method)
            try:
                resp: http.client.HTTPResponse = urllib.request.urlopen(
                    req, timeout=timeout or self.timeout, context=self._ssl
                )
                return resp
            except urllib.error.HTTPError as e:
                raw = e.read() if e.fp is not None else b""
                if e.code not in _session.RETRY_STATUSES or attempt >= retries:
                    raise _session._exception_for(method, path, e.code, raw) from None
            except (urllib.error.URLError, ConnectionError, socket.timeout, OSError) as e:
                if attempt >= retries:
                    raise errors.MasterNotFoundException(
                        f"{method} {path}: cannot reach the master at {self.master_url}: {e}"
                    ) from e
            time.sleep(min(self.max_backoff, self.backoff * (2**attempt)))
            attempt += 1


    def post_form(self, path: str, fields: List[Tuple[str, str]],
                  files: List[Tuple[str, str, bytes]], timeout: float = 600) -> _session.Response:
        """POST multipart/form-data: fields as (name, value), files as (name, filename, data).
        Sent once, never retried: a retried create could make two experiments."""
        boundary = "determined-sdk-" + uuid.uuid4().hex
        parts: List[bytes] = []
        for name, value in fields:
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                + value.encode("utf-8") + b"\r\n"
            )
        for name, filename, data in files:
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
                + data + b"\r\n"
            )
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers = self._headers()
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        req = urllib.request.Request(self.master_url + path, data=body, headers=headers,
                                     method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self._ssl) as resp:
                return _session.Response(resp.status, resp.read())
        except urllib.error.HTTPError as e:
            raw = e.read() if e.fp is not None else b""
            raise _session._exception_for("POST", path, e.code, raw) from None
        except (urllib.error.URLError, ConnectionError, socket.timeout, OSError) as e:
            raise errors.MasterNotFoundException(
                f"POST {path}: cannot reach the master at {self.master_url}: {e}"
            ) from e


class Session(UnauthSession):
    """A signed-in user's session: every call carries ``Authorization: Bearer <token>``.

    Inside a task that has no user token the session may carry the task's allocation token
    instead (``allocation_token``): the master then answers only what that task may read.
    """

    def __init__(
        self,
        master: str,
        username: Optional[str],
        token: Optional[str],
        cert: Optional[ssl.SSLContext] = None,
        max_retries: Optional[int] = SDK_MAX_RETRIES,
        *,
        allocation_token: Optional[str] = None,
    ) -> None:
        super().__init__(master, cert, max_retries)
        self.username = username
        self.token = token
        self.allocation_token = allocation_token

    def _headers(self) -> Dict[str, str]:
        h = super()._headers()
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        if self.allocation_token:
            h["Grpc-Metadata-x-allocation-token"] = f"Bearer {self.allocation_token}"
        return h
