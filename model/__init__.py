"""The model: the manifest, profile and (soon) slot-table types that codegen and runtime share.

It imports neither codegen nor the runtime: both depend on it, and they meet only here and in the
compiled artifacts under generated/.
"""
