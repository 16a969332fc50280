"""retrograd.utils: checkpointing, data loading, dispatch modes."""
