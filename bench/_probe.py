import cProfile, pstats, numpy as np, sys
sys.path.insert(0, "bench")
import overhead as b
import retrograd
rng = np.random.default_rng(1)
x0 = rng.standard_normal((b.BATCH, b.SIZES[0])).astype(np.float32)
y0 = rng.integers(0, b.SIZES[-1], b.BATCH)
run = b.mlp_lib(retrograd, x0, y0)
run()
pr = cProfile.Profile(); pr.enable()
for _ in range(20): run()
pr.disable(); pstats.Stats(pr).sort_stats("tottime").print_stats(25)
