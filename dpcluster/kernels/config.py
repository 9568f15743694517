"""Every tuning constant of the kernels, in one place. Each changes only speed, never a
number: the kernels' results are bit-identical for any value (tests/test_kernels.py). The
measurements behind each value are in docs/performance.md ("Kernel tuning constants").
"""

# --- Lloyd batches over many runs (assign.py, unrolled.py) ---------------------------------

#: runs handled together by one thread, and the lanes of a generated kernel's chunk
RUN_CHUNK = 64

#: up to this many centroids the batch kernel replaces the per-lane scatter of a point into
#: its cluster's count and sums by a masked add over every centroid (adding 0·x leaves a
#: sum unchanged, so the results are the same); faster for small k, slower for large
BATCH_MASKED_MAX_K = 8

#: batches of at least this many runs may use the generated kernels of unrolled.py;
#: smaller ones are not worth a first compilation
UNROLLED_MIN_RUNS = 256

#: dimensions that get a batch kernel with the coordinate loop unrolled; wider data take
#: the interchanged kernels of wide.py
LITERAL_DIMS = range(1, 11)

#: points searched together by the wide batch kernel, so each row of its centroid table is
#: read once for all of them
WIDE_POINTS = 8

#: runs per lane block of the SSE kernel: divides both PGkM's pool (200) and DPLloyd's
#: 3,000 runs, so no lane is wasted on either
SSE_CHUNK = 40

#: the largest k·d with a generated batch kernel (compile time grows with k·d·U)
UNROLLED_MAX_KD = 64

#: the largest float32 tolerance scale A the generated kernel certifies its labels for;
#: beyond it the loop kernel is used
UNROLLED_MAX_SCALE = 1e30

# --- EUGkM's grids (grid.py) ----------------------------------------------------------------

#: up to this many centroids the grid kernel's cluster sums use the masked add
GRID_MASKED_MAX_K = 4

#: runs per lane block of the grid kernel (a compile-time literal, so the loops vectorise);
#: one width only, as a second would cost another cold compile
GRID_LANES = 32

# --- single fits on many points (points.py, scan.py) ----------------------------------------

#: points per block (fixed, so partial sums do not depend on the thread count)
POINT_BLOCK = 16_384

#: fits on at least this many points use the generated point kernel
GENERATED_MIN_POINTS = 200_000

#: the largest k·d with a generated point kernel (compilation time grows with it)
GENERATED_MAX_KD = 128

#: where the next slice's records are prefetched to (LLVM's locality: 3 all levels, 2 L2)
PREFETCH_KEEP = 2

#: records per shuffle of the generated point kernel's transpose
SHUFFLE_ROWS = 8

#: points per transposed slice of the generated point kernel
SLICE = 512

#: rows per block of the parallel input scan
SCAN_BLOCK = 65_536

# --- compile where it pays (dispatch.py) ----------------------------------------------------

#: with the policy "auto", a shape's generated kernel is compiled once the loop kernel has
#: spent this many seconds on it in this process: about one cold compilation, so a shape a
#: run meets once stays on the loop kernel and one it meets often pays the compilation back
COMPILE_AFTER_S = 8.0

#: the grid kernel unrolls its centroid loop inside the lane loop up to this k; beyond it
#: the centroid loop goes outside the lane loop (the same labels; ``scripts/bench_grid.py``)
GRID_UNROLL_MAX_K = 24

#: the block grid kernel (grid_blocks.py) serves grids from this many dimensions: at d = 3
#: its slab is one block and it was slower than the row kernel at every measured shape
GRID_BLOCKS_MIN_D = 4

#: ... and while its table of the last two axes' weights, m²·k·GRID_LANES doubles, fits in
#: this many bytes (1.14x at 310 KB, 0.98x at 740 KB and 0.85x at 1.9 MB; docs/performance.md)
GRID_BLOCKS_MAX_BYTES = 512 * 1024

#: the pruned grid search (pruned.py) compares a box's surviving centroids cell by cell
#: once the box has at most this many cells
GRID_PRUNED_LEAF = 128

#: a box is split across its rows (the last axis) only when that axis is this many times
#: wider than every other: long rows are the leaf loop's vectors
GRID_PRUNED_ROW_BIAS = 4

#: the pruned grid search pays in one dimension from this many centroids on ...
GRID_PRUNED_1D_MIN_K = 8

#: ... and in two dimensions from this many centroids on, with at least this many cells
#: per centroid (m²/k): its cost per (cell, run) has a floor (a label and a chained
#: addition) that the lane-vectorised search beats at small k, and boxes shrink around
#: each centroid only where a centroid's region spans many cells. Above two dimensions it
#: was slower at every measured shape.
GRID_PRUNED_2D_MIN_K = 32
GRID_PRUNED_2D_CELLS_PER_K = 500
