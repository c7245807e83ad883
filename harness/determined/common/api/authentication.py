"""Logins, shared with ``det``: both keep their sessions in ``auth.json`` under
``$XDG_CONFIG_HOME/resolute`` (else the platform's config directory, as ``det`` finds it), in the
layout of Determined's auth.json version 1::

    {"version": 1, "masters": {"http://host:8080": {"active_user": "admin",
                                                     "tokens": {"admin": "..."}}}}

So ``det user login`` then Python needs no password, and a login from Python serves ``det``.

The order a login is looked for in is Determined's (``login_with_cache``):

1. the user asked for, else ``DET_USER`` with ``DET_PASS``, else the active user of the store
   (the last ``det user login``), else ``determined`` with an empty password;
2. that user's stored token, if the master still takes it (one it refuses is forgotten);
3. inside a task, ``DET_USER_TOKEN`` for ``DET_USER`` (when no other user was asked for);
4. a login with the password given (or ``DET_PASS``, or typed at a terminal); its token is
   stored for the next time, without changing the active user.
"""

import getpass
import json
import os
import pathlib
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from determined.common.api import _session as api_session
from determined.common.api import errors

#: The user a fresh cluster has, with an empty password (Determined's default).
DEFAULT_DETERMINED_USER = "determined"
DEFAULT_DETERMINED_PASSWORD = ""


