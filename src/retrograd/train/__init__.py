"""The main job: train a small CNN on scikit-learn's handwritten digits (`retrograd train`)."""
