"""Releases: a build published as an immutable, self-contained bundle, and aliases that point at one.

A release is what ``ummaya build`` wrote into ``generated/`` — ``catalog.json``, the retrieval
``index/documents.json``, the fixture bodies, ``guidance.json`` and ``registry.lock`` — packed into one deterministic
zip (sorted names, fixed timestamps: same build → same bytes) and stored in the database with its
**retrieval policy**. Its id is the build's release id (the lock hash that ``catalog.json`` carries);
a development catalog without one (``"dev"``) gets ``dev-<sha256 of the bundle, 16 hex>``, still
content-addressed. Because the bundle lives in the database, a release stays servable after the
registry (or ``generated/``) changes, and every replica on the same PostgreSQL serves the same bytes.

Serving resolves ``release_alias`` (an alias such as ``production``, or a release id) through the
store — an unknown one is ``release_not_found``, never a fallback to some other release — then
unpacks the bundle once into a cache folder and loads catalog, retriever and dispatcher from it.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ummaya.runtime.retrieve.policy import PolicyUnavailable, RerankBudget, RetrievalPolicy  # noqa: F401  (re-exported)

from .api_errors import ApiError

BUNDLE_FORMAT = "ummaya-release-bundle/1"
DEFAULT_ALIAS = "production"
DEFAULT_POLICY_NAME = RetrievalPolicy.model_fields["name"].default
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


# -- bundles -------------------------------------------------------------------------------------

def bundle_files(generated: Path) -> list[Path]:
    """The files a release needs at run time, relative paths sorted."""
    generated = Path(generated)
    out = [Path("catalog.json"), Path("index/documents.json")]
    # guidance.json: emergencies, official channels and service words the turn reads (a build
    # older than it has none, and the turn then says nothing of them).
    for name in ("registry.lock", "guidance.json"):
        if (generated / name).is_file():
            out.append(Path(name))
    # understand/: the slot table and vocabularies this release's turns read (without them a
    # served release fell back to whatever generated/ the working directory had).
    for folder in ("understand", "fixtures"):
        if (generated / folder).is_dir():
            out += sorted(p.relative_to(generated) for p in (generated / folder).rglob("*")
                          if p.is_file() and not any(part.startswith(".") for part in p.parts))
    missing = [str(p) for p in out if not (generated / p).is_file()]
    if missing:
        raise FileNotFoundError(f"{generated}: missing {', '.join(missing)} — run `ummaya build`")
    return sorted(set(out), key=lambda p: p.as_posix())


def make_bundle(generated: Path) -> bytes:
    """A deterministic zip of the build (same files → same bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for rel in bundle_files(generated):
            info = zipfile.ZipInfo(rel.as_posix(), date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, (Path(generated) / rel).read_bytes())
    return buf.getvalue()


def unpack_bundle(blob: bytes, target: Path) -> Path:
    """Extract a bundle into ``target`` (which must exist); a member that would land outside it is
    refused (``release_unavailable``)."""
    target = Path(target)
    root = str(target.resolve()) + os.sep
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        for name in zf.namelist():
            if not str((target / name).resolve()).startswith(root):
                raise ApiError("release_unavailable", f"bundle member escapes: {name}")
        zf.extractall(target)
    return target


def read_bundle_member(blob: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        return zf.read(name)


_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def release_id_for(generated: Path, blob: bytes) -> str:
    """The catalog's release id (the lock hash); ``dev-<bundle sha, 16 hex>`` for a dev catalog."""
    raw = json.loads((Path(generated) / "catalog.json").read_bytes())
    rid = str(raw.get("release_id") or "")
    if not rid or rid == "dev":
        return "dev-" + hashlib.sha256(blob).hexdigest()[:16]
    return rid


def bundle_meta(generated: Path) -> dict[str, Any]:
    raw = json.loads((Path(generated) / "catalog.json").read_bytes())
    adapters = raw.get("adapters", [])
    meta: dict[str, Any] = {
        "format": BUNDLE_FORMAT,
        "catalog_release_id": raw.get("release_id"),
        "adapters": len(adapters),
        "primitives": sorted({a.get("primitive") for a in adapters if a.get("primitive")}),
    }
    lock = Path(generated) / "registry.lock"
    if lock.is_file():
        meta["registry_lock_sha256"] = hashlib.sha256(lock.read_bytes()).hexdigest()
    return meta


def publish(store: Any, generated: Path, policy: RetrievalPolicy | None = None) -> Any:
    """Publish ``generated/`` as an immutable release (a no-op when the same release exists).

    The same bundle under the same policy is the same release even when it was stored before the
    policy gained fields (their defaults then): the comparison is of validated policies."""
    blob = make_bundle(generated)
    policy = policy or RetrievalPolicy()
    rid = release_id_for(generated, blob)
    if policy.name != DEFAULT_POLICY_NAME:
        # The same build can be released under another named policy (hybrid, say) side by side.
        rid = f"{rid}.{policy.name}.v{policy.version}"
    existing = store.resolve(rid)
    if existing is not None and existing.release_id == rid \
            and existing.catalog_sha256 == hashlib.sha256(blob).hexdigest():
        try:
            if RetrievalPolicy.model_validate(existing.retrieval_policy or {}) == policy:
                return existing
        except ValueError:
            pass
    return store.publish_release(rid, retrieval_policy=policy.model_dump(mode="json"),
                                 catalog_blob=blob, meta=bundle_meta(generated))


def ensure_default_release(store: Any, generated: Path | None, alias: str = DEFAULT_ALIAS) -> str | None:
    """Start-up: when ``alias`` points nowhere and a build exists, publish it and point the alias
    at it. An existing alias is never moved. Returns the release id published, or None."""
    if alias in store.aliases() or generated is None:
        return None
    if not (Path(generated) / "catalog.json").is_file():
        return None
    rel = publish(store, Path(generated))
    # another replica may have won the race; promote only if still unset
    if alias not in store.aliases():
        store.promote(alias, rel.release_id)
    return rel.release_id


# -- loading a release for serving ---------------------------------------------------------------

@dataclass
class LoadedRelease:
    release_id: str
    policy: RetrievalPolicy
    catalog: Any
    retriever: Any
    dispatcher: Any
    folder: Path
    facts: dict[str, Any] = field(default_factory=dict)  # adapter id -> rerank.AdapterFacts


class ReleaseCache:
    """Unpacks and loads releases on demand, once each (thread-safe), keyed by release id."""

    def __init__(self, store: Any, cache_root: Path, *, dispatcher_factory: Any = None):
        self.store = store
        self.cache_root = Path(cache_root)
        self.dispatcher_factory = dispatcher_factory
        self._loaded: dict[str, LoadedRelease] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def loaded(self, release_id: str) -> LoadedRelease | None:
        return self._loaded.get(release_id)

    def load(self, release: Any) -> LoadedRelease:
        """Blocking: unpack (if needed) and load. Raises ApiError(release_unavailable)."""
        hit = self._loaded.get(release.release_id)
        if hit is not None:
            return hit
        with self._guard:
            lock = self._locks.setdefault(release.release_id, threading.Lock())
        with lock:
            hit = self._loaded.get(release.release_id)
            if hit is not None:
                return hit
            loaded = self._load(release)
            self._loaded[release.release_id] = loaded
            return loaded

    async def aload(self, release: Any) -> LoadedRelease:
        hit = self._loaded.get(release.release_id)
        if hit is not None:
            return hit
        return await asyncio.to_thread(self.load, release)

    def _load(self, release: Any) -> LoadedRelease:
        from ummaya.runtime.catalog import Catalog
        from ummaya.runtime.dispatch import Dispatcher

        from ummaya.runtime.service import reranked

        try:
            policy = RetrievalPolicy.model_validate(release.retrieval_policy or {})
        except ValueError as exc:
            raise ApiError("release_unavailable", f"release {release.release_id}: bad retrieval policy: {exc}") from None
        sha = release.catalog_sha256 or "nosha"
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", release.release_id)[:80]
        folder = self.cache_root / f"{safe}-{sha[:12]}"
        if not (folder / ".complete").exists():
            blob = self.store.release_catalog(release.release_id)
            if blob is None:
                raise ApiError("release_unavailable", f"release {release.release_id} has no stored bundle")
            if release.catalog_sha256 and hashlib.sha256(blob).hexdigest() != release.catalog_sha256:
                raise ApiError("release_unavailable", f"release {release.release_id}: bundle does not match its sha256")
            self.cache_root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{safe}-", dir=self.cache_root))
            try:
                unpack_bundle(blob, tmp)
                (tmp / ".complete").write_text(release.release_id)
                try:
                    os.replace(tmp, folder)
                except OSError:  # another process unpacked it first
                    shutil.rmtree(tmp, ignore_errors=True)
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        catalog = Catalog.load(folder)
        try:
            # Reranked as every surface ranks (runtime/service.py ``reranked``): the server only
            # observes the ranking of a request, it never makes one of its own.
            retriever = reranked(policy.retriever(folder, catalog=catalog), catalog, policy)
        except PolicyUnavailable as exc:
            raise ApiError("release_unavailable", f"release {release.release_id}: {exc}") from None
        dispatcher = (self.dispatcher_factory or Dispatcher)(catalog)
        # The topic words of every adapter's hints (~1 s at 150 adapters): paid here, once per
        # release, not by the first citizen whose turn asks for them.
        from ummaya.runtime.dialogue.resolve import topic_vocabulary

        topic_vocabulary(catalog)
        return LoadedRelease(release.release_id, policy, catalog, retriever, dispatcher, folder,
                             dict(retriever.facts))
