"""row_wise: an MLP run once per distinct row gives the values and gradients of running it on every row."""

import pytest
import torch
from torch.func import functional_call, stack_module_state, vmap

import pvf.nets.distinct_rows as distinct_rows
from pvf.nets import ParticleVF
from pvf.nets.distinct_rows import row_wise
from pvf.nets.mlp import build_mlp
from pvf.nets.stacked import StackedNets

F, K = 6, 4


def repeated_rows(rows: int, distinct: int, seed: int = 0, dtype=torch.float64) -> torch.Tensor:
    """[rows, F]: `distinct` random rows, each repeated, in random order, plus exact zero rows (padding)."""
    g = torch.Generator().manual_seed(seed)
    table = torch.randint(0, 3, (distinct, F), generator=g).to(dtype)
    out = table[torch.randint(0, distinct, (rows,), generator=g)]
    out[-rows // 5 :] = 0.0
    return out


def mlp(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_mlp(F, K, 3, hidden_width=8).double()


def values_and_grads(net: torch.nn.Module, fn, rows: torch.Tensor):
    net.zero_grad(set_to_none=True)
    out = fn(net, rows)
    (out * torch.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
    return out.detach(), [p.grad.clone() for p in net.parameters()]


def test_single_net_equals_every_row_and_takes_the_short_path(monkeypatch):
    net, rows = mlp(), repeated_rows(200, 7)
    seen = []
    monkeypatch.setattr(net[0], "forward", lambda x, f=net[0].forward: seen.append(len(x)) or f(x))
    fast, fast_grads = values_and_grads(net, row_wise, rows)
    assert seen[-1] <= 8  # 7 distinct rows and the zero row, not 200
    slow, slow_grads = values_and_grads(net, lambda n, r: n(r), rows)
    torch.testing.assert_close(fast, slow, rtol=0, atol=1e-14)
    for a, b in zip(fast_grads, slow_grads):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-13)


def test_stacked_members_each_get_their_own_table():
    S, R = 3, 120
    members = [mlp(s) for s in range(S)]
    stacked = StackedNets(members, backend="bmm")
    rows = torch.cat([repeated_rows(R, 5 + 3 * s, seed=s) for s in range(S)])  # members differ in their distinct rows
    out = stacked.apply_rows(row_wise, rows)
    for s, net in enumerate(members):
        torch.testing.assert_close(out[s * R : (s + 1) * R], net(rows[s * R : (s + 1) * R]), rtol=0, atol=1e-14)


def test_equal_hashes_of_unequal_rows_fall_back_to_every_row(monkeypatch):
    net, rows = mlp(), repeated_rows(100, 9)
    monkeypatch.setattr(distinct_rows, "_row_keys", lambda r: torch.zeros(len(r), dtype=torch.int64))
    torch.testing.assert_close(row_wise(net, rows), net(rows), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rows_without_repeats_and_under_vmap_run_as_before(dtype):
    net = mlp().to(dtype)
    rows = torch.randn(50, F, dtype=dtype)
    torch.testing.assert_close(row_wise(net, rows), net(rows), rtol=0, atol=0)
    params, _ = stack_module_state([net, mlp(1).to(dtype)])
    batched = vmap(lambda p, r: row_wise(_Bound(net, p), r))
    out = batched(params, torch.stack([rows, rows]))
    torch.testing.assert_close(out[0], net(rows), rtol=0, atol=0)


class _Bound(torch.nn.Module):
    """`net` with parameters `params` (for calling row_wise inside vmap)."""

    def __init__(self, net, params):
        super().__init__()
        self.net, self.params = net, params

    def parameters(self, recurse: bool = True):
        return iter(self.params.values())

    def forward(self, x):
        return functional_call(self.net, self.params, (x,))


def test_particle_net_trains_as_with_the_basis_on_every_particle():
    B, N, FP = 16, 9, 3
    g = torch.Generator().manual_seed(0)
    features = repeated_rows(B * N, 6, seed=1).reshape(B, N, F)
    beliefs = torch.rand(B, N, generator=g, dtype=torch.float64)
    public = torch.randn(B, FP, generator=g, dtype=torch.float64)
    mask = torch.rand(B, N, generator=g) < 0.8
    torch.manual_seed(0)
    net = ParticleVF(F, FP, K).double()
    fast, fast_grads = values_and_grads(net, lambda n, f: n(beliefs, f, public, mask), features)
    with distinct_rows.every_row():
        slow, slow_grads = values_and_grads(net, lambda n, f: n(beliefs, f, public, mask), features)
    torch.testing.assert_close(fast, slow, rtol=0, atol=1e-13)
    for a, b in zip(fast_grads, slow_grads):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("collide", [False, True])
def test_distinct_holds_each_row_once_and_rebuilds_them_exactly(monkeypatch, collide):
    """`distinct`: `table[index]` is the rows bit for bit and the table has no row twice; with every hash equal
    (unequal rows hashed alike) it still is, by `torch.unique(dim=0)`."""
    rows = repeated_rows(500, 11)
    if collide:
        monkeypatch.setattr(distinct_rows, "_row_keys", lambda r: torch.zeros(len(r), dtype=torch.int64))
    table, index = distinct_rows.distinct(rows)
    assert torch.equal(table[index], rows)
    assert len(table) == len(torch.unique(rows, dim=0)) <= 12  # 11 drawn rows and the zero row
