"""CUDA access through cuda-python. Importing this package never needs a GPU."""
