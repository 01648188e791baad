"""Agent SPECs as `pvf play` reads them, and the planner each one builds.

    SPEC   := LEAVES | resolve[:KEY=VALUE[,KEY=VALUE...]] | particles[:PKEY=VALUE[,PKEY=VALUE...]]
              | mmds[:MKEY=VALUE[,MKEY=VALUE...]]
    LEAVES := oracle | targets | zero | PATH.ckpt[+PATH.ckpt...] (several: the mean of their values)
    KEY    := leaves (LEAVES; default oracle) | depth (the trunk leaves' move number) | iterations (default 100)
              | solver (a `pvf.solvers.registry` name; default cfr+) | gadget (on, the default, or off)
              | replan (horizon, the default, or every)
    PKEY   := k (particle draws per sample, default 16)
              | leaves (oracle, zero, rollout or PATH.ckpt[+PATH.ckpt...]; default oracle)
              | depth | horizon (the trunk leaves this many moves below each solve's root, instead of depth)
              | fallback (zero or rollout: with nets and a horizon, the leaves at moves no net was trained at)
              | endgame (solves from this move on go to the end of the game)
              | iterations | min_live (default 1) | explore (default 0.01) | engine (auto, native, openspiel)
              | replan (horizon, the default, or every) | solver (cfr+, the default, or mmd: MMD on the subgame)
              | greed (β ≥ 0 of rollout leaves' bidding policy, default 0: uniform; `pvf.games.rollouts`)
    MKEY   := k (belief samples per decision, default 10) | eta (step size, default 50) | alpha (the magnet's
              weight, default 0.01) | draws (sampled continuations per rollout value, default 64)
              | greed (β ≥ 0 of the blueprint's bidding policy, default 0: uniform; `pvf.games.rollouts`)
    OPPONENT := SPEC | random | mcts | human | ismcts[:IKEY=VALUE[,IKEY=VALUE]]   (`pvf.agents.matches`)
    IKEY   := sims (simulations a move, default 1000) | greed (β ≥ 0 of its opponent model, default 0:
              uniform; `pvf.agents.ismcts`)

A SPEC that is only a leaf evaluator means the re-solving planner with its
defaults (`--agent oracle`, `--agent runs/x.ckpt`). Leaf evaluators:
`oracle`, each leaf subgame solved exactly (LP, `ExactEvaluator`);
`targets`, the leaf subgames solved as the recipe's training targets are
(CFR+, best responses guarded at zero beliefs: what a perfect network
trained on them would return); `zero`, every leaf worth 0; a checkpoint, a
trained network. The depth defaults to a checkpoint's training depth, else
to the game's fig. 3 depth (Leduc 7, Goofspiel-5 2); other games need
`depth=`. `particles:` is the agent on particle beliefs
(`pvf.agents.particle_agent`: simultaneous-move games without chance, such
as Goofspiel; no public tree needed), with the oracle, a constant,
`rollout` (the value of random play from each leaf history, uniform or
with `greed=β`, `pvf.valuefn.rollout_leaves`) or a particle / attention network at its
leaves. A net values the PBSs of the move it was trained at only: with a
depth, every net of `leaves=` must be of that move; with a horizon the
solves' leaves lie at successive moves, and each solve takes the mean of
the nets trained at its leaves' move, or the `fallback` leaves where none
was (a move with neither is refused when the agent is made). `mmds:` is MMD search
(`pvf.agents.mmd_search`: one MMD update of the uniform blueprint, or of a
greedier random one with `greed=β`, from sampled beliefs and rollouts, the
update-equivalence paper's planner; no subgame is solved; Goofspiel).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pvf.agents.mmd_search import MMDSearch, mmd_search
from pvf.agents.particle_agent import ParticlePlanner
from pvf.agents.resolving import REPLANS, Planner
from pvf.errors import PvfError
from pvf.games.engine import ENGINES
from pvf.games.features import build_feature_tables
from pvf.games.loading import LoadedGame, canonical_game_string
from pvf.games.paper import PAPER_GAMES
from pvf.games.public_tree import PublicTree
from pvf.solvers.evaluators import (
    CFRTargetEvaluator,
    ConstantEvaluator,
    ExactEvaluator,
    mean_of,
)
from pvf.solvers.registry import SOLVERS, get_solver
from pvf.solvers.sparse_trunks import LeafFactory
from pvf.valuefn.rollout_leaves import rollout_leaves

LEAF_EVALUATORS = ("oracle", "targets", "zero")
OPENSPIEL_BOTS = ("random", "ismcts", "mcts", "human")  # opponents only (`pvf.agents.matches`)
KEYS = ("leaves", "depth", "iterations", "solver", "gadget", "replan")
PARTICLE_KEYS = (
    "k",
    "leaves",
    "depth",
    "horizon",
    "endgame",
    "fallback",
    "iterations",
    "min_live",
    "explore",
    "engine",
    "replan",
    "solver",
    "greed",
)
MMDS_KEYS = ("k", "eta", "alpha", "draws", "greed")
ISMCTS_KEYS = ("sims", "greed")
ISMCTS_SIMULATIONS = 1000
PARTICLE_LEAVES = ("oracle", "zero", "rollout")
FALLBACKS = ("zero", "rollout")  # leaves at moves no net of a horizon agent was trained at


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


@dataclass(frozen=True)
class ParticleAgentSpec:
    """A parsed `particles:` SPEC: draws per sample, leaves (oracle, zero or a checkpoint), depth limit (None:
    the checkpoint's, else the game's fig. 3 depth), iterations, min_live, explore, the particle engine and
    when to re-solve (`pvf.agents.particle_agent.ParticlePlanner`)."""

    k: int = 16
    leaves: str = "oracle"
    depth: int | None = None
    horizon: int | None = None
    endgame: int | None = None
    iterations: int = 100
    min_live: int = 1
    explore: float = 0.01
    engine: str = "auto"
    replan: str = "horizon"
    solver: str = "cfr+"
    fallback: str = ""
    greed: float = 0.0

    @property
    def label(self) -> str:
        """The spec written out in full (for tables and JSON)."""
        depth = "" if self.depth is None else f",depth={self.depth}"
        depth += "" if self.horizon is None else f",horizon={self.horizon}"
        depth += "" if self.endgame is None else f",endgame={self.endgame}"
        depth += "" if not self.fallback else f",fallback={self.fallback}"
        return (
            f"particles:k={self.k},leaves={self.leaves}{depth},iterations={self.iterations},"
            f"min_live={self.min_live},explore={self.explore:g},engine={self.engine},replan={self.replan}"
            + ("" if self.solver == "cfr+" else f",solver={self.solver}")
            + ("" if not self.greed else f",greed={self.greed:g}")
        )


@dataclass(frozen=True)
class MMDSearchSpec:
    """A parsed `mmds:` SPEC: belief samples per decision, step size, magnet weight, sampled continuations
    per rollout value and the blueprint's greed (`pvf.agents.mmd_search.MMDSearch`; defaults the paper's for
    the uniform blueprint)."""

    k: int = 10
    eta: float = 50.0
    alpha: float = 0.01
    draws: int = 64
    greed: float = 0.0

    @property
    def label(self) -> str:
        """The spec written out in full (for tables and JSON; greed only where it is not 0)."""
        return f"mmds:k={self.k},eta={self.eta:g},alpha={self.alpha:g},draws={self.draws}" + (
            f",greed={self.greed:g}" if self.greed else ""
        )


@dataclass(frozen=True)
class IsmctsSpec:
    """A parsed `ismcts:` opponent: simulations a move and the greed β of its opponent model (0: uniform)."""

    sims: int = ISMCTS_SIMULATIONS
    greed: float = 0.0


def parse_ismcts(text: str) -> IsmctsSpec:
    """The `IsmctsSpec` of an `ismcts[:sims=N,greed=β]` opponent; a one-line `PvfError` naming what is wrong."""
    who = "opponent"
    fields = _fields(text, "ismcts", ISMCTS_KEYS, who)
    values: dict = {}
    if "sims" in fields:
        values["sims"] = _integer(text, "sims", fields["sims"], who)
    if "greed" in fields:
        values["greed"] = _number(text, "greed", fields["greed"], who)
        if not 0.0 <= values["greed"] < float("inf"):
            raise PvfError(f"{who} {text!r}: greed is a number β ≥ 0 (0: the uniform opponent model)")
    return IsmctsSpec(**values)


def parse_agent(text: str) -> AgentSpec | ParticleAgentSpec | MMDSearchSpec:
    """The `AgentSpec`, `ParticleAgentSpec` or `MMDSearchSpec` of a SPEC string (module docstring); a one-line
    `PvfError` naming what is wrong."""
    text = text.strip()
    if text.partition(":")[0] in OPENSPIEL_BOTS:
        raise PvfError(
            f"agent {text!r} is an OpenSpiel bot: it plays only as the opponent (--opponent, or after '@' in a "
            "pairing); the agent is resolve[:...], particles[:...] or mmds[:...]"
        )
    if text == "mmds" or text.startswith("mmds:"):
        return _parse_mmds(text)
    if text == "particles" or text.startswith("particles:"):
        return _parse_particles(text)
    if text != "resolve" and not text.startswith("resolve:"):
        return AgentSpec(leaves=_leaves(text, text))
    fields = _fields(text, "resolve", KEYS)
    spec = AgentSpec(leaves=_leaves(fields.get("leaves", "oracle"), text))
    for key in ("depth", "iterations"):
        if key in fields:
            spec = AgentSpec(**{**spec.__dict__, key: _integer(text, key, fields[key])})
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


def _parse_particles(text: str) -> ParticleAgentSpec:
    fields = _fields(text, "particles", PARTICLE_KEYS)
    values: dict = {}
    for key in ("k", "depth", "horizon", "endgame", "iterations", "min_live"):
        if key in fields:
            values[key] = _integer(text, key, fields[key])
    if "depth" in values and "horizon" in values:
        raise PvfError(f"agent {text!r}: give the depth limit as depth (a move) or horizon (moves ahead), not both")
    if "leaves" in fields:
        value = fields["leaves"]
        values["leaves"] = value if value in PARTICLE_LEAVES else _leaves(value, text)
        if values["leaves"] == "targets":
            raise PvfError(
                f"agent {text!r}: the particle agent's leaves are {', '.join(PARTICLE_LEAVES)} or a .ckpt file"
            )
    if "explore" in fields:
        values["explore"] = _number(text, "explore", fields["explore"])
        if not 0.0 <= values["explore"] <= 1.0:
            raise PvfError(f"agent {text!r}: explore is a probability in [0, 1]")
    if "greed" in fields:
        values["greed"] = _number(text, "greed", fields["greed"])
        if not values["greed"] >= 0.0:
            raise PvfError(f"agent {text!r}: greed is a number β ≥ 0 (0: uniform rollouts)")
    for key, allowed in (("engine", ENGINES), ("replan", REPLANS), ("solver", tuple(SOLVERS)), ("fallback", FALLBACKS)):
        if key in fields:
            if fields[key] not in allowed:
                raise PvfError(f"agent {text!r}: {key} takes one of {', '.join(allowed)}, got {fields[key]!r}")
            values[key] = fields[key]
    spec = ParticleAgentSpec(**values)
    if spec.greed and "rollout" not in (spec.leaves, spec.fallback):
        raise PvfError(f"agent {text!r}: greed sets the rollout policy; it needs leaves=rollout or fallback=rollout")
    if spec.fallback and (spec.horizon is None or not spec.leaves.endswith(".ckpt")):
        raise PvfError(
            f"agent {text!r}: fallback sets the leaves where no net applies; it needs .ckpt leaves and horizon"
        )
    return spec


def _parse_mmds(text: str) -> MMDSearchSpec:
    fields = _fields(text, "mmds", MMDS_KEYS)
    values: dict = {key: _integer(text, key, fields[key]) for key in ("k", "draws") if key in fields}
    values.update({key: _number(text, key, fields[key]) for key in ("eta", "alpha", "greed") if key in fields})
    if values.get("eta", 1.0) <= 0 or values.get("alpha", 0.0) < 0:
        raise PvfError(f"agent {text!r}: eta must be positive and alpha non-negative")
    if not values.get("greed", 0.0) >= 0:
        raise PvfError(f"agent {text!r}: greed is the blueprint's β ≥ 0")
    return MMDSearchSpec(**values)


def _fields(text: str, prefix: str, keys: tuple[str, ...], who: str = "agent") -> dict[str, str]:
    fields: dict[str, str] = {}
    for part in filter(None, text.removeprefix(prefix).removeprefix(":").split(",")):
        key, sep, value = part.partition("=")
        if not sep or key not in keys:
            raise PvfError(f"{who} {text!r}: {part!r} is not KEY=VALUE with KEY one of {', '.join(keys)}")
        if key in fields:
            raise PvfError(f"{who} {text!r} gives {key} twice")
        fields[key] = value
    return fields


def _integer(text: str, key: str, value: str, who: str = "agent") -> int:
    try:
        number = int(value)
    except ValueError:
        raise PvfError(f"{who} {text!r}: {key} takes an integer, got {value!r}") from None
    zero_allowed = key in ("depth", "endgame", "min_live")
    if number < (0 if zero_allowed else 1):
        raise PvfError(f"{who} {text!r}: {key} must be {'non-negative' if zero_allowed else 'positive'}")
    return number


def _number(text: str, key: str, value: str, who: str = "agent") -> float:
    try:
        return float(value)
    except ValueError:
        raise PvfError(f"{who} {text!r}: {key} takes a number, got {value!r}") from None


def _leaves(value: str, text: str) -> str:
    if value in LEAF_EVALUATORS:
        return value
    if value.endswith(".ckpt"):
        for path in value.split("+"):
            if not Path(path).is_file():
                raise PvfError(f"agent {text!r}: no checkpoint file {path!r}")
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
        networks = _networks(spec.leaves, tree.game_string, depth)
        depth = networks[0].meta.layout.depth if depth is None else depth
        features = build_feature_tables(tree)
        evaluator = lambda trunk: mean_of([n.evaluator(trunk, features) for n in networks])  # noqa: E731
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


def make_particle_planner(spec: ParticleAgentSpec, loaded: LoadedGame) -> ParticlePlanner:
    """The particle planner a spec describes for `loaded` (a checkpoint is loaded, checked against the game and
    refused if positional: its slots need the public tree)."""
    depth = spec.depth
    game_root, move_leaves = False, {}
    if spec.leaves in PARTICLE_LEAVES:
        leaves = _named_leaves(spec.leaves, loaded, spec.greed)
    elif spec.horizon is not None:
        move_leaves = _move_leaves(spec, loaded)
        # zero where every move has nets: never asked
        leaves = _named_leaves(spec.fallback or "zero", loaded, spec.greed)
    else:
        networks = _networks(spec.leaves, loaded.game_string, depth)
        _check_particle_nets(spec.leaves, networks)
        depth = networks[0].meta.layout.depth if depth is None else depth
        game_root = True
        leaves = _nets_leaves(networks)
    if depth is None and spec.horizon is None:
        depth = _paper_depth(loaded.game_string)
    return ParticlePlanner(
        particles=spec.k,
        depth=depth,
        leaves=leaves,
        horizon=spec.horizon,
        endgame=spec.endgame,
        move_leaves=move_leaves,
        below_leaves=spec.leaves == "oracle",
        game_root=game_root,
        iterations=spec.iterations,
        min_live=spec.min_live,
        explore=spec.explore,
        engine=spec.engine,
        replan=spec.replan,
        solver=get_solver(spec.solver),
    )


def _named_leaves(name: str, loaded: LoadedGame, greed: float) -> LeafFactory:
    """The particle agent's leaves of a name in `PARTICLE_LEAVES`: the exact oracle, zero or rollouts (their
    policy's `greed`)."""
    if name == "oracle":
        return lambda setting: ExactEvaluator
    if name == "zero":
        return lambda setting: lambda trunk: ConstantEvaluator(0.0)
    return rollout_leaves(loaded, greed=greed)