def config_dir() -> pathlib.Path:
    """Where ``det`` keeps its files: $XDG_CONFIG_HOME/resolute, else the platform's user
    config directory (~/.config on Linux) plus /resolute."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return pathlib.Path(xdg) / "resolute"
    home = pathlib.Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "resolute"
    if sys.platform.startswith("win"):
        return pathlib.Path(os.environ.get("APPDATA") or home) / "resolute"
    return home / ".config" / "resolute"


class TokenStore:
    """The stored sessions of one master, read from and written back to auth.json.

    Each change re-reads the file and replaces it atomically (a new file renamed over it, mode
    0600 in a 0700 directory), so a concurrent ``det`` loses nothing but a simultaneous write.
    """

    def __init__(self, master_address: str, path: Optional[pathlib.Path] = None) -> None:
        self.master_address = api_session.canonicalize_master_url(master_address)
        self.path = path or config_dir() / "auth.json"
        store = self._load()
        self._sub = store.get("masters", {}).get(self.master_address, {})

    def _load(self) -> Dict[str, Any]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {"version": 1, "masters": {}}
        except OSError as e:
            raise errors.CorruptTokenCacheException(f"{self.path}: {e}") from None
        try:
            store = json.loads(text)
        except ValueError:
            raise errors.CorruptTokenCacheException(str(self.path)) from None
        if not isinstance(store, dict) or store.get("version") != 1:
            raise errors.CorruptTokenCacheException(str(self.path))
        masters = store.get("masters")
        if masters is None:
            store["masters"] = {}
        elif not isinstance(masters, dict):
            raise errors.CorruptTokenCacheException(str(self.path))
        return store

    def get_active_user(self) -> Optional[str]:
        u = self._sub.get("active_user")
        return u if isinstance(u, str) and u else None

    def get_all_users(self) -> List[str]:
        return list((self._sub.get("tokens") or {}).keys())

    def get_token(self, user: str) -> Optional[str]:
        t = (self._sub.get("tokens") or {}).get(user)
        return t if isinstance(t, str) and t else None

    def set_token(self, username: str, token: str) -> None:
        def change(sub: Dict[str, Any]) -> None:
            sub.setdefault("tokens", {})[username] = token

        self._update(change)

    def set_active(self, username: str) -> None:
        def change(sub: Dict[str, Any]) -> None:
            if username not in (sub.get("tokens") or {}):
                raise errors.UnauthenticatedException()
            sub["active_user"] = username

        self._update(change)

    def clear_active(self) -> None:
        self._update(lambda sub: sub.pop("active_user", None))

    def drop_user(self, username: str) -> None:
        def change(sub: Dict[str, Any]) -> None:
            (sub.get("tokens") or {}).pop(username, None)
            if sub.get("active_user") == username:
                sub.pop("active_user", None)

        self._update(change)

    def _update(self, change: Any) -> None:
        store = self._load()
        masters = store["masters"]
        sub = masters.setdefault(self.master_address, {})
        if not isinstance(sub.get("tokens"), dict):
            sub["tokens"] = {}
        change(sub)
        if not sub["tokens"]:
            # As det does: a master without tokens leaves the file.
            masters.pop(self.master_address, None)
        self._sub = masters.get(self.master_address, {})
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="auth.json.", dir=str(self.path.parent))
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(store, f, indent=4)
                f.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def get_det_username_from_env() -> Optional[str]:
    return os.environ.get("DET_USER") or None


def get_det_user_token_from_env() -> Optional[str]:
    return os.environ.get("DET_USER_TOKEN") or None


def get_det_password_from_env() -> Optional[str]:
    return os.environ.get("DET_PASS")


def login(master_address: str, username: str, password: str,
          cert: Optional[Any] = None) -> api_session.Session:
    """Log in without reading or writing the token store; returns the new session.

    Raises InvalidCredentialsException when the master refuses the username or password."""
    unauth = api_session.UnauthSession(master_address, cert, max_retries=0)
    try:
        r = unauth.post("/api/v1/auth/login",
                        json={"username": username, "password": password, "isHashed": False})
    except (errors.UnauthenticatedException, errors.ForbiddenException) as e:
        raise errors.InvalidCredentialsException(
            method="POST", path="/api/v1/auth/login", status=e.status_code, body=e.body
        ) from None
    token = (r.json() or {}).get("token")
    if not isinstance(token, str) or not token:
        raise errors.BadResponseException("the master's login answer has no token")
    return api_session.Session(master_address, username, token, cert)


def default_load_user_password(
    requested_user: Optional[str], password: Optional[str], token_store: TokenStore
) -> Tuple[str, Optional[str], bool]:
    """The user and password to log in with, and whether they are the fallback (determined
    with an empty password) rather than anything asked for."""
    if requested_user:
        return requested_user, password, False
    env_user, env_pass = get_det_username_from_env(), get_det_password_from_env()
    if env_user is not None and env_pass is not None:
        return env_user, env_pass, False
    active = token_store.get_active_user()
    if active is not None:
        return active, password, False
    return DEFAULT_DETERMINED_USER, password or DEFAULT_DETERMINED_PASSWORD, True


def _token_is_valid(master_address: str, token: str, cert: Optional[Any]) -> bool:
    sess = api_session.Session(master_address, None, token, cert)
    try:
        sess.get("/api/v1/me")
    except errors.UnauthenticatedException:
        return False
    return True


def login_with_cache(
    master_address: str,
    requested_user: Optional[str] = None,
    password: Optional[str] = None,
    cert: Optional[Any] = None,
) -> api_session.Session:
    """Log in as the module's docstring says, preferring a stored token."""
    store = TokenStore(master_address)
    master = store.master_address
    user, password, fallback = default_load_user_password(requested_user, password, store)

    token = store.get_token(user)
    if token is not None and not _token_is_valid(master, token, cert):
        store.drop_user(user)
        token = None
    if token is not None:
        return api_session.Session(master, user, token, cert)

    env_user, env_token = get_det_username_from_env(), get_det_user_token_from_env()
    if env_user and env_token and requested_user in (None, env_user):
        return api_session.Session(master, env_user, env_token, cert)

    if password is None:
        if not (sys.stdin and sys.stdin.isatty()):
            raise errors.UnauthenticatedException(
                f"not logged in to {master} as {user}: run `det user login {user}`, or pass "
                "the password (client.login(master, user, password)) or set DET_PASS"
            )
        password = getpass.getpass(f"Password for user '{user}': ")

    try:
        sess = login(master, user, password, cert)
    except errors.InvalidCredentialsException:
        if fallback:
            # Nobody asked to be anybody: "log in first" says more than "wrong password".
            raise errors.UnauthenticatedException(
                f"not logged in to {master}: run `det user login <username>`, or call "
                "client.login(master, user, password)"
            ) from None
        raise
    store.set_token(user, sess.token or "")
    return sess


def logout(master_address: str, requested_user: Optional[str] = None,
           cert: Optional[Any] = None) -> Optional[str]:
    """End the stored session of the user (default: as a login would pick) and forget it;
    returns the user logged out, or None when there was no stored session."""
    store = TokenStore(master_address)
    user, _, _ = default_load_user_password(requested_user, None, store)
    token = store.get_token(user)
    if token is None:
        return None
    store.drop_user(user)
    try:
        api_session.Session(store.master_address, user, token, cert).post("/api/v1/auth/logout")
    except (errors.UnauthenticatedException, errors.APIException):
        pass  # already ended: nothing more to do
    return user
