"""S networks of one architecture as one batched model (an ensemble), for any `nn.Module`.

Inputs and outputs follow the *rows* convention: a tensor's first axis holds
S·R rows, member s's R rows back to back (`[S·R, ...]`), which is what the
training batches and the leaf evaluators already produce for B = S·R.
Two backends compute every member on its own rows at once:

- "bmm" (nets whose parameters all sit in `nn.Linear` and `nn.LayerNorm`
  layers and whose other operations act on each row alone, e.g.
  `PositionalVF`, `ParticleVF`, `AttentionVF`, whose rows are sets): a copy
  of the net whose Linear layers hold stacked weights `[S, out, in]` and
  multiply member s's rows by member s's weights with one `baddbmm`, and
  whose LayerNorms hold `[S, d]` weights (one call per member). Everything
  else in the net's forward runs once on all S·R rows, so a step costs
  about one member's step in Python overhead.
- "vmap" (any net): `torch.func.stack_module_state` stacks parameters and
  buffers, and `torch.func.vmap` maps `functional_call` over the member
  axis (`[S, R, ...]` slices). General, but on small nets vmap's per-op
  overhead makes it 3-4x slower than "bmm" (benchmarks/ensemble_speed.py).

Members never interact: the gradient of a sum of member losses with
respect to member s's slice is that member's own gradient, and elementwise
optimizers (Adam) on the stacked parameters are S independent optimizers.
`tensors()` names the stacked tensors as the member net names its own
(`mlp.0.weight: [S, out, in]`); `member(s, net)` copies member s out.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap
from torch.nn import functional as F
from torch.utils._pytree import tree_map

BACKENDS = ("auto", "bmm", "vmap")


class MemberLinear(nn.Module):
    """S Linear layers: rows `[S·R, ..., in]` (member s's rows s·R ... s·R + R − 1) -> `[S·R, ..., out]`."""

    def __init__(self, weight: Tensor, bias: Tensor | None) -> None:
        super().__init__()
        self.weight = nn.Parameter(weight)  # [S, out, in]
        self.bias = nn.Parameter(bias) if bias is not None else None  # [S, out]

    def forward(self, x: Tensor) -> Tensor:
        S, out_dim, in_dim = self.weight.shape
        rows = x.reshape(S, -1, in_dim)  # member s's rows (and any inner axes) in slice s
        bias = self.bias if self.bias is not None else self.weight.new_zeros(S, out_dim)
        if torch.is_grad_enabled() and rows.shape[1] <= in_dim:
            # Training on few rows (a batch of PBSs): Y^T = W @ X^T. The weight's gradient
            # dY^T @ X then comes out [S, out, in], the parameter's own layout; with X @ W^T
            # it would be a transpose that autograd copies into that layout, which costs
            # more than the matrix product on a CPU (up to 1.2x a step). Y is a view of Y^T.
            y = torch.baddbmm(bias.unsqueeze(2), self.weight, rows.transpose(1, 2)).transpose(1, 2)
        else:
            # Many rows (particles), or no gradient (leaf evaluation): Y = X @ W^T, contiguous
            # for the row-wise work after it and rounded as each member's own nn.Linear rounds
            # (so a batched trunk solve gives each member's one-at-a-time strategy).
            y = torch.baddbmm(bias.unsqueeze(1), rows, self.weight.transpose(1, 2))
        return y.reshape(*x.shape[:-1], out_dim)


class MemberLayerNorm(nn.Module):
    """S LayerNorms: rows `[S·R, ..., d]`, member s's rows normalised with member s's weight and bias.

    One `layer_norm` call per member, so that each rounds as the member's own `nn.LayerNorm`
    (a LayerNorm's parameters are tiny; its cost is the rows, the same either way).
    """

    def __init__(self, weight: Tensor, bias: Tensor | None, normalized_shape: Sequence[int], eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(weight)  # [S, *normalized_shape]
        self.bias = nn.Parameter(bias) if bias is not None else None
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        S = self.weight.shape[0]
        members = x.reshape(S, x.shape[0] // S, *x.shape[1:])
        return torch.stack(
            [
                F.layer_norm(
                    rows, self.normalized_shape, self.weight[s], None if self.bias is None else self.bias[s], self.eps
                )
                for s, rows in enumerate(members)
            ]
        ).reshape(x.shape)


_MEMBER_LAYERS = (nn.Linear, nn.LayerNorm)  # layers "bmm" stacks (MemberLinear, MemberLayerNorm)


def bmm_applicable(net: nn.Module) -> bool:
    """Whether every parameter of `net` sits in an `nn.Linear` or `nn.LayerNorm` and it has no buffers."""
    stacked = {id(p) for m in net.modules() if isinstance(m, _MEMBER_LAYERS) for p in m.parameters()}
    return all(id(p) in stacked for p in net.parameters()) and next(net.buffers(), None) is None


class _Apply(nn.Module):
    """`forward(*args) = fn(net, *args)`, so that `functional_call` can run any function of `net`."""

    def __init__(self, net: nn.Module, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.net = net
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(self.net, *args)


class StackedNets(nn.Module):
    """S same-architecture networks with stacked parameters.

    nets: the members, identical in structure (same class and config); their
        current weights are copied, the modules themselves are not kept.
    backend: "bmm", "vmap" or "auto" ("bmm" where `bmm_applicable`).
    """

    def __init__(self, nets: Sequence[nn.Module], backend: str = "auto") -> None:
        super().__init__()
        if not nets:
            raise ValueError("an ensemble needs at least one member")
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose from {BACKENDS}")
        names = [name for name, _ in nets[0].named_parameters()]
        for net in nets[1:]:
            if type(net) is not type(nets[0]) or [n for n, _ in net.named_parameters()] != names:
                raise ValueError("ensemble members must share one architecture")
        if backend == "auto":
            backend = "bmm" if bmm_applicable(nets[0]) else "vmap"
        elif backend == "bmm" and not bmm_applicable(nets[0]):
            raise ValueError(
                f"{type(nets[0]).__name__} has parameters outside nn.Linear and nn.LayerNorm layers, or "
                "buffers; use backend 'vmap'"
            )
        self.backend = backend
        self.num_members = len(nets)
        params, buffers = stack_module_state(list(nets))
        if backend == "bmm":
            self.batched = copy.deepcopy(nets[0])
            for name, module in list(self.batched.named_modules()):
                parent, _, attr = name.rpartition(".")
                weight, bias = params.get(f"{name}.weight"), params.get(f"{name}.bias")
                if isinstance(module, nn.Linear):
                    self.batched.get_submodule(parent).register_module(attr, MemberLinear(weight, bias))
                elif isinstance(module, nn.LayerNorm) and weight is not None:
                    member = MemberLayerNorm(weight, bias, module.normalized_shape, module.eps)
                    self.batched.get_submodule(parent).register_module(attr, member)
        else:
            self.names = list(params)
            self.buffer_names = list(buffers)
            self.stacked = nn.ParameterList([nn.Parameter(params[n]) for n in self.names])
            for i, name in enumerate(self.buffer_names):
                self.register_buffer(f"buffer_{i}", buffers[name])
            # Structure only (meta device; weights come from `stacked`); not a submodule, so
            # that `parameters()` are exactly the stacked ones.
            self._template = (copy.deepcopy(nets[0]).to("meta"),)

    def tensors(self) -> dict[str, Tensor]:
        """Stacked parameters and buffers by the member net's names, each `[S, ...]`."""
        if self.backend == "bmm":
            return dict(self.batched.named_parameters())
        out = {name: p for name, p in zip(self.names, self.stacked)}
        out.update({name: getattr(self, f"buffer_{i}") for i, name in enumerate(self.buffer_names)})
        return out

    def apply_rows(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(net, *args)` with member s's net on member s's rows; tensors in args and result `[S·R, ...]`."""
        if self.backend == "bmm":
            return fn(self.batched, *args)
        S = self.num_members
        wrapper = _Apply(self._template[0], fn)

        def one(tensors: dict[str, Tensor], *member_args: Any) -> Any:
            return functional_call(wrapper, {f"net.{k}": v for k, v in tensors.items()}, member_args)

        split = tree_map(lambda t: t.reshape(S, t.shape[0] // S, *t.shape[1:]) if isinstance(t, Tensor) else t, args)
        out = vmap(one)(self.tensors(), *split)
        return tree_map(lambda t: t.reshape(-1, *t.shape[2:]) if isinstance(t, Tensor) else t, out)

    def forward(self, *args: Tensor) -> Tensor:
        """Every member's forward on its own rows: args `[S·R, ...]` -> `[S·R, ...]`."""
        return self.apply_rows(lambda net, *a: net(*a), *args)

    @property
    def member_type(self) -> type[nn.Module]:
        """The members' class."""
        return type(self.batched) if self.backend == "bmm" else type(self._template[0])

    def call(self, method: str, *args: Any) -> Any:
        """Every member's `method` (of `member_type`) on its own rows, as `forward` runs theirs."""
        return self.apply_rows(lambda net, *a: getattr(net, method)(*a), *args)

    def member(self, s: int, net: nn.Module) -> nn.Module:
        """Copy member s's weights into `net` (a module of the members' architecture); returns `net`."""
        with torch.no_grad():
            state = {name: t[s].detach().clone() for name, t in self.tensors().items()}
        net.load_state_dict(state)
        return net