def _move_leaves(spec: ParticleAgentSpec, loaded: LoadedGame) -> dict[int, LeafFactory]:
    """A horizon agent's nets by the move they were trained at, each move's the mean of its nets; PvfError where a
    solve's leaves lie at a move none was trained at and there is no fallback."""
    by_move: dict[int, list] = {}
    for path in spec.leaves.split("+"):
        network = _networks(path, loaded.game_string, None)[0]
        by_move.setdefault(network.meta.layout.depth, []).append(network)
    _check_particle_nets(spec.leaves, [n for nets in by_move.values() for n in nets])
    moves = int(loaded.sequential.max_game_length()) // 2  # move `moves` is the end of the game: no leaves there
    solved = range(moves if spec.endgame is None else min(spec.endgame, moves))
    missing = sorted({m + spec.horizon for m in solved if m + spec.horizon < moves} - by_move.keys())
    if missing and not spec.fallback:
        raise PvfError(
            f"agent {spec.label!r}: its solves have leaves at move(s) {', '.join(map(str, missing))}, where no net "
            f"of leaves= was trained (theirs: {', '.join(map(str, sorted(by_move)))}); add nets trained there, or "
            f"fallback=rollout (or zero) for those moves"
        )
    return {move: _nets_leaves(nets) for move, nets in by_move.items()}


