"""Checkpoint storage in Azure Blob Storage through the Azure SDK (``azure.storage.blob``).

Keys as Determined's ``type: azure``: ``container`` (which may carry a path, ``ckpts/team``),
and ``connection_string``, or ``account_url`` with ``credential`` (an account key or a SAS token);
with ``account_url`` alone, ``azure.identity.DefaultAzureCredential`` when that package is there
(managed identity, workload identity, environment). As Determined does, the container is created
when it is missing and the credential may. Large files go up as block blobs in blocks staged in
parallel and committed at the end, and come down in ranges; the SDK retries a failed block.
"""

import concurrent.futures
from typing import Any, Dict, List, Optional

from determined.core import _cloud


class AzureStorageManager(_cloud.CloudStorageManager):
    """Checkpoints in an Azure container, as ``<path>/<storage_id>/<path>`` blobs."""

    kind = "azure"
    noun = "container"

    def __init__(
        self,
        container: str,
        connection_string: Optional[str] = None,
        account_url: Optional[str] = None,
        credential: Optional[str] = None,
        prefix: Optional[str] = None,
        temp_dir: Optional[str] = None,
    ) -> None:
        name, path = _cloud.split_container(container or "")
        super().__init__(name, "/".join(p for p in (path, prefix or "") if p), temp_dir)
        try:
            import azure.core.exceptions  # noqa: F401
            from azure.storage import blob
        except ImportError:
            raise _cloud.missing_package(
                "azure", "azure.storage.blob", "azure-storage-blob", "python3-azure"
            ) from None
        options: Dict[str, Any] = {
            "max_single_put_size": _cloud.MULTIPART_THRESHOLD,
            "max_block_size": _cloud.PART_SIZE,
            "max_single_get_size": _cloud.PART_SIZE,
            "max_chunk_get_size": _cloud.PART_SIZE,
        }
        self._where = account_url or "the connection string's account"
        if connection_string:
            try:
                service = blob.BlobServiceClient.from_connection_string(connection_string, **options)
            except ValueError as e:
                raise self._error(f"the connection_string is not valid: {e}") from None
        elif account_url:
            cred: Any = credential or None
            if cred is None:
                cred = _default_credential()
            service = blob.BlobServiceClient(account_url, credential=cred, **options)
        else:
            raise ValueError(
                "azure checkpoint_storage requires connection_string, or account_url (with "
                "credential, or an identity azure.identity.DefaultAzureCredential finds)"
            )
        self._container = service.get_container_client(self.bucket)
        self._create_container()

    def _create_container(self) -> None:
        import azure.core.exceptions as ex

        try:
            self._container.create_container()
            _cloud.logger.info(f"created the Azure container {self.bucket!r} for checkpoints")
        except ex.ResourceExistsError:
            pass
        except ex.HttpResponseError as e:
            # A credential scoped to the container (a SAS) may use it but not create it.
            if _code(e) in (
                "AuthorizationFailure", "AuthorizationPermissionMismatch",
                "AuthorizationResourceTypeMismatch",
            ):
                return
            err = self._translate(e, "create the container")
            if err is None:
                raise
            raise err from None
        except Exception as e:
            err = self._translate(e, "create the container")
            if err is None:
                raise
            raise err from None

    def _blob(self, key: str) -> Any:
        return self._container.get_blob_client(key)

    def _put_file(self, path: str, key: str, size: int) -> None:
        with open(path, "rb") as f:
            self._blob(key).upload_blob(
                f, length=size, overwrite=True, max_concurrency=_cloud.CONCURRENCY
            )

    def _put_empty(self, key: str) -> None:
        self._blob(key).upload_blob(b"", overwrite=True)

    def _get_file(self, key: str, path: str, size: int) -> None:
        with open(path, "wb") as f:
            self._blob(key).download_blob(max_concurrency=_cloud.CONCURRENCY).readinto(f)

    def _list(self, prefix: str) -> Dict[str, int]:
        return {b.name: int(b.size or 0) for b in self._container.list_blobs(name_starts_with=prefix)}

    def _delete(self, keys: List[str]) -> None:
        import azure.core.exceptions as ex

        def one(key: str) -> None:
            try:
                self._container.delete_blob(key)
            except ex.ResourceNotFoundError:
                pass

        with concurrent.futures.ThreadPoolExecutor(_cloud.CONCURRENCY) as pool:
            for f in [pool.submit(one, k) for k in keys]:
                f.result()

    def _translate(self, e: BaseException, what: str) -> Optional[_cloud.StorageError]:
        import azure.core.exceptions as ex

        if not isinstance(e, ex.AzureError):
            return None
        code = _code(e)
        message = (str(getattr(e, "message", None) or e).strip().splitlines() or [""])[0]
        if isinstance(e, ex.ServiceRequestError):
            return self._error(f"{what}: cannot reach {self._where}: {message}")
        if code == "ContainerNotFound":
            return self._error(f"{what}: the container does not exist ({code}: {message})")
        refused = code in ("AuthenticationFailed", "InvalidAuthenticationInfo",
                           "NoAuthenticationInformation") or isinstance(e, ex.ClientAuthenticationError)
        # Azurite answers a wrong key with AuthorizationFailure "Server failed to authenticate".
        refused = refused or (code == "AuthorizationFailure" and "authenticate" in message)
        if refused:
            return self._error(
                f"{what}: the credential was refused; check connection_string or credential "
                f"({code or type(e).__name__}: {message})"
            )
        if code.startswith("Authorization"):
            return self._error(
                f"{what}: access denied: the credential may not use this container ({code}: "
                f"{message})"
            )
        return self._error(f"{what}: {code or type(e).__name__}: {message}")


def _default_credential() -> Any:
    try:
        from azure.identity import DefaultAzureCredential
    except ImportError:
        raise ValueError(
            "azure checkpoint_storage with account_url and no credential needs the package "
            "azure-identity (DefaultAzureCredential); give connection_string, or credential (an "
            "account key or SAS token)"
        ) from None
    return DefaultAzureCredential()


def _code(e: BaseException) -> str:
    """The storage error code of an Azure exception (the SDK gives a str or an enum member)."""
    code = getattr(e, "error_code", None) or ""
    return str(getattr(code, "value", code))
