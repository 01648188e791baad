"""pvf from Python, end to end on Kuhn poker (about 20 s on one core; tests/test_example.py runs it).

python docs/example.py [OUT_DIR]
"""

import sys
import tempfile
from pathlib import Path

import pvf

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())

# 1. Solve a whole game with CFR+: NashConv (sum of both players' gains) and the game value.
solution = pvf.solve("kuhn_poker", iterations=1000)
print(f"kuhn: NashConv {solution.nash_conv:.2e}, value {solution.value:.5f} (exact: -1/18 = {-1 / 18:.5f})")

# 2. A depth-limited trunk (initial state to move 3) solved with exact leaf values and with zeros.
trunk = pvf.build_trunk("kuhn_poker", depth=3)
oracle = pvf.solve_trunk(trunk, pvf.ExactEvaluator(trunk), iterations=100)
zero = pvf.solve_trunk(trunk, pvf.ConstantEvaluator(0.0), iterations=100)
print(
    f"trunk exploitability: exact leaves {oracle.exploitability.exploitability:.4f}, "
    f"zero leaves {zero.exploitability.exploitability:.4f}"
)

# 3. A PBS dataset with CFR+ targets, a particle value function trained on it, and that net at the leaves.
pvf.generate_dataset("kuhn_poker", depth=3, trunks=20, out=out / "kuhn.h5", cfr_iterations=50)
run = pvf.train_value_function(
    out / "kuhn.h5",
    "particle",
    out / "kuhn_particle.ckpt",
    seed=0,
    max_steps=200,
    every_n_steps=100,
    iterations=100,
    batch_size=8,
    lr=3e-3,
)
network = pvf.load_value_function(run.checkpoint)
learned = pvf.solve_trunk(trunk, network.evaluator(trunk), iterations=100)
print(f"trunk exploitability with the trained {network.architecture} net: {learned.exploitability.exploitability:.4f}")
