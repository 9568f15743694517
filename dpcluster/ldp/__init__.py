"""Paper B: local-DP bit-vector encodings and clustering in the anonymised space.

bitvector  BV / DPBV encodings, packed (docs/methods.md B1, B3), δ of Theorem 4
distance   Hamming → Euclidean estimates, Eq. 20, Algorithm 1 (B2, B4)
kcluster   clustering on a distance matrix (B5)
parties    custodians and receivers that exchange only encodings (B7)
baselines  ADP and RSP (B8)
"""

from ..cache import share_numba_cache

share_numba_cache()  # before the first @njit: one compiled cache per commit and machine
