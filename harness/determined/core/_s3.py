"""Checkpoint storage in S3 and S3-compatible stores (MinIO, Ceph...) through boto3.

Keys as Determined's ``type: s3``: ``bucket``, ``access_key``, ``secret_key``, ``endpoint_url``,
``prefix``. Without keys boto3 finds credentials as it always does (environment, ~/.aws, web
identity, the instance's or pod's role). Large files go up as multipart uploads and come down in
ranged parts (boto3's transfer manager), read from and written to disk part by part; botocore
retries a failed part on its own, so an interrupted connection costs one part, not the file.
"""

import re
from typing import Any, Dict, List, Optional

from determined.core import _cloud

_CODE = re.compile(r"\(([A-Za-z0-9]+)\)")


class S3StorageManager(_cloud.CloudStorageManager):
    """Checkpoints in an S3 bucket, as ``<prefix>/<storage_id>/<path>`` keys."""

    kind = "s3"

    def __init__(
        self,
        bucket: str,
        access_key: Optional[str] = None,
        secret_key: Optional[str] = None,
        endpoint_url: Optional[str] = None,
        prefix: Optional[str] = None,
        temp_dir: Optional[str] = None,
    ) -> None:
        super().__init__(bucket, prefix, temp_dir)
        try:
            import boto3
            import boto3.s3.transfer
            import botocore.config
        except ImportError:
            raise _cloud.missing_package("s3", "boto3", "boto3", "python3-boto3") from None
        self.endpoint_url = endpoint_url or None
        config: Dict[str, Any] = {
            "retries": {"max_attempts": 10, "mode": "standard"},
            "max_pool_connections": 4 * _cloud.CONCURRENCY,
        }
        if self.endpoint_url:
            # MinIO and other stores behind one host name serve buckets as paths.
            config["s3"] = {"addressing_style": "path"}
        # A session of its own: boto3's default session is shared with the user's code.
        session = boto3.session.Session()

        def client(attempts: int) -> Any:
            config["retries"] = {"max_attempts": attempts, "mode": "standard"}
            return session.client(
                "s3",
                endpoint_url=self.endpoint_url,
                aws_access_key_id=access_key or None,
                aws_secret_access_key=secret_key or None,
                config=botocore.config.Config(**config),
            )

        self._client = client(10)
        self._client.meta.events.register("before-send.s3", _no_expect_without_body)
        # The check at a trial's start fails fast: a wrong endpoint is not worth a minute of
        # backing off.
        self._probe_client = client(2)
        self._transfer = boto3.s3.transfer.TransferConfig(
            multipart_threshold=_cloud.MULTIPART_THRESHOLD,
            multipart_chunksize=_cloud.PART_SIZE,
            max_concurrency=_cloud.CONCURRENCY,
            use_threads=True,
        )
        _retry_broken_downloads()
        # One transfer manager for every file: managers made per call, running at once on one
        # client, trip over each other's event handlers (a part's response loses its ETag).
        self._transfers = boto3.s3.transfer.S3Transfer(client=self._client, config=self._transfer)

    def _probe(self) -> None:
        self._probe_client.list_objects_v2(
            Bucket=self.bucket, Prefix=self.key("det-access-check") + "/", MaxKeys=1
        )

    def _put_file(self, path: str, key: str, size: int) -> None:
        self._transfers.upload_file(path, self.bucket, key)

    def _put_empty(self, key: str) -> None:
        self._client.put_object(Bucket=self.bucket, Key=key, Body=b"")

    def _get_file(self, key: str, path: str, size: int) -> None:
        self._transfers.download_file(self.bucket, key, path)

    def _list(self, prefix: str) -> Dict[str, int]:
        out: Dict[str, int] = {}
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        )
        for page in pages:
            for obj in page.get("Contents") or []:
                out[obj["Key"]] = int(obj.get("Size") or 0)
        return out

    def _delete(self, keys: List[str]) -> None:
        for i in range(0, len(keys), 1000):  # DeleteObjects takes at most 1000 keys
            chunk = [{"Key": k} for k in keys[i : i + 1000]]
            r = self._client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": chunk, "Quiet": True}
            )
            errors = r.get("Errors") or []
            if errors:
                first = errors[0]
                raise self._error(
                    f"could not delete {len(errors)} objects, e.g. {first.get('Key')!r}: "
                    f"{first.get('Code')}: {first.get('Message')}"
                )

    def _translate(self, e: BaseException, what: str) -> Optional[_cloud.StorageError]:
        import boto3.exceptions
        import botocore.exceptions

        code, message = "", str(e)
        if isinstance(e, botocore.exceptions.ClientError):
            err = e.response.get("Error") or {}
            code = str(err.get("Code") or "")
            message = str(err.get("Message") or e)
            if code in ("404", "403", "400") and not err.get("Message"):
                message = {"404": "Not Found", "403": "Forbidden", "400": "Bad Request"}[code]
        elif isinstance(e, boto3.exceptions.S3UploadFailedError):
            # boto3 keeps only the text of the ClientError behind a failed upload.
            m = _CODE.search(message)
            code = m.group(1) if m else ""
        elif isinstance(e, botocore.exceptions.NoCredentialsError):
            return self._error(
                f"{what}: no credentials: set access_key and secret_key in checkpoint_storage, or "
                "give the task AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                "~/.aws/credentials, a web identity token, or an instance or pod role)"
            )
        elif isinstance(e, botocore.exceptions.EndpointConnectionError):
            return self._error(f"{what}: cannot reach the endpoint {self.endpoint_url or ''}: {e}")
        elif isinstance(e, (botocore.exceptions.BotoCoreError, boto3.exceptions.Boto3Error)):
            return self._error(f"{what}: {type(e).__name__}: {e}")
        else:
            return None
        return self._error(f"{what}: {_explain(code, message)}")


