"""The lowest layer: configuration, errors, the topic catalog, progress lines. Imports nothing of ours above it."""
