"""Parts shared by the Python SDK and the harness, under Determined's module names:
``determined.common.api`` (sessions, logins, errors), ``determined.common.context`` (packing a
model directory for upload) and ``determined.common.experimental`` (the SDK's classes, exposed as
``determined.experimental.client``)."""
