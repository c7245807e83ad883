"""Launch layers, for configs whose entrypoint is ``python3 -m determined.launch.<name> ...``."""
