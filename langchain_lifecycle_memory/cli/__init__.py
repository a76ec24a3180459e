"""``lifecycle-memory``: the command line (typer + rich), the demo and ``doctor`` diagnostics."""
