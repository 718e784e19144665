"""Systems under tune: one package per system (adapter, knob catalogue, workloads)."""
