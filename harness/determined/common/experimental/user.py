"""Users, as Determined's SDK gives them."""

from typing import Any, Dict, Optional

from determined.common.api import _session as api_session


class User:
    """A user: ``user_id``, ``username``, ``display_name``, ``admin``, ``active``, ``remote``
    (always False here), and the Unix identity their tasks run as (``agent_uid``,
    ``agent_gid``, ``agent_user``, ``agent_group``; None when not linked). Changing another
    user takes an administrator."""

    def __init__(self, user_id: int, session: api_session.Session) -> None:
        self.user_id = user_id
        self._session = session
        self.username: Optional[str] = None
        self.display_name: Optional[str] = None
        self.admin: Optional[bool] = None
        self.active: Optional[bool] = None
        self.remote = False
        self.agent_uid: Optional[int] = None
        self.agent_gid: Optional[int] = None
        self.agent_user: Optional[str] = None
        self.agent_group: Optional[str] = None

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session) -> "User":
        u = cls(int(data.get("id") or 0), session)
        u._hydrate(data)
        return u

    def _hydrate(self, data: Dict[str, Any]) -> None:
        self.username = data.get("username")
        self.display_name = data.get("displayName")
        self.admin = bool(data.get("admin"))
        self.active = bool(data.get("active"))
        link = data.get("agentUserGroup") or {}
        self.agent_uid = link.get("agentUid")
        self.agent_gid = link.get("agentGid")
        self.agent_user = link.get("agentUser")
        self.agent_group = link.get("agentGroup")

    def reload(self) -> None:
        self._hydrate((self._session.get(f"/api/v1/users/{self.user_id}").json() or {}).get("user") or {})

    def _patch(self, body: Dict[str, Any]) -> None:
        r = self._session.patch(f"/api/v1/users/{self.user_id}", json=body).json() or {}
        self._hydrate(r.get("user") or {})

    def change_display_name(self, display_name: str) -> None:
        self._patch({"displayName": display_name})

    def activate(self) -> None:
        self._patch({"active": True})

    def deactivate(self) -> None:
        self._patch({"active": False})

    def set_admin(self, admin: bool) -> None:
        self._patch({"admin": bool(admin)})

    def link_with_agent(self, agent_gid: int, agent_uid: int, agent_group: str,
                        agent_user: str) -> None:
        """Run this user's tasks as the given Unix user and group (administrators)."""
        self._patch({"agentUserGroup": {"agentUid": agent_uid, "agentGid": agent_gid,
                                        "agentUser": agent_user, "agentGroup": agent_group}})

    def change_password(self, new_password: str, old_password: Optional[str] = None) -> None:
        """Set the password; users changing their own give the old one."""
        body: Dict[str, Any] = {"password": new_password}
        if old_password is not None:
            body["oldPassword"] = old_password
        self._session.post(f"/api/v1/users/{self.user_id}/password", json=body)

    def __repr__(self) -> str:
        return f"User(id={self.user_id}, username={self.username!r})"