def _nets_leaves(networks: list) -> LeafFactory:
    """The mean of `networks`' values at a setting's trunk leaves (the game-root convention they were trained in)."""

    def leaves(setting):
        features = build_feature_tables(setting.tree)
        return lambda trunk: mean_of([n.evaluator(trunk, features) for n in networks])

    return leaves


def _check_particle_nets(leaves: str, networks: list) -> None:
    if any(n.architecture == "positional" for n in networks):
        raise PvfError(f"{leaves}: a positional net needs the public tree; use a particle or attention one")


def _networks(leaves: str, game: str, depth: int | None) -> list:
    """The networks of `A.ckpt[+B.ckpt...]`, each checked against the game and one depth (the first's by default)."""
    from pvf.valuefn.network import load_value_function

    networks = []
    for path in leaves.split("+"):
        networks.append(load_value_function(path, game=game, depth=depth))
        depth = networks[0].meta.layout.depth if depth is None else depth
    return networks


def _paper_depth(game: str) -> int:
    for paper in PAPER_GAMES.values():
        if canonical_game_string(paper.game) == canonical_game_string(game):
            return paper.fig3_depth
    raise PvfError(f"no default depth limit for {game!r}; give the agent depth=N (the trunk leaves' move number)")


def make_mmd_search(spec: MMDSearchSpec, loaded: LoadedGame, seed: int) -> MMDSearch:
    """The `MMDSearch` an `mmds:` SPEC describes in `loaded`, its decisions seeded by `seed`."""
    return mmd_search(loaded, spec.k, spec.eta, spec.alpha, spec.draws, seed, spec.greed)
