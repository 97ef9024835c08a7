"""Guards the engine applies to every planner's proposal before anything leaves the machine."""
