"""Checkpoint storage in Google Cloud Storage: google-cloud-storage when the task's Python has
it, else GCS's JSON API spoken directly over http.client (no third-party package).

Keys as Determined's ``type: gcs``: ``bucket``, ``prefix``. ``STORAGE_EMULATOR_HOST`` points both
at an emulator, as it does Google's libraries. Credentials: see ``_gcs_auth``.

With the JSON API, a file of at least ``MULTIPART_THRESHOLD`` goes up through a resumable upload
session, one ``CHUNK_SIZE`` request at a time streamed from disk; a failed one is sent again and the
session's answer says how much it holds, so the upload goes on from there. Downloads stream to
disk and resume with a ``Range`` request after a broken connection.
"""

import http.client
import json
import logging
import os
import random
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterable, List, Optional, Tuple

from determined.core import _cloud, _gcs_auth

logger = logging.getLogger("determined.core")

ATTEMPTS = 8
#: The size of one request of a resumable upload (a multiple of 256 KiB, as GCS requires); it
#: streams from the file, so it costs no memory. A failed request is sent again whole.
CHUNK_SIZE = 64 * 1024 * 1024
_RETRY_STATUS = (408, 429, 500, 502, 503, 504)


def build(bucket: str, prefix: Optional[str] = None, temp_dir: Optional[str] = None,
          **_: Any) -> _cloud.CloudStorageManager:
    """The GCS storage manager for the bucket: google-cloud-storage's when it imports, else the
    JSON API's."""
    try:
        import google.cloud.storage  # noqa: F401
    except ImportError:
        return GCSStorageManager(bucket, prefix, temp_dir)
    from determined.core import _gcs_lib

    return _gcs_lib.GCSLibraryStorageManager(bucket, prefix, temp_dir)


class _HTTPError(Exception):
    def __init__(self, status: int, body: bytes, what: str) -> None:
        self.status = status
        self.reason = ""
        self.message = body.decode(errors="replace")[:500]
        try:
            err = json.loads(body).get("error") or {}
            self.message = str(err.get("message") or self.message)
            reasons = [e.get("reason") for e in err.get("errors") or [] if e.get("reason")]
            self.reason = str(reasons[0]) if reasons else ""
        except (ValueError, AttributeError):
            pass
        super().__init__(f"{what}: HTTP {status}: {self.message}")


