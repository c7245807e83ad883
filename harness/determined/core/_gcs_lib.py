"""Checkpoint storage in Google Cloud Storage through google-cloud-storage, used when the task's
Python has that package (``_gcs.build`` picks it). The library finds credentials (Application
Default Credentials) and honours ``STORAGE_EMULATOR_HOST`` itself; files of at least
``MULTIPART_THRESHOLD`` go up through its resumable uploads in ``PART_SIZE`` chunks, each retried.
"""

from typing import Any, Dict, List, Optional

from determined.core import _cloud


class GCSLibraryStorageManager(_cloud.CloudStorageManager):
    """Checkpoints in a GCS bucket through google-cloud-storage."""

    kind = "gcs"

    def __init__(self, bucket: str, prefix: Optional[str] = None,
                 temp_dir: Optional[str] = None) -> None:
        super().__init__(bucket, prefix, temp_dir)
        import google.cloud.storage
        from google.auth import exceptions as auth_exceptions

        try:
            self._client = google.cloud.storage.Client()
        except auth_exceptions.GoogleAuthError as e:
            raise self._error(f"no usable Google credentials: {e}") from None
        self._bucket = self._client.bucket(bucket)

    def _blob(self, key: str, size: int = 0) -> Any:
        chunk = _cloud.PART_SIZE if size >= _cloud.MULTIPART_THRESHOLD else None
        return self._bucket.blob(key, chunk_size=chunk)

    def _put_file(self, path: str, key: str, size: int) -> None:
        from google.api_core import retry

        self._blob(key, size).upload_from_filename(path, retry=retry.Retry())

    def _put_empty(self, key: str) -> None:
        self._blob(key).upload_from_string(b"")

    def _get_file(self, key: str, path: str, size: int) -> None:
        self._blob(key).download_to_filename(path)

    def _list(self, prefix: str) -> Dict[str, int]:
        return {b.name: int(b.size or 0) for b in self._client.list_blobs(self._bucket, prefix=prefix)}

    def _delete(self, keys: List[str]) -> None:
        from google.api_core import exceptions

        for key in keys:
            try:
                self._bucket.blob(key).delete()
            except exceptions.NotFound:
                pass

    def _translate(self, e: BaseException, what: str) -> Optional[_cloud.StorageError]:
        from google.api_core import exceptions
        from google.auth import exceptions as auth_exceptions

        if isinstance(e, auth_exceptions.GoogleAuthError):
            return self._error(f"{what}: the credentials were refused: {e}")
        if isinstance(e, exceptions.NotFound) and what.startswith("list"):
            return self._error(f"{what}: the bucket does not exist ({e.message})")
        if isinstance(e, (exceptions.Unauthorized, exceptions.Forbidden)):
            return self._error(f"{what}: access denied ({e.code}: {e.message})")
        if isinstance(e, exceptions.GoogleAPIError):
            return self._error(f"{what}: {type(e).__name__}: {e}")
        return None
