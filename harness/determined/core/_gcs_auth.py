"""Access tokens for Google Cloud Storage's JSON API without Google's libraries.

Where credentials come from, in the order Google's own libraries look (Application Default
Credentials):

1. ``GOOGLE_APPLICATION_CREDENTIALS``: a service account's JSON key (a JWT signed with RS256 and
   exchanged at its ``token_uri``; signing needs the ``cryptography`` or ``rsa`` module) or an
   ``authorized_user`` file (a refresh token);
2. gcloud's ``application_default_credentials.json`` (``gcloud auth application-default login``);
3. the metadata server of a GCE VM or a GKE pod with workload identity (``GCE_METADATA_HOST``
   overrides its address).

The emulator (``STORAGE_EMULATOR_HOST``) takes no credentials, as with google-cloud-storage.
"""

import base64
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Optional, Tuple

SCOPE = "https://www.googleapis.com/auth/devstorage.full_control"
DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token"

WHERE = (
    "GOOGLE_APPLICATION_CREDENTIALS (a service account key, which needs the Python module "
    "'cryptography' or 'rsa' to sign, or an authorized_user file), gcloud's "
    "application_default_credentials.json, or the GCE/GKE metadata server"
)


class CredentialsError(RuntimeError):
    """No usable Google credentials, or the token endpoint refused them."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _der_read(data: bytes, at: int) -> Tuple[int, int, int]:
    """(tag, start of contents, end of contents) of the DER element at ``at``."""
    tag, n = data[at], data[at + 1]
    at += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(data[at : at + k], "big")
        at += k
    return tag, at, at + n


def _pkcs1_from_pkcs8(der: bytes) -> bytes:
    """The RSAPrivateKey inside a PKCS#8 PrivateKeyInfo (what service account keys hold)."""
    _, start, end = _der_read(der, 0)  # PrivateKeyInfo SEQUENCE
    _, s, e = _der_read(der, start)  # version INTEGER
    _, s, e = _der_read(der, e)  # AlgorithmIdentifier SEQUENCE
    tag, s, e = _der_read(der, e)  # privateKey OCTET STRING
    if tag != 0x04:
        raise CredentialsError("the service account's private_key is not a PKCS#8 RSA key")
    return der[s:e]


def rs256_signer(pem: str) -> Callable[[bytes], bytes]:
    """A function signing bytes with RSASSA-PKCS1-v1_5 SHA-256 under the PEM key, with whichever
    of ``cryptography`` and ``rsa`` is importable."""
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding

        key: Any = serialization.load_pem_private_key(pem.encode(), password=None)
        return lambda data: key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    except ImportError:
        pass
    try:
        import rsa  # type: ignore
    except ImportError:
        raise CredentialsError(
            "a service account key needs the Python module 'cryptography' or 'rsa' to sign its "
            "token request, and neither is installed; install one (Debian: python3-cryptography), "
            "or use gcloud's application default credentials or the metadata server"
        ) from None
    body = "".join(l for l in pem.strip().splitlines() if not l.startswith("-----"))
    der = base64.b64decode(body)
    if "BEGIN PRIVATE KEY" in pem:
        der = _pkcs1_from_pkcs8(der)
    rkey = rsa.PrivateKey.load_pkcs1(der, format="DER")
    return lambda data: rsa.sign(data, rkey, "SHA-256")


def _post_form(url: str, form: Dict[str, str]) -> Dict[str, Any]:
    data = urllib.parse.urlencode(form).encode()
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read().decode() or "{}")
    except urllib.error.HTTPError as e:
        detail = e.read().decode(errors="replace")[:500]
        raise CredentialsError(f"the token endpoint {url} refused the credentials: HTTP {e.code} "
                               f"{detail}") from None
    except OSError as e:
        raise CredentialsError(f"cannot reach the token endpoint {url}: {e}") from None


