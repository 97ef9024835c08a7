"""Merge an upstream profile into a manifest's upstream block.

The manifest names a profile and adds only what is its own; the catalog the runtime loads carries
the merged result, so the runtime never needs registry/ or the profile files.
"""

from __future__ import annotations

from .manifest import Manifest, Profile, Upstream


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
    merged.envelope = upstream.envelope or prof.envelope
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
