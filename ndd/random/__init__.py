"""``ndd.random``: the random number generator ``RNG``, the default RNG of each
thread, and the random operators (uniform, normal, coin_flip, beta, choice),
whose functions are generated from the schemas in ``ndd._ops.random_ops``.

Every operator that consumes randomness takes ``rng=``: an ``RNG``, or None for
the calling thread's default RNG. Each call draws a fixed number of values from
it when it is made, so the same seed gives the same results whatever the
evaluation mode, thread or process.
"""

from ._rng import RNG, get_default_rng, set_seed

__all__ = ["RNG", "get_default_rng", "set_seed"]
