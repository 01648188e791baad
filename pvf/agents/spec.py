"""Agent SPECs as `pvf play` reads them, and the planner each one builds.

    SPEC   := LEAVES | resolve[:KEY=VALUE[,KEY=VALUE...]]
    LEAVES := oracle | targets | zero | PATH.ckpt
    KEY    := leaves (LEAVES; default oracle) | depth (the trunk leaves' move number) | iterations (default 100)
              | solver (a `pvf.solvers.registry` name; default cfr+) | gadget (on, the default, or off)
              | replan (horizon, the default, or every)

A SPEC that is only a leaf evaluator means the re-solving planner with its
defaults (`--agent oracle`, `--agent runs/x.ckpt`). Leaf evaluators:
`oracle`, each leaf subgame solved exactly (LP, `ExactEvaluator`);
`targets`, the leaf subgames solved as the recipe's training targets are
(CFR+, best responses guarded at zero beliefs: what a perfect network
trained on them would return); `zero`, every leaf worth 0; a checkpoint, a
trained network. The depth defaults to a checkpoint's training depth, else
to the game's fig. 3 depth (Leduc 7, Goofspiel-5 2); other games need
`depth=`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pvf.agents.resolving import REPLANS, Planner
from pvf.errors import PvfError
from pvf.games.features import build_feature_tables
from pvf.games.loading import canonical_game_string
from pvf.games.paper import PAPER_GAMES
from pvf.games.public_tree import PublicTree
from pvf.solvers.evaluators import CFRTargetEvaluator, ConstantEvaluator, ExactEvaluator
from pvf.solvers.registry import SOLVERS, get_solver

LEAF_EVALUATORS = ("oracle", "targets", "zero")
KEYS = ("leaves", "depth", "iterations", "solver", "gadget", "replan")
GRAMMAR = "LEAVES | resolve[:KEY=VALUE,...], LEAVES = oracle | targets | zero | PATH.ckpt, KEY = " + " | ".join(KEYS)


@dataclass(frozen=True)
class AgentSpec:
    """A parsed SPEC: the leaf evaluator's name or checkpoint path, the depth limit (None: the default), the
    iterations per solve and the solver's registry name."""

    leaves: str = "oracle"
    depth: int | None = None
    iterations: int = 100
    solver: str = "cfr+"
    gadget: bool = True
    replan: str = "horizon"

    @property
    def label(self) -> str:
        """The spec written out in full (for tables and JSON)."""
        depth = "" if self.depth is None else f",depth={self.depth}"
        return (
            f"resolve:leaves={self.leaves}{depth},iterations={self.iterations},solver={self.solver},"
            f"gadget={'on' if self.gadget else 'off'},replan={self.replan}"
        )


def parse_agent(text: str) -> AgentSpec:
    """The `AgentSpec` of a SPEC string (module docstring); a one-line `PvfError` naming what is wrong."""
    text = text.strip()
    if text != "resolve" and not text.startswith("resolve:"):
        return AgentSpec(leaves=_leaves(text, text))
    fields: dict[str, str] = {}
    for part in filter(None, text.removeprefix("resolve").removeprefix(":").split(",")):
        key, sep, value = part.partition("=")
        if not sep or key not in KEYS:
            raise PvfError(f"agent {text!r}: {part!r} is not KEY=VALUE with KEY one of {', '.join(KEYS)}")
        if key in fields:
            raise PvfError(f"agent {text!r} gives {key} twice")
        fields[key] = value
    spec = AgentSpec(leaves=_leaves(fields.get("leaves", "oracle"), text))
    for key in ("depth", "iterations"):
        if key in fields:
            try:
                number = int(fields[key])
            except ValueError:
                raise PvfError(f"agent {text!r}: {key} takes an integer, got {fields[key]!r}") from None
            if number < (0 if key == "depth" else 1):
                raise PvfError(f"agent {text!r}: {key} must be {'non-negative' if key == 'depth' else 'positive'}")
            spec = AgentSpec(**{**spec.__dict__, key: number})
    choices = {"solver": tuple(SOLVERS), "gadget": ("on", "off"), "replan": REPLANS}
    for key, allowed in choices.items():
        if key in fields:
            if fields[key] not in allowed:
                raise PvfError(f"agent {text!r}: {key} takes one of {', '.join(allowed)}, got {fields[key]!r}")
            value = fields[key] == "on" if key == "gadget" else fields[key]
            spec = AgentSpec(**{**spec.__dict__, key: value})
    if spec.gadget and (spec.solver != "cfr+" or spec.replan != "horizon"):
        raise PvfError(f"agent {text!r}: the gadget needs solver=cfr+ and replan=horizon; or give gadget=off")
    return spec


def _leaves(value: str, text: str) -> str:
    if value in LEAF_EVALUATORS:
        return value
    if value.endswith(".ckpt"):
        if not Path(value).is_file():
            raise PvfError(f"agent {text!r}: no checkpoint file {value!r}")
        return value
    raise PvfError(f"agent {text!r}: leaves are {', '.join(LEAF_EVALUATORS)} or a .ckpt file, got {value!r}")


def make_planner(spec: AgentSpec, tree: PublicTree) -> Planner:
    """The planner a spec describes for the game of `tree` (a checkpoint is loaded and checked against it)."""
    depth = spec.depth
    if spec.leaves in LEAF_EVALUATORS:
        factories = {
            "oracle": ExactEvaluator,
            "targets": lambda trunk: CFRTargetEvaluator(trunk, 100, "best_response"),
            "zero": lambda trunk: ConstantEvaluator(0.0),
        }
        evaluator = factories[spec.leaves]
    else:
        from pvf.valuefn.network import load_value_function

        network = load_value_function(spec.leaves, game=tree.game_string, depth=depth)
        depth = network.meta.layout.depth if depth is None else depth
        features = build_feature_tables(tree)
        evaluator = lambda trunk: network.evaluator(trunk, features)  # noqa: E731
    if depth is None:
        depth = _paper_depth(tree.game_string)
    return Planner(
        depth=depth,
        evaluator=evaluator,
        iterations=spec.iterations,
        solver=get_solver(spec.solver),
        replan=spec.replan,
        gadget=spec.gadget,
    )


def _paper_depth(game: str) -> int:
    for paper in PAPER_GAMES.values():
        if canonical_game_string(paper.game) == canonical_game_string(game):
            return paper.fig3_depth
    raise PvfError(f"no default depth limit for {game!r}; give the agent depth=N (the trunk leaves' move number)")
