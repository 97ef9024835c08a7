"""Merge an upstream profile into a manifest's upstream block.

The manifest names a profile and adds only what is its own; the catalog the runtime loads carries
the merged result, so the runtime never needs registry/ or the profile files.
"""

from __future__ import annotations

from .manifest import Envelope, Manifest, Profile, ResponseFields, Upstream

# Envelope fields that describe where a *shape* keeps things: inherited only when the manifest's
# envelope is of the profile's kind. The taxonomy (code lists, error rules) is inherited always —
# a service whose usual reply is flat still sends the profile's key errors.
_SHAPE_FIELDS = ("code_path", "message_path", "total_path")


def merge_envelope(own: Envelope | None, prof: Envelope | None) -> Envelope | None:
    if own is None or prof is None:
        return own or prof
    merged = own.model_copy(deep=True)
    for name in Envelope.model_fields:
        if name in own.model_fields_set or name == "kind":
            continue
        if name in _SHAPE_FIELDS and own.kind != prof.kind:
            continue
        setattr(merged, name, getattr(prof, name))
    if "errors" in own.model_fields_set:  # own rules first, then the profile's
        merged.errors = [*own.errors, *prof.errors]
    return merged


def merge_response_fields(
    own: ResponseFields | None, prof: ResponseFields | None
) -> ResponseFields | None:
    if own is None or prof is None:
        return own
    merged = own.model_copy(deep=True)
    if not own.envelope:
        merged.envelope = list(prof.envelope)
    return merged


class UnknownProfile(KeyError):
    pass


def resolve_upstream(upstream: Upstream, profiles: dict[str, Profile]) -> Upstream:
    if upstream.profile is None:
        return upstream
    if upstream.profile not in profiles:
        raise UnknownProfile(upstream.profile)
    prof = profiles[upstream.profile]
    merged = upstream.model_copy(deep=True)
    merged.base_url = upstream.base_url or prof.base_url
    merged.auth = upstream.auth or prof.auth
    merged.envelope = merge_envelope(upstream.envelope, prof.envelope)
    merged.response_fields = merge_response_fields(upstream.response_fields, prof.response_fields)
    merged.format_param = (
        upstream.format_param if upstream.format_param is not None else dict(prof.format_param)
    )
    merged.static_params = {**prof.static_params, **upstream.static_params}
    merged.timeout_s = upstream.timeout_s if upstream.timeout_s is not None else prof.timeout_s
    merged.rate_limit_per_s = (
        upstream.rate_limit_per_s
        if upstream.rate_limit_per_s is not None
        else prof.rate_limit_per_s
    )
    return merged


def resolve_manifest(manifest: Manifest, profiles: dict[str, Profile]) -> Manifest:
    """A copy of the manifest whose upstream has every profile default filled in."""
    if manifest.upstream is None:
        return manifest
    out = manifest.model_copy(deep=True)
    out.upstream = resolve_upstream(manifest.upstream, profiles)
    return out
