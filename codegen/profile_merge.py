"""Merge an upstream profile into a manifest's upstream block.

The manifest names a profile and adds only what is its own; the catalog the runtime loads carries
the merged result, so the runtime never needs registry/ or the profile files.
"""

from __future__ import annotations

from ummaya.model.manifest import Envelope, Manifest, Profile, ResponseFields, Step, Upstream

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


def credential_binding(upstream: Upstream, prof: Profile | None) -> dict[str, list[str]]:
    """Each credential of the profile -> the profile's hosts: the only places the dispatcher will
    send it (runtime/dispatch/binding.py). Only the profile binds: a manifest without one, or
    naming a credential its profile does not declare, binds nothing, and so sends no key."""
    if prof is None:
        return {}
    hosts = prof.bound_hosts()
    return {name: list(hosts) for name in prof.credentials()} if hosts else {}


def resolve_upstream(upstream: Upstream, profiles: dict[str, Profile]) -> Upstream:
    if upstream.profile is None:
        if not upstream.steps:
            if upstream.credential_hosts:  # never a manifest's to declare (link reports it)
                return upstream.model_copy(update={"credential_hosts": {}})
            return upstream
        merged = upstream.model_copy(deep=True)
        merged.steps = [resolve_step(step, merged, profiles) for step in upstream.steps]
        merged.credential_hosts = step_bindings(upstream, profiles)
        return merged
    if upstream.profile not in profiles:
        raise UnknownProfile(upstream.profile)
    prof = profiles[upstream.profile]
    merged = upstream.model_copy(deep=True)
    merged.credential_hosts = credential_binding(upstream, prof)
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
    merged.quota = upstream.quota or prof.quota
    merged.steps = [resolve_step(step, merged, profiles) for step in upstream.steps]
    merged.credential_hosts = {**step_bindings(upstream, profiles), **merged.credential_hosts}
    return merged


def step_bindings(upstream: Upstream, profiles: dict[str, Profile]) -> dict[str, list[str]]:
    """A step on another profile (JUSO before the building register) sends that profile's key:
    bound, like the main one, to that profile's hosts only — and only when the step goes to one of
    them (a step with its own base_url elsewhere binds nothing)."""
    from urllib.parse import urlsplit

    out: dict[str, list[str]] = {}
    for step in upstream.steps:
        if step.profile is None or step.profile not in profiles:
            continue
        prof = profiles[step.profile]
        if step.base_url and (urlsplit(step.base_url).hostname or "").lower() not in prof.bound_hosts():
            continue
        for name, hosts in credential_binding(upstream, prof).items():
            out.setdefault(name, hosts)
    return out


def resolve_step(step: Step, main: Upstream, profiles: dict[str, Profile]) -> Step:
    """A step names another profile (JUSO before the building register) or shares the main
    request's host, key and envelope; either way the catalog carries it complete."""
    out = step.model_copy(deep=True)
    if step.profile is not None:
        if step.profile not in profiles:
            raise UnknownProfile(step.profile)
        prof = profiles[step.profile]
        out.base_url = step.base_url or prof.base_url
        out.auth = step.auth or prof.auth
        out.envelope = merge_envelope(step.envelope, prof.envelope)
        if step.format_param is None:
            out.format_param = dict(prof.format_param)
        out.static_params = {**prof.static_params, **step.static_params}
    else:
        out.base_url = step.base_url or main.base_url
        out.auth = step.auth or main.auth
        out.envelope = merge_envelope(step.envelope, main.envelope)
        if step.format_param is None:
            out.format_param = dict(main.format_param or {})
    if out.format is None:
        out.format = main.format
    return out


def resolve_manifest(manifest: Manifest, profiles: dict[str, Profile]) -> Manifest:
    """A copy of the manifest whose upstream has every profile default filled in."""
    if manifest.upstream is None:
        return manifest
    # Only the upstream changes, and resolve_upstream copies it: the rest is shared with the
    # manifest, not deep-copied (that copy was an eighth of an incremental build; nothing that
    # reads a resolved manifest writes to it).
    return manifest.model_copy(update={"upstream": resolve_upstream(manifest.upstream, profiles)})