class GCSStorageManager(_cloud.CloudStorageManager):
    """Checkpoints in a GCS bucket through the JSON API, as ``<prefix>/<storage_id>/<path>``."""

    kind = "gcs"

    def __init__(self, bucket: str, prefix: Optional[str] = None,
                 temp_dir: Optional[str] = None) -> None:
        super().__init__(bucket, prefix, temp_dir)
        emulator = _gcs_auth.emulator_endpoint()
        self._endpoint = emulator or "https://storage.googleapis.com"
        self._credentials: Optional[_gcs_auth.Credentials] = None
        self._need_credentials = emulator is None
        self._local = threading.local()
        self._opened: List[http.client.HTTPConnection] = []
        self._opened_lock = threading.Lock()
        u = urllib.parse.urlsplit(self._endpoint)
        self._scheme, self._host = u.scheme, u.netloc
        self._root = u.path.rstrip("/")

    # --- HTTP ---------------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = cls(self._host, timeout=300, blocksize=1 << 20)
            self._local.conn = conn
            with self._opened_lock:
                self._opened.append(conn)
        return conn

    def __del__(self) -> None:
        if hasattr(self, "_opened"):
            self._release()

    def _release(self) -> None:
        # A closed HTTPConnection opens again on its next request.
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local.conn = None

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def _headers(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        headers = dict(extra or {})
        if self._need_credentials:
            if self._credentials is None:
                try:
                    self._credentials = _gcs_auth.find()
                except _gcs_auth.CredentialsError as e:
                    raise self._error(str(e)) from None
            try:
                headers["Authorization"] = "Bearer " + self._credentials.token()
            except _gcs_auth.CredentialsError as e:
                raise self._error(f"{e} (credentials from {self._credentials.source})") from None
        return headers

    def _send(self, method: str, url: str, headers: Dict[str, str],
              body: Any = None) -> Tuple[int, Dict[str, str], http.client.HTTPResponse]:
        """One request on this thread's connection; the response is returned unread."""
        conn = self._connection()
        try:
            conn.request(method, self._root + url, body=body, headers=headers)
            r = conn.getresponse()
        except (OSError, http.client.HTTPException):
            self._drop_connection()
            raise
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r

    def _request(self, method: str, url: str, what: str, body: bytes = b"",
                 headers: Optional[Dict[str, str]] = None,
                 ok: Iterable[int] = (200, 201, 204)) -> Tuple[int, Dict[str, str], bytes]:
        """A small request, retried on a broken connection and on 408/429/5xx."""
        for attempt in range(ATTEMPTS):
            try:
                status, h, r = self._send(method, url, self._headers(headers), body)
                data = r.read()
            except (OSError, http.client.HTTPException) as e:
                self._drop_connection()
                if attempt == ATTEMPTS - 1:
                    raise self._error(f"{what}: cannot reach {self._endpoint}: {e}") from None
                _backoff(attempt)
                continue
            if status in ok:
                return status, h, data
            if status in _RETRY_STATUS and attempt < ATTEMPTS - 1:
                _backoff(attempt)
                continue
            raise _HTTPError(status, data, what)
        raise AssertionError("unreachable")

    def _object_url(self, key: str) -> str:
        return (f"/storage/v1/b/{_q(self.bucket)}/o/{_q(key)}")

    # --- primitives ---------------------------------------------------------------------------

    def _list(self, prefix: str) -> Dict[str, int]:
        out: Dict[str, int] = {}
        token = ""
        while True:
            query = {"prefix": prefix, "maxResults": "1000"}
            if token:
                query["pageToken"] = token
            _, _, data = self._request(
                "GET", f"/storage/v1/b/{_q(self.bucket)}/o?" + urllib.parse.urlencode(query),
                f"list {prefix}")
            page = json.loads(data or b"{}")
            for item in page.get("items") or []:
                out[item["name"]] = int(item.get("size") or 0)
            token = page.get("nextPageToken") or ""
            if not token:
                return out

    def _put_empty(self, key: str) -> None:
        self._request("POST", self._upload_url(key, "media"), f"upload {key}", b"",
                      {"Content-Type": "application/octet-stream"})

    def _upload_url(self, key: str, kind: str) -> str:
        q = urllib.parse.urlencode({"uploadType": kind, "name": key})
        return f"/upload/storage/v1/b/{_q(self.bucket)}/o?{q}"

    def _put_file(self, path: str, key: str, size: int) -> None:
        if size < _cloud.MULTIPART_THRESHOLD:
            self._put_small(path, key, size)
        else:
            self._put_resumable(path, key, size)

    def _put_small(self, path: str, key: str, size: int) -> None:
        what = f"upload {key}"
        for attempt in range(ATTEMPTS):
            try:
                with open(path, "rb") as f:
                    status, _, r = self._send(
                        "POST", self._upload_url(key, "media"),
                        self._headers({"Content-Type": "application/octet-stream",
                                       "Content-Length": str(size)}), f)
                    data = r.read()
            except (OSError, http.client.HTTPException) as e:
                self._drop_connection()
                if attempt == ATTEMPTS - 1:
                    raise self._error(f"{what}: cannot reach {self._endpoint}: {e}") from None
                _backoff(attempt)
                continue
            if status in (200, 201):
                return
            if status in _RETRY_STATUS and attempt < ATTEMPTS - 1:
                _backoff(attempt)
                continue
            raise _HTTPError(status, data, what)

    def _put_resumable(self, path: str, key: str, size: int) -> None:
        what = f"upload {key}"
        _, h, _ = self._request(
            "POST", self._upload_url(key, "resumable"), what, b"{}",
            {"Content-Type": "application/json; charset=UTF-8",
             "X-Upload-Content-Type": "application/octet-stream",
             "X-Upload-Content-Length": str(size)})
        session = h.get("location")
        if not session:
            raise self._error(f"{what}: the server opened no resumable upload session")
        u = urllib.parse.urlsplit(session)
        session_url = u.path[len(self._root):] + ("?" + u.query if u.query else "")
        offset, failures = 0, 0
        with open(path, "rb") as f:
            while True:
                f.seek(offset)
                length = min(CHUNK_SIZE, size - offset)
                chunk = _Slice(f, length)
                rng = f"bytes {offset}-{offset + length - 1}/{size}"
                try:
                    status, h, r = self._send("PUT", session_url, self._headers(
                        {"Content-Range": rng, "Content-Length": str(length)}), chunk)
                    data = r.read()
                except (OSError, http.client.HTTPException) as e:
                    status, data = 0, str(e).encode()
                if status in (200, 201):
                    stored = _stored_size(data)
                    if stored is not None and stored != size:
                        raise self._error(f"{what}: the upload session stored {stored} of "
                                          f"{size} bytes")
                    return
                if status == 308:
                    # Each chunk's answer says how much the session holds: go on from there.
                    offset = _committed(h.get("range"))
                    failures = 0
                    continue
                if status != 0 and status not in _RETRY_STATUS:
                    raise _HTTPError(status, data, what)
                failures += 1
                if failures >= ATTEMPTS:
                    raise self._error(f"{what}: the upload session failed {failures} times in a "
                                      f"row: {data.decode(errors='replace')[:300]}")
                # The chunk is sent again from its first byte: GCS ignores bytes it already
                # holds and answers with what it holds. (Asking first, with "bytes */size",
                # is what GCS documents too, but fake-gcs-server ends the upload on that.)
                logger.warning(f"{what}: the chunk at byte {offset} failed "
                               f"({status or data.decode(errors='replace')}); sending it again")
                _backoff(failures - 1)

    def _get_file(self, key: str, path: str, size: int) -> None:
        what = f"download {key}"
        written, failures = 0, 0
        with open(path, "wb") as f:
            while True:
                headers = {"Range": f"bytes={written}-"} if written else {}
                try:
                    status, _, r = self._send(
                        "GET", self._object_url(key) + "?alt=media", self._headers(headers))
                    if status not in (200, 206):
                        raise _HTTPError(status, r.read(), what)
                    if status == 200 and written:
                        f.seek(0)
                        f.truncate()
                        written = 0
                    while True:
                        block = r.read(1 << 20)
                        if not block:
                            break
                        f.write(block)
                        written += len(block)
                except _HTTPError as e:
                    if e.status not in _RETRY_STATUS or failures >= ATTEMPTS - 1:
                        raise
                    failures += 1
                    _backoff(failures - 1)
                    continue
                except (OSError, http.client.HTTPException) as e:
                    self._drop_connection()
                    failures += 1
                    if failures >= ATTEMPTS:
                        raise self._error(f"{what}: {e}") from None
                    _backoff(failures - 1)
                    continue
                if written >= size:
                    return
                self._drop_connection()  # a short body: the connection broke; resume

    def _delete(self, keys: List[str]) -> None:
        import concurrent.futures

        def one(key: str) -> None:
            self._request("DELETE", self._object_url(key), f"delete {key}", ok=(200, 204, 404))

        with concurrent.futures.ThreadPoolExecutor(_cloud.CONCURRENCY) as pool:
            for fut in [pool.submit(one, k) for k in keys]:
                fut.result()

    def _translate(self, e: BaseException, what: str) -> Optional[_cloud.StorageError]:
        if not isinstance(e, _HTTPError):
            return None
        if e.status == 404 and not what.startswith("download"):
            # Only a bucket is missing for a list, an upload or the access check (a missing
            # object is no error to a delete).
            return self._error(f"{what}: the bucket does not exist (HTTP 404: {e.message})")
        if e.status == 401:
            source = self._credentials.source if self._credentials else "no credentials"
            return self._error(f"{what}: the credentials were refused ({source}; HTTP 401: "
                               f"{e.message})")
        if e.status == 403:
            return self._error(f"{what}: access denied: the credentials may not use this bucket "
                               f"(HTTP 403: {e.message})")
        return self._error(f"{what}: HTTP {e.status}: {e.reason or e.message}")


class _Slice:
    """``length`` bytes of a file from where it stands, read as http.client sends a body."""

    def __init__(self, f: Any, length: int) -> None:
        self._f = f
        self._left = length

    def read(self, n: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        n = self._left if n is None or n < 0 else min(n, self._left)
        data = self._f.read(n)
        self._left -= len(data)
        return data


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _stored_size(body: bytes) -> Optional[int]:
    """The size of the object a finished upload's answer describes, if it says."""
    try:
        return int(json.loads(body)["size"])
    except (ValueError, KeyError, TypeError):
        return None


def _committed(rng: Optional[str]) -> int:
    """The next byte a resumable session wants, from its ``Range: bytes=0-N`` header."""
    if not rng or "-" not in rng:
        return 0
    return int(rng.rsplit("-", 1)[1]) + 1


def _backoff(attempt: int) -> None:
    time.sleep(min(30.0, 0.5 * (2 ** attempt)) * (0.5 + random.random() / 2))
