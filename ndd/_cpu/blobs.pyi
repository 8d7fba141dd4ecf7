import numpy as np

def connected_blobs(
    values: np.ndarray, foreground: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
