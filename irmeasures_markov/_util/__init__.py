"""Layer 0: helpers every other layer may use (lazy imports, segment kernels, errors, progress, cutoffs).

Nothing here imports from another part of the package.
"""
