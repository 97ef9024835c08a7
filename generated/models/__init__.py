"""Input/output models of every adapter, generated from their JSON Schemas by `ummaya build`."""
