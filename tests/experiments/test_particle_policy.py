"""`pvf experiment particle-trunks --save-policy`: the figure rechecked with OpenSpiel and scipy only.

The JSON's particles are replayed with pyspiel, the restricted game (a
chance node over them with the stored weights, then play to the end) is
walked with pyspiel, and each player's guaranteed value with the stored
trunk strategy fixed is a sequence-form LP written here (scipy's HiGHS):
    max_{x, v} v_root  s.t.  F_opp^T v ≤ A_p^T x,  E_p x = e,  x ≥ 0,
    x(I, a) = σ(I, a)·x(parent(I)) at the trunk's infostates.
Trunk exploitability (NashConv) = −(value₁ + value₂) in a zero-sum game.
Nothing of pvf is used but the command that writes the file.
"""

import json

import numpy as np
import pyspiel
import pytest
from scipy.optimize import linprog
from scipy.sparse import lil_matrix

from pvf.cli import main

GOOF4 = "goofspiel(num_cards=4,imp_info=True,points_order=descending)"


def _walk(game_string: str, particles: list[dict]):
    """Terminal payoffs of the restricted game: [(weight·chance reach, u1, seq1, seq2)] and the infostates met.

    A player's sequence is its last (infostate string, action) since the chance node, or None.
    """
    game = pyspiel.load_game(game_string)
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    leaves, infos = [], [{}, {}]  # infos[p][string] = (parent sequence, legal actions)

    def visit(state, prob, seqs):
        if state.is_terminal():
            leaves.append((prob, state.returns()[0], seqs[0], seqs[1]))
            return
        if state.is_chance_node():
            for a, q in state.chance_outcomes():
                visit(state.child(a), prob * q, seqs)
            return
        p = state.current_player()
        key = state.information_state_string(p)
        infos[p].setdefault(key, (seqs[p], tuple(state.legal_actions())))
        for a in state.legal_actions():
            nxt = list(seqs)
            nxt[p] = (key, a)
            visit(state.child(a), prob, tuple(nxt))

    for particle in particles:
        state = game.new_initial_state()
        for a in particle["actions"]:
            state.apply_action(a)
        visit(state, particle["weight"], (None, None))
    return leaves, infos


def _guaranteed_value(leaves, infos, player: int, policy: dict) -> float:
    """max over `player`'s strategies that play `policy` at its keys, min over the opponent's, of its payoff."""
    opp = 1 - player
    mine = [None] + [(k, a) for k, (_, acts) in infos[player].items() for a in acts]
    theirs = [None] + [(k, a) for k, (_, acts) in infos[opp].items() for a in acts]
    xi, yi = {s: i for i, s in enumerate(mine)}, {s: i for i, s in enumerate(theirs)}
    rows = [None] + list(infos[opp])  # v: the opponent's root constraint and infostates
    nx, nv = len(mine), len(rows)
    # F_opp^T v − A_p^T x ≤ 0: one row per opponent sequence.
    ub = lil_matrix((len(theirs), nx + nv))
    for prob, u1, s1, s2 in leaves:
        me, them = (s1, s2) if player == 0 else (s2, s1)
        ub[yi[them], xi[me]] -= prob * (u1 if player == 0 else -u1)
    ub[0, nx] = 1.0  # root constraint y(∅) = 1
    for r, key in enumerate(rows[1:], start=1):
        parent, acts = infos[opp][key]
        ub[yi[parent], nx + r] -= 1.0
        for a in acts:
            ub[yi[(key, a)], nx + r] += 1.0
    eq_rows = [{0: 1.0}]
    for key, (parent, acts) in infos[player].items():
        eq_rows.append({xi[(key, a)]: 1.0 for a in acts} | {xi[parent]: -1.0})
        if key in policy:
            for a in acts:
                eq_rows.append({xi[(key, a)]: 1.0, xi[parent]: -policy[key][str(a)]})
    eq = lil_matrix((len(eq_rows), nx + nv))
    for i, row in enumerate(eq_rows):
        for j, c in row.items():
            eq[i, j] += c
    cost = np.zeros(nx + nv)
    cost[nx] = -1.0
    res = linprog(
        cost,
        A_ub=ub.tocsr(),
        b_ub=np.zeros(len(theirs)),
        A_eq=eq.tocsr(),
        b_eq=np.eye(len(eq_rows))[0],
        bounds=[(0, None)] * nx + [(None, None)] * nv,
        method="highs",
    )
    assert res.status == 0, res.message
    return -res.fun


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("policy")
    rc = main(
        [
            "experiment",
            "particle-trunks",
            "--game",
            "goofspiel4",
            "--root-move",
            "1",
            "--depth",
            "2",
            "--draws",
            "1,4,16",
            "--seeds",
            "0,1",
            "--out",
            str(out),
            "--save-policy",
            str(out / "policy.json"),
        ]
    )
    assert rc == 0
    with open(out / "policy.json") as f:
        return json.load(f)


def test_policy_file_rechecks_the_figure_with_openspiel_only(policy_file):
    assert policy_file["game"] == GOOF4 and len(policy_file["runs"]) == 6
    checked = 0
    for run in policy_file["runs"]:
        weights = np.array([p["weight"] for p in run["particles"]])
        np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-12)
        leaves, infos = _walk(policy_file["game"], run["particles"])
        oracle = run["evaluators"]["oracle"]["policy"]
        for p in (0, 1):  # every key is an infostate of the restricted game at a root-move decision, actions legal
            for key, probs in oracle[p].items():
                assert sorted(int(a) for a in probs) == sorted(infos[p][key][1])
                assert abs(sum(probs.values()) - 1.0) < 1e-9
        uniform = [{k: {a: 1.0 / len(probs) for a in probs} for k, probs in oracle[p].items()} for p in (0, 1)]
        for figure, policy in (
            (run["uniform_exploitability"], uniform),
            (run["evaluators"]["oracle"]["exploitability"], oracle),
        ):
            value = -(_guaranteed_value(leaves, infos, 0, policy[0]) + _guaranteed_value(leaves, infos, 1, policy[1]))
            assert value == pytest.approx(figure, abs=1e-7)
            checked += 1
    assert checked == 12
    assert max(r["uniform_exploitability"] for r in policy_file["runs"]) > 0.1  # the check is not of zeros


def test_save_policy_bad_path_writes_nothing(tmp_path, capsys):
    rc = main(
        [
            "experiment",
            "particle-trunks",
            "--game",
            "goofspiel4",
            "--root-move",
            "1",
            "--depth",
            "2",
            "--draws",
            "1",
            "--seeds",
            "0",
            "--out",
            str(tmp_path / "out"),
            "--save-policy",
            str(tmp_path / "policy.txt"),
        ]
    )
    assert rc == 2
    assert "--save-policy" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "policy.txt").exists()


def test_a_root_move_with_too_large_a_subgame_is_refused_before_any_work(tmp_path, capsys):
    """13 cards, move 3: up to (10!)² ≈ 1.3e13 histories below each particle."""
    rc = main(
        [
            "experiment",
            "particle-trunks",
            "--game",
            "goofspiel13",
            "--root-move",
            "3",
            "--depth",
            "4",
            "--out",
            str(tmp_path / "out"),
            "--save-policy",
            str(tmp_path / "p.json"),
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "over the particle tree's cap" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