def _retry_broken_downloads() -> None:
    """Make s3transfer retry a part whose download broke off mid-body. botocore 1.29 reports that
    as ResponseStreamingError, which s3transfer before 0.6.1 (Debian bookworm's 0.6.0) does not
    count as retryable: a reset connection failed the whole download. Later versions list it
    themselves, and then this does nothing."""
    try:
        import botocore.exceptions
        import s3transfer.download
    except ImportError:
        return
    streaming = getattr(botocore.exceptions, "ResponseStreamingError", None)
    retryable = getattr(s3transfer.download, "S3_RETRYABLE_DOWNLOAD_ERRORS", None)
    if streaming is None or not isinstance(retryable, tuple) or streaming in retryable:
        return
    s3transfer.download.S3_RETRYABLE_DOWNLOAD_ERRORS = retryable + (streaming,)


def _no_expect_without_body(request: Any, **_: Any) -> None:
    """Drop "Expect: 100-continue" from requests with an empty body (botocore adds it to every
    upload). MinIO answers such a request at once, and botocore (1.29) then leaves its connection
    in a state where a later request on it, from the pool, gets an answer with no headers: a
    multipart upload running beside an empty object's failed with KeyError 'ETag'."""
    if str(request.headers.get("Content-Length", "")) == "0" and "Expect" in request.headers:
        del request.headers["Expect"]


def _explain(code: str, message: str) -> str:
    if code == "NoSuchBucket":
        return f"the bucket does not exist ({code}: {message})"
    if code == "InvalidAccessKeyId":
        return f"the access key is not known to the store; check access_key ({code}: {message})"
    if code == "SignatureDoesNotMatch":
        return (f"the secret key does not match the access key; check secret_key "
                f"({code}: {message})")
    if code in ("AccessDenied", "403", "Forbidden", "AllAccessDisabled"):
        return f"access denied: the credentials may not use this bucket ({code}: {message})"
    if code in ("ExpiredToken", "TokenRefreshRequired", "InvalidToken"):
        return f"the credentials have expired ({code}: {message})"
    if code:
        return f"{code}: {message}"
    return message
