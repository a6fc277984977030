"""Layer 0: helpers every other layer may use (lazy imports, segment kernels, errors, progress, cutoffs,
shared types such as PathLike, array helpers).

Nothing here imports from another part of the package.
"""