class Credentials:
    """A cached access token, refreshed a minute before it expires."""

    def __init__(self, fetch: Callable[[], Tuple[str, float]], source: str) -> None:
        self._fetch = fetch
        self.source = source
        self._token = ""
        self._expires = 0.0
        self._lock = threading.Lock()

    def token(self) -> str:
        with self._lock:
            if not self._token or time.time() > self._expires - 60:
                self._token, lifetime = self._fetch()
                self._expires = time.time() + lifetime
            return self._token


def _service_account(info: Dict[str, Any], source: str) -> Credentials:
    sign = rs256_signer(str(info.get("private_key") or ""))
    token_uri = str(info.get("token_uri") or DEFAULT_TOKEN_URI)

    def fetch() -> Tuple[str, float]:
        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT"}
        if info.get("private_key_id"):
            header["kid"] = info["private_key_id"]
        claims = {"iss": info.get("client_email"), "scope": SCOPE, "aud": token_uri,
                  "iat": now, "exp": now + 3600}
        signing_input = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
        jwt = signing_input + "." + _b64(sign(signing_input.encode()))
        r = _post_form(token_uri, {
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": jwt})
        return str(r["access_token"]), float(r.get("expires_in") or 3600)

    return Credentials(fetch, source)


def _authorized_user(info: Dict[str, Any], source: str) -> Credentials:
    token_uri = str(info.get("token_uri") or DEFAULT_TOKEN_URI)

    def fetch() -> Tuple[str, float]:
        r = _post_form(token_uri, {
            "grant_type": "refresh_token", "refresh_token": str(info.get("refresh_token")),
            "client_id": str(info.get("client_id")), "client_secret": str(info.get("client_secret")),
        })
        return str(r["access_token"]), float(r.get("expires_in") or 3600)

    return Credentials(fetch, source)


def _metadata_host() -> str:
    return os.environ.get("GCE_METADATA_HOST") or "metadata.google.internal"


def _metadata(host: str) -> Credentials:
    url = f"http://{host}/computeMetadata/v1/instance/service-accounts/default/token"

    def fetch() -> Tuple[str, float]:
        req = urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                body = json.loads(r.read().decode())
        except OSError as e:
            raise CredentialsError(f"the metadata server at {host} gave no token: {e}") from None
        return str(body["access_token"]), float(body.get("expires_in") or 300)

    return Credentials(fetch, f"the metadata server at {host}")


def _from_file(path: str) -> Credentials:
    try:
        with open(path) as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        raise CredentialsError(f"cannot read Google credentials from {path}: {e}") from None
    kind = info.get("type")
    if kind == "service_account":
        return _service_account(info, f"the service account key {path}")
    if kind == "authorized_user":
        return _authorized_user(info, f"the authorized_user credentials {path}")
    raise CredentialsError(f"Google credentials {path} are of type {kind!r}; this harness reads "
                           "service_account and authorized_user files")


def _metadata_reachable(host: str) -> bool:
    req = urllib.request.Request(f"http://{host}/computeMetadata/v1/",
                                 headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(req, timeout=3) as r:
            return r.headers.get("Metadata-Flavor") == "Google"
    except OSError:
        return False


def find() -> Credentials:
    """Application Default Credentials, or a CredentialsError saying which sources work."""
    path = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if path:
        return _from_file(path)
    config = os.environ.get("CLOUDSDK_CONFIG") or os.path.join(
        os.path.expanduser("~"), ".config", "gcloud")
    adc = os.path.join(config, "application_default_credentials.json")
    if os.path.exists(adc):
        return _from_file(adc)
    host = _metadata_host()
    if _metadata_reachable(host):
        return _metadata(host)
    raise CredentialsError(f"no Google credentials found; this harness reads {WHERE}")


def emulator_endpoint() -> Optional[str]:
    """``STORAGE_EMULATOR_HOST`` as a URL, or None."""
    host = os.environ.get("STORAGE_EMULATOR_HOST")
    if not host:
        return None
    return host if "://" in host else "http://" + host
