"""The Gemini API's Files API, as the Gemini stand-in serves it (media upload and ``fileData``).

Google's published protocol (https://ai.google.dev/api/files, resumable upload:
https://cloud.google.com/storage/docs/performing-resumable-uploads), which LiteLLM's
``create_file`` / ``file_retrieve`` / ``file_delete`` and the ``google-genai`` SDK speak:

1. ``POST /upload/v1beta/files`` with ``X-Goog-Upload-Protocol: resumable``,
   ``X-Goog-Upload-Command: start``, ``X-Goog-Upload-Header-Content-Length`` and
   ``-Content-Type`` and the metadata ``{"file": {"display_name": ...}}``: the answer's
   ``X-Goog-Upload-URL`` header is where the bytes go (it carries an ``upload_id``; that
   request needs no key, as with Google).
2. ``POST`` the bytes there with ``X-Goog-Upload-Command: upload, finalize`` and
   ``X-Goog-Upload-Offset: 0``: the answer is ``{"file": File}``.
3. ``GET /v1beta/files/{id}``: the ``File`` resource (``name``, ``displayName``,
   ``mimeType``, ``sizeBytes``, ``createTime``, ``updateTime``, ``expirationTime``,
   ``sha256Hash``, ``uri``, ``state``, ``source``); ``DELETE`` the same path: ``{}``.

A file's ``uri`` is the one Google gives (``https://generativelanguage.googleapis.com/
v1beta/files/{id}``): an identifier a request's ``fileData`` names and the API resolves,
never fetched by a client, so clients that recognise Files API URIs (LiteLLM) pass it on
unchanged; this stand-in resolves it to its own store.
A file is ``PROCESSING`` for its first ``processing_polls`` reads, then ``ACTIVE``; using
it in a request before that is the API's 400 ``FAILED_PRECONDITION``, an unknown or deleted
one its 403 ``PERMISSION_DENIED``. Files live in memory for the stand-in's life.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from tasks.systems.standins.gemini_contents import ApiError

UPLOAD_PATH = re.compile(r"^/upload/(v1beta|v1)/files$")
FILE_PATH = re.compile(r"^/(v1beta|v1)/(files/[A-Za-z0-9_-]+)$")
EXPIRY = timedelta(hours=48)  # the API keeps an uploaded file for 48 hours
URI_BASE = "https://generativelanguage.googleapis.com/v1beta/"


@dataclass
class StoredFile:
    name: str
    display_name: str
    mime: str
    data: bytes
    created: datetime
    reads_left: int  # GETs answered PROCESSING before the file is ACTIVE

    @property
    def state(self) -> str:
        return "PROCESSING" if self.reads_left > 0 else "ACTIVE"


@dataclass
class _Pending:
    mime: str
    length: int
    display_name: str


@dataclass
class FileStore:
    """Uploaded files of one stand-in; ``log`` records each operation (for tests)."""

    processing_polls: int = 1
    files: dict[str, StoredFile] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)
    _pending: dict[str, _Pending] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, headers: dict[str, str], body: dict[str, Any]) -> str:
        """Step 1: the upload id of a new resumable upload."""
        if headers.get("x-goog-upload-protocol", "").lower() != "resumable":
            raise ApiError(400, "INVALID_ARGUMENT", "X-Goog-Upload-Protocol must be resumable")
        if headers.get("x-goog-upload-command", "").lower() != "start":
            raise ApiError(400, "INVALID_ARGUMENT", "X-Goog-Upload-Command must be start")
        try:
            length = int(headers.get("x-goog-upload-header-content-length", ""))
        except ValueError:
            raise ApiError(
                400, "INVALID_ARGUMENT", "X-Goog-Upload-Header-Content-Length is required"
            ) from None
        mime = headers.get("x-goog-upload-header-content-type", "")
        file = body.get("file")
        meta: dict[str, Any] = file if isinstance(file, dict) else {}
        display = str(meta.get("display_name") or meta.get("displayName") or "")
        upload_id = uuid.uuid4().hex
        with self._lock:
            self._pending[upload_id] = _Pending(mime, length, display)
        return upload_id

    def finish(self, upload_id: str, headers: dict[str, str], data: bytes) -> Any:
        """Step 2: the bytes of upload ``upload_id``; the new ``File`` resource."""
        command = {c.strip() for c in headers.get("x-goog-upload-command", "").lower().split(",")}
        if not {"upload", "finalize"} <= command:
            raise ApiError(400, "INVALID_ARGUMENT", "X-Goog-Upload-Command: upload, finalize")
        if headers.get("x-goog-upload-offset", "0") != "0":
            raise ApiError(400, "INVALID_ARGUMENT", "this stand-in takes one chunk at offset 0")
        with self._lock:
            pending = self._pending.pop(upload_id, None)
        if pending is None:
            raise ApiError(404, "NOT_FOUND", f"no upload {upload_id!r}")
        if len(data) != pending.length:
            message = f"got {len(data)} bytes, the upload announced {pending.length}"
            raise ApiError(400, "INVALID_ARGUMENT", message)
        name = f"files/{uuid.uuid4().hex[:12]}"
        stored = StoredFile(
            name=name,
            display_name=pending.display_name or name,
            mime=pending.mime or "application/octet-stream",
            data=data,
            created=datetime.now(UTC),
            reads_left=self.processing_polls,
        )
        with self._lock:
            self.files[name] = stored
            self.log.append(("upload", name))
        return resource(stored)

    def get(self, name: str) -> dict[str, Any]:
        with self._lock:
            stored = self._known(name)
            shown = resource(stored)
            stored.reads_left = max(0, stored.reads_left - 1)
            self.log.append(("get", name))
        return shown

    def delete(self, name: str) -> None:
        with self._lock:
            self._known(name)
            del self.files[name]
            self.log.append(("delete", name))

    def resolve(self, uri: str) -> StoredFile:
        """The file a ``fileData.fileUri`` names (a full URI or ``files/<id>``)."""
        path = urlsplit(uri).path if "://" in uri else uri
        match = re.search(r"files/[A-Za-z0-9_-]+", path)
        with self._lock:
            stored = self._known(match.group(0) if match else uri)
        if stored.state != "ACTIVE":
            message = f"The File {stored.name} is not in an ACTIVE state and usage is not allowed."
            raise ApiError(400, "FAILED_PRECONDITION", message)
        return stored

    def _known(self, name: str) -> StoredFile:
        stored = self.files.get(name)
        if stored is None:
            message = (
                f"You do not have permission to access the File {name.removeprefix('files/')} "
                "or it may not exist."
            )
            raise ApiError(403, "PERMISSION_DENIED", message)
        return stored


def _time(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def resource(stored: StoredFile) -> dict[str, Any]:
    """The ``File`` resource JSON."""
    return {
        "name": stored.name,
        "displayName": stored.display_name,
        "mimeType": stored.mime,
        "sizeBytes": str(len(stored.data)),
        "createTime": _time(stored.created),
        "updateTime": _time(stored.created),
        "expirationTime": _time(stored.created + EXPIRY),
        "sha256Hash": base64.b64encode(hashlib.sha256(stored.data).digest()).decode(),
        "uri": URI_BASE + stored.name,
        "state": stored.state,
        "source": "UPLOADED",
    }


def files_answer(
    store: FileStore,
    method: str,
    url: str,
    headers: dict[str, str],
    raw: bytes,
    base: str,
) -> tuple[int, Any, dict[str, str]] | None:
    """``(status, JSON body, headers)`` of a Files API request, None for any other path.
    ``headers`` are lower-cased; the key is checked by the caller (not for step 2)."""
    parts = urlsplit(url)
    query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
    if UPLOAD_PATH.match(parts.path) and method == "POST":
        upload_id = query.get("upload_id")
        if upload_id is None:
            body = json.loads(raw or b"{}")
            upload_id = store.start(headers, body if isinstance(body, dict) else {})
            location = f"{base}{parts.path}?upload_id={upload_id}&upload_protocol=resumable"
            return 200, {}, {"X-Goog-Upload-URL": location, "X-Goog-Upload-Status": "active"}
        done = store.finish(upload_id, headers, raw)
        return 200, {"file": done}, {"X-Goog-Upload-Status": "final"}
    match = FILE_PATH.match(parts.path)
    if match and method == "GET":
        return 200, store.get(match.group(2)), {}
    if match and method == "DELETE":
        store.delete(match.group(2))
        return 200, {}, {}
    return None


def needs_key(url: str) -> bool:
    """Every Files API request carries the key except the upload of the bytes (step 2),
    which the ``upload_id`` in its URL authorises."""
    parts = urlsplit(url)
    return not (UPLOAD_PATH.match(parts.path) and "upload_id=" in parts.query)
