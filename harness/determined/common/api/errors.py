"""The exceptions the Python SDK and the harness raise when the master says no.

The names and their hierarchy are Determined's (``determined.common.api.errors``), so code that
catches them keeps working:

- ``BadRequestException``: the base of every error a request can end in;
- ``APIException``: the master answered with an error status; ``NotFoundException`` (404) is one;
- ``UnauthenticatedException`` (401) and ``ForbiddenException`` (403);
- ``InvalidCredentialsException``: a login with a wrong username or password;
- ``MasterNotFoundException``: the master could not be reached.

Every one of them carries ``status_code`` (0 when no answer came), the master's message as
``message``, its ``{"error": {...}}`` object as ``response_error``, and, where a request made it,
``method`` and ``path``.
"""

from typing import Any, Optional


class BadRequestException(Exception):
    """A request to the master failed; ``message`` says why."""

    def __init__(self, message: str, *args: Any) -> None:
        super().__init__(message, *args)
        self.message = message
        self.status_code = 0
        self.response_error: Optional[Any] = None
        self.body: Any = None
        self.method = ""
        self.path = ""

    @property
    def status(self) -> int:
        """The HTTP status of the answer (the harness's older name for ``status_code``)."""
        return self.status_code

    def __str__(self) -> str:
        return self.message

    def _answer(self, method: str, path: str, status: int, body: Any) -> "BadRequestException":
        self.method, self.path, self.status_code, self.body = method, path, status, body
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            self.response_error = body["error"]
        return self


class BadResponseException(Exception):
    """The master answered with something the client cannot read."""

    def __init__(self, message: str, *args: Any) -> None:
        super().__init__(message, *args)
        self.message = message

    def __str__(self) -> str:
        return self.message


class MasterNotFoundException(BadRequestException):
    """The master could not be reached (after retries)."""


class APIException(BadRequestException):
    """The master answered with an error status that no narrower class names.

    ``str(e)`` is ``"<METHOD> <path> failed: HTTP <status>: <master's message>"``.
    """

    def __init__(self, method: str, path: str, status: int, message: str, body: Any = None) -> None:
        super().__init__(f"{method} {path} failed: HTTP {status}: {message}")
        self._answer(method, path, status, body)
        #: The master's own words, without the request in front.
        self.error_message = message


class NotFoundException(APIException):
    """The master's 404: what was asked for does not exist (or is not yours to see)."""


class DeleteFailedException(APIException):
    """Deleting something failed."""


class ForbiddenException(BadRequestException):
    """The master's 403: the signed-in user may not do this."""

    def __init__(self, message: str = "", *, method: str = "", path: str = "",
                 status: int = 403, body: Any = None) -> None:
        text = f"Forbidden({message})"
        if message not in ("invalid credentials", "user not found"):
            text += ": Please contact your administrator in order to access this resource."
        # Not super(): InvalidCredentialsException puts this class after UnauthenticatedException.
        BadRequestException.__init__(self, text)
        self._answer(method, path, status, body)
        self.error_message = message


class UnauthenticatedException(BadRequestException):
    """The master's 401: no session, or one that has ended."""

    def __init__(
        self,
        message: str = (
            "Unauthenticated: Please use 'det user login <username>' for password login, or "
            "client.login(master, user, password) in Python."
        ),
        *,
        method: str = "",
        path: str = "",
        status: int = 401,
        body: Any = None,
    ) -> None:
        BadRequestException.__init__(self, message)
        self._answer(method, path, status, body)
        self.error_message = message


class InvalidCredentialsException(UnauthenticatedException, ForbiddenException):
    """A login with a wrong username or password. Determined raised ForbiddenException for this
    on an explicit login and UnauthenticatedException otherwise; this is both, so code written
    to catch either catches it."""

    def __init__(self, *, method: str = "", path: str = "", status: int = 401,
                 body: Any = None) -> None:
        UnauthenticatedException.__init__(
            self,
            "Invalid username/password combination. Please try again.",
            method=method, path=path, status=status, body=body,
        )


class CorruptTokenCacheException(Exception):
    """The stored logins (auth.json) cannot be read."""

    def __init__(self, path: str = "") -> None:
        where = f" ({path})" if path else ""
        super().__init__(
            f"Attempted to read a corrupted token cache{where}. Delete it and log in again."
        )


class EmptyResultException(BadResponseException):
    """The master answered, but with nothing where something was expected."""


def for_status(method: str, path: str, status: int, message: str, body: Any = None) -> BadRequestException:
    """The exception for an error answer: NotFoundException for 404, UnauthenticatedException
    for 401, ForbiddenException for 403, else APIException."""
    if status == 401:
        return UnauthenticatedException(
            f"{method} {path}: {message}" if message else "Unauthenticated",
            method=method, path=path, status=status, body=body,
        )
    if status == 403:
        return ForbiddenException(message, method=method, path=path, status=status, body=body)
    if status == 404:
        return NotFoundException(method, path, status, message, body)
    return APIException(method, path, status, message, body)
